"""An OpenAI Agents SDK ``Session`` kept in a hydrangea Context and a hydrangea session store.

The Agents SDK runs on the OpenAI Responses API, and a ``Session`` holds its conversation as
Responses input items. :class:`HydrangeaSession` keeps those items in a
:class:`~hydrangea.Context` of the ``openai_responses`` gateway and saves it, incrementally and
with optimistic concurrency, in any :class:`~hydrangea.stores.SessionStore` (in memory, SQLite,
PostgreSQL). What that gives an agent:

* **Cache-safe prefix.** Items are only appended; ``pop_item`` and ``clear_session`` remove
  items from the tail only, so the prefix the provider cached is never rewritten.
* **Model output kept as sent.** Reasoning items (``encrypted_content`` included) and built-in
  tool items are stored byte-identical, as ``Context.push_back`` keeps them.
* **Durable, shared sessions.** Each change is one versioned save; two workers that append to
  the same session get :class:`~hydrangea.errors.SessionConflictError` instead of a lost update.

Install with the ``openai-agents`` extra. Example::

    from agents import Agent, Runner
    from hydrangea.integrations.openai_agents import HydrangeaSession
    from hydrangea.stores import SqliteSessionStore

    session = HydrangeaSession("user-42", SqliteSessionStore("sessions.db"))
    result = await Runner.run(agent, "Hello", session=session)
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any

from hydrangea.context import Context
from hydrangea.errors import MissingExtraError, SessionNotFoundError
from hydrangea.gateway import GatewayType

try:
    from agents.memory import SessionSettings
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise MissingExtraError(
        "hydrangea.integrations.openai_agents needs the OpenAI Agents SDK: "
        "pip install 'hydrangea-context[openai-agents]'"
    ) from exc

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

    from hydrangea.stores import SessionStore, StoredSession

__all__ = ["HydrangeaSession"]


class HydrangeaSession:
    """An Agents SDK ``Session`` whose items live in a hydrangea Context and session store.

    Args:
        session_id: The id the session is stored under (created on first use).
        store: Where it is saved; a process-local in-memory store by default.
        session_settings: The Agents SDK's session settings (``limit`` for get_items).
    """

    def __init__(
        self,
        session_id: str,
        store: SessionStore | None = None,
        *,
        session_settings: SessionSettings | None = None,
    ) -> None:
        if store is None:
            from hydrangea.stores import InMemorySessionStore

            store = InMemorySessionStore()
        self.session_id = session_id
        """The id the session is stored under."""
        self.session_settings = session_settings
        """The Agents SDK's settings for this session."""
        self._store = store
        self._lock = threading.Lock()
        self._stored: StoredSession[Context] = self._open()

    def _open(self) -> StoredSession[Context]:
        try:
            return self._store.load(self.session_id, Context)
        except SessionNotFoundError:
            return self._store.create(self.session_id, Context(GatewayType.openai_responses))

    @property
    def context(self) -> Context:
        """The Context holding the session's items (read it, do not append to it directly)."""
        return self._stored.value

    def _items(self, limit: int | None) -> list[TResponseInputItem]:
        with self._lock:
            items = self._stored.value[:]
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        chosen = items if limit is None else (items[-limit:] if limit > 0 else ())
        return [_copy(item) for item in chosen]

    def _append(self, items: list[TResponseInputItem]) -> None:
        with self._lock:
            self._stored.value.extend([dict(item) for item in items])
            self._store.save(self._stored)

    def _pop(self) -> TResponseInputItem | None:
        with self._lock:
            context = self._stored.value
            if not len(context):
                return None
            (item,) = context.detach_tail(len(context) - 1)
            self._store.save(self._stored)
        popped: TResponseInputItem = _copy(item)
        return popped

    def _clear(self) -> None:
        with self._lock:
            self._stored.value.detach_tail(0)
            self._store.save(self._stored)

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The session's items, oldest first; the newest ``limit`` of them if given."""
        return await asyncio.to_thread(self._items, limit)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append ``items`` (all or nothing) and save."""
        await asyncio.to_thread(self._append, list(items))

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the newest item (``None`` if the session is empty), and save."""
        return await asyncio.to_thread(self._pop)

    async def clear_session(self) -> None:
        """Remove every item and save."""
        await asyncio.to_thread(self._clear)


def _copy(item: Any) -> Any:
    """A plain, mutable copy of a stored item (the Context's own items are read-only)."""
    if isinstance(item, dict):
        return {key: _copy(value) for key, value in item.items()}
    if isinstance(item, list | tuple):
        return [_copy(value) for value in item]
    return item
