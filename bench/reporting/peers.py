"""Sections for the other benchmark scripts (coop, asof, lifecycle) and any unknown result file.

Those scripts belong to other parts of the project and may change the keys they write, so every
reader here looks keys up by name with fallbacks, shows a generic table when it recognises
nothing, and never fails on a missing key (a plot that cannot be drawn is skipped with a note).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .common import Page, number, rows_of, scalar_columns, table

__all__ = ["asof_section", "coop_section", "generic_section", "lifecycle_section"]


def _intro(page: Page, title: str, data: dict[str, Any] | None, missing: str | None,
           script: str) -> bool:
    page.add(f"## {title}", "")
    if data is None:
        page.add(f"*{missing}* (`python bench/{script}.py` writes "
                 f"`bench/results/{script}.json`).", "")
        return False
    for key in ("benchmark", "description", "what", "summary"):
        if isinstance(data.get(key), str):
            page.add(str(data[key]), "")
            break
    return True


def generic_table(page: Page, rows: Sequence[dict[str, Any]]) -> None:
    """Every scalar column of ``rows``."""
    columns = scalar_columns(rows)
    if not columns:
        page.add("(no result rows recognised)", "")
        return
    page.add(*table(columns, [[row.get(c) for c in columns] for row in rows]))


def _key(rows: Sequence[dict[str, Any]], *fragments: str) -> str | None:
    """The first numeric key of the rows whose name contains one of ``fragments`` (in order)."""
    keys = [k for k in (rows[0] if rows else {}) if number(rows[0].get(k)) is not None]
    for fragment in fragments:
        for key in keys:
            if fragment in key.lower():
                return key
    return None


def _series_plot(page: Page, name: str, caption: str, rows: Sequence[dict[str, Any]],
                 x: str, y: str, group: str | None, log: bool) -> None:
    def draw(plt: Any) -> None:
        groups: dict[str, list[tuple[float, float]]] = {}
        for row in rows:
            xv, yv = number(row.get(x)), number(row.get(y))
            if xv is None or yv is None:
                continue
            label = f"{group}={row.get(group)}" if group else y
            groups.setdefault(label, []).append((xv, yv))
        if not groups:
            raise ValueError(f"no numeric {x}/{y} pairs")
        for label, points in sorted(groups.items()):
            points.sort()
            plt.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
        if log:
            plt.xscale("log")
        plt.xlabel(x)
        plt.ylabel(y)
        plt.title(caption)
        if len(groups) > 1:
            plt.legend(fontsize=7)

    page.figure(name, caption, draw)


def _scalars(page: Page, data: dict[str, Any]) -> None:
    scalars = {k: v for k, v in data.items() if isinstance(v, str | int | float | bool)}
    if scalars:
        page.add(*table(["measure", "value"], [[k, v] for k, v in scalars.items()]))


def _map_family(page: Page, name: str, maps: dict[str, dict[float, float]], axis: str) -> None:
    """A table of maps sharing an x axis, and a log-log plot of those measured in seconds."""
    xs = sorted({x for points in maps.values() for x in points})
    scale = {k: 1e6 if "second" in k else 1.0 for k in maps}
    headers = [k.replace("seconds", "µs") for k in maps]

    def cell(key: str, x: float) -> float | None:
        value = maps[key].get(x)
        return None if value is None else value * scale[key]

    page.add(*table([axis, *headers],
                    [[int(x) if x.is_integer() else x, *[cell(k, x) for k in maps]] for x in xs]))
    timed = {k: v for k, v in maps.items() if "second" in k or k.endswith(("_us", "_ms"))}
    if not timed:
        return

    def unit(key: str) -> str:
        return "ms" if key.endswith("_ms") else "µs"

    def legend(key: str) -> str:
        what = key.removesuffix("_us").removesuffix("_ms").replace("seconds_by_", "time by ")
        return what.replace("_", " ")

    def draw(plt: Any) -> None:
        values: list[float] = []
        for label, points in timed.items():
            keys = sorted(points)
            ys = [points[k] * scale[label] for k in keys]
            values.extend(ys)
            plt.plot(keys, ys, marker="o", label=legend(label))
        units = sorted({unit(k) for k in timed})
        plt.xscale("log")
        plt.xlabel(f"{axis} (log scale)")
        if max(values) >= 10 * min(values):  # orders of magnitude apart: a log axis reads them
            plt.yscale("log")
            plt.ylabel(f"time of one render, {' / '.join(units)} (log scale)")
        else:  # flat: a linear axis from zero shows how flat
            plt.ylim(0, max(values) * 1.25)
            plt.ylabel(f"time of one render, {' / '.join(units)}")
        plt.title(f"{name}: time of one render against {axis}")
        plt.legend(fontsize=8)

    page.figure(f"{name}_{axis.replace(' ', '_')}", f"{name} cost against {axis}", draw)


def coop_section(page: Page, data: dict[str, Any] | None, missing: str | None) -> None:
    """CoopContext render cost against context length and area count."""
    if not _intro(page, "CoopContext: render cost against context length and areas", data,
                  missing, "coop"):
        return
    assert data is not None
    _scalars(page, data)
    maps = _numeric_maps(data)
    by_length = {k: v for k, v in maps.items() if "length" in k or "context" in k}
    by_areas = {k: v for k, v in maps.items() if "area" in k and k not in by_length}
    if by_length:
        _map_family(page, "coop", by_length, "context length")
    if by_areas:
        _map_family(page, "coop", by_areas, "areas")
    if not maps:
        generic_table(page, rows_of(data))


def asof_section(page: Page, data: dict[str, Any] | None, missing: str | None) -> None:
    """As-of ContextBuilder build time against items and budget."""
    if not _intro(page, "As-of assembly: build time against items and budget", data, missing,
                  "asof"):
        return
    assert data is not None
    rows = rows_of(data)
    ours = _time_key(rows, "hydrangea")
    theirs = _time_key(rows, "keelgate")
    if not ours or not theirs:
        generic_table(page, rows)
        return
    ratio = next((k for k in (rows[0] if rows else {}) if k.startswith("ratio")), None)
    kind = ours.removeprefix("hydrangea_").removesuffix("seconds").strip("_") or "time"
    page.add(*table(
        ["items", "budget", "basis", f"hydrangea ms ({kind})", f"keelgate ms ({kind})",
         "keelgate / hydrangea", "hydrangea shown / compacted / dropped"],
        [[r.get("items"), r.get("budget_label"), r.get("budget_basis"),
          1000 * (number(r.get(ours)) or 0), 1000 * (number(r.get(theirs)) or 0),
          r.get(ratio) if ratio else None, _outcome(r.get("hydrangea"))]
         for r in rows],
    ))
    for key in ("ratio", "target_ratio_at_10000_items_50pct"):
        if data.get(key) is not None:
            page.add(f"{key}: {data[key]}", "")
    own = [r for r in rows if r.get("budget_basis", "own") == "own"]

    def draw(plt: Any) -> None:
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for n, label in enumerate(sorted({str(r.get("budget_label")) for r in own})):
            color = colors[n % len(colors)]
            points = sorted(
                (float(r["items"]), float(r[ours]), float(r[theirs]))
                for r in own if str(r.get("budget_label")) == label
            )
            xs = [p[0] for p in points]
            plt.plot(xs, [1000 * p[1] for p in points], marker="o", color=color,
                     label=f"hydrangea, {label}")
            plt.plot(xs, [1000 * p[2] for p in points], marker="x", linestyle="--", color=color,
                     label=f"keelgate, {label}")
        plt.xscale("log")
        plt.yscale("log")
        plt.xlabel("items")
        plt.ylabel(f"build time, ms ({kind}, log)")
        plt.title("Build time against items and budget (own budget basis)")
        plt.legend(fontsize=7)

    page.figure("asof_build", "as-of build time against items and budget", draw)
    scaling = data.get("scaling")
    if isinstance(scaling, dict) and scaling.get("rows"):
        page.add(f"Build alone, per item ({scaling.get('what', '')}; {scaling.get('when', '')}):",
                 "")
        page.add(*table(
            ["items", "budget (tokens)", "build ms (cpu)", "µs per item", "shown"],
            [[r.get("items"), r.get("token_budget"),
              1000 * (number(r.get("build_cpu_seconds")) or 0), r.get("us_per_item"),
              r.get("shown")] for r in scaling["rows"]],
        ))
        per_item = number(scaling.get("ratio_100k_over_1k"))
        shown = "-" if per_item is None else f"{per_item:.2f}x"
        page.add(f"per item, 100,000 / 1,000 items: {shown} "
                 f"(target at most {scaling.get('target')})", "")


def _time_key(rows: Sequence[dict[str, Any]], library: str) -> str | None:
    """The row key holding ``library``'s time: CPU seconds first, then any seconds."""
    keys = [k for k in (rows[0] if rows else {}) if k.startswith(f"{library}_")]
    for wanted in (f"{library}_cpu_seconds", f"{library}_seconds"):
        if wanted in keys:
            return wanted
    return next((k for k in keys if k.endswith("seconds")), None)


