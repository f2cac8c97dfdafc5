"""The SQL of the SQLite and PostgreSQL session stores, written once for both engines.

Each operation is a generator of :class:`Step` objects (one statement, or one statement for many
rows); the driver runs each and sends back what it got (the row count, or the rows). The sync
SQLite and PostgreSQL drivers and the async PostgreSQL one run the same steps, so the three stores
cannot drift apart. Transactions are the driver's: every operation here runs inside one.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from hydrangea.errors import (
    SchemaVersionError,
    SerializationError,
    SessionConflictError,
    SessionNotFoundError,
)
from hydrangea.stores.base import SessionInfo
from hydrangea.stores.changes import Changes
from hydrangea.stores.loading import Rows

__all__ = ["LATEST", "POSTGRES", "SQLITE", "Dialect", "Step", "run"]


@dataclass(frozen=True, slots=True)
class Dialect:
    """How one engine spells parameters, JSON and a few types."""

    name: str
    param: str
    json_param: str
    as_text: str
    integer: str
    json: str
    timestamp: str
    serial: str
    for_update: str

    def sql(self, text: str) -> str:
        """``text`` with ``{p}``, ``{j}``, ``{t}``, ``{int}``, ``{json}``, ``{ts}`` filled in."""
        return text.format(p=self.param, j=self.json_param, t=self.as_text, int=self.integer,
                           json=self.json, ts=self.timestamp, serial=self.serial)

    def when(self, moment: datetime) -> object:
        """A timestamp parameter."""
        return moment.isoformat() if self.name == "sqlite" else moment

    def parse_when(self, value: object) -> datetime:
        """A timestamp column's value as an aware datetime (UTC)."""
        if isinstance(value, datetime):
            return value.astimezone(UTC)
        return datetime.fromisoformat(str(value)).astimezone(UTC)


SQLITE = Dialect("sqlite", "?", "?", "", "INTEGER", "TEXT", "TEXT", "INTEGER PRIMARY KEY", "")
POSTGRES = Dialect("postgresql", "%s", "%s::json", "::text", "BIGINT", "JSON", "TIMESTAMPTZ",
                   "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY", " FOR UPDATE")


@dataclass(frozen=True, slots=True)
class Step:
    """One statement to run: ``rows`` is ``None`` for one execution, else one per row."""

    sql: str
    params: Sequence[object] = ()
    rows: Sequence[Sequence[object]] | None = None
    fetch: bool = False
    """Send back the fetched rows (else the row count)."""


Ops = Generator[Step, Any, Any]

SCHEMA_TABLE = "hydrangea_schema"

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # version 1: sessions, their items, lifecycle segments and snapshots
    (
        """CREATE TABLE IF NOT EXISTS hydrangea_sessions (
            session_id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            gateway TEXT NOT NULL,
            version {int} NOT NULL,
            length {int} NOT NULL,
            state {json} NOT NULL,
            created_at {ts} NOT NULL,
            updated_at {ts} NOT NULL
        )""",
        """CREATE TABLE IF NOT EXISTS hydrangea_items (
            session_id TEXT NOT NULL,
            seq {int} NOT NULL,
            item {json} NOT NULL,
            PRIMARY KEY (session_id, seq)
        )""",
        """CREATE TABLE IF NOT EXISTS hydrangea_segments (
            session_id TEXT NOT NULL,
            seg {int} NOT NULL,
            parent {int},
            parent_len {int} NOT NULL,
            PRIMARY KEY (session_id, seg)
        )""",
        """CREATE TABLE IF NOT EXISTS hydrangea_segment_items (
            session_id TEXT NOT NULL,
            seg {int} NOT NULL,
            idx {int} NOT NULL,
            item {json} NOT NULL,
            PRIMARY KEY (session_id, seg, idx)
        )""",
        """CREATE TABLE IF NOT EXISTS hydrangea_snapshots (
            session_id TEXT NOT NULL,
            ord {int} NOT NULL,
            snapshot_id TEXT NOT NULL,
            body {json} NOT NULL,
            PRIMARY KEY (session_id, ord)
        )""",
    ),
    # version 2: list sessions by recency without a scan; the PostgreSQL record store's table
    (
        "CREATE INDEX IF NOT EXISTS hydrangea_sessions_updated ON hydrangea_sessions (updated_at)",
        """CREATE TABLE IF NOT EXISTS hydrangea_records (
            seq {serial},
            item_id TEXT NOT NULL UNIQUE,
            body {json} NOT NULL
        )""",
    ),
)

LATEST = len(MIGRATIONS)
"""The schema version this library writes."""


def schema_version(d: Dialect) -> Ops:
    """The stored schema version, 0 when the store is empty."""
    if d.name == "sqlite":
        found = yield Step("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?",
                           (SCHEMA_TABLE,), fetch=True)
    else:
        found = yield Step("SELECT to_regclass(%s)::text", (SCHEMA_TABLE,), fetch=True)
    if not found or found[0][0] is None:
        return 0
    rows = yield Step(f"SELECT version FROM {SCHEMA_TABLE} WHERE id = 1", fetch=True)
    if not rows:
        return 0
    found = rows[0][0]
    if type(found) is not int or found < 0:
        raise SchemaVersionError(
            f"table {SCHEMA_TABLE}, row id 1 holds schema version {found!r:.40}, which no "
            "version of the library writes: the table was edited; restore it from a backup"
        )
    return found


