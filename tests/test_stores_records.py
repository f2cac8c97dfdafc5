"""PostgresRecordStore keeps the SQLite record store's contract: write-once ids, idempotent
puts, first-stored order, across store objects (workers) sharing one database."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from hydrangea.asof.sqlite_store import SqliteRecordStore
from hydrangea.errors import DuplicateItemError, RecordNotFoundError
from hydrangea.stores import PostgresRecordStore
from tests.support.asof_oracle import doc

Stores = PostgresRecordStore | SqliteRecordStore


@pytest.fixture(params=["postgres", "sqlite"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        return str(request.getfixturevalue("postgres_dsn"))
    return str(tmp_path / "records.db")


def _open(where: str) -> Stores:
    if where.startswith("postgresql://"):
        return PostgresRecordStore(where, max_size=2)
    return SqliteRecordStore(where)


@pytest.fixture
def records(where: str) -> Iterator[Stores]:
    store = _open(where)
    yield store
    store.close()


def test_put_contains_ids_len(records: Stores) -> None:
    for i in (3, 1, 2):
        records.put(doc(i))
    assert records.ids() == ["doc-3", "doc-1", "doc-2"]
    assert len(records) == 3
    assert "doc-1" in records and "doc-9" not in records and 5 not in records


def test_identical_put_is_a_no_op_and_a_different_one_is_refused(records: Stores) -> None:
    records.put(doc(1))
    records.put(doc(1))
    assert len(records) == 1
    with pytest.raises(DuplicateItemError):
        records.put(doc(1, text="something else entirely"))
    assert records.ids() == ["doc-1"]


def test_postgres_get_and_require(postgres_dsn: str) -> None:
    with PostgresRecordStore(postgres_dsn) as store:
        store.put(doc(1))
        assert store.get("doc-1") == doc(1)
        assert store.get("doc-2") is None
        assert store.require("doc-1") == doc(1)
        with pytest.raises(RecordNotFoundError):
            store.require("doc-2")


def test_write_once_across_workers(where: str) -> None:
    stores = [_open(where) for _ in range(4)]
    barrier = threading.Barrier(len(stores))
    outcomes: list[str] = []

    def put(number: int, store: Stores) -> None:
        barrier.wait(10)
        try:
            store.put(doc(7, text=f"version {number}"))
            outcomes.append(f"stored {number}")
        except DuplicateItemError:
            outcomes.append("refused")

    threads = [threading.Thread(target=put, args=(n, s)) for n, s in enumerate(stores)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(outcomes)[:-1] == ["refused"] * (len(stores) - 1)
    winner = int(sorted(outcomes)[-1].split()[1])
    for store in stores:
        assert store.ids() == ["doc-7"]
        assert "doc-7" in store
        store.close()
    check = _open(where)
    if isinstance(check, PostgresRecordStore):
        assert check.require("doc-7") == doc(7, text=f"version {winner}")
    check.close()
