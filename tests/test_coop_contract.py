"""Scenario tests: one or more per row of the Context Area contract table and per spec bullet."""

from __future__ import annotations

from hydrangea.context import Context
from hydrangea.context.area import AreaFlowState, AreaLifeState
from hydrangea.coop import CoopContext, EffectRange
from tests.support.coop_areas import GATEWAY, Event, Probe, native, reply


def make() -> tuple[CoopContext, list[Event]]:
    return CoopContext(Context(GATEWAY)), []


def ranges(coop: CoopContext) -> list[EffectRange | None]:
    return [record.effect_range for record in coop.areas()]


# -- life_state ---------------------------------------------------------------------------------


def test_life_state_retired_area_is_not_rendered() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"]])
    a.retire()
    b = Probe("b", log, [["b1"]])
    coop.register(a)
    coop.register(b)
    coop.render()
    assert ("render", "a") not in log
    assert coop.context[:] == native("b1")


def test_life_state_decides_collection() -> None:
    coop, log = make()
    keep = Probe("keep", log, [["k1"]])
    done = Probe("done", log, [["d1"]])
    coop.register(keep)
    coop.render()
    coop.register(done)
    coop.render()  # keep renders nothing new, done renders d1
    assert coop.context[:] == native("k1", "d1")
    done.retire()
    coop.render()
    assert coop.context[:] == native("k1")
    assert [r.area for r in coop.areas()] == [keep]
    assert ("gc_prologue", "keep") not in log


# -- flow_state ---------------------------------------------------------------------------------


def test_flow_exclusive_keeps_cursor_and_ends_pass() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"], ["a2"]], flow=AreaFlowState.exclusive)
    b = Probe("b", log, [["b1"]])
    coop.register(a)
    coop.register(b)
    coop.render()
    assert coop.context[:] == native("a1")
    assert coop.snapshot().cursor == 0
    coop.render()
    assert coop.context[:] == native("a1", "a2")
    a.flow_state = AreaFlowState.yielded
    coop.render()
    assert coop.context[:] == native("a1", "a2", "b1")


def test_flow_yielded_lets_every_area_render_in_one_pass() -> None:
    coop, log = make()
    areas = [Probe(n, log, [[n + "1"]]) for n in "abc"]
    for area in areas:
        coop.register(area)
    coop.render()
    assert coop.context[:] == native("a1", "b1", "c1")
    assert log == [("render", "a"), ("render", "b"), ("render", "c")]
    assert coop.snapshot().cursor == 0  # all the way round: back where it started


def test_flow_state_is_read_after_render() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"]])
    b = Probe("b", log, [["b1"]])
    a.on_render = lambda p: setattr(p, "flow_state", AreaFlowState.exclusive)
    coop.register(a)
    coop.register(b)
    coop.render()
    assert coop.context[:] == native("a1")


def test_cursor_advances_past_yielded_area_after_exclusive_one() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"]])
    b = Probe("b", log, [["b1"], ["b2"]], flow=AreaFlowState.exclusive)
    c = Probe("c", log, [["c1"]])
    for area in (a, b, c):
        coop.register(area)
    coop.render()
    assert coop.snapshot().cursor == 1
    b.flow_state = AreaFlowState.yielded
    log.clear()
    coop.render()
    assert log == [("observe", "b"), ("render", "b"), ("render", "c"), ("observe", "a"),
                   ("render", "a")]


# -- observe ------------------------------------------------------------------------------------


def test_observe_not_called_before_first_non_empty_render() -> None:
    coop, log = make()
    a = Probe("a", log, [[], [], ["a1"], []])
    coop.register(a)
    coop.render()
    coop.render()
    assert log == [("render", "a"), ("render", "a")]
    coop.render()
    coop.render()
    assert log[-2:] == [("observe", "a"), ("render", "a")]


