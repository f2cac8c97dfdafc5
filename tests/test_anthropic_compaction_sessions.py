"""Sessions across Anthropic compactions, with the real SDK against the emulator's rules.

A hydrangea Context asks for threshold compaction, on-demand (background) compaction and context
editing; the emulator (tests/support/emulators/anthropic_management.py) applies the documented
rules and checks every thinking block sent back against its prefix. What each request sends is
checked against :class:`Kept`, an oracle built only from the emulator's record of what it was
sent and what it answered and the documented continuation rules (threshold: start at the
message holding the compaction block; on-demand: the summary in place of exactly the messages
the compaction request sent, every later message after it).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anthropic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle
from hydrangea.message import Message, Role, TextPart, ToolResultPart
from hydrangea.providers.anthropic import (
    ClearThinking,
    ClearToolUses,
    ContextEditing,
    OnDemandCompaction,
    ThresholdCompaction,
)
from hydrangea.stores import InMemorySessionStore, SessionStore, SqliteSessionStore
from tests.support.emulators import AnthropicEmulator, text, tool_call
from tests.support.emulators._server import canonical
from tests.support.emulators.anthropic_management import CLEARED

MODEL = "claude-sonnet-5-5"
GW = GatewayType.anthropic
BIG = 52_000 * 4
"""Characters of a document past the 50,000-token trigger (the emulator counts 4 a token)."""


@dataclass
class Kept:
    """What the next request must start with, from the emulator's record alone."""

    emu: AnthropicEmulator
    kept: list[dict[str, Any]] = field(default_factory=list)
    pending: tuple[int, dict[str, Any]] | None = None
    checked: int = 0

    def check(self, request: int, appended: int) -> None:
        """Request ``request`` sent what is kept, then ``appended`` new user messages; then
        note its answer."""
        sent = bare(self.emu.requests[request].body["messages"])
        assert sent[: len(self.kept)] == self.kept
        new = sent[len(self.kept) :]
        assert len(new) == appended and all(m["role"] == "user" for m in new)
        answer = bare(self.emu.answers[request])
        self.checked += 1
        if answer["stop_reason"] == "compaction" and self._asked_on_demand(request):
            self.kept = list(sent)
            self.pending = (len(sent), {"role": "assistant", "content": answer["content"]})
            return
        reply = {"role": "assistant", "content": answer["content"]}
        if answer["content"] and answer["content"][0]["type"] == "compaction":
            self.kept = [reply]  # the API ignores what came before the block
        else:
            self.kept = [*sent, reply]

    def swapped(self) -> None:
        """The client put the summary in: it replaces exactly the messages its request sent."""
        assert self.pending is not None
        covered, summary = self.pending
        self.kept = [summary, *self.kept[covered:]]
        self.pending = None

    def _asked_on_demand(self, request: int) -> bool:
        return "compaction" in self.emu.requests[request].body


def bare(value: Any) -> Any:
    """``value`` without cache breakpoints (where the client puts them is not content)."""
    return canonical(value, frozenset({"cache_control"}))


def first_text(ctx: Context) -> str:
    """The text of the Context's first message (compacted away, still held)."""
    part = ctx.messages()[0].content[0]
    assert isinstance(part, TextPart)
    return part.text


def ask(ctx: Context, text_: str) -> None:
    ctx.emplace_message(Message(role=Role.user, content=text_))


def answer_tools(ctx: Context, reply: Any) -> None:
    results = tuple(
        ToolResultPart(call_id=b.id, content=f"result of {b.name}")
        for b in reply.content if b.type == "tool_use"
    )
    ctx.emplace_message(Message(role=Role.user, content=results))


def call(client: Any, kwargs: dict[str, Any], *, stream: bool = False) -> Any:
    if stream:
        return list(client.beta.messages.create(max_tokens=256, stream=True, **kwargs))
    return client.beta.messages.create(max_tokens=256, **kwargs)


@pytest.fixture
def emu() -> Iterator[AnthropicEmulator]:
    with AnthropicEmulator(default=text("ok")) as emulator:
        yield emulator


def clean(emu: AnthropicEmulator) -> None:
    assert emu.rejections == [] and emu.drops == [] and emu.errors == []
    assert emu.ignored == []  # nothing the API ignores was sent


