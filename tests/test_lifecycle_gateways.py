"""Requests with overlays are valid for every gateway, by the official SDKs' own types."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle, Placement, Stage
from hydrangea.lifecycle.placement import before_newest
from hydrangea.message import Message, Role
from tests.support.sdk_check import model_outputs, validate_request
from tests.support.tool_exchange import two_call_exchange

GATEWAYS = list(GatewayType)


@pytest.mark.parametrize("gateway", GATEWAYS)
def test_before_the_newest_item_never_splits_a_tool_exchange(gateway: GatewayType) -> None:
    context = Context(gateway)
    context.emplace_messages(two_call_exchange())
    calls_at = next(
        i for i, item in enumerate(context) if "call_1" in str(item) and "sunny" not in str(item)
    )
    assert before_newest(gateway, context[:]) == calls_at
    lc = Lifecycle(context)
    lc.add(Component("Remember: be brief.", ttl=2, placement=Placement.before, key="b"))
    lc.add(Component("Current task: weather", ttl=1, cadence=1, key="s"))
    request = lc.render()
    items = request.items
    overlay_at = items.index(request.before[0].items[0])
    # the overlay sits right before the assistant turn that made the calls
    assert "call_1" in str(items[overlay_at + len(request.before[0].items)])
    assert items[-len(request.after[0].items) :] == request.after[0].items
    validate_request(gateway, request.kwargs)


@pytest.mark.parametrize("gateway", GATEWAYS)
def test_system_and_staged_components_validate(gateway: GatewayType) -> None:
    context = Context(gateway)
    context.emplace_message(Message(role=Role.user, content="hi"))
    lc = Lifecycle(context)
    lc.add(Component(Message(role=Role.system, content="Mode: review"), ttl=3, placement="before"))
    lc.add(
        Component(
            "Status",
            stages=[Stage(Placement.after, 1), Stage(Placement.before, 1)],
            cycle=True,
        )
    )
    for turn in range(4):
        validate_request(gateway, lc.render().kwargs)
        context.push_back(_assistant(gateway, f"answer {turn}"))
        context.emplace_message(Message(role=Role.user, content=f"question {turn}"))


def _assistant(gateway: GatewayType, text: str) -> list[dict[str, object]]:
    scratch = Context(gateway)
    scratch.emplace_message(Message(role=Role.assistant, content=text))
    return list(scratch[:])


@st.composite
def turns(draw: st.DrawFn, gateway: GatewayType) -> list[tuple[str, object]]:
    steps: list[tuple[str, object]] = []
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.booleans()):  # otherwise the newest item is the model's own output
            steps.append(("user", draw(st.text(min_size=1, max_size=20))))
        if draw(st.booleans()):
            steps.append(
                (
                    "component",
                    (
                        draw(st.sampled_from(["before", "after"])),
                        draw(st.integers(1, 3)),
                        draw(st.one_of(st.none(), st.integers(1, 3))),
                    ),
                )
            )
        steps.append(("render", None))
        steps.append(("output", draw(model_outputs(gateway))))
    return steps


@pytest.mark.parametrize("gateway", GATEWAYS)
@given(data=st.data())
def test_random_conversations_with_overlays_validate(
    gateway: GatewayType, data: st.DataObject
) -> None:
    context = Context(gateway)
    lc = Lifecycle(context)
    for kind, value in data.draw(turns(gateway)):
        if kind == "user":
            assert isinstance(value, str)
            context.emplace_message(Message(role=Role.user, content=value))
        elif kind == "component":
            assert isinstance(value, tuple)
            placement, ttl, cadence = value
            lc.add(Component(f"note {len(lc)}", ttl=ttl, cadence=cadence, placement=placement))
        elif kind == "render":
            request = lc.render()
            validate_request(gateway, request.kwargs)
        else:
            context.push_back(value)
    validate_request(gateway, lc.render().kwargs)