def test_observe_receives_exactly_the_effect_range() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"], ["a2", "a3"], []])
    b = Probe("b", log, [["b1"]])
    coop.context.extend([reply("before")])
    coop.register(a)
    coop.register(b)
    coop.render()  # a1 b1
    coop.context.extend([reply("r1")])
    coop.render()  # observe [a1], then a2 a3
    coop.context.extend([reply("after")])
    coop.render()  # observe [a1 .. a3]
    items = coop.context[:]
    assert a.observed[0] == items[1:2]
    assert a.observed[1] == items[1:6]
    assert a.observed[1][0] == native("a1")[0] and a.observed[1][-1] == native("a3")[0]
    assert reply("after") not in a.observed[1]  # beyond latest: route it to the area yourself


def test_observe_snapshot_is_immutable_and_does_not_follow_later_appends() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"], ["a2"]])
    coop.register(a)
    coop.render()
    coop.render()
    coop.render()
    first = a.observed[0]
    assert isinstance(first, tuple)
    assert len(first) == 1  # the later a2 did not appear in it
    assert len(a.observed[1]) == 2


def test_observe_is_skipped_for_retired_area_and_can_retire() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"], ["never"]])
    other = Probe("o", log, [["o1"]])
    coop.register(other)
    coop.register(a)
    coop.render()
    a.on_observe = lambda p: p.retire()
    coop.render()
    assert ("render", "a") in log and log.count(("render", "a")) == 1
    assert native("never")[0] not in coop.context[:]



def test_observe_only_when_the_cursor_reaches_the_area() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"], ["a2"], ["a3"]])
    b = Probe("b", log, [["b1"], ["b2"]])
    coop.register(a)
    coop.register(b)
    coop.render()  # both get a range
    a.flow_state = AreaFlowState.exclusive
    log.clear()
    coop.render()
    coop.render()
    assert ("observe", "b") not in log  # the pass ends at a: b is never reached
    assert log == [("observe", "a"), ("render", "a")] * 2

# -- render -------------------------------------------------------------------------------------


def test_render_messages_are_converted_and_appended() -> None:
    coop, log = make()
    coop.register(Probe("a", log, [["x", "y"]]))
    result = coop.render()
    assert result is coop.context
    assert result[:] == native("x", "y")


def test_first_non_empty_render_fixes_earliest_later_ones_move_latest() -> None:
    coop, log = make()
    a = Probe("a", log, [[], ["a1"], [], ["a2", "a3"]])
    coop.context.extend([reply("r0")])
    coop.register(a)
    coop.render()
    assert ranges(coop) == [None]
    coop.render()
    assert ranges(coop) == [EffectRange(1, 1)]
    coop.context.extend([reply("r1")])
    coop.render()  # empty render: nothing changes
    assert ranges(coop) == [EffectRange(1, 1)]
    assert len(coop.context) == 3
    coop.render()
    assert ranges(coop) == [EffectRange(1, 4)]


def test_effect_range_is_influence_not_ownership() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"], ["a2"]])
    b = Probe("b", log, [["b1"]])
    coop.register(a)
    coop.register(b)
    coop.render()
    coop.context.extend([reply("model")])
    coop.render()
    assert ranges(coop) == [EffectRange(0, 3), EffectRange(1, 1)]


# -- promote and gc_prologue --------------------------------------------------------------------


def test_promote_results_survive_reclamation() -> None:
    coop, log = make()
    a = Probe("a", log, [["work1"], ["work2"]], promoted=["summary"])
    coop.context.extend([reply("prefix")])
    coop.register(a)
    coop.render()
    coop.render()
    a.retire()
    coop.render()
    assert coop.context[:] == (reply("prefix"), *native("summary"))
    assert log.count(("promote", "a")) == 1


def test_promoted_messages_belong_to_no_area_and_are_reclaimed_later() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"]], promoted=["kept"])
    coop.register(a)
    coop.render()
    a.retire()
    coop.render()
    assert coop.context[:] == native("kept")
    b = Probe("b", log, [["b1"]])
    coop.register(b)
    coop.render()
    assert ranges(coop) == [EffectRange(1, 1)]
    b.retire()
    coop.render()
    assert coop.context[:] == native("kept")  # before b's range: stays
    c = Probe("c", log, [["c1"], ["c2"]])
    coop.register(c)
    coop.render()
    coop.context.extend([reply("m")])
    coop.render()
    c.retire()
    coop.render()
    assert coop.context[:] == native("kept")


