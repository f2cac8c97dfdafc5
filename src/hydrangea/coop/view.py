"""Read-only records describing a CoopContext, for debugging, lifecycles and the explorer.

These records are a stable, documented view: fields are only ever added, never renamed.
"""

from __future__ import annotations

from dataclasses import dataclass

from hydrangea.context.area import AnyContextArea, AreaFlowState, AreaLifeState
from hydrangea.coop.effect_range import EffectRange

__all__ = ["AreaRecord", "CollectionRecord", "CoopSnapshot"]


@dataclass(frozen=True, slots=True)
class AreaRecord:
    """One registered area as it was when the snapshot was taken."""

    area: AnyContextArea
    """The area object itself (compare by identity)."""
    life_state: AreaLifeState
    flow_state: AreaFlowState
    effect_range: EffectRange | None
    """``None`` until the area's first non-empty render."""


@dataclass(frozen=True, slots=True)
class CoopSnapshot:
    """The ring of areas in registration order, the cursor, and what waits to join."""

    areas: tuple[AreaRecord, ...]
    """Registered areas in ring (registration) order."""
    cursor: int | None
    """Index in :attr:`areas` where the next pass starts; ``None`` when the ring is empty."""
    pending: tuple[AnyContextArea, ...]
    """Areas registered since the last ``render()`` began; they join the ring at the next one."""
    context_length: int
    """``len(context)`` at the time of the snapshot."""
    renders: int
    """How many ``render()`` calls have started so far."""


@dataclass(frozen=True, slots=True)
class CollectionRecord:
    """What one collection did. Only collections that removed at least one area are recorded."""

    render: int
    """The ``renders`` count of the ``render()`` call that ran this collection (1-based)."""
    start: int | None
    """Index from which the tail was detached; ``None`` when only never-rendered areas left."""
    detached: int
    """Number of Context items detached."""
    promoted: int
    """Number of Context items appended from ``promote()`` results."""
    areas: tuple[AnyContextArea, ...]
    """Removed areas, in the order their ``gc_prologue()`` ran."""
