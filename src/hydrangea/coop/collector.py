"""The Collector: pure planning of what a collection reclaims, and where the cursor goes.

Nothing here calls an area or touches a Context; :class:`~hydrangea.coop.CoopContext` feeds the
planner what it read and carries the plan out. Keeping the decision pure makes it easy to test
against an independent oracle.

How the reclaimable tail is found. Ranges are closed intervals; two overlap when they share an
index. Visiting the ranged areas from the largest ``latest`` downwards, a range whose ``latest``
lies before the lowest ``earliest`` seen so far in the current component cannot overlap any
member of it (every member starts at or after that index), nor can any range visited after it;
so the component is complete. A component in which any area is retained stops the walk. The
tail is the union of the fully retired components walked before that, and it is detached from
its lowest ``earliest`` to the end of the Context.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from hydrangea.coop.effect_range import EffectRange

__all__ = ["CollectionPlan", "RangedArea", "plan_collection", "repair_cursor"]

K = TypeVar("K")


@dataclass(frozen=True, slots=True)
class RangedArea(Generic[K]):
    """One materialized area as the planner sees it: a key, its range and its ring order."""

    key: K
    effect_range: EffectRange
    order: int


@dataclass(frozen=True, slots=True)
class CollectionPlan(Generic[K]):
    """The reclaimable tail: where to detach, and the areas in the order they are called.

    ``start`` is ``None`` when no ranged area can be reclaimed. ``areas`` is in ascending order of
    ``latest`` (ties by ring order): the order of every ``promote()`` and then every
    ``gc_prologue()``.
    """

    start: int | None
    areas: tuple[K, ...]


def plan_collection(
    newest_first: Iterable[RangedArea[K]],
    is_retired: Callable[[K], bool],
) -> CollectionPlan[K]:
    """Find the longest run of fully retired components that ends at the Context's tail.

    ``newest_first`` yields the ranged areas in descending order of ``latest``. The walk stops at
    the first retained area, so its cost is proportional to the areas it visits (the caller's
    ordering makes the whole plan O(areas) at most, O(areas log areas) if it has to sort).
    """
    taken: list[RangedArea[K]] = []
    component: list[RangedArea[K]] = []
    low: int | None = None
    start: int | None = None
    for ranged in newest_first:
        if low is not None and ranged.effect_range.latest < low:
            taken.extend(component)
            start = low
            component = []
            low = None
        if not is_retired(ranged.key):
            component = []
            low = None
            break
        component.append(ranged)
        earliest = ranged.effect_range.earliest
        low = earliest if low is None else min(low, earliest)
    taken.extend(component)
    if low is not None:
        start = low
    taken.sort(key=lambda r: (r.effect_range.latest, r.order))
    return CollectionPlan(start=start, areas=tuple(r.key for r in taken))


def repair_cursor(cursor: int, removed: Sequence[bool]) -> int:
    """The cursor's index in the ring after the entries flagged in ``removed`` are dropped.

    The cursor stays on its area when that survives; otherwise it moves to the next surviving
    area in ring order (wrapping round). An empty ring gives 0.
    """
    size = len(removed)
    if size == 0 or all(removed):
        return 0
    index = cursor % size
    while removed[index]:
        index = (index + 1) % size
    return sum(1 for flag in removed[:index] if not flag)
