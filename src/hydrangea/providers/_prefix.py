"""How much of a longer request a shorter one repeats, for placing cache breakpoints.

A breakpoint goes where a stable prefix ends, counted in the built request's entries
(Anthropic ``messages``, Responses ``input``). The entries the request of the first items
shares with the request of all of them is that count: building merges turns, so it is not
the item count.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["shared_entries", "shared_prefix"]


def shared_prefix(before: Sequence[object], now: Sequence[object], offset: int = 0) -> int:
    """How many leading entries of ``before`` are those of ``now`` from ``offset`` on (the
    same object, or equal)."""
    count, limit = 0, min(len(before), len(now) - offset)
    while count < limit:  # (by index: skipping ``offset`` entries would cost O(offset))
        old, new = before[count], now[offset + count]
        if old is not new and old != new:
            break
        count += 1
    return count


def shared_entries(
    build: Callable[[Sequence[Any]], dict[str, Any]],
    items: Sequence[Any],
    entries: Sequence[object],
    key: str,
    boundary: int,
    *,
    shared_of: Callable[[int], int] | None = None,
) -> int:
    """How many leading ``entries`` (the request of ``items``, under ``key``) the request of
    the first ``boundary`` items shares with it: ``shared_of(boundary)`` when the caller
    knows it (a request cache), else by building that shorter request."""
    if boundary >= len(items):
        return len(entries)
    if shared_of is not None:
        return min(shared_of(boundary), len(entries))
    return shared_prefix(build(items[:boundary]).get(key) or [], entries)
