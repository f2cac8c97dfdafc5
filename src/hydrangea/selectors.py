"""Read-only depth selectors over a request, numbered as egregore numbers its context.

egregore addresses its context by coordinates ``"d<depth>, <position>, <offset>"``: depth 0 is
the newest turn, depth 1 the one before it; at each turn, position 0 is the turn's own message
and positions 1 and up are the components attached to it. This module reads a
:class:`~hydrangea.lifecycle.LifecycleRequest` the same way, so code and notes written against
egregore's coordinates keep their meaning:

* a **turn** is one item of the request's history, newest at depth 0, except the items of the
  components this request's episode sent (they are history too, but are attached instead);
* position 0 of a turn is that item; positions 1, 2 ... are the components the episode sent,
  attached to the turn they were placed in front of (``before``) or after (``after``: the
  newest turn), in request order;
* an offset picks one content block of the item (position 0: its ``content`` or ``parts``
  list) or one native item of the component (positions 1 and up).

Selectors only read. egregore's ``pact_insert`` / ``pact_update`` / ``pact_delete`` edit deep
history in place, which would change the prefix a provider bound a reply's reasoning to; here
components are added, updated and deleted by key on the :class:`~hydrangea.lifecycle.Lifecycle`
and are sent at the end of the history (see the docs page "Coming from egregore").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hydrangea.errors import SelectorError
from hydrangea.lifecycle.history import LifecycleRequest, OverlayItem
from hydrangea.providers.native import NativeContent

__all__ = ["Coordinates", "SelectorError", "Turn", "parse_selector", "select", "turns"]


@dataclass(frozen=True, slots=True)
class Coordinates:
    """A parsed selector: depth, and optionally position and offset."""

    depth: int
    position: int | None = None
    offset: int | None = None


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn of a request: its history item and the overlay components attached to it."""

    depth: int
    item: NativeContent
    attached: tuple[OverlayItem, ...]

    def position(self, position: int) -> NativeContent | OverlayItem:
        """Position 0 is the item; 1 and up the attached components."""
        if position == 0:
            return self.item
        if 1 <= position <= len(self.attached):
            return self.attached[position - 1]
        raise SelectorError(
            f"turn d{self.depth} has positions 0..{len(self.attached)}, not {position}"
        )


_SELECTOR = re.compile(r"\A\s*d(\d+)\s*(?:,\s*(\d+)\s*(?:,\s*(-?\d+)\s*)?)?\Z")


def parse_selector(selector: str) -> Coordinates:
    """Parse ``"d2"``, ``"d2, 1"`` or ``"d0, 1, 0"`` (spaces optional; the offset may be
    negative, counting from the end)."""
    if not isinstance(selector, str):
        kind = type(selector).__name__
        raise SelectorError(f"a selector is a string such as 'd0, 1', got {kind}")
    match = _SELECTOR.match(selector)
    if match is None:
        raise SelectorError(f"{selector!r} is not a selector such as 'd0', 'd2, 1' or 'd0, 1, 0'")
    depth, position, offset = match.groups()
    return Coordinates(
        int(depth),
        None if position is None else int(position),
        None if offset is None else int(offset),
    )


def turns(request: LifecycleRequest) -> tuple[Turn, ...]:
    """Every turn of ``request``, newest (depth 0) first."""
    history = request.history
    if request.in_history:
        before_size = sum(len(entry.items) for entry in request.before)
        after_size = sum(len(entry.items) for entry in request.after)
        start, end = request.anchor, request.anchor + before_size
        own = [i for i in range(len(history)) if not start <= i < end]
        own = own[: len(own) - after_size] if after_size else own
        if not own:
            return ()
        # the before run is attached to the first turn after it (the newest, if none follows)
        before_turn = next((n for n, i in enumerate(own) if i >= end), len(own) - 1)
    else:  # a request read from a version-0.1 file: its components were not history
        own = list(range(len(history)))
        if not own:
            return ()
        before_turn = min(request.anchor, len(history) - 1)
    out: list[Turn] = []
    newest = len(own) - 1
    for depth in range(len(own)):
        number = newest - depth
        attached: tuple[OverlayItem, ...] = ()
        if number == before_turn:
            attached += request.before
        if number == newest:
            attached += request.after
        out.append(Turn(depth, history[own[number]], attached))
    return tuple(out)


def select(request: LifecycleRequest, selector: str) -> Turn | NativeContent | OverlayItem | Any:
    """What ``selector`` addresses in ``request``: a :class:`Turn` (``"d1"``), an item or an
    attached component (``"d0, 1"``), or one block of either (``"d0, 0, 2"``)."""
    where = parse_selector(selector)
    every = turns(request)
    if where.depth >= len(every):
        raise SelectorError(f"the request has {len(every)} turns, so no d{where.depth}")
    turn = every[where.depth]
    if where.position is None:
        return turn
    chosen = turn.position(where.position)
    if where.offset is None:
        return chosen
    blocks: Sequence[Any] = chosen.items if isinstance(chosen, OverlayItem) else _blocks(chosen)
    if not -len(blocks) <= where.offset < len(blocks):
        raise SelectorError(f"{selector!r}: position has {len(blocks)} blocks")
    return blocks[where.offset]


def _blocks(item: NativeContent) -> list[Any]:
    """The content blocks of a native item, whatever its gateway calls them."""
    for key in ("content", "parts"):
        value = item.get(key)
        if isinstance(value, list):
            return value
        if isinstance(value, str):
            return [value]
    return [item]