def _outcome(value: object) -> str:
    if not isinstance(value, dict):
        return "–"
    return " / ".join(str(value.get(key, "?")) for key in ("shown", "compacted", "dropped"))


def lifecycle_section(page: Page, data: dict[str, Any] | None, missing: str | None) -> None:
    """Per-turn cost of lifecycles over a long session."""
    if not _intro(page, "Lifecycles: per-turn cost over a long session", data, missing,
                  "lifecycle"):
        return
    assert data is not None
    rows = rows_of(data)
    _scalars(page, data)
    if rows:
        generic_table(page, rows[:40])
    by_turn = _numeric_maps(data)
    if by_turn:
        turns = sorted({t for points in by_turn.values() for t in points})
        page.add(*table(["measure", *[f"turn {t:g}" for t in turns]],
                        [[k, *[v.get(t) for t in turns]] for k, v in by_turn.items()]))

        def draw_maps(plt: Any) -> None:
            for label, points in by_turn.items():
                xs = sorted(points)
                plt.plot(xs, [points[x] for x in xs], marker="o", label=label)
            plt.xscale("log")
            plt.yscale("log")
            plt.xlabel("turn (history length)")
            plt.ylabel("cost per turn (log)")
            plt.title("Per-turn cost early and late in a long session")
            plt.legend(fontsize=7)

        page.figure("lifecycle_turns", "lifecycle per-turn cost", draw_maps)
        return
    series = _per_turn_series(data)
    if series:
        def draw(plt: Any) -> None:
            for label, values in series.items():
                plt.plot(values, label=label, linewidth=0.9)
            plt.xlabel("turn")
            plt.ylabel("cost per turn")
            plt.title("Per-turn cost over a long session")
            plt.legend(fontsize=7)

        page.figure("lifecycle_turns", "lifecycle per-turn cost", draw)
    elif rows:
        x = _key(rows, "turn", "episode", "components", "length")
        y = _key(rows, "ratio", "per_turn", "us", "ms", "seconds", "time")
        if x and y:
            _series_plot(page, "lifecycle_turns", "lifecycle per-turn cost", rows, x, y, None,
                         log=False)