def test_three_threshold_compactions_with_tools_and_a_stream(emu: AnthropicEmulator) -> None:
    client = emu.client()
    ctx = Context(GW)
    oracle = Kept(emu)
    feature = ThresholdCompaction(trigger_input_tokens=50_000)
    request = 0
    first_question = f"Read this: {'x' * BIG}"
    for cycle in range(3):
        ask(ctx, first_question if cycle == 0 else f"Cycle {cycle}: {'y' * BIG}")
        emu.add_replies([tool_call("lookup", q=str(cycle)), text(f"answer {cycle}")])
        reply = call(client, ctx.request(features=[feature], model=MODEL))
        ctx.push_back(reply)
        oracle.check(request, 1)
        request += 1
        answer_tools(ctx, reply)
        kwargs = ctx.request(features=[feature], model=MODEL)
        if cycle == 1:
            ctx.push_stream(call(client, kwargs, stream=True))
        else:
            ctx.push_back(call(client, kwargs))
        oracle.check(request, 1)
        request += 1
    ask(ctx, "And now?")
    ctx.push_back(call(client, ctx.request(features=[feature], model=MODEL)))
    oracle.check(request, 1)
    clean(emu)
    assert [c.kind for c in emu.compactions] == ["threshold"] * 3
    assert [c.request for c in emu.compactions] == [0, 2, 4]
    assert emu.checked > 0  # thinking after each compaction block was sent back and held
    assert [b.kind for b in ctx.compactions] == ["in_reply"] * 3
    # what was compacted away is still readable, under its index
    assert first_text(ctx) == first_question
    costs = [r.usage.compaction_tokens for r in ctx.usage]
    assert sum(1 for c in costs if c is not None) == 3


def test_three_background_compactions_keep_the_turns_appended_meanwhile(
    emu: AnthropicEmulator,
) -> None:
    client = emu.client()
    ctx = Context(GW)
    oracle = Kept(emu)
    request = 0
    for cycle in range(3):
        ask(ctx, f"question {cycle}")
        emu.add_replies([tool_call("lookup", q=str(cycle)), text(f"answer {cycle}")])
        reply = call(client, ctx.request(model=MODEL))
        ctx.push_back(reply)
        oracle.check(request, 1)
        request += 1
        answer_tools(ctx, reply)
        ctx.push_back(call(client, ctx.request(model=MODEL)))
        oracle.check(request, 1)
        request += 1
        # the compaction request goes out; the conversation goes on on its full history
        summary = call(client, ctx.request(features=[OnDemandCompaction()], model=MODEL))
        oracle.check(request, 0)
        request += 1
        ask(ctx, f"meanwhile {cycle}")
        kwargs = ctx.request(model=MODEL)
        if cycle == 2:
            ctx.push_stream(call(client, kwargs, stream=True))
        else:
            ctx.push_back(call(client, kwargs))
        oracle.check(request, 1)
        request += 1
        ctx.push_compaction(summary)
        oracle.swapped()
    ask(ctx, "after")
    ctx.push_back(call(client, ctx.request(model=MODEL)))
    oracle.check(request, 1)
    clean(emu)
    assert [c.kind for c in emu.compactions] == ["on_demand"] * 3
    assert [b.kind for b in ctx.compactions] == ["swap"] * 3
    # the thinking of each turn made while a summary was written was sent back and held
    assert emu.checked >= 3
    assert first_text(ctx) == "question 0"


