"""Scenario tests: exceptions in area callbacks, serialized render() and re-entrancy (DESIGN.md)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from hydrangea.context import Context
from hydrangea.context.area import AreaFlowState
from hydrangea.coop import (
    AreaContractError,
    CoopContext,
    GcPrologueError,
)
from hydrangea.errors import ContextStateError, HydrangeaError
from tests.support.coop_areas import GATEWAY, Event, Probe, native


def make() -> tuple[CoopContext, list[Event]]:
    return CoopContext(Context(GATEWAY)), []


# -- exceptions in callbacks --------------------------------------------------------------------


class Boom(Exception):
    pass


def _raise(_: Probe) -> None:
    raise Boom("callback failed")


def test_promote_raising_changes_nothing() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"]], promoted=["pa"])
    b = Probe("b", log, [["b1"]], promoted=["pb"])
    coop.register(a)
    coop.register(b)
    coop.render()
    a.retire()
    b.retire()
    b.on_promote = _raise
    before = coop.context[:]
    with pytest.raises(Boom):
        coop.render()
    assert coop.context[:] == before
    assert [r.area for r in coop.areas()] == [a, b]
    assert not any(e[0] == "gc_prologue" for e in log)
    assert coop.last_collection is None
    b.on_promote = None
    coop.render()
    assert coop.context[:] == native("pa", "pb")


def test_promote_returning_native_items_is_a_contract_error_and_changes_nothing() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"]])
    coop.register(a)
    coop.render()
    a.retire()
    def bad() -> Any:
        return ({"role": "user", "content": "native"},)

    a.promote = bad  # type: ignore[method-assign]
    with pytest.raises(AreaContractError, match="promote"):
        coop.render()
    assert coop.context[:] == native("a1")
    assert [r.area for r in coop.areas()] == [a]


def test_gc_prologue_raising_completes_collection_then_raises_all() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"]], promoted=["pa"])
    b = Probe("b", log, [["b1"]])
    c = Probe("c", log, [["c1"]])
    for area in (a, b, c):
        coop.register(area)
    coop.render()
    for area in (a, b, c):
        area.retire()
    a.on_gc = _raise
    c.on_gc = lambda p: (_ for _ in ()).throw(KeyError("c"))
    with pytest.raises(GcPrologueError) as info:
        coop.render()
    group = info.value
    assert isinstance(group, HydrangeaError) and isinstance(group, ExceptionGroup)
    assert [type(e) for e in group.exceptions] == [Boom, KeyError]
    assert "Probe('a')" in (group.exceptions[0].__notes__ or [""])[0]
    assert ("gc_prologue", "b") in log
    assert coop.context[:] == native("pa")
    assert coop.areas() == ()
    d = Probe("d", log, [["d1"]])
    coop.register(d)
    coop.render()
    assert coop.context[:] == native("pa", "d1")


def test_gc_prologue_error_supports_except_star() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"]])
    coop.register(a)
    coop.render()
    a.retire()
    a.on_gc = _raise
    caught: list[BaseException] = []
    try:
        coop.render()
    except* Boom as group:
        caught.extend(group.exceptions)
    assert len(caught) == 1 and isinstance(caught[0], Boom)


@pytest.mark.parametrize("where", ["observe", "render"])
def test_observe_or_render_raising_keeps_earlier_output_and_recovers(where: str) -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"], ["a2"]])
    b = Probe("b", log, [["b1"], ["b2"], ["b3"]])
    c = Probe("c", log, [["c1"], ["c2"]])
    for area in (a, b, c):
        coop.register(area)
    coop.render()
    if where == "observe":
        b.on_observe = _raise
    else:
        b.on_render = _raise
    with pytest.raises(Boom):
        coop.render()
    expected = native("a1", "b1", "c1", "a2")
    assert coop.context[:] == expected  # a2 stays, nothing of b, c not reached
    assert coop.snapshot().cursor == 1  # the failing area
    b.on_observe = b.on_render = None
    coop.render()
    # a render hook pops its output before raising, so b's script moved on in that case
    assert coop.context[:] == expected + native("b3" if where == "render" else "b2", "c2")


def test_render_returning_native_item_appends_nothing() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"]])
    def bad() -> Any:
        return [{"role": "user", "content": "x"}]

    a.render = bad  # type: ignore[method-assign]
    coop.register(a)
    with pytest.raises(AreaContractError, match="not a Message"):
        coop.render()
    assert len(coop.context) == 0
    assert coop.areas()[0].effect_range is None


def test_bad_state_values_are_contract_errors() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"]])
    a.flow_state = "yielded"  # type: ignore[assignment]
    coop.register(a)
    with pytest.raises(AreaContractError, match="flow_state"):
        coop.render()
    a.flow_state = AreaFlowState.yielded
    a.life_state = "retired"  # type: ignore[assignment]
    with pytest.raises(AreaContractError, match="life_state"):
        coop.render()


# -- serialized render and re-entrancy ----------------------------------------------------------


def test_render_calls_from_two_threads_are_serialized() -> None:
    coop, log = make()
    inside = [0]
    overlap: list[bool] = []

    def slow(_: Probe) -> None:
        inside[0] += 1
        overlap.append(inside[0] > 1)
        time.sleep(0.002)
        inside[0] -= 1

    areas = [Probe(str(i), log, [["x"]] * 5) for i in range(3)]
    for area in areas:
        area.on_render = slow
        coop.register(area)
    threads = [threading.Thread(target=lambda: [coop.render() for _ in range(5)])
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert overlap and not any(overlap)
    assert len(coop.context) == 15
    assert coop.renders == 10


@pytest.mark.timeout(30)  # without the guard, the nested render would deadlock
@pytest.mark.parametrize("where", ["observe", "render", "promote", "gc_prologue"])
def test_render_from_inside_a_callback_raises(where: str) -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"], ["a2"]])
    errors: list[BaseException] = []

    def reenter(_: Probe) -> None:
        try:
            coop.render()
        except ContextStateError as exc:
            errors.append(exc)

    coop.register(a)
    coop.render()
    setattr(a, f"on_{'gc' if where == 'gc_prologue' else where}", reenter)
    if where in {"promote", "gc_prologue"}:
        a.retire()
    coop.render()
    assert len(errors) == 1
    expected = native("a1", "a2") if where in {"observe", "render"} else ()
    assert coop.context[:] == expected
    assert coop.renders == 2


def test_snapshot_from_inside_a_callback_does_not_block() -> None:
    coop, log = make()
    a = Probe("a", log, [["a1"]])
    seen: list[int] = []
    a.on_render = lambda p: seen.append(len(coop.snapshot().areas))
    coop.register(a)
    coop.render()
    assert seen == [1]
