"""The session store contract, run against every store: memory, SQLite, PostgreSQL (sync and
async). Loaded sessions are compared with the originals through the public file persistence
and read APIs (tests/support/store_sessions.observed), an oracle the stores do not share."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hydrangea.context import Context
from hydrangea.coop import CoopContext
from hydrangea.errors import (
    SerializationError,
    SessionConflictError,
    SessionNotFoundError,
    StoreError,
)
from hydrangea.lifecycle import Lifecycle
from hydrangea.message import Message, Role
from hydrangea.stores import InMemorySessionStore, SessionStore
from tests.support.store_kinds import KINDS, AnyStore, close, open_kind
from tests.support.store_sessions import (
    GATEWAY,
    Say,
    areas_attach,
    areas_of,
    new_lifecycle,
    observed,
    turn,
)

Opener = Callable[[], AnyStore]


@pytest.fixture(params=KINDS)
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens store objects of one kind on one backing database (a worker each)."""
    kind = str(request.param)
    where = str(tmp_path / "sessions.db")
    if kind.startswith("postgres"):
        where = request.getfixturevalue("postgres_dsn")
    memory = InMemorySessionStore()
    opened: list[AnyStore] = []

    def open_one() -> AnyStore:
        store = open_kind(kind, where, memory)
        opened.append(store)
        return store

    yield open_one
    for store in opened:
        close(store)


@pytest.fixture
def store(opener: Opener) -> AnyStore:
    return opener()


def _context(*labels: str) -> Context:
    context = Context(GATEWAY)
    for label in labels:
        turn(context, label)
    return context


def test_sync_stores_satisfy_the_protocol(store: AnyStore) -> None:
    from tests.support.store_kinds import AsyncAsSync

    if isinstance(store, AsyncAsSync):
        from hydrangea.stores import AsyncSessionStore

        assert isinstance(store.store, AsyncSessionStore)
    else:
        assert isinstance(store, SessionStore)


def test_context_round_trip(store: AnyStore) -> None:
    context = _context("one", "two")
    saved = store.create("s1", context)
    assert saved.version == 1
    loaded = store.load("s1", Context)
    assert loaded.version == 1
    assert observed(loaded.value) == observed(context)
    assert loaded.value is not context


def test_incremental_saves_reach_the_same_state(store: AnyStore) -> None:
    context = _context("one")
    saved = store.create("s1", context)
    for label in ("two", "three", "four"):
        turn(context, label)
        store.save(saved)
    assert saved.version == 4
    assert observed(store.load("s1", Context).value) == observed(context)


def test_a_detach_is_saved_as_a_truncation(store: AnyStore) -> None:
    context = _context("one", "two", "three")
    saved = store.create("s1", context)
    context.detach_tail(2)
    context.emplace_message(Message(role=Role.user, content="after the detach"))
    store.save(saved)
    context.detach_tail(1)
    turn(context, "again")
    store.save(saved)
    assert observed(store.load("s1", Context).value) == observed(context)


def test_a_detach_of_unsaved_items_only(store: AnyStore) -> None:
    context = _context("one")
    saved = store.create("s1", context)
    turn(context, "two")
    context.detach_tail(3)  # removes only the unsaved reply
    store.save(saved)
    assert observed(store.load("s1", Context).value) == observed(context)


def test_coop_state_round_trip(store: AnyStore) -> None:
    context = _context("start")
    coop = CoopContext(context)
    first, second, third = Say("a"), Say("b"), Say("c")
    for area in (first, second, third):
        coop.register(area)
    first.say("hello")
    coop.render()
    second.say("there")
    third.say("!")
    coop.render()
    saved = store.create("c1", coop)
    assert saved.version == 1
    loaded = store.load("c1", CoopContext, attach=areas_attach(["a", "b", "c"]))
    assert observed(loaded.value) == observed(coop)
    # Both go on identically: retire the middle area and collect.
    for target in (coop, loaded.value):
        areas = areas_of(target)
        areas[2].retire()
        areas[0].say("later")
        target.render()
    assert observed(loaded.value) == observed(coop)
    store.save(loaded)
    again = store.load("c1", CoopContext, attach=areas_attach(["a", "b", "c"]))
    assert observed(again.value) == observed(coop)


