"""The pure scheduling rule: is a component visible ``k`` episodes after its first, and where.

``k`` counts episodes from the component's first one (``k = 0`` is the first render after it
was added). Nothing here has state; the lifecycle session and the explorer both build on it.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import assert_never

from hydrangea.lifecycle.component import Component, LifecycleKind, Phase

__all__ = ["Change", "Phase", "next_change", "periodic", "visible_at"]


@dataclass(frozen=True, slots=True)
class Change:
    """The next change of a component's phase: at offset ``at`` it becomes ``phase``.

    ``phase`` is ``None`` when the component is hidden from ``at`` on; ``final`` is True when
    it never comes back after that.
    """

    at: int
    phase: Phase | None
    final: bool


def visible_at(component: Component, k: int) -> Phase | None:
    """The component's phase ``k`` episodes after its first, or ``None`` if it is not shown.

    Permanent components live in the history, not the overlay: they are never "visible" here.
    """
    if k < 0:
        return None
    kind = component.kind
    match kind:
        case LifecycleKind.permanent:
            return None
        case LifecycleKind.temporary:
            assert component.ttl is not None
            return component.phases[0] if k < component.ttl else None
        case LifecycleKind.sticky | LifecycleKind.cyclic:
            assert component.ttl is not None and component.cadence is not None
            return component.phases[0] if k % component.cadence < component.ttl else None
        case LifecycleKind.staged:
            stage = _stage_at(component, k)
            if stage is None:
                return None
            return component.phases[stage]
        case _:
            assert_never(kind)


def periodic(component: Component) -> tuple[int, int] | None:
    """``(period, shown)`` when the component is visible, in ``phases[0]``, exactly at the
    offsets ``k`` with ``k % period < shown`` and hidden at the others, for good (a sticky or
    cyclic component that is not shown in every episode); ``None`` for other components."""
    kind = component.kind
    match kind:
        case LifecycleKind.sticky | LifecycleKind.cyclic:
            ttl, cadence = component.ttl, component.cadence
            assert ttl is not None and cadence is not None
            return (cadence, ttl) if ttl < cadence else None
        case LifecycleKind.permanent | LifecycleKind.temporary | LifecycleKind.staged:
            return None
        case _:
            assert_never(kind)


def _stage_at(component: Component, k: int) -> int | None:
    ends = component.stage_ends
    if component.stages[-1].ttl is None:  # no cycling; the last stage holds for good
        return min(bisect_right(ends, k), len(component.stages) - 1)
    period = ends[-1]
    turn, offset = divmod(k, period)
    cycles = component.cycles
    if cycles is not None and turn >= cycles:
        return None
    return bisect_right(ends, offset)


def next_change(component: Component, k: int) -> Change | None:
    """The first offset after ``k`` at which the component's phase differs, or ``None``.

    For staged components a move to the next stage counts as a change even when the placement
    stays the same. ``k`` must be non-negative.
    """
    if k < 0:
        raise ValueError(f"episode offset must be non-negative, got {k}")
    kind = component.kind
    match kind:
        case LifecycleKind.permanent:
            return None
        case LifecycleKind.temporary:
            assert component.ttl is not None
            return Change(component.ttl, None, final=True) if k < component.ttl else None
        case LifecycleKind.sticky | LifecycleKind.cyclic:
            ttl, cadence = component.ttl, component.cadence
            assert ttl is not None and cadence is not None
            if ttl >= cadence:
                return None  # shown in every episode
            base = k - k % cadence
            if k % cadence < ttl:
                return Change(base + ttl, None, final=False)
            return Change(base + cadence, component.phases[0], final=False)
        case LifecycleKind.staged:
            return _next_stage_change(component, k)
        case _:
            assert_never(kind)


def _next_stage_change(component: Component, k: int) -> Change | None:
    stage = _stage_at(component, k)
    if stage is None:
        return None
    ends = component.stage_ends
    if component.stages[-1].ttl is None:
        if stage == len(component.stages) - 1:
            return None
        at = ends[stage]
    elif len(component.stages) == 1:  # one stage repeating: only the end of the cycles counts
        cycles = component.cycles
        if cycles is None:
            return None
        return Change(cycles * ends[-1], None, final=True)
    else:
        at = (k // ends[-1]) * ends[-1] + ends[stage]
    phase = visible_at(component, at)
    return Change(at, phase, final=phase is None)
