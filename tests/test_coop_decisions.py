"""Scenario tests for the CoopContext decisions of DESIGN.md that the spec page leaves open."""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from typing import Any

import pytest

from hydrangea.context import Context
from hydrangea.context.area import AreaFlowState, AreaLifeState
from hydrangea.coop import (
    AreaContractError,
    CoopContext,
    DuplicateAreaError,
    EffectRange,
)
from tests.support.coop_areas import GATEWAY, Event, Probe, native, reply


def make() -> tuple[CoopContext, list[Event]]:
    return CoopContext(Context(GATEWAY)), []


# -- retired areas that never rendered ----------------------------------------------------------


def test_retired_area_without_range_is_removed_with_prologue_but_no_promote() -> None:
    coop, log = make()
    blocker = Probe("blocker", log, [["b1"]])
    idle = Probe("idle", log, [], promoted=["must not appear"])
    coop.register(blocker)
    coop.register(idle)
    coop.render()
    idle.retire()
    coop.render()
    assert ("gc_prologue", "idle") in log
    assert ("promote", "idle") not in log
    assert [r.area for r in coop.areas()] == [blocker]  # removed even though the tail is blocked
    assert coop.context[:] == native("b1")


def test_prologue_order_tail_areas_first_then_never_rendered_in_ring_order() -> None:
    coop, log = make()
    idle1 = Probe("idle1", log)
    a = Probe("a", log, [["a1"]])
    idle2 = Probe("idle2", log)
    for area in (idle1, a, idle2):
        coop.register(area)
    coop.render()
    for area in (idle1, a, idle2):
        area.retire()
    log.clear()
    coop.render()
    assert log == [("promote", "a"), ("gc_prologue", "a"), ("gc_prologue", "idle1"),
                   ("gc_prologue", "idle2")]
    record = coop.last_collection
    assert record is not None and record.areas == (a, idle1, idle2)


# -- the longest reclaimable tail in one pass ---------------------------------------------------


def test_longest_tail_of_several_retired_components_in_one_detach() -> None:
    coop, log = make()
    keep = Probe("keep", log, [["k1"]])
    coop.register(keep)
    coop.render()
    keep.flow_state = AreaFlowState.yielded
    parts = [Probe(n, log, [[n + "1"]], promoted=["p" + n]) for n in "xyz"]
    for area in parts:
        coop.register(area)
        coop.render()
        coop.context.extend([reply("m" + area.name)])
    for area in parts:
        area.retire()
    log.clear()
    coop.render()
    assert log[:6] == [("promote", "x"), ("promote", "y"), ("promote", "z"),
                   ("gc_prologue", "x"), ("gc_prologue", "y"), ("gc_prologue", "z")]
    assert log[6:] == [("observe", "keep"), ("render", "keep")]
    assert coop.context[:] == (*native("k1"), *native("px", "py", "pz"))
    record = coop.last_collection
    assert record is not None
    assert (record.start, record.detached, record.promoted) == (1, 6, 3)
    assert coop.collections == 1


def test_tail_stops_at_first_component_holding_a_retained_area() -> None:
    coop, log = make()
    first = Probe("first", log, [["f1"]])
    middle = Probe("middle", log, [["m1"]])
    last = Probe("last", log, [["l1"]])
    for area in (first, middle, last):
        coop.register(area)
        coop.render()
    first.retire()
    last.retire()
    coop.render()
    assert coop.context[:] == native("f1", "m1")
    assert [r.area for r in coop.areas()] == [first, middle]


def test_promote_order_is_ascending_latest_not_registration() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"], ["a2"]])
    b = Probe("b", log, [["b1"]])
    coop.register(a)
    coop.register(b)
    coop.render()  # a1 b1
    coop.render()  # a2: a [0, 2], b [1, 1]
    a.retire()
    b.retire()
    log.clear()
    coop.render()
    assert [e for e in log if e[0] == "promote"] == [("promote", "b"), ("promote", "a")]


# -- cursor repair ------------------------------------------------------------------------------


def test_cursor_moves_to_next_surviving_area_when_its_area_is_collected() -> None:
    coop, log = make()
    a = Probe("a", log)
    b = Probe("b", log, [["b1"]], flow=AreaFlowState.exclusive)
    c = Probe("c", log)
    d = Probe("d", log)
    for area in (a, b, c, d):
        coop.register(area)
    coop.render()
    assert coop.snapshot().cursor == 1
    b.retire()
    c.retire()
    log.clear()
    coop.render()
    snap = coop.snapshot()
    assert [r.area for r in snap.areas] == [a, d]
    assert log[-2:] == [("render", "d"), ("render", "a")]  # the pass started at d


def test_cursor_wraps_to_ring_start_when_the_collected_area_was_last() -> None:
    coop, log = make()
    a = Probe("a", log)
    b = Probe("b", log)
    c = Probe("c", log, [["c1"]], flow=AreaFlowState.exclusive)
    for area in (a, b, c):
        coop.register(area)
    coop.render()
    assert coop.snapshot().cursor == 2
    c.retire()
    log.clear()
    coop.render()
    assert log[-2:] == [("render", "a"), ("render", "b")]


