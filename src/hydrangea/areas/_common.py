"""Small helpers shared by the ready-made areas (private).

* :func:`anchored_life` lets a finished area stay retained until its *anchor* retires, so that
  it is reclaimed together with the anchor's range instead of on its own.
* :func:`native_tokens` measures a provider-native item the way the demo measures a request:
  the token count of its compact JSON text.
* :func:`message_tokens` measures a generic message the same way (its pydantic JSON).
"""

from __future__ import annotations

import json

from hydrangea.asof.counting import TokenCounter
from hydrangea.context.area import AnyContextArea, AreaLifeState
from hydrangea.errors import DuplicateAreaError
from hydrangea.message import Message
from hydrangea.providers.native import NativeContent

__all__ = ["anchored_life", "message_tokens", "native_tokens", "registered_with"]


def anchored_life(finished: bool, anchor: AnyContextArea | None) -> AreaLifeState:
    """``retired`` once the area has ``finished`` and its anchor (if any) is retired too.

    Both inputs only ever move one way (an area's life state is monotonic), so the result does
    as well.
    """
    if not finished:
        return AreaLifeState.retain
    if anchor is None:
        return AreaLifeState.retired
    return anchor.life_state


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""``json.dumps(..., ensure_ascii=False, separators=(",", ":"))``, made once."""


def native_tokens(item: NativeContent, counter: TokenCounter) -> int:
    """Tokens of ``item``'s compact JSON text (keys, reasoning state and all)."""
    return counter.count(_COMPACT.encode(item))


def message_tokens(message: Message, counter: TokenCounter) -> int:
    """Tokens of ``message``'s JSON text (``model_dump_json()``)."""
    return counter.count(message.model_dump_json())


def registered_with(area: object, current: object | None, coop: object, noun: str) -> object:
    """The CoopContext ``area`` belongs to once ``coop`` registers it (an area's range lives in
    one Context): ``coop``; a second, different one raises
    :class:`~hydrangea.errors.DuplicateAreaError`."""
    if current is not None and current is not coop:
        raise DuplicateAreaError(
            f"{area!r} is already registered with another CoopContext; create one {noun} per "
            "CoopContext"
        )
    return coop
