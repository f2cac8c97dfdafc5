"""The embedded default: sessions in one SQLite file (WAL), shared by processes on one machine.

* **One transaction per save**, taken with ``BEGIN IMMEDIATE`` (the write lock up front), so two
  processes saving the same version serialize and the second gets
  :class:`~hydrangea.errors.SessionConflictError`. A process killed mid-save leaves the previous
  version: SQLite rolls the unfinished transaction back.
* **Durable**: WAL with ``synchronous=FULL``; a save returns once committed.
* **Shared**: WAL needs shared memory, so the file must be on a local disk. Writers wait for one
  another up to ``timeout`` seconds.
* **Versioned schema**, created and migrated on open (``migrate=False`` refuses instead).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from hydrangea.errors import (
    SchemaVersionError,
    StoreError,
    StorePermissionError,
    StoreUnavailableError,
)
from hydrangea.stores import sql
from hydrangea.stores.base import SessionInfo, StoredSession, check_id
from hydrangea.stores.changes import Attach, SessionValue, changes_since
from hydrangea.stores.loading import assemble

__all__ = ["SqliteSessionStore"]

_log = logging.getLogger(__name__)

T = TypeVar("T", bound=SessionValue)
_D = sql.SQLITE


def _error(exc: sqlite3.Error, path: Path, doing: str) -> StoreError:
    text = str(exc)
    if "readonly" in text or "read-only" in text:
        return StorePermissionError(f"cannot {doing} in {path}: the database is read-only")
    if isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
        return StoreUnavailableError(f"cannot {doing} in {path}: {text} (another writer held "
                                     "the lock past the timeout)")
    return StoreError(f"cannot {doing} in {path}: {text}")


class SqliteSessionStore:
    """Sessions in the SQLite file ``path`` (created with its schema if missing).

    ``timeout`` is how long an operation waits for another writer, in seconds. ``read_only``
    opens the file for reading only (a save raises
    :class:`~hydrangea.errors.StorePermissionError`). Safe to share between threads; one
    operation runs at a time per store object. Close it (or use ``with``) when done.
    """

    __slots__ = ("_conn", "_lock", "_path", "_read_only")

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        timeout: float = 30.0,
        read_only: bool = False,
        migrate: bool = True,
    ) -> None:
        self._path = Path(path)
        if "\x00" in str(self._path):
            raise StoreError(f"a SQLite path cannot contain NUL characters: {str(path)!r:.80}")
        self._read_only = read_only
        self._lock = threading.RLock()
        try:
            if read_only:
                if not self._path.exists():
                    raise StoreError(f"no session database at {self._path}")
                conn = sqlite3.connect(f"{self._path.absolute().as_uri()}?mode=ro", uri=True,
                                       timeout=timeout, isolation_level=None,
                                       check_same_thread=False)
            else:
                conn = sqlite3.connect(self._path, timeout=timeout, isolation_level=None,
                                       check_same_thread=False)
        except sqlite3.Error as exc:
            raise _error(exc, self._path, "open the session database") from exc
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            if not read_only:
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()
                if mode is None or str(mode[0]).lower() != "wal":
                    raise StoreError(f"session database {self._path} cannot use WAL "
                                     f"journaling (got {mode!r}); put it on a local disk")
                conn.execute("PRAGMA synchronous = FULL")
            self._conn = conn
            self._prepare(migrate)
        except sqlite3.Error as exc:
            conn.close()
            raise _error(exc, self._path, "prepare the session database") from exc
        except BaseException:
            conn.close()
            raise

    def _prepare(self, migrate: bool) -> None:
        current = sql.run(sql.schema_version(_D), self._execute)
        if current == sql.LATEST:
            return
        if current > sql.LATEST:
            raise SchemaVersionError(
                f"{self._path} has session schema version {current}; this version of the "
                f"library reads version {sql.LATEST}: upgrade hydrangea-context"
            )
        if not migrate or self._read_only:
            raise SchemaVersionError(
                f"{self._path} has session schema version {current}, this library needs "
                f"{sql.LATEST}; open it with migrate=True (and write access) to migrate"
            )
        with self._transaction("migrate the schema"):
            current = sql.run(sql.schema_version(_D), self._execute)
            if current < sql.LATEST:
                _log.info("migrating %s from schema %d to %d", self._path, current, sql.LATEST)
                sql.run(sql.migrate(_D, current), self._execute)

    @property
    def path(self) -> Path:
        """The database file."""
        return self._path

    # -- driver ------------------------------------------------------------------------------

    def _execute(self, step: sql.Step) -> Any:
        if step.rows is not None:
            return self._conn.executemany(step.sql, step.rows).rowcount
        cursor = self._conn.execute(step.sql, tuple(step.params))
        return cursor.fetchall() if step.fetch else cursor.rowcount

    @contextmanager
    def _transaction(self, doing: str, *, write: bool = True) -> Iterator[None]:
        with self._lock:
            if self._conn.in_transaction:  # inside load_for_update: a savepoint
                try:
                    self._conn.execute("SAVEPOINT hydrangea_save")
                    try:
                        yield
                    except BaseException:
                        self._conn.execute("ROLLBACK TO hydrangea_save")
                        self._conn.execute("RELEASE hydrangea_save")
                        raise
                    self._conn.execute("RELEASE hydrangea_save")
                except sqlite3.Error as exc:
                    raise _error(exc, self._path, doing) from exc
                return
            try:
                self._conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    yield
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise _error(exc, self._path, doing) from exc

    def _writable(self) -> None:
        if self._read_only:
            raise StorePermissionError(f"{self._path} was opened read-only")

    # -- the contract ------------------------------------------------------------------------

    def create(self, session_id: str, value: T) -> StoredSession[T]:
        """Store ``value`` as a new session (version 1); SessionConflictError if the id is
        taken."""
        check_id(session_id)
        self._writable()
        changes = changes_since(value, None)
        with self._transaction(f"create session {session_id!r}"):
            sql.run(sql.create(_D, session_id, changes), self._execute)
        return StoredSession(self, session_id, value, 1, changes.marks)

    def load(
        self, session_id: str, kind: type[T], *, attach: Attach | None = None
    ) -> StoredSession[T]:
        """The session under ``session_id`` as ``kind`` (see :class:`SessionStore`)."""
        check_id(session_id)
        with self._transaction(f"load session {session_id!r}", write=False):
            rows = sql.run(sql.load(_D, session_id), self._execute)
        value, marks = assemble(session_id, rows, kind, attach)
        return StoredSession(self, session_id, value, rows.version, marks)

    def save(self, session: StoredSession[Any]) -> int:
        """Write what changed in one transaction; the new version (see :class:`SessionStore`)."""
        session._check(self)
        self._writable()
        changes = changes_since(session.value, session._marks)
        with self._transaction(f"save session {session.session_id!r}"):
            version = sql.run(
                sql.save(_D, session.session_id, session.version, changes), self._execute
            )
        session.version = version
        session._marks = changes.marks
        return int(version)

    @contextmanager
    def load_for_update(
        self, session_id: str, kind: type[T], *, attach: Attach | None = None
    ) -> Iterator[StoredSession[T]]:
        """Hold the database's write lock (``BEGIN IMMEDIATE``) for the block and load the
        session in it. Other writers, in this process and others, wait until the block ends;
        the block's saves commit at its end, or roll back together if it raises."""
        check_id(session_id)
        self._writable()
        session: StoredSession[T] | None = None
        try:
            with self._lock, self._transaction(f"lock session {session_id!r}"):
                rows = sql.run(sql.load(_D, session_id), self._execute)
                value, marks = assemble(session_id, rows, kind, attach)
                session = StoredSession(self, session_id, value, rows.version, marks)
                yield session
        except BaseException:
            # The block raised (its saves are rolled back) or its COMMIT failed.
            if session is not None:
                session._invalidate()
            raise

    def list_sessions(self) -> list[SessionInfo]:
        """Every stored session, by id."""
        with self._transaction("list sessions", write=False):
            found: list[SessionInfo] = sql.run(sql.list_sessions(_D), self._execute)
        return found

    def delete(self, session_id: str) -> None:
        """Remove the session; SessionNotFoundError if there is none."""
        check_id(session_id)
        self._writable()
        with self._transaction(f"delete session {session_id!r}"):
            sql.run(sql.delete(_D, session_id), self._execute)

    def close(self) -> None:
        """Close the connection; committed sessions stay in the file."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> SqliteSessionStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SqliteSessionStore({str(self._path)!r})"
