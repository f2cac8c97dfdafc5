"""A CoopContext's own state (cursor, counters, each area's EffectRange), for stores to save.

Areas are the caller's objects and are never saved. What the CoopContext itself knows about
them is: the ring order, each area's EffectRange, the cursor and the render and collection
counters. :func:`coop_state` reads that; :func:`restore_coop_state` puts it back on a new
CoopContext whose caller has registered the same areas again, in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hydrangea.coop.coop_context import CoopContext
from hydrangea.coop.effect_range import EffectRange
from hydrangea.errors import SerializationError

__all__ = ["CoopState", "coop_state", "restore_coop_state"]


@dataclass(frozen=True, slots=True)
class CoopState:
    """What a CoopContext knows beyond its Context and its areas' own objects."""

    cursor: int
    renders: int
    collections: int
    ranges: tuple[tuple[int, int] | None, ...]
    """One entry per area in the ring, in ring order: its ``(earliest, latest)`` or ``None``."""

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "cursor": self.cursor,
            "renders": self.renders,
            "collections": self.collections,
            "ranges": [None if r is None else list(r) for r in self.ranges],
        }

    @classmethod
    def from_json(cls, data: object) -> CoopState:
        """The state :meth:`to_json` described; :class:`SerializationError` if it is not one."""
        try:
            if not isinstance(data, dict):
                raise TypeError("not an object")
            ranges: list[tuple[int, int] | None] = []
            for r in data["ranges"]:
                if r is None:
                    ranges.append(None)
                    continue
                earliest, latest = (int(v) for v in r)
                ranges.append((earliest, latest))
            return cls(int(data["cursor"]), int(data["renders"]), int(data["collections"]),
                       tuple(ranges))
        except (KeyError, TypeError, ValueError) as exc:
            raise SerializationError(f"saved CoopContext state is malformed: {exc!r}") from exc


def coop_state(coop: CoopContext) -> CoopState:
    """The CoopContext's own state; O(areas). Areas registered since the last render (not yet in
    the ring) are not part of it: they are registered again on load like the others."""
    return CoopState(
        cursor=coop._cursor,
        renders=coop._renders,
        collections=coop._collections,
        ranges=tuple(
            None if e.effect_range is None else (e.effect_range.earliest, e.effect_range.latest)
            for e in coop._ring
        ),
    )


def restore_coop_state(coop: CoopContext, state: CoopState) -> None:
    """Put ``state`` back on ``coop``, a CoopContext that has not rendered yet.

    The caller has registered the saved ring's areas again, in the same order (more may follow:
    they stay pending and join at the next render). Raises :class:`SerializationError` when fewer
    areas are registered than the state holds, or a range does not fit the Context.
    """
    if coop._renders or coop._ring:
        raise SerializationError("restore_coop_state needs a CoopContext that has not rendered")
    count = len(state.ranges)
    with coop._pending_lock:
        if len(coop._pending) < count:
            raise SerializationError(
                f"the saved CoopContext had {count} area(s) in its ring but only "
                f"{len(coop._pending)} were registered again; register the same areas, "
                "in the same order"
            )
        entries = coop._pending[:count]
        length = len(coop.context)
        for saved in state.ranges:
            if saved is None:
                continue
            if not 0 <= saved[0] <= saved[1] < length:
                raise SerializationError(
                    f"saved EffectRange {list(saved)} does not fit a Context of {length} items"
                )
        if count and not 0 <= state.cursor < count:
            raise SerializationError(f"saved cursor {state.cursor} is outside the ring")
        for entry, saved in zip(entries, state.ranges, strict=True):
            entry.effect_range = None if saved is None else EffectRange(*saved)
        del coop._pending[:count]
    coop._ring.extend(entries)
    ranged = sorted(
        (e for e in entries if e.effect_range is not None),
        key=lambda e: (e.effect_range.latest if e.effect_range else 0, e.order),
    )
    coop._ranged = {id(e.area): e for e in ranged}
    coop._starts = None  # the ring's ranges changed: range_starts() reads them again
    coop._cursor = state.cursor if count else 0
    coop._renders = state.renders
    coop._collections = state.collections
