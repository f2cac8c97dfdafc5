"""Failures: an unreachable server, a wrong or old schema, a read-only role or file, a
connection that drops mid-save, a missing extra. Each gives its own clear error, and nothing
falls back to another store or half-writes a session."""

from __future__ import annotations

import socket
import sqlite3
import sys
import threading
import time
from pathlib import Path

import pytest

from hydrangea.context import Context
from hydrangea.errors import (
    MissingExtraError,
    SchemaVersionError,
    StorePermissionError,
    StoreUnavailableError,
)
from hydrangea.stores import PostgresSessionStore, SqliteSessionStore, open_store
from hydrangea.stores import sql as store_sql
from tests.support.pgserver import PostgresServer, schema_dsn
from tests.support.store_sessions import GATEWAY, observed, turn


def _context(*labels: str) -> Context:
    context = Context(GATEWAY)
    for label in labels:
        turn(context, label)
    return context


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_unreachable_tcp_server(tmp_path: Path) -> None:
    dsn = f"postgresql://postgres@127.0.0.1:{_free_port()}/postgres"
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError, match="unreachable") as caught:
        PostgresSessionStore(dsn, timeout=2)
    assert time.monotonic() - started < 10
    assert isinstance(caught.value, ConnectionError)
    assert "127.0.0.1" in str(caught.value)


def test_unreachable_socket_and_no_password_in_the_message(tmp_path: Path) -> None:
    dsn = f"postgresql://agent:s3cret@/postgres?host={tmp_path}"
    with pytest.raises(StoreUnavailableError) as caught:
        PostgresSessionStore(dsn, timeout=2)
    assert "s3cret" not in str(caught.value)


def test_server_stopped_after_open(postgres_dsn: str, postgres_server: PostgresServer) -> None:
    # A second, private server that we can stop under the store.
    server = PostgresServer().start()
    try:
        store = PostgresSessionStore(server.dsn, timeout=2)
        saved = store.create("s1", _context("one"))
        server.stop()
        turn(saved.value, "two")
        with pytest.raises(StoreUnavailableError):
            store.save(saved)
        store.close()
    finally:
        server.stop()


def test_postgres_schema_from_a_newer_library(postgres_dsn: str) -> None:
    PostgresSessionStore(postgres_dsn).close()
    _pg_exec(postgres_dsn, "UPDATE hydrangea_schema SET version = 99")
    with pytest.raises(SchemaVersionError, match="version 99"):
        PostgresSessionStore(postgres_dsn)


def test_postgres_migrates_an_older_schema(postgres_dsn: str) -> None:
    _pg_apply(postgres_dsn, store_sql.migrate(store_sql.POSTGRES, 0, 1))
    with pytest.raises(SchemaVersionError, match="migrate=True"):
        PostgresSessionStore(postgres_dsn, migrate=False)
    with PostgresSessionStore(postgres_dsn) as store:
        store.create("s1", _context("one"))
    assert _pg_version(postgres_dsn) == store_sql.LATEST


