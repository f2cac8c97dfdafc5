"""Snapshots: unique ids, exact read-back, save and load, unknown ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hydrangea.context import Context
from hydrangea.errors import SerializationError
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import (
    Component,
    Lifecycle,
    Placement,
    Stage,
    UnknownSnapshotError,
)
from hydrangea.message import ImagePart, Message, Role


def session() -> Lifecycle:
    return Lifecycle(Context(GatewayType.openai))


def test_ten_thousand_seals_in_a_tight_loop_give_distinct_ids() -> None:
    lc = session()
    lc.render()
    ids = [lc.seal(trigger="loop") for _ in range(10_000)]
    assert len(set(ids)) == 10_000
    assert len(lc.history) == 10_000


def test_two_sessions_never_share_ids() -> None:
    a, b = session(), session()
    assert {a.seal() for _ in range(50)}.isdisjoint({b.seal() for _ in range(50)})


def test_a_snapshot_is_exactly_the_sealed_request() -> None:
    lc = session()
    lc.add(Component("sticky", ttl=1, cadence=1, key="s"))
    lc.add(Component("early", ttl=1, key="e", placement="before"))
    lc.context.emplace_message(Message(role=Role.user, content="q1"))
    sealed_items = lc.render().items
    first = lc.seal(trigger="checkpoint")
    lc.context.push_back({"role": "assistant", "content": "a1"})
    lc.context.emplace_message(Message(role=Role.user, content="q2"))
    lc.render()
    second = lc.seal()
    snap = lc.history.at_snapshot(first)
    assert snap.items == sealed_items
    assert [m["content"] for m in snap.items] == ["early", "q1", "sticky"]
    assert snap.trigger == "checkpoint" and snap.episode == 0
    assert [m["content"] for m in lc.at_snapshot(second).items] == [
        "early", "q1", "sticky", "a1", "q2", "sticky",
    ]  # what was sent is history: the second request begins with the first


def test_seal_before_any_render_holds_the_bare_history() -> None:
    lc = session()
    lc.context.emplace_message(Message(role=Role.user, content="hello"))
    snap = lc.at_snapshot(lc.seal())
    assert snap.episode == -1
    assert [m["content"] for m in snap.items] == ["hello"]


def test_unknown_snapshot_id_is_an_error_not_a_fallback() -> None:
    lc = session()
    lc.render()
    real = lc.seal()
    with pytest.raises(UnknownSnapshotError, match="nope") as info:
        lc.history.at_snapshot("nope")
    assert isinstance(info.value, KeyError)
    with pytest.raises(UnknownSnapshotError):
        lc.at_snapshot(real + "0")


def run_some(lc: Lifecycle, turns: int) -> list[str]:
    ids = []
    for i in range(turns):
        lc.context.emplace_message(Message(role=Role.user, content=f"q{i}"))
        lc.render()
        ids.append(lc.seal(trigger=f"turn {i}"))
        lc.context.push_back({"role": "assistant", "content": f"a{i}"})
    return ids


def populated() -> Lifecycle:
    lc = session()
    lc.add(Component("perm", key="p", tags=["keep"]))
    lc.add(Component("cyc", ttl=2, cadence=3, key="c", tags=["keep", "cyc"]))
    lc.add(
        Component(
            Message(
                role=Role.user,
                content=(ImagePart(data=b"\xff\x00\x01", media_type="image/png"),),
            ),
            key="img",
            stages=[Stage(Placement.before, 2), Stage(Placement.after, 1)],
            cycle=True,
        )
    )
    return lc


def test_snapshots_survive_save_and_load(tmp_path: Path) -> None:
    lc = populated()
    ids = run_some(lc, 6)
    expected = {i: lc.at_snapshot(i).items for i in ids}
    path = tmp_path / "session.json"
    lc.save(path)
    loaded = Lifecycle.load(path)
    for i in ids:
        assert loaded.at_snapshot(i).items == expected[i]
        assert loaded.at_snapshot(i).trigger == lc.at_snapshot(i).trigger
    with pytest.raises(UnknownSnapshotError):
        loaded.at_snapshot("missing")
    # the loaded session continues exactly like the original
    assert loaded.context[:] == lc.context[:]
    assert loaded.keys() == lc.keys()
    assert loaded.get("c").tags == frozenset({"keep", "cyc"})
    more_original = [lc.at_snapshot(i).items for i in run_some(lc, 5)]
    more_loaded_ids = run_some(loaded, 5)
    assert [loaded.at_snapshot(i).items for i in more_loaded_ids] == more_original
    assert set(more_loaded_ids).isdisjoint(ids)


def test_saved_session_is_json_and_bad_input_is_a_serialization_error() -> None:
    lc = populated()
    run_some(lc, 2)
    document = json.loads(lc.to_json())
    assert document["format"] == "hydrangea.lifecycle"
    with pytest.raises(SerializationError):
        Lifecycle.from_json("{not json")
    with pytest.raises(SerializationError):
        Lifecycle.from_json(json.dumps({"format": "something else"}))
    broken = dict(document)
    del broken["components"]
    with pytest.raises(SerializationError):
        Lifecycle.from_json(json.dumps(broken))


def test_load_can_attach_a_coop_context_again(tmp_path: Path) -> None:
    from hydrangea.coop import CoopContext

    lc = populated()
    ids = run_some(lc, 3)
    path = tmp_path / "s.json"
    lc.save(path)
    loaded = Lifecycle.load(path, attach=CoopContext)
    assert isinstance(loaded.renderer, CoopContext)
    assert loaded.renderer.context is loaded.context
    assert loaded.at_snapshot(ids[-1]).items == lc.at_snapshot(ids[-1]).items
    loaded.render()
    assert loaded.episode == lc.episode + 1

    def wrong(context: Context) -> Context:
        return Context(context.gateway)

    with pytest.raises(SerializationError, match="attach"):
        Lifecycle.load(path, attach=wrong)
