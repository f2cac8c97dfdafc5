"""Reading a Context back as generic Messages, routing replies, and model switches.

* :func:`messages_of` turns native items into :class:`~hydrangea.message.Message` s through the
  adapter's ``to_messages``; id-less tool calls (Gemini, and Chat calls with ``"id": ""``) get
  the stable ids the pairing engine gives them over the whole history (``"<name>#<n>"``, see
  :mod:`hydrangea.providers.pairing`), so a ``ToolResultPart`` built from a call read back answers
  exactly that call.
* :func:`reply_of` joins the Messages of one model response into the single assistant reply
  an area's ``route()`` takes; :class:`Route` hands one reply to several areas
  (``context.push_back(output, route=Route(loop, conversation))``).
* :func:`same_model` and :func:`for_model` decide which stored items were produced by another
  model than the one a request is built for, and hand those to the adapter's
  ``for_other_model`` (which leaves out or converts reasoning state tied to a model).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Protocol

from hydrangea.errors import AreaUsageError
from hydrangea.message import Message, Part, Role
from hydrangea.providers.adapter import Adapter
from hydrangea.providers.native import NativeContent
from hydrangea.providers.pairing import stable_call_id

__all__ = [
    "ReplyRoute",
    "Route",
    "StableIds",
    "for_model",
    "messages_of",
    "reply_of",
    "same_model",
]


class ReplyRoute(Protocol):
    """Anything that takes a model reply: the ready-made areas' ``route(reply)``."""

    def route(self, reply: Message) -> object:
        """Take the assistant reply the Context just stored (what it returns is ignored)."""


class Route:
    """One reply for every area that needs it: a :class:`ReplyRoute` over several.

    ``context.push_back(output, route=Route(loop, conversation))`` routes the reply to ``loop``
    and then to ``conversation``, in the order given (a tool loop and the conversation that
    records the turn both need each reply). The areas are checked when the Route is made:
    each must have a callable ``route``, and none may be given twice
    (:class:`~hydrangea.errors.AreaUsageError` otherwise). If an area raises, the exception
    escapes and the areas after it are not called; ``push_back`` then takes its items out
    again, but the areas before it have taken the reply. So put first the areas that refuse a
    reply before changing anything (a :class:`~hydrangea.areas.ToolLoopArea` refuses an async
    tool, or a finished loop, before it runs a tool).
    """

    __slots__ = ("_areas",)

    def __init__(self, *areas: ReplyRoute) -> None:
        if not areas:
            raise AreaUsageError("a Route needs at least one area")
        for area in areas:
            if not callable(getattr(area, "route", None)):
                raise AreaUsageError(
                    f"{type(area).__name__} has no route(reply); give areas that take replies"
                )
        if len({id(area) for area in areas}) != len(areas):
            raise AreaUsageError("an area is given twice; it would take the reply twice")
        self._areas = areas

    @property
    def areas(self) -> tuple[ReplyRoute, ...]:
        """The areas, in the order they receive each reply."""
        return self._areas

    def route(self, reply: Message) -> None:
        """Hand ``reply`` to each area in order."""
        for area in self._areas:
            area.route(reply)

    async def aroute(self, reply: Message) -> None:
        """Hand ``reply`` to each area in order, awaiting ``aroute`` where an area has one
        (a ToolLoopArea with async tools)."""
        for area in self._areas:
            asynchronous = getattr(area, "aroute", None)
            if callable(asynchronous):
                await asynchronous(reply)
            else:
                area.route(reply)

    def __repr__(self) -> str:
        return f"Route({', '.join(type(a).__name__ for a in self._areas)})"


class StableIds:
    """The stable ids of one growing item list's id-less calls, counted once per item.

    A stable id (``"<name>#<n>"``, see :mod:`hydrangea.providers.pairing`) depends only on how
    many id-less calls of that name the items before it make, so a running count per name,
    with each item's id-less calls remembered, gives the ids of ``items[start:]`` in
    O(new items + len(items) - start) instead of pairing the whole history. :meth:`truncate`
    forgets items taken off the end (a detach, an append taken back).
    """

    __slots__ = ("_adapter", "_counts", "_idless", "_seen")

    def __init__(self, adapter: Adapter) -> None:
        self._adapter = adapter
        self._seen = 0
        self._counts: dict[str, int] = {}
        self._idless: dict[int, list[tuple[int, str]]] = {}  # index -> (slot, name), in order

    def truncate(self, length: int) -> None:
        """Forget the items from ``length`` on."""
        if length >= self._seen:
            return
        for index in [i for i in self._idless if i >= length]:
            for _, name in self._idless.pop(index):
                self._counts[name] -= 1
        self._seen = length

    def ids(self, items: Sequence[NativeContent], start: int) -> dict[int, dict[int, str]]:
        """The stable ids of the id-less calls of ``items[start:]``, by item index and slot
        (``items``: the list this tally follows, truncated as it was)."""
        for index in range(self._seen, len(items)):
            calls, _ = self._adapter.tool_sites(items[index])
            idless = [(call.slot, call.name) for call in calls if call.id is None]
            if idless:
                self._idless[index] = idless
                for _, name in idless:
                    self._counts[name] = self._counts.get(name, 0) + 1
        self._seen = len(items)
        later = [i for i in range(start, len(items)) if i in self._idless]
        counts = dict(self._counts)
        for index in later:
            for _, name in self._idless[index]:
                counts[name] -= 1
        ids: dict[int, dict[int, str]] = {}
        for index in later:
            for slot, name in self._idless[index]:
                counts[name] += 1
                ids.setdefault(index, {})[slot] = stable_call_id(name, counts[name])
        return ids


def messages_of(
    adapter: Adapter,
    items: Sequence[NativeContent],
    start: int = 0,
    stable_ids: StableIds | None = None,
) -> list[Message]:
    """The Messages of ``items[start:]``, with history-wide stable ids for id-less calls
    (counted by ``stable_ids`` when given: the tally that follows ``items``)."""
    ids: dict[int, dict[int, str]] = {}
    if adapter.pairs_by_name or adapter.has_idless_calls:
        if stable_ids is not None:
            ids = stable_ids.ids(items, start)
        else:
            ids = adapter.pairing(items).stable_ids(start)
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