@given(st.lists(st.sampled_from(["ask", "tools", "big", "compact", "swap"]), max_size=7))
def test_random_sessions_send_what_the_documented_rules_keep(steps: list[str]) -> None:
    """Any mix of turns, tool loops, threshold compactions and background compactions: every
    request sends what the oracle keeps, the emulator refuses and drops nothing, and the
    Context still holds every item ever appended."""
    feature = ThresholdCompaction(trigger_input_tokens=50_000)
    with AnthropicEmulator(default=text("ok")) as emu:
        client = emu.client()
        ctx = Context(GW)
        oracle = Kept(emu)
        pending: Any = None
        appended = 0
        prompts: list[str] = []

        def turn(prompt: str, replies: list[Any]) -> Any:
            nonlocal appended
            prompts.append(prompt)
            ask(ctx, prompt)
            emu.add_replies(replies)
            reply = call(client, ctx.request(features=[feature], model=MODEL))
            ctx.push_back(reply)
            oracle.check(len(emu.requests) - 1, 1)
            appended += 2
            return reply

        for n, step in enumerate([*steps, "ask"]):
            if step == "ask" or (step == "big" and pending is not None):
                turn(f"turn {n}", [text(f"answer {n}")])
            elif step == "big":
                turn(f"doc {n}: {'d' * BIG}", [text(f"read {n}")])
            elif step == "tools":
                reply = turn(f"tools {n}", [tool_call("lookup", q=str(n)), text("found")])
                answer_tools(ctx, reply)
                ctx.push_back(call(client, ctx.request(features=[feature], model=MODEL)))
                oracle.check(len(emu.requests) - 1, 1)
                appended += 2
            elif step == "compact" and pending is None and appended:
                pending = call(client, ctx.request(features=[OnDemandCompaction()], model=MODEL))
                oracle.check(len(emu.requests) - 1, 0)
            elif step == "swap" and pending is not None:
                ctx.push_compaction(pending)
                oracle.swapped()
                pending = None
        clean(emu)
        assert oracle.checked == len(emu.requests)
        assert len(ctx) == appended  # nothing compacted away is lost
        assert first_text(ctx) == prompts[0]


def test_a_swap_that_resends_or_leaves_out_messages_fails_the_kept_thinking(
    emu: AnthropicEmulator,
) -> None:
    """The oracle itself: the documented swap is accepted, both wrong ones are refused."""
    client = emu.client()
    ctx = Context(GW)
    ask(ctx, "q")
    ctx.push_back(call(client, ctx.request(model=MODEL)))
    summary = call(client, ctx.request(features=[OnDemandCompaction()], model=MODEL))
    covered = emu.requests[-1].body["messages"]
    ask(ctx, "meanwhile")
    ctx.push_back(call(client, ctx.request(model=MODEL)))
    full = emu.requests[-1].body["messages"] + [
        {"role": "assistant", "content": emu.answers[len(emu.requests) - 1]["content"]}]
    head = {"role": "assistant", "content": summary.model_dump(exclude_none=True)["content"]}
    tail = [{"role": "user", "content": "next"}]
    kept = full[len(covered) :]
    betas = ["compact-2026-09-04"]
    for wrong in ([head, *full, *tail], [head, *kept[1:], *tail]):
        with pytest.raises(anthropic.BadRequestError):
            client.beta.messages.create(model=MODEL, max_tokens=9, messages=wrong, betas=betas)
    assert [r.rule for r in emu.rejections] == ["prefix", "prefix"]
    client.beta.messages.create(model=MODEL, max_tokens=9, messages=[head, *kept, *tail])
    assert len(emu.rejections) == 2


def test_context_editing_is_read_back_and_the_client_keeps_its_history(
    emu: AnthropicEmulator,
) -> None:
    client = emu.client()
    ctx = Context(GW)
    oracle = Kept(emu)
    edits = ContextEditing((ClearToolUses(trigger_tool_uses=3, keep_tool_uses=1),
                            ClearThinking(keep_turns=1)))
    ask(ctx, "Look up three things.")
    emu.add_replies([tool_call("lookup", q=str(n)) for n in range(3)] + [text("done")])
    for request in range(4):
        reply = call(client, ctx.request(features=[edits], model=MODEL))
        ctx.push_back(reply)
        oracle.check(request, 1)
        if request < 3:
            answer_tools(ctx, reply)
    for request, prompt in ((4, "Thanks."), (5, "Bye.")):
        ask(ctx, prompt)
        ctx.push_back(call(client, ctx.request(features=[edits], model=MODEL)))
        oracle.check(request, 1)
    clean(emu)
    # request 3 held three tool uses (one kept) and one assistant turn (a tool loop)
    applied = emu.answers[3]["context_management"]["applied_edits"]
    assert [(e["type"], e.get("cleared_tool_uses")) for e in applied] == [
        ("clear_tool_uses_20250919", 2)]
    results = [b for m in emu.seen[3] if m["role"] == "user" for b in m["content"]
               if b.get("type") == "tool_result"]
    assert [r["content"] == CLEARED for r in results] == [True, True, False]
    # the last request: two turns (the tool loop, the thanks), the older one's thinking cleared
    last = emu.answers[5]["context_management"]["applied_edits"]
    assert [(e["type"], e.get("cleared_tool_uses", e.get("cleared_thinking_turns")))
            for e in last] == [("clear_thinking_20251015", 1), ("clear_tool_uses_20250919", 2)]
    seen_thinking = [b for m in emu.seen[5] for b in m["content"] if b["type"] == "thinking"]
    assert len(seen_thinking) == 1
    recorded = [r.usage.applied_edits for r in ctx.usage]
    assert recorded[3] == tuple(applied) and recorded[5] == tuple(last)
    assert emu.checked == 1 + 2 + 3 + 4 + 5  # every thinking block held on the client's prefix


