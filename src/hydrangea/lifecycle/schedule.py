"""What an episode sends: the plan of each component over its episodes (private).

:class:`~hydrangea.lifecycle.Lifecycle` asks :func:`plan_of` which phase a component is in from
an episode on, and gathers an :class:`Episode`: the ``before`` and ``after`` components it sends,
the ones in their last episode, and (``Resend.when_changed``) the ones not sent again because
their content is still in the history.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import assert_never

from hydrangea.lifecycle.component import Placement
from hydrangea.lifecycle.history import OverlayItem
from hydrangea.lifecycle.table import Entry, Plan
from hydrangea.lifecycle.visibility import Phase, next_change, periodic, visible_at

__all__ = ["Episode", "Resend", "plan_of", "size_of"]


class Resend(StrEnum):
    """How a component that stays visible over several episodes is sent again."""

    each_episode = "each_episode"
    """Sent in every episode it is visible: it always sits near the newest turn (the default;
    each sending stays in the history, so the reminder's tokens recur once per episode)."""
    when_changed = "when_changed"
    """Sent once, and again only after its content changed (``update``, ``add(replace=True)``)
    or after its earlier sending left the history (a collection cut it, or it was taken back
    unanswered): the cheapest, but the reminder drifts away from the newest turn."""


@dataclass(slots=True)
class Episode:
    """What one render sends: planned before the areas render, placed after."""

    before: tuple[OverlayItem, ...]
    after: tuple[OverlayItem, ...]
    gone: tuple[Entry, ...]
    length: int  # the history's length before the areas rendered
    detaches: int  # the Context's detach count then
    before_placed: bool  # the before components are in the history, at ``length``
    kept: tuple[tuple[Entry, OverlayItem], ...] = ()  # not sent again: still in the history


def size_of(items: tuple[OverlayItem, ...]) -> int:
    """How many native items ``items`` hold."""
    return sum(len(item.items) for item in items)


_FOREVER = 1 << 62


def plan_of(entry: Entry, episode: int) -> Plan:
    """What ``entry`` shows from ``episode`` until its phase next changes."""
    component = entry.component
    start = entry.start
    offset = episode - start
    cycle = periodic(component)
    if cycle is not None:  # one plan for good, shown by the period's arithmetic
        period, shown = cycle
        item = _shown(entry, component.phases[0])
        return Plan(episode, _FOREVER, item, False, -1, _before(item), period, shown, start)
    phase = visible_at(component, offset)
    change = next_change(component, offset)
    stop = _FOREVER if change is None else start + change.at
    if phase is None:
        return Plan(episode, stop, None, change is None, -1, False)
    item = _shown(entry, phase)
    final = change is not None and change.final
    return Plan(episode, stop, item, final, stop - 1 if final else -1, _before(item))


def _shown(entry: Entry, phase: Phase) -> OverlayItem:
    """The entry's overlay item in ``phase`` (made once per phase and content)."""
    item = entry.shown.get(phase)
    if item is None:
        item = entry.shown[phase] = OverlayItem(entry.key, phase, entry.natives)
    return item


def _before(item: OverlayItem) -> bool:
    placement = item.phase.placement
    match placement:
        case Placement.before:
            return True
        case Placement.after:
            return False
        case _:
            assert_never(placement)
