"""The PostgreSQL session store for asyncio: the same rows, SQL and contract as
:class:`~hydrangea.stores.PostgresSessionStore`, on psycopg's async connection pool.

Open it with ``store = await AsyncPostgresSessionStore.open(dsn)`` (the schema check needs the
event loop) and close it with ``await store.close()`` or ``async with``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, TypeVar

from hydrangea.stores import _pg, sql
from hydrangea.stores.base import SessionInfo, StoredSession, check_id
from hydrangea.stores.changes import Attach, SessionValue, changes_since
from hydrangea.stores.loading import assemble

__all__ = ["AsyncPostgresSessionStore"]

_log = logging.getLogger(__name__)

T = TypeVar("T", bound=SessionValue)
_D = sql.POSTGRES


class AsyncPostgresSessionStore:
    """Sessions in PostgreSQL for asyncio code; build it with :meth:`open`."""

    __slots__ = ("_pool", "_timeout", "_where")

    def __init__(self, pool: Any, where: str, timeout: float) -> None:
        """Use :meth:`open`; this wraps an opened ``psycopg_pool.AsyncConnectionPool``."""
        self._pool = pool
        self._where = where
        self._timeout = timeout

    @classmethod
    async def open(
        cls,
        dsn: str,
        *,
        min_size: int = 1,
        max_size: int = 4,
        timeout: float = 10.0,
        migrate: bool = True,
    ) -> AsyncPostgresSessionStore:
        """Connect, check (create, migrate) the schema and open the pool; see
        :class:`~hydrangea.stores.PostgresSessionStore` for the arguments."""
        psycopg, pool_module = _pg.driver()
        where = _pg.describe(dsn)
        try:
            conn = await psycopg.AsyncConnection.connect(
                dsn, autocommit=True, connect_timeout=max(1, round(timeout))
            )
            async with conn:
                current = await _pg.run_async(sql.schema_version(_D), conn)
                if _pg.check_schema(current, migrate, where):
                    # As the sync store: a session-level lock, the version read again in a
                    # new transaction.
                    await conn.execute("SELECT pg_advisory_lock(%s)", (_pg.MIGRATION_LOCK,))
                    try:
                        async with conn.transaction():
                            current = await _pg.run_async(sql.schema_version(_D), conn)
                            if _pg.check_schema(current, migrate, where):
                                _log.info("migrating %s to schema %d", where, sql.LATEST)
                                await _pg.run_async(sql.migrate(_D, current), conn)
                    finally:
                        await conn.execute("SELECT pg_advisory_unlock(%s)",
                                           (_pg.MIGRATION_LOCK,))
        except (psycopg.Error, OSError) as exc:
            raise _pg.translate(exc, where, "open the session store") from exc
        pool = pool_module.AsyncConnectionPool(
            dsn, min_size=min_size, max_size=max_size, timeout=timeout, open=False,
            kwargs={"autocommit": True},
            check=pool_module.AsyncConnectionPool.check_connection, name="hydrangea-async",
        )
        await pool.open(wait=False)
        return cls(pool, where, timeout)

    @asynccontextmanager
    async def _transaction(
        self, doing: str, *, bound: Any = None, read_only: bool = False
    ) -> AsyncIterator[Any]:
        psycopg, pool_module = _pg.driver()
        try:
            if bound is not None:
                async with bound.transaction():
                    yield bound
                return
            async with self._pool.connection(timeout=self._timeout) as conn, \
                    conn.transaction():
                if read_only:
                    await conn.execute(
                        "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"
                    )
                yield conn
        except (psycopg.Error, pool_module.PoolTimeout, pool_module.PoolClosed, OSError) as exc:
            raise _pg.translate(exc, self._where, doing) from exc

    async def create(self, session_id: str, value: T) -> StoredSession[T]:
        """Store ``value`` as a new session (version 1)."""
        check_id(session_id)
        changes = changes_since(value, None)
        async with self._transaction(f"create session {session_id!r}") as conn:
            await _pg.run_async(sql.create(_D, session_id, changes), conn)
        return StoredSession(self, session_id, value, 1, changes.marks)

    async def load(
        self, session_id: str, kind: type[T], *, attach: Attach | None = None
    ) -> StoredSession[T]:
        """The session under ``session_id`` as ``kind``."""
        check_id(session_id)
        async with self._transaction(f"load session {session_id!r}", read_only=True) as conn:
            rows = await _pg.run_async(sql.load(_D, session_id), conn)
        value, marks = assemble(session_id, rows, kind, attach)
        return StoredSession(self, session_id, value, rows.version, marks)

    async def save(self, session: StoredSession[Any]) -> int:
        """Write what changed in one transaction; the new version."""
        session._check(self)
        changes = changes_since(session.value, session._marks)
        async with self._transaction(f"save session {session.session_id!r}",
                                     bound=session._bound) as conn:
            version = await _pg.run_async(
                sql.save(_D, session.session_id, session.version, changes), conn
            )
        session.version = version
        session._marks = changes.marks
        return int(version)

    @asynccontextmanager
    async def load_for_update(
        self, session_id: str, kind: type[T], *, attach: Attach | None = None
    ) -> AsyncIterator[StoredSession[T]]:
        """``async with``: the session's row locked for the block (see the sync store)."""
        check_id(session_id)
        session: StoredSession[T] | None = None
        try:
            async with self._transaction(f"lock session {session_id!r}") as conn:
                rows = await _pg.run_async(sql.load(_D, session_id, lock=True), conn)
                value, marks = assemble(session_id, rows, kind, attach)
                session = StoredSession(self, session_id, value, rows.version, marks,
                                        bound=conn)
                yield session
        except BaseException:
            # The block raised or its COMMIT failed: the saves it made may not be stored.
            if session is not None:
                session._invalidate()
            raise
        assert session is not None
        session._bound = None

    async def list_sessions(self) -> list[SessionInfo]:
        """Every stored session, by id."""
        async with self._transaction("list sessions", read_only=True) as conn:
            found: list[SessionInfo] = await _pg.run_async(sql.list_sessions(_D), conn)
        return found

    async def delete(self, session_id: str) -> None:
        """Remove the session; SessionNotFoundError if there is none."""
        check_id(session_id)
        async with self._transaction(f"delete session {session_id!r}") as conn:
            await _pg.run_async(sql.delete(_D, session_id), conn)

    async def close(self) -> None:
        """Close the pool."""
        await self._pool.close()

    async def __aenter__(self) -> AsyncPostgresSessionStore:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"AsyncPostgresSessionStore({self._where!r})"