def test_the_emulator_gates_context_management_as_documented(emu: AnthropicEmulator) -> None:
    client = emu.client()
    messages = [{"role": "user", "content": "q"}]
    management = {"edits": [{"type": "clear_thinking_20251015"}]}
    cases: list[dict[str, Any]] = [
        {"model": MODEL, "context_management": management},  # no beta header
        {"model": "claude-sonnet-4", "context_management": management,
         "betas": ["context-management-2025-06-27"]},  # not a listed model
        {"model": MODEL, "betas": ["compact-2026-01-12"], "context_management": {
            "edits": [{"type": "compact_20260112",
                       "trigger": {"type": "input_tokens", "value": 1000}}]}},  # < 50,000
        {"model": MODEL, "compaction": {"type": "summarize"}},  # no beta header
    ]
    for extra in cases:
        with pytest.raises(anthropic.BadRequestError):
            client.beta.messages.create(max_tokens=9, messages=messages, **extra)
    assert [r.rule for r in emu.rejections] == ["context_management"] * 4
    client.beta.messages.create(max_tokens=9, messages=messages, model=MODEL,
                                betas=["context-management-2025-06-27"],
                                context_management=management)
    assert len(emu.rejections) == 4


def test_a_lifecycle_and_a_store_continue_across_a_compaction(
    emu: AnthropicEmulator, tmp_path: Path
) -> None:
    client = emu.client()
    feature = ThresholdCompaction(trigger_input_tokens=50_000)
    ctx = Context(GW)
    lc = Lifecycle(ctx)
    lc.add(Component(content="Be brief.", key="style"))
    ask(ctx, f"Read: {'z' * BIG}")

    def send() -> Any:
        kwargs = dict(lc.render().kwargs)
        feature.apply(kwargs, GW, MODEL)  # the lifecycle has no features= of its own
        return call(client, {**kwargs, "model": MODEL})

    ctx.push_back(send())
    assert [c.kind for c in emu.compactions] == ["threshold"]
    with SqliteSessionStore(tmp_path / "s.db") as sqlite:
        stores: tuple[SessionStore, ...] = (InMemorySessionStore(), sqlite)
        for n, store in enumerate(stores):
            saved = store.create(f"s{n}", lc)
            store.save(saved)
            loaded = store.load(f"s{n}", Lifecycle).value
            assert loaded.context.compactions == ctx.compactions
            assert first_text(loaded.context).startswith("Read: ")
            ask(loaded.context, f"go on {n}")
            kwargs = dict(loaded.render().kwargs)
            feature.apply(kwargs, GW, MODEL)
            loaded.context.push_back(call(client, {**kwargs, "model": MODEL}))
            sent = emu.requests[-1].body["messages"]
            assert sent[0]["content"][0]["type"] == "compaction"
            assert all("zzzz" not in str(m) for m in sent)
    clean(emu)
    assert emu.checked == 2  # the thinking after the block, once from each loaded copy


def test_a_paused_threshold_compaction_starts_the_next_request(emu: AnthropicEmulator) -> None:
    client = emu.client()
    ctx = Context(GW)
    oracle = Kept(emu)
    feature = ThresholdCompaction(trigger_input_tokens=50_000, pause_after_compaction=True)
    ask(ctx, f"Read: {'p' * BIG}")
    paused = call(client, ctx.request(features=[feature], model=MODEL))
    assert paused.stop_reason == "compaction"
    assert [b.type for b in paused.content] == ["compaction"]
    ctx.push_back(paused)
    oracle.check(0, 1)
    ask(ctx, "Go on.")
    ctx.push_back(call(client, ctx.request(features=[feature], model=MODEL)))
    oracle.check(1, 1)
    clean(emu)
    assert [c.kind for c in emu.compactions] == ["threshold"]
    assert len(emu.requests[1].body["messages"]) == 2
