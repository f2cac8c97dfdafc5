"""Formatting helpers for the benchmark report; every reader here tolerates missing keys."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "Page",
    "fmt",
    "load_json",
    "number",
    "plotting",
    "rows_of",
    "scalar_columns",
    "table",
]


@dataclass
class Page:
    """The report being written: markdown lines and the image directory."""

    image_dir: Path
    image_link: str
    lines: list[str] = field(default_factory=list)
    images: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, *lines: str) -> None:
        """Append lines of markdown."""
        self.lines.extend(lines)

    def figure(
        self,
        name: str,
        caption: str,
        draw: Callable[[Any], None],
        size: tuple[float, float] = (8, 4.5),
    ) -> None:
        """Draw a PNG with ``draw(pyplot)`` and link it; note it if matplotlib is missing."""
        pyplot = plotting()
        if pyplot is None:
            self.notes.append(f"plot {name} skipped: matplotlib is not installed")
            return
        self.image_dir.mkdir(parents=True, exist_ok=True)
        path = self.image_dir / f"{name}.png"
        figure = pyplot.figure(figsize=size, dpi=110)
        try:
            draw(pyplot)
            figure.tight_layout()
            figure.savefig(path)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            self.notes.append(f"plot {name} skipped: {type(exc).__name__}: {exc}")
            return
        finally:
            pyplot.close(figure)
        self.images.append(path)
        self.add(f"![{caption}]({self.image_link}/{name}.png)", "")


def plotting() -> Any:
    """matplotlib.pyplot with the Agg backend, or None if matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as pyplot
    except ImportError:
        return None
    return pyplot


def load_json(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The JSON object in ``path``, or None and the reason it could not be read."""
    if not path.exists():
        return None, "not run"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        return None, f"unreadable ({exc})"
    if not isinstance(data, dict):
        return None, "unreadable (not a JSON object)"
    return data, None


def number(value: object) -> float | None:
    """``value`` as a float if it is a number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def fmt(value: object) -> str:
    """A table cell: numbers rounded for reading, everything else as text."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value == 0:
            return "0"
        if abs(value) >= 1_000:
            return f"{value:,.0f}"
        if abs(value) >= 10:
            return f"{value:.1f}"
        if abs(value) >= 0.01:
            return f"{value:.3f}"
        return f"{value:.2e}"
    if value is None:
        return "–"
    text = str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """A markdown table."""
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out.extend("| " + " | ".join(fmt(cell) for cell in row) + " |" for row in rows)
    return [*out, ""]


def rows_of(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The result rows of a benchmark file: ``rows``, ``results`` or the first list of objects."""
    for key in ("rows", "results", "measurements", "cases"):
        value = data.get(key)
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            return value
    for value in data.values():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            return value
    return []


def scalar_columns(rows: Sequence[dict[str, Any]], limit: int = 10) -> list[str]:
    """The keys holding scalars in ``rows``, in order of first appearance, at most ``limit``."""
    columns: list[str] = []
    for row in rows:
        for key, value in row.items():
            if key not in columns and (value is None or isinstance(value, str | int | float)):
                columns.append(key)
    return columns[:limit]