def test_cursor_stays_on_its_area_when_earlier_areas_are_removed() -> None:
    coop, log = make()
    a = Probe("a", log)
    b = Probe("b", log)
    c = Probe("c", log, [["c1"], ["c2"]], flow=AreaFlowState.exclusive)
    for area in (a, b, c):
        coop.register(area)
    coop.render()
    a.retire()
    b.retire()
    coop.render()
    snap = coop.snapshot()
    assert [r.area for r in snap.areas] == [c]
    assert snap.cursor == 0
    assert coop.context[:] == native("c1", "c2")


def test_cursor_with_empty_ring_is_none_and_new_areas_start_at_first() -> None:
    coop, log = make()
    a = Probe("a", log)
    coop.register(a)
    a.retire()
    coop.render()
    assert coop.snapshot().cursor is None
    b = Probe("b", log, [["b1"]])
    coop.register(b)
    coop.render()
    assert coop.context[:] == native("b1")


# -- registration -------------------------------------------------------------------------------


def test_area_registered_during_a_pass_joins_at_next_render() -> None:
    coop, log = make()
    late = Probe("late", log, [["l1"]])
    a = Probe("a", log, [["a1"]])
    a.on_render = lambda p: coop.register(late)
    coop.register(a)
    coop.render()
    assert coop.context[:] == native("a1")
    assert coop.snapshot().pending == (late,)
    a.on_render = None
    coop.render()
    assert coop.context[:] == native("a1", "l1")
    assert [r.area for r in coop.areas()] == [a, late]


class _NoPromote:
    life_state = AreaLifeState.retain
    flow_state = AreaFlowState.yielded

    def observe(self, context: Any) -> None: ...
    def render(self) -> list[Any]:
        return []

    def gc_prologue(self) -> None: ...


def test_register_rejects_missing_member_naming_it() -> None:
    coop, _ = make()
    with pytest.raises(TypeError, match="missing promote"):
        coop.register(_NoPromote())  # type: ignore[arg-type]


def test_register_rejects_non_callable_member() -> None:
    coop, log = make()
    area = Probe("a", log)
    area.gc_prologue = 3  # type: ignore[assignment,method-assign]
    with pytest.raises(AreaContractError, match="gc_prologue must be callable"):
        coop.register(area)


@dataclass
class _ValueArea:
    life_state: AreaLifeState = AreaLifeState.retain
    flow_state: AreaFlowState = AreaFlowState.yielded

    def observe(self, context: Any) -> None: ...
    def render(self) -> list[Any]:
        return []

    def promote(self) -> tuple[Any, ...]:
        return ()

    def gc_prologue(self) -> None: ...


def test_register_rejects_unhashable_area() -> None:
    coop, _ = make()
    with pytest.raises(TypeError, match="not hashable"):
        coop.register(_ValueArea())
    assert coop.snapshot().pending == ()


def test_register_rejects_same_instance_twice() -> None:
    coop, log = make()
    a = Probe("a", log)
    coop.register(a)
    with pytest.raises(DuplicateAreaError):
        coop.register(a)
    coop.render()
    with pytest.raises(ValueError, match="already registered"):
        coop.register(a)
    assert len(coop.areas()) == 1


def test_register_is_safe_from_many_threads() -> None:
    coop, log = make()
    areas = [Probe(str(i), log) for i in range(400)]
    barrier = threading.Barrier(8)

    def worker(chunk: list[Probe]) -> None:
        barrier.wait()
        for area in chunk:
            coop.register(area)
            with contextlib.suppress(DuplicateAreaError):
                coop.register(area)

    threads = [threading.Thread(target=worker, args=(areas[i::8],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    coop.render()
    assert sorted(id(r.area) for r in coop.areas()) == sorted(id(a) for a in areas)


# -- the read-only view -------------------------------------------------------------------------


def test_snapshot_lists_ring_states_ranges_and_cursor() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"]])
    b = Probe("b", log, [[], ["b1"]], flow=AreaFlowState.exclusive)
    c = Probe("c", log)
    for area in (a, b, c):
        coop.register(area)
    coop.render()
    c.retire()
    snap = coop.snapshot()
    assert [(r.area, r.life_state, r.flow_state, r.effect_range) for r in snap.areas] == [
        (a, AreaLifeState.retain, AreaFlowState.yielded, EffectRange(0, 0)),
        (b, AreaLifeState.retain, AreaFlowState.exclusive, None),
        (c, AreaLifeState.retired, AreaFlowState.yielded, None),
    ]
    assert snap.cursor == 1
    assert snap.context_length == 1
    assert snap.renders == 1
    with pytest.raises(AttributeError):
        snap.cursor = 0  # type: ignore[misc]


def test_last_collection_tells_the_latest_render_detached() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"]])
    coop.register(a)
    coop.render()
    assert coop.last_collection is None
    a.retire()
    coop.render()
    record = coop.last_collection
    assert record is not None and record.render == coop.renders == 2
    assert (record.start, record.detached, record.promoted, record.areas) == (0, 1, 0, (a,))
    coop.render()
    assert coop.last_collection is record and record.render != coop.renders


def test_coop_context_needs_a_context() -> None:
    with pytest.raises(TypeError):
        CoopContext([])  # type: ignore[arg-type]
