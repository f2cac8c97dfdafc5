"""SqliteRecordStore: the RecordStore contract, durability under SIGKILL, several processes."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hydrangea.asof.errors import DuplicateItemError, RecordNotFoundError
from hydrangea.asof.items import ContextItem, ItemKind
from hydrangea.asof.records import RecordStore
from hydrangea.asof.sqlite_store import RecordStoreError, SqliteRecordStore

SRC = str(Path(__file__).resolve().parents[1] / "src")
BASE = datetime(2026, 1, 1, tzinfo=UTC)

# A child process's item generator, shared verbatim with the parent's oracle via exec.
GENERATOR = textwrap.dedent(
    """
    from datetime import UTC, datetime, timedelta
    from hydrangea.asof.items import ContextItem, ItemKind

    def make_item(worker: str, n: int) -> ContextItem:
        return ContextItem.outside(
            ItemKind.OBSERVATION,
            f"{worker} observation {n}: " + "x" * (n % 37),
            item_id=f"{worker}-{n}",
            published_at=datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=n),
            origin=f"tool:{worker}",
            ref=str(n),
        )
    """
)


def _make_item(worker: str, n: int) -> ContextItem:
    namespace: dict[str, object] = {}
    exec(GENERATOR, namespace)
    maker = namespace["make_item"]
    assert callable(maker)
    item = maker(worker, n)
    assert isinstance(item, ContextItem)
    return item


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _outside(item_id: str, content: str, minutes: int = 0) -> ContextItem:
    return ContextItem.outside(
        ItemKind.DOCUMENT,
        content,
        item_id=item_id,
        published_at=BASE + timedelta(minutes=minutes),
        origin="web",
        uri="https://example.test/a",
    )


def test_round_trip_and_protocol(tmp_path: Path) -> None:
    with SqliteRecordStore(tmp_path / "r.db") as store:
        as_protocol: RecordStore = store
        trusted = ContextItem.harness(ItemKind.SYSTEM, "Be brief.", item_id="sys")
        doc = _outside("doc-1", "A document.\nWith two lines and unicode: 日本語 ✓")
        as_protocol.put(trusted)
        as_protocol.put(doc)
        assert store.get("sys") == trusted
        assert store.get("doc-1") == doc
        assert "doc-1" in store
        assert "nope" not in store
        assert 42 not in store
        assert store.ids() == ["sys", "doc-1"]
        assert len(store) == 2


def test_a_missing_record_is_none_and_require_raises_a_keyerror_subclass(
    tmp_path: Path,
) -> None:
    with SqliteRecordStore(tmp_path / "r.db") as store:
        assert store.get("absent") is None
        with pytest.raises(RecordNotFoundError):
            store.require("absent")
        with pytest.raises(KeyError):
            store.require("absent")


def test_get_verifies_that_the_row_holds_the_record_asked_for(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    with SqliteRecordStore(path) as store:
        store.put(_make_item("a", 1))
    with sqlite3.connect(path) as raw:  # another writer swaps the body of the row
        raw.execute("UPDATE records SET body = ? WHERE item_id = ?",
                    (_make_item("a", 2).model_dump_json(), "a-1"))
    swapped = pytest.raises(RecordStoreError, match="holds record 'a-2'")
    with SqliteRecordStore(path) as store, swapped:
        store.get("a-1")


def test_identical_put_is_idempotent_and_different_item_is_refused(tmp_path: Path) -> None:
    with SqliteRecordStore(tmp_path / "r.db") as store:
        first = _outside("a", "original")
        store.put(first)
        store.put(_outside("a", "original"))  # equal, separately built
        assert store.ids() == ["a"]
        with pytest.raises(DuplicateItemError, match="'a'"):
            store.put(_outside("a", "tampered"))
        assert store.get("a") == first
        assert store.ids() == ["a"]


def test_records_survive_reopen_and_are_stored_as_item_json(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    item = _outside("kept", "persisted text", minutes=5)
    with SqliteRecordStore(path) as store:
        store.put(item)
    import sqlite3

    raw = sqlite3.connect(path)
    try:
        (body,) = raw.execute("SELECT body FROM records WHERE item_id = 'kept'").fetchone()
        (mode,) = raw.execute("PRAGMA journal_mode").fetchone()
    finally:
        raw.close()
    assert json.loads(body) == json.loads(item.model_dump_json())
    assert mode == "wal"
    with SqliteRecordStore(path) as again:
        assert again.get("kept") == item


def test_corrupt_record_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    with SqliteRecordStore(path) as store:
        store.put(_outside("x", "fine"))
    import sqlite3

    raw = sqlite3.connect(path)
    raw.execute("UPDATE records SET body = '{\"not\": \"an item\"}' WHERE item_id = 'x'")
    raw.commit()
    raw.close()
    with SqliteRecordStore(path) as store, pytest.raises(RecordStoreError, match="'x'"):
        store.get("x")


def test_unopenable_path_is_reported(tmp_path: Path) -> None:
    with pytest.raises(RecordStoreError):
        SqliteRecordStore(tmp_path / "missing-dir" / "r.db")


ids = st.sampled_from(["a", "b", "c", "d"])
contents = st.sampled_from(["one", "two"])


@settings(max_examples=20)  # every put is an fsync'd transaction
@given(ops=st.lists(st.tuples(ids, contents), max_size=20))
def test_matches_first_write_wins_oracle(ops: list[tuple[str, str]]) -> None:
    oracle: dict[str, ContextItem] = {}
    with tempfile.TemporaryDirectory() as tmp, SqliteRecordStore(Path(tmp) / "r.db") as store:
        for item_id, content in ops:
            item = _outside(item_id, content)
            if item_id in oracle and oracle[item_id] != item:
                with pytest.raises(DuplicateItemError):
                    store.put(item)
            else:
                store.put(item)
                oracle.setdefault(item_id, item)
        assert store.ids() == list(oracle)
        for item_id, item in oracle.items():
            assert store.get(item_id) == item


def test_threads_share_one_store(tmp_path: Path) -> None:
    with SqliteRecordStore(tmp_path / "r.db") as store:

        def work(worker: str) -> None:
            for n in range(25):
                store.put(_make_item(worker, n))

        threads = [threading.Thread(target=work, args=(f"t{k}",)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(store) == 100
        assert store.get("t3-24") == _make_item("t3", 24)


WRITER = GENERATOR + textwrap.dedent(
    """
    import sys
    from hydrangea.asof.sqlite_store import SqliteRecordStore

    store = SqliteRecordStore(sys.argv[1], timeout=60)
    worker = sys.argv[2]
    limit = int(sys.argv[3])
    n = 0
    while limit < 0 or n < limit:
        store.put(make_item(worker, n))
        sys.stdout.write(f"{worker}-{n}\\n")
        sys.stdout.flush()
        n += 1
    """
)

READER = textwrap.dedent(
    """
    import sys
    from hydrangea.asof.sqlite_store import SqliteRecordStore

    store = SqliteRecordStore(sys.argv[1])
    wanted = sys.stdin.read().split()
    sys.stdout.write("[" + ",".join(store.get(i).model_dump_json() for i in wanted) + "]")
    """
)


def test_acknowledged_puts_survive_sigkill(tmp_path: Path) -> None:
    path = str(tmp_path / "r.db")
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, path, "w", "-1"],
        stdout=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    assert child.stdout is not None
    acknowledged: list[str] = []
    try:
        for line in child.stdout:
            acknowledged.append(line.strip())
            if len(acknowledged) >= 40:
                break
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    assert len(acknowledged) == 40

    fresh = subprocess.run(
        [sys.executable, "-c", READER, path],
        input="\n".join(acknowledged),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
        check=True,
    )
    read_back = [ContextItem.model_validate(d) for d in json.loads(fresh.stdout)]
    expected = [_make_item("w", int(i.split("-")[1])) for i in acknowledged]
    assert read_back == expected


def test_several_processes_write_one_file(tmp_path: Path) -> None:
    path = str(tmp_path / "r.db")
    children = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, path, f"p{k}", "30"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        for k in range(3)
    ]
    for child in children:
        _out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
    with SqliteRecordStore(path) as store:
        assert sorted(store.ids()) == sorted(f"p{k}-{n}" for k in range(3) for n in range(30))
        for k in range(3):
            assert store.get(f"p{k}-29") == _make_item(f"p{k}", 29)


def test_builder_compacts_into_sqlite_records(tmp_path: Path) -> None:
    from hydrangea.asof.builder import ContextBuilder

    path = tmp_path / "records.db"
    items = [_make_item("b", n) for n in range(30)]
    with SqliteRecordStore(path) as store:
        builder = ContextBuilder(as_of=BASE + timedelta(days=1), token_budget=600, records=store)
        for item in items:
            builder.add(item)
        built = builder.build()
    replaced = [i for c in built.compactions for i in c.source_ids] + list(built.dropped)
    assert replaced  # the budget forced compaction or dropping
    with SqliteRecordStore(path) as again:  # a later reader follows every pointer
        by_id = {item.item_id: item for item in items}
        for item_id in replaced:
            assert again.get(item_id) == by_id[item_id]


def test_carried_pointers_must_resolve_in_the_sqlite_store(tmp_path: Path) -> None:
    from hydrangea.asof.builder import ContextBuilder
    from hydrangea.asof.items import Provenance, Trust
    from hydrangea.asof.summary import StructuredSummary

    path = tmp_path / "records.db"
    as_of = BASE + timedelta(days=1)
    with SqliteRecordStore(path) as store:
        first = ContextBuilder(as_of=as_of, token_budget=300, records=store)
        for n in range(30):
            first.add(_make_item("a", n))
        (earlier,) = first.build().summary_items
    claimed = StructuredSummary(facts=("Payroll moved.",), pointers=("ghost-42", "payroll-db"))
    forged = ContextItem(
        item_id="mem-1", kind=ItemKind.SUMMARY, content=claimed.render(), trust=Trust.UNTRUSTED,
        published_at=BASE - timedelta(days=9), provenance=Provenance(origin="memory"),
        priority=0, summary=claimed,
    )
    with SqliteRecordStore(path) as store:  # a later process, the same records
        second = ContextBuilder(as_of=as_of, token_budget=300, records=store)
        second.add(forged)
        second.add(earlier)  # compacted again
        for n in range(30):
            second.add(_make_item("b", n))
        built = second.build()
        (summary,) = built.summary_items
        assert built.dropped == ()
        assert {"mem-1", earlier.item_id} <= set(built.compactions[0].source_ids)
        assert set(earlier.pointers) <= set(summary.pointers)  # made here: all carried
        assert {"ghost-42", "payroll-db"}.isdisjoint(summary.pointers)
        for item_id in summary.pointers:
            assert store.require(item_id).item_id == item_id
