"""Sessions in this process's memory: for tests and single-process tools.

It keeps the same rows as the SQL stores (items as JSON text, so a loaded session never shares
objects with the saved one) and follows the same contract: versions, conflicts, incremental
saves, ``load_for_update`` (a per-session lock; an exception in the block undoes its saves).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, TypeVar

from hydrangea.errors import SessionConflictError, SessionNotFoundError
from hydrangea.stores.base import SessionInfo, StoredSession, check_id
from hydrangea.stores.changes import Attach, Changes, SessionValue, changes_since
from hydrangea.stores.loading import Rows, assemble

__all__ = ["InMemorySessionStore"]

T = TypeVar("T", bound=SessionValue)


@dataclass(slots=True)
class _Record:
    kind: str
    gateway: str
    version: int
    state: str
    updated_at: datetime
    items: list[str] = field(default_factory=list)
    segments: list[tuple[int, int | None, int]] = field(default_factory=list)
    segment_items: list[tuple[int, int, str]] = field(default_factory=list)
    snapshots: list[tuple[int, str, str]] = field(default_factory=list)

    def apply(self, changes: Changes) -> None:
        if changes.truncate_at is not None:
            del self.items[changes.truncate_at:]
        if len(self.items) != changes.first_seq:
            raise AssertionError("item rows out of step with the session")  # pragma: no cover
        self.items.extend(changes.items)
        self.segments.extend(changes.segments)
        self.segment_items.extend(changes.segment_items)
        self.snapshots.extend(changes.snapshots)
        self.state = changes.state
        self.updated_at = datetime.now(UTC)

    def copy(self) -> _Record:
        return replace(self, items=list(self.items), segments=list(self.segments),
                       segment_items=list(self.segment_items), snapshots=list(self.snapshots))


class InMemorySessionStore:
    """Process-local sessions; safe to share between threads."""

    __slots__ = ("_lock", "_locks", "_records")

    def __init__(self) -> None:
        self._records: dict[str, _Record] = {}
        self._lock = threading.Lock()
        self._locks: dict[str, threading.RLock] = {}

    def _session_lock(self, session_id: str) -> threading.RLock:
        with self._lock:
            return self._locks.setdefault(session_id, threading.RLock())

    def create(self, session_id: str, value: T) -> StoredSession[T]:
        """Store ``value`` as a new session (version 1)."""
        check_id(session_id)
        changes = changes_since(value, None)
        with self._session_lock(session_id), self._lock:
            if session_id in self._records:
                raise SessionConflictError(f"a session is already stored under {session_id!r}")
            record = _Record(changes.kind, changes.gateway, 1, changes.state, datetime.now(UTC))
            record.apply(changes)
            self._records[session_id] = record
        return StoredSession(self, session_id, value, 1, changes.marks)

    def _rows(self, session_id: str) -> Rows:
        with self._lock:
            record = self._records.get(session_id)
            if record is None:
                raise SessionNotFoundError(f"no session is stored under {session_id!r}")
            return Rows(record.kind, record.gateway, record.version, len(record.items),
                        record.state, list(record.items), list(record.segments),
                        list(record.segment_items), list(record.snapshots))

    def load(
        self, session_id: str, kind: type[T], *, attach: Attach | None = None
    ) -> StoredSession[T]:
        """The session under ``session_id`` as ``kind``."""
        check_id(session_id)
        rows = self._rows(session_id)
        value, marks = assemble(session_id, rows, kind, attach)
        return StoredSession(self, session_id, value, rows.version, marks)

    def save(self, session: StoredSession[Any]) -> int:
        """Write what changed; the new version."""
        session._check(self)
        changes = changes_since(session.value, session._marks)
        sid = session.session_id
        with self._session_lock(sid), self._lock:
            record = self._records.get(sid)
            if record is None:
                raise SessionNotFoundError(f"no session is stored under {sid!r} (deleted?)")
            if record.version != session.version or record.kind != changes.kind:
                raise SessionConflictError(
                    f"session {sid!r} is at version {record.version}, not {session.version}: "
                    "someone saved it since it was loaded; load it again, re-apply the turn "
                    "and save"
                )
            record.apply(changes)
            record.version += 1
            version = record.version
        session.version = version
        session._marks = changes.marks
        return version

    @contextmanager
    def load_for_update(
        self, session_id: str, kind: type[T], *, attach: Attach | None = None
    ) -> Iterator[StoredSession[T]]:
        """Lock the session for the block (other saves and locks of it wait)."""
        check_id(session_id)
        with self._session_lock(session_id):
            with self._lock:
                held = self._records.get(session_id)
                before = None if held is None else held.copy()
            session = self.load(session_id, kind, attach=attach)
            try:
                yield session
            except BaseException:
                session._valid = False
                with self._lock:
                    if before is not None:
                        self._records[session_id] = before
                raise

    def list_sessions(self) -> list[SessionInfo]:
        """Every stored session, by id."""
        with self._lock:
            return [SessionInfo(sid, r.kind, r.version, len(r.items), r.updated_at)
                    for sid, r in sorted(self._records.items())]

    def delete(self, session_id: str) -> None:
        """Remove the session; SessionNotFoundError if there is none."""
        check_id(session_id)
        with self._session_lock(session_id), self._lock:
            if self._records.pop(session_id, None) is None:
                raise SessionNotFoundError(f"no session is stored under {session_id!r}")

    def __repr__(self) -> str:
        return f"InMemorySessionStore({len(self._records)} sessions)"