def test_sqlite_schema_versions(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with sqlite3.connect(path) as conn:
        for step in _steps(store_sql.migrate(store_sql.SQLITE, 0, 1)):
            conn.execute(step.sql, tuple(step.params))
    with pytest.raises(SchemaVersionError, match="migrate=True"):
        SqliteSessionStore(path, migrate=False)
    with SqliteSessionStore(path) as store:
        store.create("s1", _context("one"))
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE hydrangea_schema SET version = 7")
    with pytest.raises(SchemaVersionError, match="version 7"):
        SqliteSessionStore(path)


def test_read_only_postgres_role(postgres_server: PostgresServer) -> None:
    dsn = schema_dsn(postgres_server, "ro_test")
    with PostgresSessionStore(dsn) as owner:
        owner.create("s1", _context("one"))
    postgres_server.psql("CREATE ROLE reader LOGIN")
    postgres_server.psql("GRANT USAGE ON SCHEMA ro_test TO reader")
    postgres_server.psql("GRANT SELECT ON ALL TABLES IN SCHEMA ro_test TO reader")
    reader_dsn = dsn.replace("postgres@", "reader@", 1)
    with PostgresSessionStore(reader_dsn) as reader:
        loaded = reader.load("s1", Context)  # reading works
        turn(loaded.value, "two")
        with pytest.raises(StorePermissionError, match="may not write") as caught:
            reader.save(loaded)
        assert isinstance(caught.value, PermissionError)
        with pytest.raises(StorePermissionError):
            reader.create("s2", _context("x"))
    with PostgresSessionStore(dsn) as owner:
        assert owner.load("s1", Context).version == 1


def test_read_only_role_cannot_create_the_schema(postgres_server: PostgresServer) -> None:
    dsn = schema_dsn(postgres_server, "ro_empty")
    postgres_server.psql("CREATE ROLE empty_reader LOGIN")
    postgres_server.psql("GRANT USAGE ON SCHEMA ro_empty TO empty_reader")
    with pytest.raises(StorePermissionError):
        PostgresSessionStore(dsn.replace("postgres@", "empty_reader@", 1))


def test_read_only_transactions(postgres_dsn: str) -> None:
    with PostgresSessionStore(postgres_dsn) as store:
        store.create("s1", _context("one"))
    ro = postgres_dsn.replace("options=", "options=-cdefault_transaction_read_only%3Don%20", 1)
    with PostgresSessionStore(ro) as store:
        loaded = store.load("s1", Context)
        turn(loaded.value, "two")
        with pytest.raises(StorePermissionError):
            store.save(loaded)


def test_read_only_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SqliteSessionStore(path) as store:
        store.create("s1", _context("one"))
    with SqliteSessionStore(path, read_only=True) as reader:
        loaded = reader.load("s1", Context)
        turn(loaded.value, "two")
        with pytest.raises(StorePermissionError):
            reader.save(loaded)
    with SqliteSessionStore(path) as store:
        assert observed(store.load("s1", Context).value) == observed(_context("one"))


def test_dropped_connection_mid_save_keeps_the_previous_version(
    postgres_dsn: str, postgres_server: PostgresServer
) -> None:
    import psycopg

    store = PostgresSessionStore(postgres_dsn, timeout=5)
    saved = store.create("s1", _context("one"))
    for label in ("two", "three"):
        turn(saved.value, label)
    outcome: list[BaseException | int] = []
    # Hold the session row so the save blocks inside its transaction, after it started.
    with psycopg.connect(postgres_dsn, autocommit=True) as holder, \
            psycopg.connect(postgres_dsn, autocommit=True) as watcher:
        holder.execute("BEGIN")
        holder.execute("SELECT 1 FROM hydrangea_sessions WHERE session_id = 's1' FOR UPDATE")

        def save() -> None:
            try:
                outcome.append(store.save(saved))
            except BaseException as exc:  # noqa: BLE001 - recorded for the assertion
                outcome.append(exc)

        thread = threading.Thread(target=save)
        thread.start()
        pid = None
        for _ in range(100):
            row = watcher.execute(
                "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND query LIKE 'UPDATE hydrangea_sessions%'"
            ).fetchone()
            if row is not None:
                pid = row[0]
                break
            time.sleep(0.05)
        assert pid is not None, "the save never reached its UPDATE"
        watcher.execute("SELECT pg_terminate_backend(%s)", (pid,))
        thread.join(30)
        holder.execute("ROLLBACK")
    assert len(outcome) == 1 and isinstance(outcome[0], StoreUnavailableError)
    loaded = store.load("s1", Context)
    assert loaded.version == 1
    assert observed(loaded.value) == observed(_context("one"))
    # the same handle saves fine once the connection is back (the pool replaces it)
    assert store.save(saved) == 2
    assert observed(store.load("s1", Context).value) == observed(saved.value)
    store.close()


def test_missing_driver_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(MissingExtraError, match=r"hydrangea-context\[postgres\]"):
        PostgresSessionStore("postgresql://localhost/x")


def test_open_store_urls(tmp_path: Path, postgres_dsn: str) -> None:
    from hydrangea.errors import StoreError
    from hydrangea.stores import InMemorySessionStore

    assert isinstance(open_store("memory:"), InMemorySessionStore)
    sqlite_store = open_store(f"sqlite:{tmp_path / 'x.db'}")
    assert isinstance(sqlite_store, SqliteSessionStore)
    sqlite_store.close()
    pg = open_store(postgres_dsn)
    assert isinstance(pg, PostgresSessionStore)
    pg.close()
    for bad in ("mysql://x", "sqlite:", "redis://"):
        with pytest.raises(StoreError):
            open_store(bad)


# -- helpers ----------------------------------------------------------------------------------


def _steps(ops: store_sql.Ops) -> list[store_sql.Step]:
    return list(ops)


def _pg_exec(dsn: str, statement: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(statement.encode())


def _pg_apply(dsn: str, ops: store_sql.Ops) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        for step in ops:
            conn.execute(step.sql.encode(), tuple(step.params) or None)


def _pg_version(dsn: str) -> int:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("SELECT version FROM hydrangea_schema").fetchone()
    assert row is not None
    return int(row[0])
