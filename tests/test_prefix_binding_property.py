"""Random sessions mixing every feature, against the emulators of the providers' rules.

Each example is one session on one gateway: a CoopContext with a conversation (a
``ConversationArea``, or a ``CompactingConversation`` compacting inside tool loops), a
Lifecycle whose components come and go (every kind and placement, keys replaced), tool loops,
scratch areas that retire (the collector cuts the tail), or, on a bare Context, lifecycle
sessions saved and loaded mid-session. Every model call goes through the real SDK client to a
loopback emulator whose every reply carries bound reasoning.

The oracle is the invariant itself, on the wire: every request begins with exactly what the
previous request sent (cache markers aside; only a collection may cut it, and only a tail),
system and tools never change; and the emulators' verdicts: no request rejected, no reasoning
dropped. 50 examples by default, 300 under the ``ci`` profile.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from hydrangea.areas import CompactingConversation, ConversationArea, ToolLoopArea
from hydrangea.asof import InMemoryRecordStore
from hydrangea.context import Context, Route
from hydrangea.context.area import AreaFlowState, AreaLifeState
from hydrangea.coop import CoopContext
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle, Placement, Resend, Stage
from hydrangea.message import Message, Role, ToolCallPart, ToolResultPart
from hydrangea.providers.native import NativeContent
from hydrangea.providers.registry import adapter_for
from hydrangea.tools import with_tools
from tests.support.binding_agent import BINDING, TOOLS, call, emulator_for, reply_message
from tests.support.emulators import Reply, ToolCall, text
from tests.support.unmarked import unmarked


class Scratch:
    """An area that says one thing and retires when told: the collector cuts from its start."""

    def __init__(self, note: str) -> None:
        self.note = note
        self.said = False
        self.life_state = AreaLifeState.retain
        self.flow_state = AreaFlowState.yielded

    def observe(self, context: Sequence[NativeContent]) -> None:
        return None

    def render(self) -> list[Message]:
        if self.said:
            return []
        self.said = True
        return [Message(role=Role.user, content=self.note)]

    def promote(self) -> tuple[Message, ...]:
        return (Message(role=Role.user, content=f"(done: {self.note})"),)

    def gc_prologue(self) -> None:
        return None


def _component(kind: str, n: int) -> Component:
    match kind:
        case "permanent":
            return Component(f"fact {n}", key=f"p{n}")
        case "ttl":
            return Component(f"hint {n}", ttl=2, key="hint")
        case "sticky":
            return Component(f"mode {n}", ttl=1, cadence=1, key="mode")
        case "cyclic":
            return Component(f"check {n}", ttl=1, cadence=3, key="check")
        case "staged":
            return Component(f"alert {n}", key="alert", stages=[
                Stage(Placement.after, 1), Stage(Placement.before, 2), Stage(Placement.after, 1)],
                cycle=True)
        case "before":
            return Component(f"note {n}", ttl=2, placement=Placement.before, key="note")
        case _:
            return Component(Message(role=Role.system, content=f"rule {n}"), ttl=1, key="rule")


KINDS = ["permanent", "ttl", "sticky", "cyclic", "staged", "before", "system"]

op = st.one_of(
    st.tuples(st.just("ask"), st.booleans()),
    st.tuples(st.just("add"), st.sampled_from(KINDS)),
    st.tuples(st.just("scratch"), st.booleans()),
    st.tuples(st.just("retire"), st.integers(0, 3)),
)


@dataclass
class Session:
    gateway: GatewayType
    client: Any
    compacting: bool
    resend: Resend

    def __post_init__(self) -> None:
        self.context = Context(self.gateway)
        self.context.emplace_message(Message(role=Role.system, content="You answer tickets."))
        self.coop = CoopContext(self.context)
        self.conversation: ConversationArea | CompactingConversation
        if self.compacting:
            self.conversation = CompactingConversation(
                self.coop, threshold_tokens=150, rollup_tokens=10_000,
                records=InMemoryRecordStore(), in_loops=True,
            )
        else:
            self.conversation = ConversationArea()
            self.coop.register(self.conversation)
        self.lifecycle = Lifecycle(self.coop, resend=self.resend)
        self.scratches: list[Scratch] = []
        self.calls = 0

    def kwargs(self) -> dict[str, Any]:
        return with_tools(self.lifecycle.render().kwargs, self.gateway, TOOLS)

    def ask(self, question: str, tools: bool) -> None:
        self.conversation.user(question)
        if isinstance(self.conversation, CompactingConversation):
            self._ask_compacting()
            return
        loop = ToolLoopArea(TOOLS, anchor=self.conversation) if tools else None
        if loop is not None:
            self.coop.register(loop)
        for _ in range(_ROUNDS):  # a turn ends with the model's answer, as an agent loop does
            response = call(self.gateway, self.client, self.kwargs())
            self.calls += 1
            route = self.conversation if loop is None else Route(loop, self.conversation)
            self.context.push_back(response, route=route)
            if loop is None or loop.answered:
                return
        raise AssertionError("the model never answered")

    def _ask_compacting(self) -> None:
        assert isinstance(self.conversation, CompactingConversation)
        for _ in range(_ROUNDS):
            response = call(self.gateway, self.client, self.kwargs())
            self.calls += 1
            reply = reply_message(self.gateway, response)
            self.conversation.push_reply(response, reply)
            calls = [p for p in reply.parts if isinstance(p, ToolCallPart)]
            for part in calls:
                result = ToolResultPart(call_id=part.id, content=f"{part.name}: " + "data " * 30)
                self.conversation.user(Message(role=Role.user, content=(result,)))
            if not calls:
                return
        raise AssertionError("the model never answered")


_ROUNDS = 16  # more than the scripted tool calls: the emulator then answers "Done."


@given(
    gateway=st.sampled_from(BINDING),
    compacting=st.booleans(),
    resend=st.sampled_from(list(Resend)),
    ops=st.lists(op, min_size=1, max_size=10),
    tool_replies=st.lists(st.booleans(), min_size=12, max_size=12),
)
def test_random_sessions_keep_every_binding(
    gateway: GatewayType,
    compacting: bool,
    resend: Resend,
    ops: list[tuple[str, Any]],
    tool_replies: list[bool],
) -> None:
    script = [
        Reply(tool_calls=(ToolCall("lookup", {"q": f"w{n}"}),)) if calls else text(f"Answer {n}.")
        for n, calls in enumerate(tool_replies)
    ]
    with emulator_for(gateway, replies=script, default=text("Done.")) as emu:
        session = Session(gateway, emu.client(), compacting, resend)
        cuts: set[int] = set()  # requests after which a collection may have cut the history
        for n, (kind, value) in enumerate([*ops, ("ask", False)]):
            match kind:
                case "ask":
                    before = session.coop.collections
                    session.ask(f"Question {n}?", bool(value))
                    if session.coop.collections != before or compacting:
                        cuts.update(range(len(emu.requests)))
                case "add":
                    session.lifecycle.add(_component(str(value), n), replace=True)
                case "scratch":
                    area = Scratch(f"scratch {n}")
                    session.coop.register(area)
                    session.scratches.append(area)
                case _:
                    if session.scratches:
                        session.scratches.pop(int(value) % len(session.scratches)).life_state = (
                            AreaLifeState.retired
                        )
        assert emu.rejections == [], emu.rejections
        assert emu.errors == [], emu.errors
        if gateway is GatewayType.openai_responses:
            assert emu.reasoning_dropped == 0
        if gateway is GatewayType.anthropic:
            assert emu.drops == []
        bodies = [unmarked(r.body) for r in emu.requests]
        key = adapter_for(gateway).history_key
        for number, (earlier, later) in enumerate(itertools.pairwise(bodies)):
            assert earlier.get("tools") == later.get("tools")
            if number in cuts:
                continue
            assert later[key][: len(earlier[key])] == earlier[key]


@given(
    gateway=st.sampled_from(BINDING),
    kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=5),
    saves=st.lists(st.booleans(), min_size=6, max_size=6),
    switch=st.booleans(),
)
def test_bare_context_sessions_saved_and_loaded_keep_every_binding(
    gateway: GatewayType, kinds: list[str], saves: list[bool], switch: bool
) -> None:
    with emulator_for(gateway, default=text("Noted.")) as emu:
        client = emu.client()
        lifecycle = Lifecycle(Context(gateway))
        for n, kind in enumerate(kinds):
            lifecycle.add(_component(kind, n), replace=True)
        previous: list[Any] | None = None
        for turn, save in enumerate(saves):
            lifecycle.context.emplace_message(Message(role=Role.user, content=f"Q{turn}?"))
            kwargs = lifecycle.render().kwargs
            history = unmarked(kwargs[adapter_for(gateway).history_key])
            if previous is not None:
                assert history[: len(previous)] == previous
            lifecycle.context.push_back(call(gateway, client, kwargs))
            previous = unmarked(lifecycle.context.request()[adapter_for(gateway).history_key])
            if save:
                lifecycle = Lifecycle.from_json(lifecycle.to_json())
        if switch:  # another model: reasoning of the first is left out, nothing is rejected
            kwargs = lifecycle.context.request(model="other-model")
            kwargs.pop("model")
            call(gateway, client, kwargs)
        assert emu.rejections == [], emu.rejections
        if gateway is GatewayType.openai_responses:
            assert emu.reasoning_dropped == 0