def run(ops: Ops, execute: Callable[[Step], Any]) -> Any:
    """Drive ``ops`` with a synchronous ``execute``; the operation's result."""
    try:
        step = next(ops)
        while True:
            step = ops.send(execute(step))
    except StopIteration as stop:
        return stop.value


def migrate(d: Dialect, current: int, target: int = LATEST) -> Ops:
    """Bring the schema from ``current`` to ``target`` (the driver holds the migration lock)."""
    if current == 0:
        yield Step(d.sql(f"CREATE TABLE IF NOT EXISTS {SCHEMA_TABLE} (id {{int}} PRIMARY KEY, "
                         "version {int} NOT NULL)"))
        yield Step(d.sql(f"INSERT INTO {SCHEMA_TABLE} (id, version) VALUES (1, 0) "
                         "ON CONFLICT (id) DO NOTHING"))
    for version in range(current + 1, target + 1):
        for statement in MIGRATIONS[version - 1]:
            yield Step(d.sql(statement))
        yield Step(d.sql(f"UPDATE {SCHEMA_TABLE} SET version = {{p}} WHERE id = 1"), (version,))


def _write(d: Dialect, session_id: str, changes: Changes) -> Ops:
    if changes.truncate_at is not None:
        for table in ("hydrangea_items",):
            yield Step(d.sql(f"DELETE FROM {table} WHERE session_id = {{p}} AND seq >= {{p}}"),
                       (session_id, changes.truncate_at))
    if changes.items:
        yield Step(
            d.sql("INSERT INTO hydrangea_items (session_id, seq, item) VALUES ({p}, {p}, {j})"),
            rows=[(session_id, changes.first_seq + i, text)
                  for i, text in enumerate(changes.items)],
        )
    if changes.segments:
        yield Step(
            d.sql("INSERT INTO hydrangea_segments (session_id, seg, parent, parent_len) "
                  "VALUES ({p}, {p}, {p}, {p})"),
            rows=[(session_id, *row) for row in changes.segments],
        )
    if changes.segment_items:
        yield Step(
            d.sql("INSERT INTO hydrangea_segment_items (session_id, seg, idx, item) "
                  "VALUES ({p}, {p}, {p}, {j})"),
            rows=[(session_id, *row) for row in changes.segment_items],
        )
    if changes.snapshots:
        yield Step(
            d.sql("INSERT INTO hydrangea_snapshots (session_id, ord, snapshot_id, body) "
                  "VALUES ({p}, {p}, {p}, {j})"),
            rows=[(session_id, *row) for row in changes.snapshots],
        )


def create(d: Dialect, session_id: str, changes: Changes) -> Ops:
    """Insert a new session at version 1; SessionConflictError if the id is taken."""
    now = d.when(datetime.now(UTC))
    count = yield Step(
        d.sql("INSERT INTO hydrangea_sessions (session_id, kind, gateway, version, length, "
              "state, created_at, updated_at) VALUES ({p}, {p}, {p}, 1, {p}, {j}, {p}, {p}) "
              "ON CONFLICT (session_id) DO NOTHING"),
        (session_id, changes.kind, changes.gateway, changes.length, changes.state, now, now),
    )
    if count != 1:
        raise SessionConflictError(f"a session is already stored under {session_id!r}")
    yield from _write(d, session_id, changes)
    return 1


def save(d: Dialect, session_id: str, version: int, changes: Changes) -> Ops:
    """Write ``changes`` over ``version``; the new version. The session row is updated first:
    on PostgreSQL that locks it, so two saves of one version cannot both pass."""
    count = yield Step(
        d.sql("UPDATE hydrangea_sessions SET version = version + 1, length = {p}, state = {j}, "
              "updated_at = {p} WHERE session_id = {p} AND version = {p} AND kind = {p}"),
        (changes.length, changes.state, d.when(datetime.now(UTC)), session_id, version,
         changes.kind),
    )
    if count != 1:
        rows = yield Step(
            d.sql("SELECT version, kind FROM hydrangea_sessions WHERE session_id = {p}"),
            (session_id,), fetch=True,
        )
        if not rows:
            raise SessionNotFoundError(f"no session is stored under {session_id!r} (deleted?)")
        stored, kind = rows[0]
        if kind != changes.kind:
            raise SessionConflictError(
                f"session {session_id!r} now holds a {kind} session, not a {changes.kind}"
            )
        raise SessionConflictError(
            f"session {session_id!r} is at version {stored}, not {version}: someone saved it "
            "since it was loaded; load it again, re-apply the turn and save"
        )
    yield from _write(d, session_id, changes)
    return version + 1


