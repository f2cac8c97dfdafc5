"""The session store contract: a small Protocol, with the implementations beside it.

A session is a :class:`~hydrangea.context.Context`, a :class:`~hydrangea.coop.CoopContext`
(its own state: cursor, counters and each area's EffectRange; the areas are the caller's and are
registered again on load) or a :class:`~hydrangea.lifecycle.Lifecycle` (components, episode,
snapshots, and the CoopContext it drives), saved under a session id.

Every save goes through a :class:`StoredSession`: what :meth:`SessionStore.create` and
:meth:`SessionStore.load` return. It holds the value, the version it was loaded or last saved at,
and what the store already holds of it, so :meth:`SessionStore.save` writes only what changed
(O(new items)) and refuses, with :class:`~hydrangea.errors.SessionConflictError`, to overwrite a
version someone else saved in between (optimistic concurrency).
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager, AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from hydrangea.context.context import Context
from hydrangea.errors import StoreError, UnencodableTextError
from hydrangea.stores.changes import Attach, Marks, SessionValue
from hydrangea.text import first_unencodable

__all__ = ["AsyncSessionStore", "SessionInfo", "SessionStore", "StoredSession", "check_id"]

T = TypeVar("T", bound=SessionValue)
S = TypeVar("S", bound=SessionValue)

MAX_ID = 200
"""The longest session id a store accepts, in characters."""


def check_id(session_id: object) -> str:
    """``session_id`` if it is a usable id (a non-empty string of at most 200 characters)."""
    if not isinstance(session_id, str) or not session_id or len(session_id) > MAX_ID:
        raise StoreError(
            f"a session id is a non-empty string of at most {MAX_ID} characters, "
            f"got {session_id!r:.60}"
        )
    if "\x00" in session_id:
        raise StoreError("a session id cannot contain NUL characters")
    bad = first_unencodable(session_id)
    if bad is not None:
        raise UnencodableTextError(
            f"session id {session_id!r:.60} holds a lone surrogate U+{ord(session_id[bad]):04X} "
            f"at index {bad}, which no store can encode; use well-formed text"
        )
    return session_id


class StoredSession(Generic[T]):
    """A session as one store holds it: the value, its version, what is already written.

    Change :attr:`value` (render, append) and hand this object to the store's ``save()``.
    Not thread-safe, like the value it holds.
    """

    __slots__ = ("_bound", "_marks", "_store", "_valid", "session_id", "value", "version")

    def __init__(
        self, store: object, session_id: str, value: T, version: int, marks: Marks,
        *, bound: object = None,
    ) -> None:
        self._store = store
        self.session_id = session_id
        """The id the session is stored under."""
        self.value: T = value
        """The Context, CoopContext or Lifecycle."""
        self.version = version
        """The stored version this object is at (1 after create; +1 per save)."""
        self._marks = marks
        self._bound = bound
        self._valid = True

    def _invalidate(self) -> None:
        """After a ``load_for_update`` block that failed or whose commit failed: what this
        object holds (version, marks) may not be what the store holds."""
        self._valid = False
        self._bound = None

    @property
    def context(self) -> Context:
        """The session's Context."""
        value = self.value
        return value if isinstance(value, Context) else value.context

    def _check(self, store: object) -> None:
        if store is not self._store:
            raise StoreError(f"session {self.session_id!r} belongs to another store")
        if not self._valid:
            raise StoreError(
                f"session {self.session_id!r} can no longer be saved (its load_for_update "
                "block ended or failed); load it again"
            )

    def __repr__(self) -> str:
        return (f"StoredSession({self.session_id!r}, version {self.version}, "
                f"{type(self.value).__name__})")


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One stored session, as :meth:`SessionStore.list_sessions` reports it."""

    session_id: str
    kind: str
    """``"context"``, ``"coop"`` or ``"lifecycle"``."""
    version: int
    items: int
    """Items in the session's Context."""
    updated_at: datetime
    """When the latest save committed (UTC)."""


@runtime_checkable
class SessionStore(Protocol):
    """Saves and loads sessions by id. Implementations: :class:`InMemorySessionStore`,
    :class:`SqliteSessionStore` (the embedded default) and :class:`PostgresSessionStore`."""

    def create(self, session_id: str, value: T) -> StoredSession[T]:
        """Store ``value`` as a new session at version 1.

        :class:`~hydrangea.errors.SessionConflictError` if the id is taken."""
        ...

    def load(
        self, session_id: str, kind: type[T], *, attach: Attach | None = None
    ) -> StoredSession[T]:
        """The session stored under ``session_id``, rebuilt as ``kind``.

        ``kind`` is the class saved (``Context`` always works: the items alone). ``attach``
        builds what a CoopContext or Lifecycle attaches to, with the areas registered again in
        the same order. :class:`~hydrangea.errors.SessionNotFoundError` if there is none."""
        ...

    def save(self, session: StoredSession[Any]) -> int:
        """Write what changed since ``session`` was loaded or saved, in one transaction; the new
        version.

        :class:`~hydrangea.errors.SessionConflictError` if another save came in between
        (nothing is written: load again, re-apply, save)."""
        ...

    def load_for_update(
        self, session_id: str, kind: type[T], *, attach: Attach | None = None
    ) -> AbstractContextManager[StoredSession[T]]:
        """Load and lock the session for the ``with`` block: other ``load_for_update`` calls
        and saves of it wait until the block ends. Saves inside the block commit when it ends
        without an exception; an exception rolls them all back. If the block raised or its
        COMMIT failed, the :class:`StoredSession` can no longer be saved (load it again)."""
        ...

    def list_sessions(self) -> list[SessionInfo]:
        """Every stored session, by id."""
        ...

    def delete(self, session_id: str) -> None:
        """Remove the session and everything stored with it.

        :class:`~hydrangea.errors.SessionNotFoundError` if there is none."""
        ...


@runtime_checkable
class AsyncSessionStore(Protocol):
    """The same contract with coroutines (:class:`AsyncPostgresSessionStore`)."""

    async def create(self, session_id: str, value: T) -> StoredSession[T]:
        """See :meth:`SessionStore.create`."""
        ...

    async def load(
        self, session_id: str, kind: type[T], *, attach: Attach | None = None
    ) -> StoredSession[T]:
        """See :meth:`SessionStore.load`."""
        ...

    async def save(self, session: StoredSession[Any]) -> int:
        """See :meth:`SessionStore.save`."""
        ...

    def load_for_update(
        self, session_id: str, kind: type[T], *, attach: Attach | None = None
    ) -> AbstractAsyncContextManager[StoredSession[T]]:
        """See :meth:`SessionStore.load_for_update` (``async with``)."""
        ...

    async def list_sessions(self) -> list[SessionInfo]:
        """See :meth:`SessionStore.list_sessions`."""
        ...

    async def delete(self, session_id: str) -> None:
        """See :meth:`SessionStore.delete`."""
        ...

