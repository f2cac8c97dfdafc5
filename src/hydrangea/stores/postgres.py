"""Sessions and records on PostgreSQL, through psycopg 3 and a connection pool (extra
``postgres``), for a fleet of workers on many machines.

* **One transaction per save.** The session row is updated first, ``WHERE version = loaded``:
  PostgreSQL locks that row, so of two workers saving the same version one waits, then finds
  the version moved and gets :class:`~hydrangea.errors.SessionConflictError`. A connection that
  drops mid-save leaves the previous version (the server rolls the transaction back).
* **Consistent loads**: a load reads all of a session's rows in one ``REPEATABLE READ`` snapshot.
* **Owning a session**: :meth:`PostgresSessionStore.load_for_update` runs the block in one
  transaction holding ``SELECT ... FOR UPDATE`` on the session row.
* **Schema** created and migrated by the library on open, under an advisory lock, with a
  version table; a role that may not create tables can use a schema that is already current.
* Item columns are ``JSON``, not ``JSONB``: JSONB reorders object keys, and provider output
  is kept as sent.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any, TypeVar

from hydrangea.asof.items import ContextItem
from hydrangea.asof.records import checked_record, lookup_id
from hydrangea.errors import (
    DuplicateItemError,
    HydrangeaError,
    RecordNotFoundError,
    RecordStoreError,
    StorePermissionError,
)
from hydrangea.stores import _pg, sql
from hydrangea.stores.base import SessionInfo, StoredSession, check_id
from hydrangea.stores.changes import Attach, SessionValue, changes_since
from hydrangea.stores.loading import assemble

__all__ = ["PostgresRecordStore", "PostgresSessionStore"]

_log = logging.getLogger(__name__)

T = TypeVar("T", bound=SessionValue)
_D = sql.POSTGRES


class _Pooled:
    """A connection pool with the schema checked, and error translation around its use."""

    def __init__(
        self, dsn: str, *, min_size: int, max_size: int, timeout: float, migrate: bool
    ) -> None:
        psycopg, pool_module = _pg.driver()
        self.where = _pg.describe(dsn)
        self.timeout = timeout
        try:
            with psycopg.connect(dsn, autocommit=True,
                                 connect_timeout=max(1, round(timeout))) as conn:
                self._prepare(conn, migrate)
        except (psycopg.Error, OSError) as exc:
            raise _pg.translate(exc, self.where, "open the session store") from exc
        self.pool = pool_module.ConnectionPool(
            dsn, min_size=min_size, max_size=max_size, timeout=timeout, open=False,
            kwargs={"autocommit": True}, check=pool_module.ConnectionPool.check_connection,
            name="hydrangea",
        )
        self.pool.open(wait=False)

    def _prepare(self, conn: Any, migrate: bool) -> None:
        current = sql.run(sql.schema_version(_D), lambda s: _pg.execute(conn, s))
        if not _pg.check_schema(current, migrate, self.where):
            return
        # A session-level lock taken outside the migrating transaction, and the version read
        # again in a new one: a transaction begun before another process's migration committed
        # may still see the schema without its tables.
        conn.execute("SELECT pg_advisory_lock(%s)", (_pg.MIGRATION_LOCK,))
        try:
            with conn.transaction():
                current = sql.run(sql.schema_version(_D), lambda s: _pg.execute(conn, s))
                if _pg.check_schema(current, migrate, self.where):
                    _log.info("migrating %s from schema %d to %d", self.where, current,
                              sql.LATEST)
                    sql.run(sql.migrate(_D, current), lambda s: _pg.execute(conn, s))
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_pg.MIGRATION_LOCK,))

    @contextmanager
    def transaction(
        self, doing: str, *, bound: Any = None, read_only: bool = False
    ) -> Iterator[Any]:
        """A connection inside a transaction (a savepoint on ``bound``); errors translated."""
        psycopg, pool_module = _pg.driver()
        try:
            if bound is not None:
                with bound.transaction():
                    yield bound
                return
            with self.pool.connection(timeout=self.timeout) as conn, conn.transaction():
                if read_only:
                    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                yield conn
        except (psycopg.Error, pool_module.PoolTimeout, pool_module.PoolClosed, OSError) as exc:
            raise _pg.translate(exc, self.where, doing) from exc

    def close(self) -> None:
        self.pool.close()


class PostgresSessionStore:
    """Sessions in a PostgreSQL database reached by ``dsn`` (a libpq connection string or URL).

    ``min_size``/``max_size`` bound the connection pool; ``timeout`` (seconds) bounds connecting
    and waiting for a pooled connection, after which
    :class:`~hydrangea.errors.StoreUnavailableError` is raised. Opening checks the schema:
    it creates or migrates it (``migrate=True``), or raises
    :class:`~hydrangea.errors.SchemaVersionError`. Thread-safe; close it when done.
    """

    __slots__ = ("_db",)

    def __init__(
        self,
        dsn: str,
        *,
        min_size: int = 1,
        max_size: int = 4,
        timeout: float = 10.0,
        migrate: bool = True,
    ) -> None:
        self._db = _Pooled(dsn, min_size=min_size, max_size=max_size, timeout=timeout,
                           migrate=migrate)

    def create(self, session_id: str, value: T) -> StoredSession[T]:
        """Store ``value`` as a new session (version 1); SessionConflictError if the id is
        taken."""
        check_id(session_id)
        changes = changes_since(value, None)
        with self._db.transaction(f"create session {session_id!r}") as conn:
            sql.run(sql.create(_D, session_id, changes), lambda s: _pg.execute(conn, s))
        return StoredSession(self, session_id, value, 1, changes.marks)

    def load(
        self, session_id: str, kind: type[T], *, attach: Attach | None = None
    ) -> StoredSession[T]:
        """The session under ``session_id`` as ``kind`` (see :class:`SessionStore`)."""
        check_id(session_id)
        with self._db.transaction(f"load session {session_id!r}", read_only=True) as conn:
            rows = sql.run(sql.load(_D, session_id), lambda s: _pg.execute(conn, s))
        value, marks = assemble(session_id, rows, kind, attach)
        return StoredSession(self, session_id, value, rows.version, marks)

    def save(self, session: StoredSession[Any]) -> int:
        """Write what changed in one transaction; the new version."""
        session._check(self)
        changes = changes_since(session.value, session._marks)
        with self._db.transaction(f"save session {session.session_id!r}",
                                  bound=session._bound) as conn:
            version = sql.run(sql.save(_D, session.session_id, session.version, changes),
                              lambda s: _pg.execute(conn, s))
        session.version = version
        session._marks = changes.marks
        return int(version)

    @contextmanager
    def load_for_update(
        self, session_id: str, kind: type[T], *, attach: Attach | None = None
    ) -> Iterator[StoredSession[T]]:
        """Load the session with its row locked (``SELECT ... FOR UPDATE``) in one transaction
        that lasts the block: other saves and ``load_for_update`` calls of this session wait.
        The block's saves commit at its end; an exception rolls them all back."""
        check_id(session_id)
        session: StoredSession[T] | None = None
        try:
            with self._db.transaction(f"lock session {session_id!r}") as conn:
                rows = sql.run(sql.load(_D, session_id, lock=True),
                               lambda s: _pg.execute(conn, s))
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

    def list_sessions(self) -> list[SessionInfo]:
        """Every stored session, by id."""
        with self._db.transaction("list sessions", read_only=True) as conn:
            found: list[SessionInfo] = sql.run(sql.list_sessions(_D),
                                               lambda s: _pg.execute(conn, s))
        return found

    def delete(self, session_id: str) -> None:
        """Remove the session; SessionNotFoundError if there is none."""
        check_id(session_id)
        with self._db.transaction(f"delete session {session_id!r}") as conn:
            sql.run(sql.delete(_D, session_id), lambda s: _pg.execute(conn, s))

    def close(self) -> None:
        """Close the pool."""
        self._db.close()

    def __enter__(self) -> PostgresSessionStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PostgresSessionStore({self._db.where!r})"


