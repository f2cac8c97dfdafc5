"""Behaviours added after review: the observe view, final retirement, gc_prologue error timing."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from hydrangea.context import Context, NativeContent
from hydrangea.context.view import ContextView
from hydrangea.coop import AreaContractError, CoopContext, GcPrologueError
from hydrangea.errors import ContextStateError
from tests.support.coop_areas import GATEWAY, Event, Probe, reply


def _boom(_: Probe) -> None:
    raise RuntimeError("cleanup failed")


class _Capturing(Probe):
    """A probe that keeps the very object observe() received."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.received: list[Sequence[NativeContent]] = []

    def observe(self, context: Sequence[NativeContent]) -> None:
        self.received.append(context)
        super().observe(context)


def test_observe_gets_a_view_of_the_stored_items_not_a_copy() -> None:
    log: list[Event] = []
    coop = CoopContext(Context(GATEWAY))
    area = _Capturing("a", log, [["one", "two"], ["three"]])
    coop.register(area)
    coop.render()
    coop.context.push_back(reply("answer"))
    coop.render()
    assert len(area.received) == 1
    view = area.received[0]
    assert isinstance(view, ContextView)
    assert len(view) == 2
    assert view[0] is coop.context[0]  # the stored item itself: nothing was copied
    assert list(view) == list(coop.context[0:2])
    assert view[-1] == coop.context[1]
    assert view[0:1] == coop.context[0:1]
    assert not hasattr(view, "append")
    with pytest.raises(IndexError):
        view[2]


def test_a_view_goes_stale_after_a_detach() -> None:
    context = Context(GATEWAY, [reply("a"), reply("b"), reply("c")])
    view = context.view(0, 2)
    assert [item["content"] for item in view] == ["a", "b"]
    context.detach_tail(1)
    with pytest.raises(ContextStateError):
        view[0]
    with pytest.raises(ContextStateError):
        list(view)
    with pytest.raises(IndexError):
        context.view(0, 5)


def test_a_retired_area_cannot_come_back() -> None:
    log: list[Event] = []
    coop = CoopContext(Context(GATEWAY))
    outer = Probe("outer", log, [["o1"], ["o2"]])
    inner = Probe("inner", log, [["i1"], ["i2"]])
    coop.register(outer)
    coop.register(inner)
    coop.render()
    coop.render()  # outer now spans [0, 2] and inner [1, 3]: they overlap
    inner.retire()
    coop.render()  # blocked by the retained outer area, so inner stays registered
    assert inner in [r.area for r in coop.areas()]
    before = coop.context[:]
    registered = coop.areas()
    inner.life_state = type(inner.life_state).retain  # breaks the one-way rule
    with pytest.raises(AreaContractError, match="retirement is final"):
        coop.render()
    assert coop.context[:] == before
    assert [r.area for r in coop.areas()] == [r.area for r in registered]


def test_gc_prologue_errors_are_raised_before_the_unfold_pass() -> None:
    log: list[Event] = []
    coop = CoopContext(Context(GATEWAY))
    done = Probe("done", log, [["d1"]])
    busy = Probe("busy", log, [["b1"], ["b2"], ["b3"]])
    coop.register(busy)
    coop.register(done)
    coop.render()  # busy: [0, 0], done: [1, 1]
    done.retire()
    done.on_gc = _boom
    coop.context.push_back(reply("model"))
    length = len(coop.context)
    with pytest.raises(GcPrologueError):
        coop.render()
    # The collection completed (the retired area was removed) but no area rendered in that call.
    assert done not in [r.area for r in coop.areas()]
    assert ("render", "busy") not in log[log.index(("gc_prologue", "done")) :]
    assert len(coop.context) <= length
    coop.render()
    assert ("render", "busy") in log[log.index(("gc_prologue", "done")) :]