def test_coop_load_needs_the_areas_again(store: AnyStore) -> None:
    coop = CoopContext(_context("x"))
    area = Say("a")
    coop.register(area)
    area.say("hi")
    coop.render()
    store.create("c1", coop)
    with pytest.raises(SerializationError, match="register the same areas"):
        store.load("c1", CoopContext)


def test_lifecycle_round_trip_with_snapshots(store: AnyStore) -> None:
    lc = new_lifecycle()
    coop = lc.renderer
    assert isinstance(coop, CoopContext)
    saved = None
    seals: list[str] = []
    for number in range(6):
        areas = areas_of(coop)
        areas[1 if number == 3 else 0].say(f"note {number}")  # b only once, then it retires
        lc.render()
        turn(lc.context, str(number))
        if number % 2 == 0:
            seals.append(lc.seal(f"turn {number}"))
        if number == 3:
            areas[1].retire()
        if saved is None:
            saved = store.create("l1", lc)
        else:
            store.save(saved)
    assert coop.collections >= 1  # a collection happened between saves
    loaded = store.load("l1", Lifecycle, attach=areas_attach(["a"]))
    assert observed(loaded.value) == observed(lc)
    for snapshot_id in seals:
        assert loaded.value.at_snapshot(snapshot_id).items == lc.at_snapshot(snapshot_id).items


def test_lifecycle_keeps_going_after_a_load(store: AnyStore) -> None:
    lc = new_lifecycle(["a"])
    lc.render()
    turn(lc.context, "0")
    lc.seal("first")
    store.create("l1", lc)
    worker = store.load("l1", Lifecycle, attach=areas_attach(["a"]))
    for target in (lc, worker.value):
        assert isinstance(target.renderer, CoopContext)
        areas_of(target.renderer)[0].say("again")
        target.render()
        turn(target.context, "1")
        target.seal("second")
    store.save(worker)
    fresh = store.load("l1", Lifecycle, attach=areas_attach(["a"]))
    mine, theirs = observed(fresh.value), observed(lc)
    # seal ids carry a per-object prefix; compare the sealed requests by position
    assert [s[1] for s in mine["snapshots"]] == ["first", "second"]
    assert [s[2:] for s in mine["snapshots"]] == [s[2:] for s in theirs["snapshots"]]
    for key in ("context", "episode", "components", "last", "coop"):
        assert mine[key] == theirs[key]
    ids = fresh.value.history.ids()
    assert [fresh.value.at_snapshot(i).items for i in ids] == [
        lc.at_snapshot(i).items for i in lc.history.ids()
    ]


def test_any_session_loads_as_its_context(store: AnyStore) -> None:
    lc = new_lifecycle()
    lc.render()
    store.create("l1", lc)
    assert observed(store.load("l1", Context).value) == observed(lc.context)


def test_a_session_loads_only_as_its_own_kind(store: AnyStore) -> None:
    store.create("s1", _context("one"))
    with pytest.raises(StoreError, match="holds a context session"):
        store.load("s1", Lifecycle)


def test_create_refuses_a_taken_id(store: AnyStore) -> None:
    store.create("s1", _context("one"))
    other = _context("two")
    with pytest.raises(SessionConflictError):
        store.create("s1", other)
    assert observed(store.load("s1", Context).value) == observed(_context("one"))


def test_missing_sessions(store: AnyStore) -> None:
    with pytest.raises(SessionNotFoundError):
        store.load("nobody", Context)
    with pytest.raises(KeyError):  # SessionNotFoundError is a KeyError
        store.delete("nobody")


def test_second_writer_gets_a_conflict_and_nothing_is_lost(opener: Opener) -> None:
    one, two = opener(), opener()
    one.create("s1", _context("start"))
    first = one.load("s1", Context)
    second = two.load("s1", Context)
    turn(first.value, "from the first")
    turn(second.value, "from the second")
    assert one.save(first) == 2
    with pytest.raises(SessionConflictError):
        two.save(second)
    # the conflict wrote nothing: the first save is intact
    assert observed(two.load("s1", Context).value) == observed(first.value)
    # the documented recovery: load again, re-apply, save
    retry = two.load("s1", Context)
    turn(retry.value, "from the second")
    assert two.save(retry) == 3
    final = one.load("s1", Context).value
    texts = [item["content"] for item in final]
    assert texts.count("user from the first") == 1
    assert texts.count("user from the second") == 1