class PostgresRecordStore:
    """Full context records in PostgreSQL, with the SQLite record store's contract: a record
    id is write-once (the identical record again is a no-op, a different one under a taken id
    raises :class:`~hydrangea.errors.DuplicateItemError` and leaves the stored one)."""

    __slots__ = ("_db",)

    def __init__(
        self, dsn: str, *, min_size: int = 1, max_size: int = 4, timeout: float = 10.0,
        migrate: bool = True,
    ) -> None:
        try:
            self._db = _Pooled(dsn, min_size=min_size, max_size=max_size, timeout=timeout,
                               migrate=migrate)
        except HydrangeaError as exc:
            raise RecordStoreError(str(exc)) from exc

    @contextmanager
    def _tx(self, doing: str, read_only: bool = False) -> Iterator[Any]:
        try:
            with self._db.transaction(doing, read_only=read_only) as conn:
                yield conn
        except StorePermissionError:
            raise
        except HydrangeaError as exc:
            if isinstance(exc, DuplicateItemError | RecordNotFoundError | RecordStoreError):
                raise
            raise RecordStoreError(str(exc)) from exc

    def put(self, item: ContextItem) -> None:
        """Store ``item``; a no-op if the identical item is stored, DuplicateItemError if a
        different one is."""
        item = checked_record(item)
        body = item.model_dump_json()
        with self._tx(f"store record {item.item_id!r}") as conn:
            inserted = conn.execute(
                "INSERT INTO hydrangea_records (item_id, body) VALUES (%s, %s::json) "
                "ON CONFLICT (item_id) DO NOTHING", (item.item_id, body),
            ).rowcount
            if inserted == 1:
                return
            row = conn.execute("SELECT body::text FROM hydrangea_records WHERE item_id = %s",
                               (item.item_id,)).fetchone()
        if row is not None and row[0] != body and self._decode(item.item_id, row[0]) != item:
            raise DuplicateItemError(
                f"record {item.item_id!r} is already stored with different content; a stored "
                "record is never overwritten"
            )

    def get(self, item_id: str) -> ContextItem | None:
        """The record under ``item_id``, or ``None`` if there is none."""
        if lookup_id(item_id) is None:
            return None
        with self._tx(f"read record {item_id!r}", read_only=True) as conn:
            row = conn.execute("SELECT body::text FROM hydrangea_records WHERE item_id = %s",
                               (item_id,)).fetchone()
        return None if row is None else self._decode(item_id, row[0])

    def require(self, item_id: str) -> ContextItem:
        """The record under ``item_id``; :class:`RecordNotFoundError` if there is none."""
        found = self.get(item_id)
        if found is None:
            raise RecordNotFoundError(f"no record under {item_id!r}")
        return found

    def __contains__(self, item_id: object) -> bool:
        if not isinstance(item_id, str) or lookup_id(item_id) is None:
            return False
        with self._tx("look up a record", read_only=True) as conn:
            row = conn.execute("SELECT 1 FROM hydrangea_records WHERE item_id = %s",
                               (item_id,)).fetchone()
        return row is not None

    def ids(self) -> list[str]:
        """Every stored id, in the order the records were first stored."""
        with self._tx("list records", read_only=True) as conn:
            rows = conn.execute("SELECT item_id FROM hydrangea_records ORDER BY seq").fetchall()
        return [str(r[0]) for r in rows]

    def __len__(self) -> int:
        with self._tx("count records", read_only=True) as conn:
            row = conn.execute("SELECT count(*) FROM hydrangea_records").fetchone()
        return int(row[0])

    def close(self) -> None:
        """Close the pool."""
        self._db.close()

    def __enter__(self) -> PostgresRecordStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _decode(self, item_id: str, body: str) -> ContextItem:
        from pydantic import ValidationError

        try:
            item = ContextItem.model_validate_json(body)
        except ValidationError as exc:
            raise RecordStoreError(f"record {item_id!r} is not a valid context item: {exc}"
                                   ) from exc
        if item.item_id != item_id:
            raise RecordStoreError(f"the row for {item_id!r} holds record {item.item_id!r}")
        return item
