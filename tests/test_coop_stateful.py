"""Stateful property test: CoopContext against the independent oracle in tests/support.

Random scripted areas (life and flow changes, empty and non-empty renders, observe-time
retirement, promotions, failing callbacks) are registered and rendered, interleaved with model
responses pushed straight into the Context. After every step the Context items, the exact
callback order (including what each observe() received), the ring, the ranges and the cursor
must match the oracle.
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any

import pytest
from hypothesis import Phase, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from hydrangea.context import Context, NativeContent
from hydrangea.context.area import AreaFlowState
from hydrangea.coop import CoopContext, EffectRange, GcPrologueError
from hydrangea.message import Message, Role
from tests.support.coop_areas import GATEWAY, reply
from tests.support.coop_oracle import CoopOracle, Label
from tests.support.coop_script import Boom, Script, ScriptedArea, Step

RUNS = {"cases": 0, "steps": 0}


def rare(weight: int) -> st.SearchStrategy[bool]:
    """True about once in ``weight`` draws; shrinks to False."""
    return st.integers(0, weight - 1).map(lambda n: n == weight - 1)


steps = st.builds(
    Step,
    size=st.integers(0, 2),
    flow=st.sampled_from([AreaFlowState.yielded, AreaFlowState.exclusive]),
    retire=rare(4),
    observe_retires=rare(6),
    fault=st.sampled_from(["none"] * 10 + ["observe", "render"]),
)

scripts = st.builds(
    lambda steps, start_retired, promoted, promote_fails, gc_fails: (
        steps,
        start_retired,
        promoted,
        promote_fails,
        gc_fails,
    ),
    st.lists(steps, max_size=5).map(tuple),
    rare(8),
    st.integers(0, 2),
    rare(8),
    rare(8),
)


@cache
def native_of(label: Label) -> tuple[NativeContent, ...]:
    scratch = Context(GATEWAY)
    kind, value = label
    if kind == "msg":
        scratch.emplace_message(Message(role=Role.user, content=value))
    else:
        scratch.extend([reply(value)])
    assert len(scratch) == 1, "the oracle counts one item per message"
    return scratch[:]


def expand(labels: tuple[Label, ...] | list[Label]) -> tuple[NativeContent, ...]:
    return tuple(item for label in labels for item in native_of(label))


class CoopMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        RUNS["cases"] += 1
        self.log: list[tuple[Any, ...]] = []
        self.coop = CoopContext(Context(GATEWAY))
        self.oracle = CoopOracle()
        self.names = 0
        self.replies = 0

    @rule(script=scripts)
    def register(self, script: tuple[Any, ...]) -> None:
        steps_, start_retired, promoted, promote_fails, gc_fails = script
        self.names += 1
        spec = Script(f"a{self.names}", steps_, start_retired, promoted, promote_fails, gc_fails)
        self.coop.register(ScriptedArea(spec, self.log))
        self.oracle.register(spec)

    @rule(count=st.integers(1, 2))
    def model_responds(self, count: int) -> None:
        for _ in range(count):
            self.replies += 1
            label = f"r{self.replies}"
            self.coop.context.extend([reply(label)])
            self.oracle.reply(label)

    @rule()
    def render(self) -> None:
        expected = self.oracle.render()
        try:
            self.coop.render()
            actual = "ok"
        except Boom:
            actual = "boom"
        except GcPrologueError as group:
            assert all(isinstance(e, Boom) for e in group.exceptions)
            actual = "gc-error"
        assert actual == expected
        event(f"render outcome: {actual}")
        record = self.coop.last_collection
        if record is not None and record.render == self.coop.renders:
            event(f"collected {min(len(record.areas), 3)}+ area(s), detached {record.detached > 0}")

    @invariant()
    def matches_oracle(self) -> None:
        RUNS["steps"] += 1
        assert self.coop.context[:] == expand(self.oracle.items)
        expected_log = [
            (e[0], e[1], expand(e[2])) if e[0] == "observe" else e for e in self.oracle.log
        ]
        assert self.log == expected_log
        snap = self.coop.snapshot()
        assert [r.area.script.name for r in snap.areas] == [  # type: ignore[attr-defined]
            a.name for a in self.oracle.ring
        ]
        assert [r.effect_range for r in snap.areas] == [
            None if a.span is None else EffectRange(*a.span) for a in self.oracle.ring
        ]
        assert [r.life_state for r in snap.areas] == [a.life for a in self.oracle.ring]
        assert snap.cursor == self.oracle.cursor_index()
        assert len(snap.pending) == len(self.oracle.waiting)


if os.environ.get("COOP_MUTANT_RUN"):
    # tools/mutate_coop.py only needs to know whether a fault is caught: skip shrinking there.
    CoopMachine.TestCase.settings = settings(
        CoopMachine.TestCase.settings, phases=[Phase.explicit, Phase.reuse, Phase.generate]
    )
TestCoopAgainstOracle = CoopMachine.TestCase


@pytest.fixture(scope="module", autouse=True)
def _report_runs() -> Any:
    yield
    print(f"\ncoop stateful: {RUNS['cases']} cases, {RUNS['steps']} checked steps")
