"""Reading a Context back as generic Messages, routing replies, and model switches.

* :func:`messages_of` turns native items into :class:`~hydrangea.message.Message` s through the
  adapter's ``to_messages``; id-less tool calls (Gemini, and Chat calls with ``"id": ""``) get
  the stable ids the pairing engine gives them over the whole history (``"<name>#<n>"``, see
  :mod:`hydrangea.context.pairing`), so a ``ToolResultPart`` built from a call read back answers
  exactly that call.
* :func:`reply_of` joins the Messages of one model response into the single assistant reply
  an area's ``route()`` takes.
* :func:`same_model` and :func:`for_model` decide which stored items were produced by another
  model than the one a request is built for, and hand those to the adapter's
  ``for_other_model`` (which leaves out or converts reasoning state tied to a model).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Protocol

from hydrangea.context.adapter import Adapter
from hydrangea.context.native import NativeContent
from hydrangea.message import Message, Part, Role

__all__ = ["ReplyRoute", "for_model", "messages_of", "reply_of", "same_model"]


class ReplyRoute(Protocol):
    """Anything that takes a model reply: the ready-made areas' ``route(reply)``."""

    def route(self, reply: Message) -> None:
        """Take the assistant reply the Context just stored."""


def messages_of(adapter: Adapter, items: Sequence[NativeContent], start: int = 0) -> list[Message]:
    """The Messages of ``items[start:]``, with history-wide stable ids for id-less calls."""
    ids: dict[int, dict[int, str]] = {}
    if adapter.pairs_by_name or adapter.has_idless_calls:
        pairing = adapter.pairing(items)
        for (index, slot), call, ident in pairing.calls:
            if call.id is None and index >= start:
                ids.setdefault(index, {})[slot] = ident
    found: list[Message] = []
    for index in range(start, len(items)):
        found.extend(adapter.to_messages(items[index], ids.get(index, {})))
    return found


def reply_of(messages: Sequence[Message]) -> Message:
    """One assistant Message holding every part of the assistant ``messages`` in order.

    A response with nothing the generic form can hold (only reasoning, say) reads as an empty
    assistant text, so an area still learns that the model answered.
    """
    parts: list[Part] = [
        part for message in messages if message.role is Role.assistant for part in message.parts
    ]
    return Message(role=Role.assistant, content=tuple(parts) if parts else "")


_DATED = re.compile(r"(-\d{8}|-\d{4}-\d{2}-\d{2}|-latest|-0)$")


def _family(name: str) -> str:
    name = name.strip().lower().removeprefix("models/")
    return _DATED.sub("", name)


def same_model(produced_by: str, target: str) -> bool:
    """Whether a model name a response reported and the name a request is built for are one
    model: compared without a ``models/`` prefix and without a trailing date or alias suffix
    (``-20250514``, ``-2024-08-06``, ``-latest``, ``-0``), case-insensitively."""
    return _family(produced_by) == _family(target)


def for_model(
    adapter: Adapter,
    items: Sequence[NativeContent],
    produced_by: Mapping[int, str],
    target: str,
) -> list[NativeContent]:
    """``items`` as sent to ``target``: each item whose model (``produced_by`` maps the id of an
    item object to its model) is another model goes through ``adapter.for_other_model``."""
    kept: list[NativeContent] = []
    for item in items:
        model = produced_by.get(id(item))
        if model is None or same_model(model, target):
            kept.append(item)
            continue
        converted = adapter.for_other_model(item)
        if converted is not None:
            kept.append(converted)
    return kept
