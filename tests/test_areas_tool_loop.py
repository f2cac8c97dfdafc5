"""ToolLoopArea: exclusive while the model calls tools, yields when it answers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from hydrangea.areas import (
    AreaUsageError,
    ConversationArea,
    ToolError,
    ToolLoopArea,
)
from hydrangea.context.area import AreaFlowState, AreaLifeState
from hydrangea.errors import ContextStateError
from hydrangea.message import Message, Role, ToolCallPart, ToolResultPart
from tests.areas_support import answer, call_tool, coop_with_system, life, texts


def lookup(arguments: Mapping[str, Any]) -> str:
    ticket = arguments.get("ticket")
    if ticket != "HW-1":
        raise ToolError(f"no ticket {ticket!r}")
    return "HW-1: crew arrived 01:45"


def flow(area: ToolLoopArea) -> AreaFlowState:
    return area.flow_state


def results(message: Message) -> list[ToolResultPart]:
    return [p for p in message.parts if isinstance(p, ToolResultPart)]


def test_exclusive_while_calling_and_results_render_before_anything_else() -> None:
    context, coop = coop_with_system()
    conversation = ConversationArea()
    coop.register(conversation)
    tools = ToolLoopArea({"lookup": lookup}, anchor=conversation)
    coop.register(tools)
    conversation.user("Check HW-1.")
    coop.render()
    assert flow(tools) is AreaFlowState.yielded
    reply = call_tool(context, "c1", "lookup", ticket="HW-1")
    tools.route(reply)
    conversation.route(reply)
    assert flow(tools) is AreaFlowState.exclusive
    coop.render()
    # the results follow the call at once, and the pass ended at the tool loop
    assert context[-2]["tool_calls"][0]["id"] == "c1"
    assert context[-1]["tool_call_id"] == "c1" and "crew arrived 01:45" in texts(context[-1])
    assert coop.snapshot().cursor == 1  # the cursor stays on the tool loop
    second = call_tool(context, "c2", "lookup", ticket="HW-9")
    tools.route(second)
    conversation.user("(typed while the tool ran)")
    coop.render()
    # the pass started and ended at the tool loop: the queued user turn waits
    assert "no ticket 'HW-9'" in texts(context[-1])
    assert "typed while the tool ran" not in texts(context[:])
    final = answer(context, "Crew arrived at 01:45.")
    tools.route(final)
    assert flow(tools) is AreaFlowState.yielded and tools.answered
    assert life(tools) is AreaLifeState.retain  # anchored to the open conversation
    coop.render()  # now the queued user turn gets its place
    assert "typed while the tool ran" in texts(context[-1])
    assert [(r.name, r.is_error) for r in tools.runs] == [("lookup", False), ("lookup", True)]
    assert tools.rounds == 2


def test_unknown_tool_and_round_limit_give_error_results() -> None:
    tools = ToolLoopArea({"lookup": lookup}, max_rounds=1)
    tools.route(
        Message(
            role=Role.assistant,
            content=(
                ToolCallPart(id="a", name="nope", arguments={}),
                ToolCallPart(id="b", name="lookup", arguments={"ticket": "HW-1"}),
            ),
        )
    )
    (message,) = tools.render()
    assert [(r.call_id, r.is_error) for r in results(message)] == [("a", True), ("b", False)]
    assert "unknown tool 'nope'" in results(message)[0].content
    tools.route(Message(role=Role.assistant, content=(ToolCallPart(id="c", name="lookup"),)))
    (message,) = tools.render()
    assert results(message)[0].is_error and "limit of 1 rounds" in results(message)[0].content
    assert tools.render() == []


def test_other_exceptions_from_a_tool_escape() -> None:
    def broken(arguments: Mapping[str, Any]) -> str:
        raise KeyError("bug in the tool")

    tools = ToolLoopArea({"broken": broken})
    with pytest.raises(KeyError):
        tools.route(Message(role=Role.assistant, content=(ToolCallPart(id="x", name="broken"),)))


def test_routing_rules() -> None:
    tools = ToolLoopArea({})
    with pytest.raises(AreaUsageError):
        tools.route(Message(role=Role.user, content="hi"))
    with pytest.raises(AreaUsageError):
        ToolLoopArea({}, max_rounds=0)
    tools.route(Message(role=Role.assistant, content="answer"))
    with pytest.raises(ContextStateError):
        tools.route(Message(role=Role.assistant, content="again"))


def test_without_anchor_the_finished_loop_is_reclaimed_with_the_answer() -> None:
    context, coop = coop_with_system()
    conversation = ConversationArea()
    coop.register(conversation)
    tools = ToolLoopArea({"lookup": lookup})
    coop.register(tools)
    conversation.user("Check HW-1.")
    coop.render()
    reply = call_tool(context, "c1", "lookup", ticket="HW-1")
    tools.route(reply)
    coop.render()
    tools.route(answer(context, "Crew arrived at 01:45."))
    assert life(tools) is AreaLifeState.retired
    coop.render()
    record = coop.last_collection
    assert record is not None and record.areas == (tools,) and record.promoted == 0
    # the results and the answer after them went; the call before the range stays and the
    # request builder answers it with an error result instead of leaving it orphaned
    assert "Crew arrived" not in texts(context[:])
    assert "crew arrived 01:45" not in texts(context[:])
    request = context.request()
    assert "c1" in texts(request)
