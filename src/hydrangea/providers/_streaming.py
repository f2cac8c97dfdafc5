"""What every gateway's stream assembler shares: the JSON alias, refusals, delta merging."""

from __future__ import annotations

from typing import Any

from hydrangea.errors import IncompleteStreamError

Json = dict[str, Any]


def fail(gateway: str, position: int, what: str) -> IncompleteStreamError:
    """The refusal of a stream of ``gateway`` at event ``position``."""
    return IncompleteStreamError(f"{gateway} stream, event {position}: {what}")


def merge_delta(target: Json, delta: Json, skip: frozenset[str] = frozenset()) -> None:
    """Strings are appended to what the key holds; other values replace it."""
    for key, value in delta.items():
        if key in skip or value is None:
            continue
        held = target.get(key)
        target[key] = held + value if isinstance(value, str) and isinstance(held, str) else value


def kind(event: Json) -> str:
    """An event's ``type`` (or ``object``) for messages, or its first keys."""
    named = event.get("type", event.get("object"))
    return f"type {named!r}" if named is not None else f"keys {sorted(event)[:4]}"
