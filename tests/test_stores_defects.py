"""Issue 24, one test per defect: a failed commit invalidates a ``load_for_update`` handle,
what cannot be stored is refused at the boundary, a fleet's first start migrates once, tampered
rows and raw driver errors become library errors naming what was wrong."""

from __future__ import annotations

import asyncio
import json
import math
import multiprocessing
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hydrangea.context import Context
from hydrangea.errors import (
    InputTooDeepError,
    InvalidItemError,
    SchemaVersionError,
    SerializationError,
    StoreError,
    StoreUnavailableError,
    UnencodableTextError,
)
from hydrangea.gateway import GatewayType
from hydrangea.stores import (
    AsyncPostgresSessionStore,
    InMemorySessionStore,
    PostgresSessionStore,
    SqliteSessionStore,
    open_store,
)
from tests.support.store_kinds import KINDS, close, open_kind
from tests.support.store_sessions import GATEWAY, new_lifecycle, turn

_TERMINATE = ("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
              "WHERE pid <> pg_backend_pid() AND state = 'idle in transaction'")


def _context(*labels: str) -> Context:
    context = Context(GATEWAY)
    for label in labels:
        turn(context, label)
    return context


def _labels(context: Context) -> list[str]:
    return [str(item["content"]) for item in context if item["role"] == "user"]


def _pg(dsn: str, statement: str, params: tuple[Any, ...] = ()) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(statement.encode(), params or None)


# -- a failed COMMIT ends the handle ---------------------------------------------------------


def test_sync_postgres_failed_commit_invalidates_the_handle(postgres_dsn: str) -> None:
    store = PostgresSessionStore(postgres_dsn, max_size=3)
    store.create("s", _context("one"))
    with pytest.raises(StoreUnavailableError), store.load_for_update("s", Context) as held:
        turn(held.value, "A1")
        store.save(held)
        _pg(postgres_dsn, _TERMINATE)  # the block's connection drops before COMMIT
    other = store.load("s", Context)
    turn(other.value, "B1")
    store.save(other)  # another worker takes the version the lost save had
    turn(held.value, "A2")
    with pytest.raises(StoreError, match="can no longer be saved"):
        store.save(held)
    assert _labels(store.load("s", Context).value) == ["user one", "user B1"]
    store.close()


def test_async_postgres_failed_commit_invalidates_the_handle(postgres_dsn: str) -> None:
    async def scenario() -> list[str]:
        store = await AsyncPostgresSessionStore.open(postgres_dsn, max_size=3)
        await store.create("s", _context("one"))
        held = None
        with pytest.raises(StoreUnavailableError):
            async with store.load_for_update("s", Context) as held:
                turn(held.value, "A1")
                await store.save(held)
                _pg(postgres_dsn, _TERMINATE)
        assert held is not None
        other = await store.load("s", Context)
        turn(other.value, "B1")
        await store.save(other)
        turn(held.value, "A2")
        with pytest.raises(StoreError, match="can no longer be saved"):
            await store.save(held)
        labels = _labels((await store.load("s", Context)).value)
        await store.close()
        return labels

    assert asyncio.run(scenario()) == ["user one", "user B1"]


