"""``hydrangea explore FILE``: check a saved Context or lifecycle session, then hand it to the
explorer (:mod:`hydrangea.explore`) to print as a tree.

The check here turns every way a file can be wrong (missing, a directory, not UTF-8, not JSON,
not a saved Context or session, invalid items) into one error the command line prints as one line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from hydrangea.context.context import Context
from hydrangea.errors import InvalidItemError, SerializationError

if TYPE_CHECKING:
    from hydrangea.stores import SessionStore

__all__ = ["explore_path", "explore_stored", "read_saved"]


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
            from hydrangea.lifecycle import Lifecycle
            from hydrangea.lifecycle.persist import load

            return "session", load(document, None, Lifecycle).context
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


def explore_stored(store: SessionStore, session_id: str, console: Console | None = None) -> None:
    """Print the session ``session_id`` of ``store`` (a Lifecycle or a Context) as a tree.

    A lifecycle session is loaded without its areas (they are the program's objects): the
    explorer shows its history, overlay, components and snapshots.
    """
    from hydrangea.explore import Explorer
    from hydrangea.lifecycle.session import Lifecycle

    kinds = {info.session_id: info.kind for info in store.list_sessions()}
    target: Lifecycle | Context
    if kinds.get(session_id) == "lifecycle":
        target = store.load(session_id, Lifecycle).value
    else:
        target = store.load(session_id, Context).value
    Explorer(target, console if console is not None else Console()).print()
