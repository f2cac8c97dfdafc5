"""ToolLoopArea: exclusive while the model calls tools, yields when it answers."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from hydrangea.areas import (
    AreaUsageError,
    ConversationArea,
    ToolError,
    ToolLoopArea,
)
from hydrangea.context import Context
from hydrangea.context.area import AreaFlowState, AreaLifeState
from hydrangea.coop import CoopContext
from hydrangea.errors import ContextStateError, DuplicateAreaError
from hydrangea.gateway import GatewayType
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
    assert [r.name for r in results(message)] == ["nope", "lookup"]  # (each names its call)
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


def test_without_anchor_the_finished_loop_keeps_its_results_and_the_answer() -> None:
    # issue 14: a loop without anchor= used to retire once answered, and the next collection
    # detached its results and the model's answer after them, silently.
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
    assert tools.answered and life(tools) is AreaLifeState.retain
    conversation.user("Thanks.")
    for _ in range(3):
        coop.render()
    assert coop.last_collection is None
    history = texts(context[:])
    assert "crew arrived 01:45" in history and "Crew arrived at 01:45." in history
    assert history.index("crew arrived 01:45") < history.index("Crew arrived at 01:45.")
    assert "Thanks." in texts(context[-1])


class Scratch:
    """An anchor that renders one message and retires when told to."""

    def __init__(self) -> None:
        self.life_state = AreaLifeState.retain
        self.flow_state = AreaFlowState.yielded
        self.rendered = False

    def observe(self, context: object) -> None:
        _ = context

    def render(self) -> list[Message]:
        if self.rendered:
            return []
        self.rendered = True
        return [Message(role=Role.user, content="scratch work follows")]

    def promote(self) -> tuple[Message, ...]:
        return ()

    def gc_prologue(self) -> None:
        pass


def test_with_an_anchor_the_loop_is_reclaimed_with_the_anchor() -> None:
    context, coop = coop_with_system()
    scratch = Scratch()
    coop.register(scratch)
    coop.render()
    tools = ToolLoopArea({"lookup": lookup}, anchor=scratch)
    coop.register(tools)
    tools.route(call_tool(context, "c1", "lookup", ticket="HW-1"))
    coop.render()
    tools.route(answer(context, "Crew arrived at 01:45."))
    assert life(tools) is AreaLifeState.retain  # the anchor is still retained
    coop.render()
    assert coop.last_collection is None
    scratch.life_state = AreaLifeState.retired
    assert life(tools) is AreaLifeState.retired
    coop.render()
    record = coop.last_collection
    assert record is not None and set(record.areas) == {scratch, tools}
    assert "scratch work follows" not in texts(context[:])


# -- a forgotten coop.register(loop) (issue 25) ---------------------------------------------------


def test_an_unregistered_loop_of_a_registered_anchor_refuses_calls_then_works_registered() -> None:
    context, coop = coop_with_system()
    conversation = ConversationArea()
    coop.register(conversation)
    ran: list[Mapping[str, Any]] = []

    def counted(arguments: Mapping[str, Any]) -> str:
        ran.append(arguments)
        return lookup(arguments)

    loop = ToolLoopArea({"lookup": counted}, anchor=conversation)  # coop.register(loop) forgotten
    conversation.user("Check HW-1.")
    coop.render()
    reply = call_tool(context, "c1", "lookup", ticket="HW-1")
    conversation.route(reply)
    with pytest.raises(ContextStateError, match=r"coop\.register\(loop\)") as refused:
        loop.route(reply)
    assert "'lookup'" in str(refused.value)
    # refused before anything ran or changed: the reply can be routed again once registered
    assert ran == [] and loop.runs == () and loop.rounds == 0
    assert flow(loop) is AreaFlowState.yielded and not loop.answered and not loop.registered
    coop.register(loop)
    assert loop.registered
    loop.route(reply)
    coop.render()
    assert context[-1]["tool_call_id"] == "c1" and "crew arrived 01:45" in texts(context[-1])
    assert len(ran) == 1


def test_push_back_routed_to_the_unregistered_loop_is_refused_and_nothing_is_kept() -> None:
    context = Context(GatewayType.anthropic)
    coop = CoopContext(context)
    conversation = ConversationArea()
    coop.register(conversation)
    conversation.user("Check HW-1.")
    coop.render()
    held = len(context)
    loop = ToolLoopArea({"lookup": lookup}, anchor=conversation)
    response = {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "lookup", "input": {"ticket": "HW-1"}},
    ]}
    with pytest.raises(ContextStateError, match=r"coop\.register\(loop\)"):
        context.push_back(response, route=loop)
    assert len(context) == held and loop.runs == ()
    coop.register(loop)
    context.push_back(response, route=loop)
    coop.render()
    assert "crew arrived 01:45" in texts(context[-1])


def test_aroute_refuses_the_same_before_any_tool_runs() -> None:
    context, coop = coop_with_system()
    conversation = ConversationArea()
    coop.register(conversation)
    ran: list[str] = []

    async def slow(arguments: Mapping[str, Any]) -> str:
        ran.append("slow")
        return "done"

    loop = ToolLoopArea({"slow": slow}, anchor=conversation)
    reply = call_tool(context, "c1", "slow")
    with pytest.raises(ContextStateError, match=r"coop\.register\(loop\)"):
        asyncio.run(loop.aroute(reply))
    assert ran == [] and loop.runs == ()


def test_only_a_loop_in_a_registered_anchors_flow_is_refused() -> None:
    # Standalone (no anchor, or an anchor no CoopContext registered): render() called directly.
    unanchored = ToolLoopArea({"lookup": lookup})
    anchor = ConversationArea()
    anchored = ToolLoopArea({"lookup": lookup}, anchor=anchor)
    for loop in (unanchored, anchored):
        loop.route(Message(role=Role.assistant, content=(
            ToolCallPart(id="a", name="lookup", arguments={"ticket": "HW-1"}),
        )))
        (message,) = loop.render()
        assert [r.call_id for r in results(message)] == ["a"]
    # Once the anchor is registered, a new call to the unregistered loop would be lost.
    context, coop = coop_with_system()
    coop.register(anchor)
    with pytest.raises(ContextStateError, match=r"coop\.register\(loop\)"):
        anchored.route(call_tool(context, "b", "lookup", ticket="HW-1"))
    assert [r.call_id for r in anchored.runs] == ["a"] and anchored.render() == []
    # An answer loses nothing (it is the conversation's): accepted, and the loop is finished.
    anchored.route(answer(context, "Nothing more to look up."))
    assert anchored.answered


def test_a_loop_registered_with_one_coop_is_refused_by_another() -> None:
    _, first = coop_with_system()
    _, second = coop_with_system()
    loop = ToolLoopArea({"lookup": lookup})
    first.register(loop)
    with pytest.raises(DuplicateAreaError, match="another CoopContext"):
        second.register(loop)