def _numeric_maps(data: dict[str, Any]) -> dict[str, dict[float, float]]:
    """Top-level objects mapping numbers (as keys) to numbers, e.g. ``{"10": 151.0}``."""
    out: dict[str, dict[float, float]] = {}
    for key, value in data.items():
        if not isinstance(value, dict) or not value:
            continue
        points: dict[float, float] = {}
        for turn, amount in value.items():
            try:
                x = float(turn)
            except (TypeError, ValueError):
                break
            y = number(amount)
            if y is None:
                break
            points[x] = y
        else:
            out[key] = points
    return out


def _per_turn_series(data: dict[str, Any]) -> dict[str, list[float]]:
    """Lists of numbers stored under a key mentioning turns or episodes, at any depth <= 2."""
    out: dict[str, list[float]] = {}

    def visit(value: object, label: str, depth: int) -> None:
        if isinstance(value, list) and len(value) > 5 and all(number(v) is not None for v in value):
            if any(word in label.lower() for word in ("turn", "episode", "per_")):
                out[label] = [float(v) for v in value]
        elif isinstance(value, dict) and depth < 2:
            for key, inner in value.items():
                visit(inner, f"{label}.{key}" if label else str(key), depth + 1)

    visit(data, "", 0)
    return out


def generic_section(page: Page, name: str, data: dict[str, Any] | None,
                    missing: str | None) -> None:
    """Any other result file: its description and its rows."""
    if not _intro(page, f"Other results: {name}", data, missing, name):
        return
    assert data is not None
    generic_table(page, rows_of(data))
