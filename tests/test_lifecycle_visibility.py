"""Visibility against an independent oracle: a step-by-step simulation of each lifecycle."""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Lifecycle, next_change, visible_at
from hydrangea.message import Message, Role
from tests.support.lifecycle_oracle import EPISODES, Spec, build, oracle_phases, specs


@given(st.lists(specs(), max_size=14))
def test_every_request_shows_exactly_the_visible_components(all_specs: list[Spec]) -> None:
    context = Context(GatewayType.openai)
    lc = Lifecycle(context)
    oracles: dict[str, Iterator[tuple[str, int | None] | None]] = {}
    order: list[str] = []
    for episode in range(EPISODES):
        for index, spec in enumerate(all_specs):
            if spec.added_before == episode:
                key = f"c{index}"
                lc.add(build(spec, key))
                oracles[key] = oracle_phases(spec)
                order.append(key)
        context.emplace_message(Message(role=Role.user, content=f"user {episode}"))
        history = [m["content"] for m in context]  # what was sent is history: kept as it is
        request = lc.render()
        assert request.episode == episode
        expected: dict[str, list[str]] = {"before": [], "after": []}
        expected_phases: dict[str, tuple[str, int | None]] = {}
        for key in order:
            phase = next(oracles[key])
            if phase is not None:
                expected[phase[0]].append(key)
                expected_phases[key] = phase
        assert request.overlay_keys == tuple(expected["before"] + expected["after"])
        for item in request.overlay:
            assert (item.phase.placement.value, item.phase.stage) == expected_phases[item.key]
        want = (
            history[:-1]
            + [f"<{k}>" for k in expected["before"]]
            + history[-1:]
            + [f"<{k}>" for k in expected["after"]]
        )
        assert [m["content"] for m in request.items] == want
        assert [m["content"] for m in context] == want
        context.emplace_message(Message(role=Role.assistant, content=f"reply {episode}"))


@given(specs(), st.integers(0, 60))
def test_next_change_is_the_first_offset_where_the_oracle_differs(spec: Spec, k: int) -> None:
    component = build(spec, "x")
    horizon = 400
    phases = oracle_phases(spec)
    timeline = [next(phases) for _ in range(horizon)]

    def seen(offset: int) -> tuple[str, int | None] | None:
        phase = visible_at(component, offset)
        return None if phase is None else (phase.placement.value, phase.stage)

    assert seen(k) == timeline[k]
    change = next_change(component, k)
    later = [j for j in range(k + 1, horizon) if timeline[j] != timeline[k]]
    if change is None:
        assert later == []
    else:
        assert later and change.at == later[0]
        assert seen(change.at) == timeline[change.at]
        assert change.final == all(p is None for p in timeline[change.at :])
