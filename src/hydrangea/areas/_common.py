"""Small helpers shared by the ready-made areas (private).

* :func:`anchored_life` lets a finished area stay retained until its *anchor* retires, so that
  it is reclaimed together with the anchor's range instead of on its own.
* :func:`native_tokens` measures a provider-native item the way the demo measures a request:
  the token count of its compact JSON text.
* :func:`message_tokens` measures a generic message the same way (its pydantic JSON).
* :class:`Registration` lets an area know the CoopContext it was registered with, so that input
  it could never send (a user turn, a routed reply) is refused instead of silently dropped.
"""

from __future__ import annotations

import json

from hydrangea.asof.counting import TokenCounter
from hydrangea.context.area import AnyContextArea, AreaLifeState
from hydrangea.context.native import NativeContent
from hydrangea.errors import ContextStateError, DuplicateAreaError
from hydrangea.message import Message

__all__ = ["Registration", "anchored_life", "message_tokens", "native_tokens"]


class Registration:
    """The CoopContext an area belongs to: :meth:`on_register` is called by
    ``CoopContext.register`` before the area joins."""

    __slots__ = ("_registered_with",)

    def on_register(self, coop: object) -> None:
        """Remember ``coop``; refuse a second, different CoopContext (an area's range lives in
        one Context)."""
        current = getattr(self, "_registered_with", None)
        if current is not None and current is not coop:
            raise DuplicateAreaError(
                f"{self!r} is already registered with another CoopContext; create one area "
                "per CoopContext"
            )
        self._registered_with = coop

    @property
    def registered(self) -> bool:
        """Whether a CoopContext has registered this area."""
        return getattr(self, "_registered_with", None) is not None

    def _require_registered(self, what: str) -> None:
        if not self.registered:
            raise ContextStateError(
                f"{what} on {self!r}, which no CoopContext has registered: nothing would ever "
                "send it; call coop.register(area) first"
            )


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
