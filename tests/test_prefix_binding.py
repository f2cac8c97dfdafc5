"""What was sent is history: library sessions against the emulators of the providers' rules.

Each scenario of issue 22 runs 10 model calls through the real SDK clients against loopback
emulators (tests/support/emulators) that enforce Anthropic's preserved-thinking prefix check,
OpenAI Responses' reasoning binding and Gemini's thought signatures. Every reply the
emulators send carries bound reasoning. The oracles are the emulators' own verdicts (no
rejection, no dropped reasoning) and, on the wire, the invariant: every request begins with
exactly what the previous request sent (cache markers aside), and system and tools never change.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest

from hydrangea.areas import CompactingConversation
from hydrangea.asof import InMemoryRecordStore
from hydrangea.context import Context
from hydrangea.coop import CoopContext
from hydrangea.errors import PrefixBindingError
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle, Placement, Stage
from hydrangea.message import Message, Role, ToolCallPart, ToolResultPart
from hydrangea.providers.registry import adapter_for
from tests.support.binding_agent import (
    BINDING,
    MODELS,
    Agent,
    call,
    emulator_for,
    reply_message,
)
from tests.support.emulators import Reply, ToolCall, text
from tests.support.unmarked import unmarked

_HEAD = {
    GatewayType.anthropic: ("system", "tools"),
    GatewayType.openai_responses: ("instructions", "tools"),
    GatewayType.gemini: ("systemInstruction", "tools"),
}



def assert_clean(gateway: GatewayType, emu: Any, *, cut_allowed: bool = False) -> None:
    """No rejection, no drop, and each request begins with the one before it."""
    assert emu.rejections == [], emu.rejections
    assert emu.errors == [], emu.errors
    if gateway is GatewayType.openai_responses:
        assert emu.reasoning_dropped == 0
        assert emu.reasoning_accepted > 0  # reasoning did go back (the check is not idle)
    if gateway is GatewayType.anthropic:
        assert emu.drops == []
    bodies = [unmarked(r.body) for r in emu.requests]
    key = adapter_for(gateway).history_key
    for earlier, later in itertools.pairwise(bodies):
        for head in _HEAD[gateway]:
            assert earlier.get(head) == later.get(head), head
        sent, now = earlier[key], later[key]
        if not cut_allowed:
            assert now[: len(sent)] == sent
            assert len(now) > len(sent)


def _run(
    gateway: GatewayType,
    setup: Callable[[Agent], object],
    *,
    tools: bool = False,
    replies: list[Reply] | None = None,
    each: Callable[[Agent, int], None] | None = None,
) -> Agent:
    with emulator_for(gateway, replies=replies or [], default=text("Noted.")) as emu:
        agent = Agent(gateway, emu.client(), tools=tools)
        setup(agent)
        turn = 0
        while agent.calls < 10:
            if each is not None:
                each(agent, turn)
            agent.ask(f"Question {turn}: is ticket HW-{turn} closed?")
            turn += 1
        assert agent.calls == 10
        assert_clean(gateway, emu)
    return agent


@pytest.mark.parametrize("gateway", BINDING)
def test_the_readme_loop_with_a_sticky_reminder_is_never_rejected(gateway: GatewayType) -> None:
    agent = _run(gateway, lambda a: a.lifecycle.add(
        Component("Answer in one short paragraph.", ttl=1, cadence=1, key="style")))
    history = [agent.context.adapter.item_text(item) for item in agent.context]
    assert history.count("Answer in one short paragraph.") == 10  # sent in every episode


_KINDS: dict[str, Callable[[], Component]] = {
    "ttl": lambda: Component("Cite the ticket number.", ttl=2, key="k"),
    "cadence": lambda: Component("Check the quota.", ttl=1, cadence=3, key="k"),
    "staged": lambda: Component("alert", key="k", stages=[
        Stage(Placement.after, 2), Stage(Placement.before, 2), Stage(Placement.after, 1)]),
    "before": lambda: Component("Mode: support", ttl=3, placement=Placement.before, key="k"),
    "system_ttl": lambda: Component(
        Message(role=Role.system, content="Be polite."), ttl=2, key="k"),
}


@pytest.mark.parametrize("kind", sorted(_KINDS))
@pytest.mark.parametrize("gateway", BINDING)
def test_each_temporary_kind_alone_is_never_rejected(gateway: GatewayType, kind: str) -> None:
    _run(gateway, lambda a: a.lifecycle.add(_KINDS[kind]()))


@pytest.mark.parametrize("gateway", BINDING)
def test_a_key_replaced_mid_session_is_never_rejected(gateway: GatewayType) -> None:
    def each(agent: Agent, turn: int) -> None:
        if turn in (2, 5):
            agent.lifecycle.add(Component(f"Mode {turn}", ttl=3, key="mode"), replace=True)

    _run(gateway, lambda a: a.lifecycle.add(Component("Mode 0", ttl=3, key="mode")), each=each)


@pytest.mark.parametrize("gateway", BINDING)
def test_a_tool_loop_with_a_reminder_is_never_rejected(gateway: GatewayType) -> None:
    script: list[Reply] = []
    for n in range(5):
        script += [Reply(tool_calls=(ToolCall("lookup", {"q": f"w{n}"}),)), text(f"Answer {n}.")]
    agent = _run(gateway, lambda a: a.lifecycle.add(
        Component("Use the lookup tool.", ttl=1, cadence=1)), tools=True, replies=script)
    parts = [p for m in agent.context.messages() for p in m.parts]
    results = [p for p in parts if isinstance(p, ToolResultPart)]
    assert results  # the loop did run tools


@pytest.mark.parametrize("gateway", BINDING)
def test_compaction_in_tool_loops_keeps_the_order_the_model_saw(gateway: GatewayType) -> None:
    script = [Reply(tool_calls=(ToolCall("lookup", {"q": f"w{n}"}),)) for n in range(9)]
    script.append(text("Done."))
    with emulator_for(gateway, replies=script, default=text("Done.")) as emu:
        client = emu.client()
        context = Context(gateway)
        context.emplace_message(Message(role=Role.system, content="You read files."))
        coop = CoopContext(context)
        conversation = CompactingConversation(
            coop, threshold_tokens=120, rollup_tokens=10_000, records=InMemoryRecordStore(),
            in_loops=True,
        )
        lifecycle = Lifecycle(coop)
        lifecycle.add(Component("Report what each file says.", ttl=1, cadence=1))
        conversation.user("Task: read every file and report.")
        summaries = 0
        for _ in range(10):
            response = call(gateway, client, lifecycle.render().kwargs)
            reply = reply_message(gateway, response)
            conversation.push_reply(response, reply)
            for part in _calls(reply):
                result = ToolResultPart(call_id=part.id, content=f"{part.arguments}: " + "x " * 40)
                summary = conversation.user(Message(role=Role.user, content=(result,)))
                summaries += summary is not None
            if not _calls(reply):
                break
        assert summaries > 0  # the loop was compacted at least once
        assert emu.rejections == [] and emu.errors == []
        if gateway is GatewayType.openai_responses:
            assert emu.reasoning_dropped == 0 and emu.reasoning_accepted > 0


def _calls(reply: Message) -> list[ToolCallPart]:
    return [part for part in reply.parts if isinstance(part, ToolCallPart)]


# -- the guard ----------------------------------------------------------------------------------


def _thinking_reply(text_: str = "ok") -> dict[str, Any]:
    return {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "t", "signature": "c2ln"},
        {"type": "text", "text": text_},
    ]}


def test_a_reply_to_a_request_the_history_does_not_hold_refuses_the_next_request() -> None:
    context = Context(GatewayType.anthropic)
    context.emplace_message(Message(role=Role.user, content="Is HW-1 closed?"))
    reminder = {"role": "user", "content": [{"type": "text", "text": "Cite the ticket."}]}
    context.build_incremental(len(context), [reminder])  # sent with a reminder not kept
    context.push_back(_thinking_reply())
    saved = context.to_json()
    with pytest.raises(PrefixBindingError) as info:
        context.request()
    assert (info.value.item, info.value.position) == (1, 1)
    assert isinstance(info.value, RuntimeError)
    assert context.to_json() == saved  # nothing held changed


def test_changed_tools_or_instructions_are_refused_after_bound_reasoning() -> None:
    tools = [{"name": "lookup", "description": "d", "input_schema": {"type": "object"}}]
    context = Context(GatewayType.anthropic)
    context.emplace_message(Message(role=Role.user, content="hi"))
    context.request(tools=tools, system="Be brief.")
    context.push_back(_thinking_reply())
    context.request(tools=tools, system="Be brief.")  # the same: fine
    marked = [{**tools[0], "cache_control": {"type": "ephemeral"}}]
    context.request(tools=marked, system="Be brief.")  # cache markers aside: fine
    with pytest.raises(PrefixBindingError, match="byte-identical"):
        context.request(tools=[*tools, {**tools[0], "name": "other"}], system="Be brief.")
    with pytest.raises(PrefixBindingError):
        context.request(tools=tools, system="Be brief. Today is Friday.")
    sent = context.sent
    with pytest.raises(PrefixBindingError):
        context.request()  # leaving the tools out is a change too
    assert context.sent == sent  # a refused request changes nothing


def test_the_drop_policy_leaves_the_broken_reasoning_out_and_the_emulator_accepts() -> None:
    with emulator_for(GatewayType.anthropic, default=text("Fine.")) as emu:
        client = emu.client()
        context = Context(GatewayType.anthropic, broken_reasoning="drop")
        context.emplace_message(Message(role=Role.user, content="Is HW-1 closed?"))
        reminder = {"role": "user", "content": [{"type": "text", "text": "Cite the ticket."}]}
        tail = [reminder]
        kwargs = context.build_incremental(len(context), tail)
        context.push_back(call(GatewayType.anthropic, client, kwargs))  # bound to the reminder
        context.emplace_message(Message(role=Role.user, content="Thanks."))
        kwargs = context.request()  # the reminder is gone: its reasoning is left out
        assert "thinking" not in json.dumps(kwargs)
        context.push_back(call(GatewayType.anthropic, client, kwargs))
        context.emplace_message(Message(role=Role.user, content="Bye."))
        last = context.request()
        assert json.dumps(last).count('"type": "thinking"') == 1  # the newer reply's stays
        call(GatewayType.anthropic, client, last)
        assert emu.rejections == []


def test_without_the_guard_the_emulator_would_reject_what_the_guard_refuses() -> None:
    """The guard's refusal stands for a real 400: the same request sent anyway is rejected."""
    with emulator_for(GatewayType.anthropic, default=text("Fine.")) as emu:
        client = emu.client()
        context = Context(GatewayType.anthropic)
        context.emplace_message(Message(role=Role.user, content="Is HW-1 closed?"))
        reminder = {"role": "user", "content": [{"type": "text", "text": "Cite the ticket."}]}
        kwargs = context.build_incremental(len(context), [reminder])
        context.push_back(call(GatewayType.anthropic, client, kwargs))
        context.emplace_message(Message(role=Role.user, content="Thanks."))
        with pytest.raises(PrefixBindingError):
            context.request()
        unguarded = context.adapter.build_request(context[:])
        import anthropic

        with pytest.raises(anthropic.BadRequestError, match="bound to a different conversation"):
            call(GatewayType.anthropic, client, unguarded)
        assert len(emu.rejections) == 1


@pytest.mark.parametrize("gateway", BINDING)
def test_save_and_load_mid_session_keeps_every_binding(gateway: GatewayType) -> None:
    with emulator_for(gateway, default=text("Noted.")) as emu:
        client = emu.client()
        context = Context(gateway)
        lifecycle = Lifecycle(context)
        lifecycle.add(Component("Be brief.", ttl=1, cadence=1, key="style"))
        lifecycle.add(Component("Mode: support", ttl=4, placement=Placement.before, key="mode"))
        for turn in range(6):
            context.emplace_message(Message(role=Role.user, content=f"Question {turn}?"))
            context.push_back(call(gateway, client, lifecycle.render().kwargs))
            if turn % 2:
                lifecycle = Lifecycle.from_json(lifecycle.to_json())
                context = lifecycle.context
        assert_clean(gateway, emu)
        assert MODELS[gateway]