def test_a_failed_save_can_be_retried_after_reload(store: AnyStore) -> None:
    store.create("s1", _context("start"))
    stale = store.load("s1", Context)
    winner = store.load("s1", Context)
    turn(winner.value, "w")
    store.save(winner)
    turn(stale.value, "s")
    with pytest.raises(SessionConflictError):
        store.save(stale)
    with pytest.raises(SessionConflictError):  # still stale: it never silently catches up
        store.save(stale)


def test_delete_then_save(store: AnyStore) -> None:
    saved = store.create("s1", _context("one"))
    store.delete("s1")
    turn(saved.value, "two")
    with pytest.raises(SessionNotFoundError):
        store.save(saved)
    with pytest.raises(SessionNotFoundError):
        store.load("s1", Context)
    store.create("s1", _context("fresh"))  # the id is free again, with no leftovers
    assert observed(store.load("s1", Context).value) == observed(_context("fresh"))


def test_list_sessions(store: AnyStore) -> None:
    assert store.list_sessions() == []
    store.create("b", _context("x"))
    saved = store.create("a", new_lifecycle())
    store.save(saved)
    infos = store.list_sessions()
    assert [(i.session_id, i.kind, i.version) for i in infos] == [
        ("a", "lifecycle", 2), ("b", "context", 1)
    ]
    assert infos[1].items == 2
    assert infos[0].updated_at.tzinfo is not None


def test_bad_ids_are_refused(store: AnyStore) -> None:
    for bad in ("", "x" * 201, "a\x00b"):
        with pytest.raises(StoreError):
            store.create(bad, _context())


def test_load_for_update_commits_at_the_end(opener: Opener) -> None:
    one, two = opener(), opener()
    one.create("s1", _context("start"))
    with one.load_for_update("s1", Context) as owned:
        turn(owned.value, "owned")
        one.save(owned)
        turn(owned.value, "owned again")
        one.save(owned)
    assert owned.version == 3
    assert observed(two.load("s1", Context).value) == observed(owned.value)
    turn(owned.value, "after")  # the handle stays usable after a clean block
    one.save(owned)
    assert two.load("s1", Context).version == 4


def test_load_for_update_rolls_back_on_an_exception(store: AnyStore) -> None:
    store.create("s1", _context("start"))
    with pytest.raises(RuntimeError, match="boom"), \
            store.load_for_update("s1", Context) as owned:
        turn(owned.value, "lost")
        store.save(owned)
        raise RuntimeError("boom")
    loaded = store.load("s1", Context)
    assert loaded.version == 1
    assert observed(loaded.value) == observed(_context("start"))
    with pytest.raises(StoreError, match="load it again"):
        store.save(owned)


def test_load_for_update_makes_other_writers_wait(opener: Opener) -> None:
    owner, other = opener(), opener()
    owner.create("s1", _context("start"))
    rival = other.load("s1", Context)
    turn(rival.value, "rival")
    outcome: list[BaseException | int] = []
    entered = threading.Event()

    def rival_save() -> None:
        entered.wait(10)
        try:
            outcome.append(other.save(rival))
        except BaseException as exc:  # noqa: BLE001 - recorded for the assertion
            outcome.append(exc)

    thread = threading.Thread(target=rival_save)
    with owner.load_for_update("s1", Context) as owned:
        thread.start()
        entered.set()
        time.sleep(0.3)
        assert outcome == []  # the rival is waiting for the block
        turn(owned.value, "owner")
        owner.save(owned)
    thread.join(30)
    assert len(outcome) == 1 and isinstance(outcome[0], SessionConflictError | StoreError)
    final = owner.load("s1", Context).value
    assert [i["content"] for i in final].count("user owner") == 1
    assert "user rival" not in [i["content"] for i in final]
