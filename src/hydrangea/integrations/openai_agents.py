"""An OpenAI Agents SDK ``Session`` kept in a hydrangea Context and a hydrangea session store.

The Agents SDK runs on the OpenAI Responses API, and a ``Session`` holds its conversation as
Responses input items. :class:`HydrangeaSession` keeps those items in a
:class:`~hydrangea.Context` of the ``openai_responses`` gateway saved in any hydrangea session
store (in memory, SQLite, PostgreSQL, sync or async). It behaves as the SDK's own sessions do:

* **The store is the truth.** Every call reads what the store holds now, so two objects (two
  workers, two processes) on one session id see each other's writes. A change is one versioned
  save; when another worker saved in between, the change is applied again on what it saved
  (up to ``retries`` times), so concurrent ``add_items`` calls all land, each exactly once.
  A change that fails is not kept anywhere: the next call starts from the store again.
* **Items as sent.** ``get_items`` returns every item byte for byte as ``add_items`` took it
  (key order and ``null`` fields included): the Context holds the canonical form the library
  builds requests from, and where that differs from what the SDK gave, the item also carries
  the SDK's JSON text under :data:`SENT_KEY` (:attr:`HydrangeaSession.context` leaves it out).
* **Tool output fenced.** A ``function_call_output`` is text from outside: ``get_items``
  (which the SDK sends to the model) returns it inside the tool-output fence
  (:func:`hydrangea.tools.fence_tool_output`, as :class:`~hydrangea.areas.ToolLoopArea` sends
  it; each text part of a list output, images and files kept), unless its tool is named in
  ``trusted_tools``. The fence is applied on the way out, never stored, and never twice (an
  output that already is a fence, or this call's as-of fence from earlier versions, is left
  as it is); ``pop_item`` returns the stored item. An output stored by an earlier version
  (without :data:`FENCE_KEY`) is sent in the as-of fence that version sent it in, so a request
  already sent keeps its bytes across an upgrade. The SDK sends the outputs of
  the current run from memory: pass :meth:`HydrangeaSession.fence_model_input` as the run's
  ``call_model_input_filter`` to fence those too (the same bytes the next run's history has);
  without it the first request of each run shows the previous run's outputs fenced where that
  run sent them raw, and the prefix changes there.
* **Cache-safe prefix.** Items are only appended; ``pop_item`` and ``clear_session`` remove
  items from the tail only.
* ``limit`` as ``SQLiteSession``: ``None`` everything, ``n > 0`` the newest ``n``, ``0`` none,
  a negative number everything. ``close()`` ends the object (later calls raise
  :class:`~hydrangea.errors.ContextStateError`); the store is the caller's to close.

Install with the ``openai-agents`` extra. Example::

    from agents import Agent, Runner
    from hydrangea.integrations.openai_agents import HydrangeaSession
    from hydrangea.stores import SqliteSessionStore

    session = HydrangeaSession("user-42", SqliteSessionStore("sessions.db"))
    result = await Runner.run(agent, "Hello", session=session)
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import random
import time
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from hydrangea.context import Context
from hydrangea.errors import (
    ContextStateError,
    MissingExtraError,
    SessionConflictError,
    SessionNotFoundError,
)
from hydrangea.gateway import GatewayType
from hydrangea.integrations._tool_fence import fence_once
from hydrangea.providers.native import copy_json
from hydrangea.providers.openai.responses import OpenAIResponsesAdapter
from hydrangea.stores.base import check_id

try:
    from agents.memory import SessionSettings
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise MissingExtraError(
        "hydrangea.integrations.openai_agents needs the OpenAI Agents SDK: "
        "pip install 'hydrangea-context[openai-agents]'"
    ) from exc

if TYPE_CHECKING:
    from agents.items import TResponseInputItem
    from agents.run_config import CallModelData, ModelInputData

    from hydrangea.stores import AsyncSessionStore, SessionStore, StoredSession

__all__ = ["FENCE_KEY", "SENT_KEY", "HydrangeaSession"]

_log = logging.getLogger(__name__)

SENT_KEY = "hydrangea_sent"
"""The member of a stored item that holds the SDK's JSON text of it, when the Context's
canonical form (sorted keys, no nulls) differs from what the SDK gave."""
FENCE_KEY = "hydrangea_fence"
"""The member of a stored ``function_call_output`` that says it is sent in the tool-output
fence; one stored by an earlier version, without it, is sent in the as-of fence it was sent in
then."""
_TOOL_FENCE = "tool-output"
_MEMBERS = (SENT_KEY, FENCE_KEY)

_GATEWAY = GatewayType.openai_responses
_ADAPTER = OpenAIResponsesAdapter()
R = TypeVar("R")
Change = Callable[[Context], R]


class HydrangeaSession:
    """An Agents SDK ``Session`` whose items live in a hydrangea Context and session store.

    Args:
        session_id: The id the session is stored under (created on its first write).
        store: Where it is saved: any :class:`~hydrangea.stores.SessionStore` or
            :class:`~hydrangea.stores.AsyncSessionStore`; a process-local in-memory store by
            default.
        session_settings: The Agents SDK's session settings (``limit`` for get_items), or a
            dict of them.
        trusted_tools: Names of tools whose output is sent to the model as it is; every other
            ``function_call_output`` is fenced as untrusted.
        retries: How many times a change is applied again after another writer's save came
            in between, before :class:`~hydrangea.errors.SessionConflictError` is raised.
    """

    def __init__(
        self,
        session_id: str,
        store: SessionStore | AsyncSessionStore | None = None,
        *,
        session_settings: SessionSettings | dict[str, Any] | None = None,
        trusted_tools: Collection[str] = (),
        retries: int = 64,
    ) -> None:
        from agents.memory.session_settings import coerce_session_settings

        if store is None:
            from hydrangea.stores import InMemorySessionStore

            store = InMemorySessionStore()
        self.session_id = check_id(session_id)
        """The id the session is stored under."""
        self.session_settings: SessionSettings | None = (
            SessionSettings() if session_settings is None
            else coerce_session_settings(session_settings)
        )
        """The Agents SDK's settings for this session."""
        self.trusted_tools = frozenset(trusted_tools)
        """Tools whose output is not fenced."""
        self._store = store
        self._async = inspect.iscoroutinefunction(getattr(store, "load", None))
        self._retries = retries
        self._closed = False

    # -- the store ---------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ContextStateError(
                f"HydrangeaSession {self.session_id!r} is closed; open a new one on the store"
            )

    def _read_sync(self) -> Context | None:
        try:
            held: StoredSession[Context] = self._sync.load(self.session_id, Context)
        except SessionNotFoundError:
            return None
        return held.value

    async def _read(self) -> Context | None:
        if not self._async:
            return await asyncio.to_thread(self._read_sync)
        try:
            held: StoredSession[Context] = await self._aio.load(self.session_id, Context)
        except SessionNotFoundError:
            return None
        return held.value

    @property
    def _sync(self) -> SessionStore:
        return self._store  # type: ignore[return-value]

    @property
    def _aio(self) -> AsyncSessionStore:
        return self._store  # type: ignore[return-value]

    def _change_sync(self, change: Change[R], create: bool) -> R | None:
        for attempt in range(self._retries + 1):
            try:
                try:
                    held = self._sync.load(self.session_id, Context)
                except SessionNotFoundError:
                    if not create:
                        return None
                    fresh = Context(_GATEWAY)
                    result = change(fresh)
                    self._sync.create(self.session_id, fresh)
                    return result
                result = change(held.value)
                self._sync.save(held)
                return result
            except SessionConflictError:
                if attempt == self._retries:
                    raise
                time.sleep(_backoff(attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    async def _change(self, change: Change[R], *, create: bool) -> R | None:
        """Apply ``change`` to the stored Context and save it, again on a conflict; ``None``
        without calling it when the session does not exist and ``create`` is false."""
        if not self._async:
            return await asyncio.to_thread(self._change_sync, change, create)
        for attempt in range(self._retries + 1):
            try:
                try:
                    held = await self._aio.load(self.session_id, Context)
                except SessionNotFoundError:
                    if not create:
                        return None
                    fresh = Context(_GATEWAY)
                    result = change(fresh)
                    await self._aio.create(self.session_id, fresh)
                    return result
                result = change(held.value)
                await self._aio.save(held)
                return result
            except SessionConflictError:
                if attempt == self._retries:
                    raise
                await asyncio.sleep(_backoff(attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    # -- the Session protocol ----------------------------------------------------------------

    @property
    def context(self) -> Context:
        """The session's Context as the store holds it now, in canonical form (without the
        sent texts); a sync store only (read it, do not append to it)."""
        self._check_open()
        if self._async:
            raise ContextStateError("HydrangeaSession.context reads a sync store; with an "
                                    "async store use: await session.get_context()")
        return _canonical(self._read_sync())

    async def get_context(self) -> Context:
        """:attr:`context` for either kind of store."""
        self._check_open()
        return _canonical(await self._read())

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The session's items as sent, oldest first (the newest ``limit`` of them if given,
        else ``session_settings.limit``), tool output fenced unless its tool is trusted."""
        self._check_open()
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        context = await self._read()
        if context is None:
            return []
        items = context[:]
        chosen: Sequence[dict[str, Any]]
        if limit is None or limit < 0:
            chosen = items
        else:
            chosen = items[max(0, len(items) - limit):] if limit else []
        names = _call_names(items) if any(
            item.get("type") == "function_call_output" for item in chosen) else {}
        return [self._fenced(_sent(item), names, legacy=_is_legacy(item)) for item in chosen]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append ``items`` (all or nothing) and save; refused items change nothing."""
        self._check_open()
        if not items:
            return
        prepared = [_prepared(item) for item in items]

        def append(context: Context) -> None:
            context.extend(prepared)

        await self._change(append, create=True)

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the newest item, as it was added (``None`` if the session is
        empty), and save."""
        self._check_open()

        def pop(context: Context) -> Any:
            if not len(context):
                return None
            (item,) = context.detach_tail(len(context) - 1)
            return _sent(item)

        popped: TResponseInputItem | None = await self._change(pop, create=False)
        return popped

    async def clear_session(self) -> None:
        """Remove every item and save."""
        self._check_open()

        def clear(context: Context) -> None:
            context.detach_tail(0)

        await self._change(clear, create=False)

    def fence_model_input(self, data: CallModelData[Any]) -> ModelInputData:
        """A ``RunConfig.call_model_input_filter`` that fences the tool output of every model
        call as :meth:`get_items` does, the outputs produced inside the run included (the SDK
        sends those from memory, not from the session). Pass it so every request of a run
        extends the one before byte for byte::

            Runner.run(agent, text, session=session,
                       run_config=RunConfig(call_model_input_filter=session.fence_model_input))
        """
        from agents.run_config import ModelInputData

        items = list(data.model_data.input)
        names = _call_names(items)
        fenced = [self._fenced(item, names) for item in items]
        return ModelInputData(input=fenced, instructions=data.model_data.instructions)

    def close(self) -> None:
        """End this object: later calls raise ContextStateError. The store stays open."""
        self._closed = True

    # -- fencing -----------------------------------------------------------------------------

    def _fenced(self, item: Any, names: dict[str, str], *, legacy: bool = False) -> Any:
        if item.get("type") != "function_call_output":
            return item
        name = names.get(item.get("call_id"), "")
        if name in self.trusted_tools:
            return item
        output = item.get("output")
        call_id = str(item.get("call_id"))
        if isinstance(output, str):
            return {**item, "output": _fence(output, call_id, name, legacy)}
        if isinstance(output, list):
            parts = [
                {**part, "text": _fence(part["text"], call_id, name, legacy)}
                if isinstance(part, dict) and part.get("type") == "input_text"
                and isinstance(part.get("text"), str) else part
                for part in output
            ]
            return {**item, "output": parts}
        return item

    def __repr__(self) -> str:
        return f"HydrangeaSession({self.session_id!r}, {self._store!r})"


def _backoff(attempt: int) -> float:
    """Seconds to wait before applying a change again: growing, jittered, at most 50 ms."""
    return float(random.uniform(0, min(0.05, 0.001 * 2**attempt)))


def _prepared(item: Any) -> dict[str, Any]:
    """The item to store: a checked copy, with the SDK's text when the canonical form
    differs from it."""
    copied = copy_json(item, "an Agents SDK item")
    taken = [key for key in _MEMBERS if key in copied]
    if taken:
        from hydrangea.errors import InvalidItemError

        raise InvalidItemError(f"an Agents SDK item cannot have a {taken[0]!r} member "
                               "(the session keeps its own records there)")
    sent = json.dumps(copied, ensure_ascii=False)
    canonical = json.dumps(_ADAPTER.canonical(copied), ensure_ascii=False, sort_keys=True)
    stored = copied if sent == canonical else {**copied, SENT_KEY: sent}
    if copied.get("type") == "function_call_output":
        stored[FENCE_KEY] = _TOOL_FENCE
    return stored


def _is_legacy(item: Any) -> bool:
    """Whether ``item`` is a tool output an earlier version stored (and sent as-of fenced)."""
    return item.get("type") == "function_call_output" and FENCE_KEY not in item


def _sent(item: Any) -> Any:
    """The item as the SDK gave it: a plain, mutable copy."""
    text = item.get(SENT_KEY)
    if isinstance(text, str):
        return json.loads(text)
    copied: dict[str, Any] = json.loads(json.dumps(item))
    copied.pop(FENCE_KEY, None)
    return copied


def _canonical(context: Context | None) -> Context:
    if context is None:
        return Context(_GATEWAY)
    if not any(key in item for item in context for key in _MEMBERS):
        return context
    return Context(_GATEWAY, [{k: v for k, v in item.items() if k not in _MEMBERS}
                              for item in context])


def _call_names(items: Any) -> dict[str, str]:
    return {str(item["call_id"]): str(item.get("name", "")) for item in items
            if item.get("type") == "function_call" and "call_id" in item}


def _fence(text: str, call_id: str, name: str, legacy: bool) -> str:
    """``text`` inside the tool-output fence (the as-of fence for an output an earlier version
    stored), or as it is when it already is a fence (the legacy as-of fence recognised with the
    labels earlier versions gave this call)."""
    return fence_once(text, item_id=call_id or "-", origin=name or "tool", kind="tool",
                      legacy=legacy)