def load(d: Dialect, session_id: str, *, lock: bool = False) -> Ops:
    """The rows of a session, checked (numbers, positions, counts); SessionNotFoundError if
    there is none, SerializationError naming the table and row of anything edited."""
    head = yield Step(
        d.sql("SELECT kind, gateway, version, length, state{t} FROM hydrangea_sessions "
              "WHERE session_id = {p}") + (d.for_update if lock else ""),
        (session_id,), fetch=True,
    )
    if not head:
        raise SessionNotFoundError(f"no session is stored under {session_id!r}")
    kind, gateway, version, length, state = head[0]
    row = _Where("hydrangea_sessions", session_id)
    version = row.number(version, "version", 1)
    length = row.number(length, "length", 0)
    items = yield Step(
        d.sql("SELECT seq, item{t} FROM hydrangea_items WHERE session_id = {p} ORDER BY seq"),
        (session_id,), fetch=True,
    )
    _Where("hydrangea_items", session_id).positions([r[0] for r in items], "seq")
    if len(items) != length:
        raise SerializationError(
            f"table hydrangea_sessions, row {session_id!r}: the session should hold {length} "
            f"items but table hydrangea_items holds {len(items)} (rows deleted or added by "
            "hand); restore the database from a backup"
        )
    segments: list[Any] = []
    segment_items: list[Any] = []
    snapshots: list[Any] = []
    if kind == "lifecycle":
        segments = yield Step(
            d.sql("SELECT seg, parent, parent_len FROM hydrangea_segments "
                  "WHERE session_id = {p} ORDER BY seg"), (session_id,), fetch=True,
        )
        segment_items = yield Step(
            d.sql("SELECT seg, idx, item{t} FROM hydrangea_segment_items "
                  "WHERE session_id = {p} ORDER BY seg, idx"), (session_id,), fetch=True,
        )
        snapshots = yield Step(
            d.sql("SELECT ord, snapshot_id, body{t} FROM hydrangea_snapshots "
                  "WHERE session_id = {p} ORDER BY ord"), (session_id,), fetch=True,
        )
        seg_rows = _Where("hydrangea_segments", session_id)
        seg_rows.positions([r[0] for r in segments], "seg")
        for seg, parent, parent_len in segments:
            if parent is not None:
                seg_rows.number(parent, "parent", 0, at=f"seg {seg}")
            seg_rows.number(parent_len, "parent_len", 0, at=f"seg {seg}")
        per_segment: dict[int, list[object]] = {}
        for seg, idx, _ in segment_items:
            per_segment.setdefault(seg, []).append(idx)
        for seg, indexes in per_segment.items():
            _Where("hydrangea_segment_items", session_id).positions(indexes, "idx",
                                                                    at=f"seg {seg!r}")
        _Where("hydrangea_snapshots", session_id).positions([r[0] for r in snapshots], "ord")
    return Rows(
        kind=str(kind), gateway=str(gateway), version=version, length=length,
        state=str(state), items=[str(r[1]) for r in items],
        segments=[(a, b, c) for a, b, c in segments],
        segment_items=[(a, b, str(c)) for a, b, c in segment_items],
        snapshots=[(a, str(b), str(c)) for a, b, c in snapshots],
    )


@dataclass(frozen=True, slots=True)
class _Where:
    """One table's rows of one session, for the checks of :func:`load`."""

    table: str
    session_id: str

    def refuse(self, what: str, at: str) -> SerializationError:
        return SerializationError(
            f"table {self.table}, row (session {self.session_id!r}{', ' + at if at else ''}): "
            f"{what}; the row was edited outside the library: restore the database from a "
            "backup"
        )

    def number(self, value: object, column: str, least: int, *, at: str = "") -> int:
        if type(value) is not int or value < least:
            raise self.refuse(f"column {column} holds {value!r:.40}, not an integer of at least "
                              f"{least}", at)
        return value

    def positions(self, found: Sequence[object], column: str, *, at: str = "") -> None:
        """The ``column`` of ordered rows must run 0, 1, 2, ... with no gap."""
        for expected, value in enumerate(found):
            if value != expected or type(value) is not int:
                raise self.refuse(
                    f"column {column} holds {value!r:.40} where {expected} was expected "
                    "(a row moved, deleted or added)", f"{at + ', ' if at else ''}{column} "
                    f"{value!r:.40}")


def delete(d: Dialect, session_id: str) -> Ops:
    """Delete a session and its rows; SessionNotFoundError if there is none."""
    count = yield Step(d.sql("DELETE FROM hydrangea_sessions WHERE session_id = {p}"),
                       (session_id,))
    if count != 1:
        raise SessionNotFoundError(f"no session is stored under {session_id!r}")
    for table in ("hydrangea_items", "hydrangea_segments", "hydrangea_segment_items",
                  "hydrangea_snapshots"):
        yield Step(d.sql(f"DELETE FROM {table} WHERE session_id = {{p}}"), (session_id,))


def list_sessions(d: Dialect) -> Ops:
    """Every session, by id."""
    rows = yield Step(
        d.sql("SELECT session_id, kind, version, length, updated_at FROM hydrangea_sessions "
              "ORDER BY session_id"), fetch=True,
    )
    return [SessionInfo(str(a), str(b), int(c), int(e), d.parse_when(f))
            for a, b, c, e, f in rows]