def test_all_promotes_run_before_any_gc_prologue() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"]], promoted=["pa"])
    b = Probe("b", log, [["b1"]], promoted=["pb"])
    coop.register(a)
    coop.register(b)
    coop.render()
    a.retire()
    b.retire()
    log.clear()
    coop.render()
    assert log == [("promote", "a"), ("promote", "b"), ("gc_prologue", "a"), ("gc_prologue", "b")]
    assert coop.context[:] == native("pa", "pb")


def test_gc_prologue_runs_before_detachment() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1", "a2"]])
    seen: list[int] = []
    a.on_gc = lambda p: seen.append(len(coop.context))
    coop.register(a)
    coop.render()
    a.retire()
    coop.render()
    assert seen == [2]
    assert len(coop.context) == 0


def test_state_changes_in_promote_or_gc_prologue_cannot_cancel_collection() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"]])
    b = Probe("b", log, [["b1"]])
    a.on_promote = lambda p: setattr(p, "life_state", AreaLifeState.retain)
    b.on_gc = lambda p: setattr(p, "life_state", AreaLifeState.retain)
    coop.register(a)
    coop.register(b)
    coop.render()
    a.retire()
    b.retire()
    coop.render()
    assert coop.areas() == ()
    assert len(coop.context) == 0


def test_collection_happens_at_the_start_of_the_next_render() -> None:
    coop, log = make()
    a = Probe("a", log, [["notice"]])
    a.on_render = lambda p: p.retire()
    coop.register(a)
    first = coop.render()
    assert first[:] == native("notice")
    assert ("gc_prologue", "a") not in log
    assert coop.render()[:] == ()
    assert log[-2:] == [("promote", "a"), ("gc_prologue", "a")]


def test_areas_are_removed_after_collection() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"], ["again"]])
    coop.register(a)
    coop.render()
    a.retire()
    coop.render()
    assert coop.areas() == ()
    a.life_state = AreaLifeState.retain  # a removed area is never called again
    log.clear()
    coop.render()
    coop.render()
    assert log == []


# -- blocking -----------------------------------------------------------------------------------


def test_retained_overlapping_area_blocks_nested_retired_one() -> None:
    coop, log = make()
    outer = Probe("outer", log, [["o1"], ["o2"]])
    inner = Probe("inner", log, [["i1"]])
    coop.register(outer)
    coop.register(inner)
    coop.render()  # o1 i1
    coop.render()  # o2 -> outer [0, 2], inner [1, 1]
    inner.retire()
    coop.render()
    assert [r.area for r in coop.areas()] == [outer, inner]  # retired, still registered
    assert coop.areas()[1].life_state is AreaLifeState.retired
    assert coop.context[:] == native("o1", "i1", "o2")
    assert ("promote", "inner") not in log
    outer.retire()  # once the long-lived area retires, the whole component goes in one pass
    coop.render()
    assert coop.context[:] == ()
    assert log[-4:] == [("promote", "inner"), ("promote", "outer"),
                        ("gc_prologue", "inner"), ("gc_prologue", "outer")]


def test_retained_area_before_the_tail_does_not_block() -> None:
    coop, log = make()
    early = Probe("early", log, [["e1"]])
    late = Probe("late", log, [["l1"]])
    coop.register(early)
    coop.render()
    coop.register(late)
    coop.render()
    late.retire()
    coop.render()
    assert coop.context[:] == native("e1")
    assert [r.area for r in coop.areas()] == [early]


def test_retained_area_at_the_tail_blocks_everything_before_it() -> None:
    coop, log = make()
    old = Probe("old", log, [["o1"]])
    new = Probe("new", log, [["n1"]])
    coop.register(old)
    coop.render()
    coop.register(new)
    coop.render()
    old.retire()
    coop.render()
    assert coop.context[:] == native("o1", "n1")
    assert [r.area for r in coop.areas()] == [old, new]


def test_everything_after_the_tail_start_is_detached() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"]])
    coop.context.extend([reply("keep")])
    coop.register(a)
    coop.render()
    coop.context.extend([reply("model1"), reply("model2")])
    a.retire()
    coop.render()
    assert coop.context[:] == (reply("keep"),)