class _FailingCommit:
    """A sqlite3 connection whose COMMIT fails (a full disk, an I/O error)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def execute(self, statement: str, *args: Any) -> Any:
        if statement == "COMMIT":
            raise sqlite3.OperationalError("disk I/O error")
        return self.conn.execute(statement, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)


def test_sqlite_failed_commit_invalidates_the_handle(tmp_path: Path) -> None:
    store = SqliteSessionStore(tmp_path / "s.db")
    store.create("s", _context("one"))
    real = store._conn
    with pytest.raises(StoreError, match="disk I/O"), \
            store.load_for_update("s", Context) as held:
        turn(held.value, "A1")
        store.save(held)
        store._conn = _FailingCommit(real)  # type: ignore[assignment]
    store._conn = real
    other = store.load("s", Context)
    turn(other.value, "B1")
    store.save(other)
    turn(held.value, "A2")
    with pytest.raises(StoreError, match="can no longer be saved"):
        store.save(held)
    assert _labels(store.load("s", Context).value) == ["user one", "user B1"]
    store.close()


# -- refused at the boundary -----------------------------------------------------------------


def test_an_integer_too_long_for_json_is_refused_by_push_back() -> None:
    context = _context("one")
    before = context.to_json()
    huge = math.factorial(2000)  # 5,736 digits
    assert huge > 10**4300  # more than 4,300 digits
    with pytest.raises(InvalidItemError, match="4300 digits"):
        context.push_back({"role": "user", "content": "x", "name": "n", "huge": huge})
    for item in ({"role": "tool", "tool_call_id": "c", "content": [huge]},
                 {"role": "user", "content": "x", "n": -huge}):
        with pytest.raises(InvalidItemError):
            context.push_back(item)
    assert context.to_json() == before
    fits = 10**4299  # 4,300 digits: what json reads and writes
    context.push_back({"role": "user", "content": "x", "n": fits})
    store = InMemorySessionStore()
    store.create("s", context)  # the session can be saved and read back
    assert store.load("s", Context).value[-1]["n"] == fits
    assert json.loads(json.dumps({"n": fits}))["n"] == fits


@pytest.mark.parametrize("depth", [490, 497, 503, 507, 511])
@pytest.mark.parametrize("gateway", list(GatewayType))
def test_tool_arguments_nested_up_to_the_documented_limit_push(
    gateway: GatewayType, depth: int
) -> None:
    nested: Any = []
    for _ in range(depth - 1):
        nested = [nested]
    context = Context(gateway)
    match gateway:
        case GatewayType.openai:
            context.push_back({"role": "user", "content": "q"})
            item: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f",
                                                            "arguments": "{}"}}],
                "audio": {"id": "a", "deep": nested}}
            wrapper_depth = 2
        case GatewayType.openai_responses:
            item = {"type": "file_search_call", "id": "fs", "status": "completed",
                    "queries": ["q"], "results": [{"attributes": {"deep": nested}}]}
            wrapper_depth = 4
        case GatewayType.anthropic:
            context.push_back({"role": "user", "content": "q"})
            item = {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t", "name": "f", "input": {"deep": nested}}]}
            wrapper_depth = 4
        case GatewayType.gemini:
            context.push_back({"role": "user", "parts": [{"text": "q"}]})
            item = {"role": "model", "parts": [
                {"functionCall": {"name": "f", "args": {"deep": nested}}}]}
            wrapper_depth = 5
    total = depth + wrapper_depth
    if total > 512:
        with pytest.raises(InputTooDeepError):
            context.push_back(item)
    else:
        context.push_back(item)
        assert Context.from_json(context.to_json()).to_json() == context.to_json()


def test_lone_surrogate_and_nul_ids_are_library_errors_on_every_store(
    tmp_path: Path, postgres_dsn: str
) -> None:
    memory = InMemorySessionStore()
    for kind in KINDS:
        store = open_kind(kind, postgres_dsn if "postgres" in kind else str(tmp_path / "i.db"),
                          memory)
        try:
            for bad in ("\ud800", "a\udfffb", "x" * 10 + "\udc80"):
                with pytest.raises(UnencodableTextError):
                    store.create(bad, _context("one"))
                with pytest.raises(UnencodableTextError):
                    store.load(bad, Context)
                with pytest.raises(UnencodableTextError):
                    store.delete(bad)
            with pytest.raises(StoreError):
                store.create("a\x00b", _context("one"))
            assert store.list_sessions() == []
        finally:
            close(store)


def test_nul_in_a_sqlite_path(tmp_path: Path) -> None:
    openings: list[Callable[[], object]] = [
        lambda: open_store(f"sqlite:{tmp_path}/a\x00b.db"),
        lambda: SqliteSessionStore(tmp_path / "a\x00b.db")]
    for opening in openings:
        with pytest.raises(StoreError, match="NUL"):
            opening()


# -- one migration, safe under a fleet -------------------------------------------------------


def _open_at(dsn: str, barrier: Any, results: Any, use_async: bool) -> None:
    barrier.wait()
    try:
        if use_async:
            async def go() -> None:
                store = await AsyncPostgresSessionStore.open(dsn, max_size=1)
                await store.close()
            asyncio.run(go())
        else:
            PostgresSessionStore(dsn, max_size=1).close()
        results.put("ok")
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        results.put(f"{type(exc).__name__}: {exc}")


@pytest.mark.parametrize("use_async", [False, True])
def test_a_fleet_opening_an_empty_schema_at_once_migrates_it_once(
    postgres_dsn: str, use_async: bool
) -> None:
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["hydrangea.stores", "psycopg", "psycopg_pool"])
    workers = 6
    barrier, results = ctx.Barrier(workers), ctx.Queue()
    procs = [ctx.Process(target=_open_at, args=(postgres_dsn, barrier, results, use_async))
             for _ in range(workers)]
    for proc in procs:
        proc.start()
    outcomes = [results.get(timeout=60) for _ in procs]
    for proc in procs:
        proc.join(30)
    assert outcomes == ["ok"] * workers
    store = PostgresSessionStore(postgres_dsn)
    store.create("s", _context("one"))
    assert _labels(store.load("s", Context).value) == ["user one"]
    store.close()


# -- loads verify what they read -------------------------------------------------------------


Edit = Callable[[Callable[[str], None]], None]


def _saved_lifecycle(store: Any) -> None:
    lc = new_lifecycle()
    held = store.create("lc", lc)
    for n in range(4):
        turn(lc.context, f"t{n}")
        lc.seal(f"s{n}")
        store.save(held)


def _tamper_cases() -> list[tuple[str, str, str]]:
    return [
        ("UPDATE hydrangea_items SET seq = 9 WHERE session_id = 'c' AND seq = 1",
         "hydrangea_items", "seq"),
        ("DELETE FROM hydrangea_items WHERE session_id = 'c' AND seq = 3",
         "hydrangea_items", "seq"),
        ("DELETE FROM hydrangea_items WHERE session_id = 'c' AND seq = 5",
         "hydrangea_sessions", "items"),
        ("INSERT INTO hydrangea_items (session_id, seq, item) VALUES "
         "('c', 6, '{\"role\": \"user\", \"content\": \"planted\"}')",
         "hydrangea_sessions", "items"),
        ("UPDATE hydrangea_sessions SET version = 0 WHERE session_id = 'c'",
         "hydrangea_sessions", "version"),
        ("UPDATE hydrangea_sessions SET length = -1 WHERE session_id = 'c'",
         "hydrangea_sessions", "length"),
        ("DELETE FROM hydrangea_snapshots WHERE session_id = 'lc' AND ord = 1",
         "hydrangea_snapshots", "ord"),
        ("UPDATE hydrangea_segments SET seg = 40 WHERE session_id = 'lc' AND seg = 0",
         "hydrangea_segments", "seg"),
        ("UPDATE hydrangea_items SET item = '" + "[" * 3000 + "]" * 3000
         + "' WHERE session_id = 'c' AND seq = 0", "", "nests too deeply"),
    ]


@pytest.mark.parametrize(("statement", "table", "what"), _tamper_cases())
def test_tampered_sqlite_rows_are_refused_naming_the_table(
    tmp_path: Path, statement: str, table: str, what: str
) -> None:
    path = tmp_path / "t.db"
    store = SqliteSessionStore(path)
    store.create("c", _context("a", "b", "c"))
    _saved_lifecycle(store)
    with sqlite3.connect(path) as db:
        db.execute(statement)
    kind = Context if "'c'" in statement else type(new_lifecycle())
    with pytest.raises(SerializationError, match=what) as caught:
        store.load("c" if "'c'" in statement else "lc", kind)
    assert table in str(caught.value)
    store.close()


@pytest.mark.parametrize(("statement", "table", "what"), _tamper_cases())
def test_tampered_postgres_rows_are_refused_naming_the_table(
    postgres_dsn: str, statement: str, table: str, what: str
) -> None:
    store = PostgresSessionStore(postgres_dsn)
    store.create("c", _context("a", "b", "c"))
    _saved_lifecycle(store)
    _pg(postgres_dsn, statement)
    kind = Context if "'c'" in statement else type(new_lifecycle())
    with pytest.raises(SerializationError, match=what) as caught:
        store.load("c" if "'c'" in statement else "lc", kind)
    assert table in str(caught.value)
    store.close()


@pytest.mark.parametrize("column", ["seq", "version", "length"])
def test_text_in_a_numeric_sqlite_column(tmp_path: Path, column: str) -> None:
    path = tmp_path / "n.db"
    store = SqliteSessionStore(path)
    store.create("c", _context("a", "b"))
    table = "hydrangea_items" if column == "seq" else "hydrangea_sessions"
    with sqlite3.connect(path) as db:
        db.execute(f"UPDATE {table} SET {column} = 'x' WHERE rowid = (SELECT min(rowid) "
                   f"FROM {table})")
    with pytest.raises(SerializationError, match=table):
        store.load("c", Context)
    store.close()


def test_a_negative_or_textual_schema_version(tmp_path: Path, postgres_dsn: str) -> None:
    for value in ("-1", "'two'"):
        path = tmp_path / f"v{len(value)}.db"
        SqliteSessionStore(path).close()
        with sqlite3.connect(path) as db:
            db.execute(f"UPDATE hydrangea_schema SET version = {value}")
        with pytest.raises(SchemaVersionError, match="hydrangea_schema"):
            SqliteSessionStore(path)
    PostgresSessionStore(postgres_dsn).close()
    _pg(postgres_dsn, "UPDATE hydrangea_schema SET version = -1")
    with pytest.raises(SchemaVersionError, match="hydrangea_schema"):
        PostgresSessionStore(postgres_dsn)


def test_an_untampered_lifecycle_still_loads(tmp_path: Path) -> None:
    store = SqliteSessionStore(tmp_path / "ok.db")
    _saved_lifecycle(store)
    loaded = store.load("lc", type(new_lifecycle())).value
    assert [user for user in _labels(loaded.context)] == [f"user t{n}" for n in range(4)]
    assert len(loaded.history) == 4
    store.close()
