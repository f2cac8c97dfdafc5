"""Every session store behind one sync interface, for the contract suite.

``open_kind(kind, where)`` opens a new store object of one kind on the backing database
``where`` (a file path for SQLite, a DSN for PostgreSQL; ignored for memory, whose single object
is returned again). The async PostgreSQL store is driven through :class:`AsyncAsSync`, which
runs each coroutine on a private event loop, so the same tests exercise the async API.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from hydrangea.stores import (
    AsyncPostgresSessionStore,
    InMemorySessionStore,
    PostgresSessionStore,
    SessionInfo,
    SqliteSessionStore,
    StoredSession,
)
from hydrangea.stores.changes import Attach, SessionValue

T = TypeVar("T", bound=SessionValue)

KINDS = ("memory", "sqlite", "postgres", "postgres-async")


class AsyncAsSync:
    """The async store's coroutines, run to completion one by one."""

    def __init__(self, dsn: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.store: AsyncPostgresSessionStore = self.loop.run_until_complete(
            AsyncPostgresSessionStore.open(dsn, max_size=2)
        )

    def create(self, session_id: str, value: T) -> StoredSession[T]:
        return self.loop.run_until_complete(self.store.create(session_id, value))

    def load(self, session_id: str, kind: type[T], *, attach: Attach | None = None
             ) -> StoredSession[T]:
        return self.loop.run_until_complete(self.store.load(session_id, kind, attach=attach))

    def save(self, session: StoredSession[Any]) -> int:
        return self.loop.run_until_complete(self.store.save(session))

    @contextmanager
    def load_for_update(self, session_id: str, kind: type[T], *, attach: Attach | None = None
                        ) -> Iterator[StoredSession[T]]:
        manager = self.store.load_for_update(session_id, kind, attach=attach)
        session = self.loop.run_until_complete(manager.__aenter__())
        try:
            yield session
        except BaseException as exc:
            self.loop.run_until_complete(manager.__aexit__(type(exc), exc, exc.__traceback__))
            raise
        self.loop.run_until_complete(manager.__aexit__(None, None, None))

    def list_sessions(self) -> list[SessionInfo]:
        return self.loop.run_until_complete(self.store.list_sessions())

    def delete(self, session_id: str) -> None:
        self.loop.run_until_complete(self.store.delete(session_id))

    def close(self) -> None:
        self.loop.run_until_complete(self.store.close())
        self.loop.close()


AnyStore = InMemorySessionStore | SqliteSessionStore | PostgresSessionStore | AsyncAsSync


def open_kind(kind: str, where: str, memory: InMemorySessionStore) -> AnyStore:
    """A new store object of ``kind`` on ``where``."""
    if kind == "memory":
        return memory
    if kind == "sqlite":
        return SqliteSessionStore(where)
    if kind == "postgres":
        return PostgresSessionStore(where, max_size=2)
    if kind == "postgres-async":
        return AsyncAsSync(where)
    raise AssertionError(kind)


def close(store: AnyStore) -> None:
    """Close ``store`` if it has anything to close."""
    if not isinstance(store, InMemorySessionStore):
        store.close()
