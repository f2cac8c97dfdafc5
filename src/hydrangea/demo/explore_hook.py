"""``hydrangea explore FILE``: check a saved Context or lifecycle session, then hand it to the
explorer (:mod:`hydrangea.explore`) to print as a tree.

The check here turns every way a file can be wrong (missing, a directory, not UTF-8, not JSON,
not a saved Context or session, invalid items) into one error the command line prints as one line.
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from hydrangea.context.context import Context
from hydrangea.errors import InvalidItemError, SerializationError

__all__ = ["explore_path", "read_saved"]


def read_saved(path: Path) -> tuple[str, Context]:
    """The kind of file (``"context"`` or ``"session"``) and its Context.

    OSError for a file that cannot be read; SerializationError for anything else wrong.
    """
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SerializationError(f"{path} is not a saved Context or session: not UTF-8") from exc
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SerializationError(f"{path} is not a saved Context or session: {exc}") from exc
    kind = document.get("format") if isinstance(document, dict) else None
    try:
        if kind == "hydrangea.context":
            return "context", Context.from_json(text)
        if kind == "hydrangea.lifecycle":
            from hydrangea.lifecycle.persist import load

            return "session", load(document).context
    except InvalidItemError as exc:
        raise SerializationError(f"{path} holds an item its gateway rejects: {exc}") from exc
    raise SerializationError(
        f"{path} is not a saved Context or session (no 'format' field naming one)"
    )


def explore_path(path: Path, console: Console | None = None) -> None:
    """Check that ``path`` holds a saved Context or session (one clear error if not), then print
    it with :func:`hydrangea.explore.explore_file`."""
    read_saved(path)
    from hydrangea.explore import explore_file

    explore_file(path, console=console if console is not None else Console())
