"""A Responses session through the real ``openai`` client across three provider compactions.

The emulator (tests/support/emulators/responses_management.py) applies OpenAI's documented
compaction rules; every request is checked against an oracle written here: what the
documented rule keeps (the Context's leading system items, then the latest compaction on, or
a compact window in place of exactly what the compact request sent), reasoning never dropped,
no request refused, and everything the Context held still there.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle
from hydrangea.message import Message, Role
from hydrangea.providers.openai import ResponsesCompact, ResponsesCompaction
from hydrangea.stores import InMemorySessionStore
from tests.support.emulators import Reply, ToolCall, text
from tests.support.emulators.responses_management import CompactingResponsesEmulator

MODEL = "gpt-5.5"
GW = GatewayType.openai_responses


@pytest.fixture
def emu() -> Iterator[CompactingResponsesEmulator]:
    with CompactingResponsesEmulator(default=text("ok")) as emulator:
        yield emulator


def _bare(item: Any) -> Any:
    """An item as the oracle compares it: ids and statuses left out."""
    if isinstance(item, dict):
        return {k: _bare(v) for k, v in item.items() if k not in ("id", "status")}
    if isinstance(item, list):
        return [_bare(v) for v in item]
    return item


def _sent_items(emu: CompactingResponsesEmulator) -> list[Any]:
    body = emu.requests[-1].body
    return list(body["input"])


def _with_system(emu: CompactingResponsesEmulator) -> tuple[Any, Context]:
    """The emulator's client and a Context holding a system prompt."""
    ctx = Context(GW)
    ctx.emplace_message(Message(role=Role.system, content="You are terse."))
    return emu.client(), ctx


def test_three_threshold_compactions_keep_only_what_the_rule_keeps(
    emu: CompactingResponsesEmulator,
) -> None:
    client, ctx = _with_system(emu)
    feature = ResponsesCompaction(threshold=300)
    emu.add_replies([Reply("", (ToolCall("lookup", {"q": "x"}),)), *[text("a" * 40)] * 30])
    history: list[Any] = list(ctx[:])  # the oracle's own record of what was held
    compacted_at: list[int] = []
    turn = 0
    while len(emu.compactions) < 3 and turn < 40:
        turn += 1
        ctx.emplace_message(Message(role=Role.user, content=f"question {turn} " + "w " * 30))
        history.append(ctx[len(ctx) - 1])
        kwargs = ctx.request(model=MODEL, features=[feature])
        if turn % 4 == 0:
            ctx.push_stream(client.responses.create(stream=True, **kwargs))
        else:
            ctx.push_back(client.responses.create(**kwargs))
        pushed = list(ctx[len(history):])
        history.extend(pushed)
        for item in pushed:
            if item.get("type") == "compaction":
                compacted_at.append(history.index(item))
        # the oracle: what this request sent is what the rule kept of the history before it
        # (the leading system item, then from the latest compaction on)
        before = history[: len(history) - len(pushed)]
        kept_then = [c for c in compacted_at if c < len(before)]
        want = before if not kept_then else [before[0], *before[kept_then[-1]:]]
        assert _bare(_sent_items(emu)) == _bare(want)
        assert list(ctx[:]) == history  # nothing held is lost
        for item in pushed:
            if item.get("type") == "function_call":
                ctx.extend([{"type": "function_call_output", "call_id": item["call_id"],
                             "output": "found"}])
                history.append(ctx[len(ctx) - 1])
    assert len(emu.compactions) == 3 and len(ctx.compactions) == 3
    assert emu.rejections == [] and emu.errors == []
    assert emu.reasoning_dropped == 0 and emu.reasoning_accepted > 0
    # what the provider compacted away is still readable in the Context
    assert "question 1" in json.dumps(ctx[1])


def test_three_compact_windows_replace_what_each_compact_request_sent(
    emu: CompactingResponsesEmulator,
) -> None:
    client, ctx = _with_system(emu)
    for n in range(3):
        for k in range(2):
            ctx.emplace_message(Message(role=Role.user, content=f"round {n} question {k}"))
            ctx.push_back(client.responses.create(**ctx.request(model=MODEL)))
        kwargs = ctx.request(model=MODEL, features=[ResponsesCompact()])
        sent_by_compact = list(kwargs["input"])
        ctx.emplace_message(Message(role=Role.user, content=f"while compacting {n}"))
        ctx.push_back(client.responses.compact(**kwargs))
        window = emu.windows[-1]
        ctx.emplace_message(Message(role=Role.user, content=f"after {n}"))
        sent = ctx.request(model=MODEL)["input"]
        # the window in place of exactly what the compact request sent (its system item kept)
        assert _bare(sent) == _bare([sent_by_compact[0], *window,
                                     {"type": "message", "role": "user",
                                      "content": f"while compacting {n}"},
                                     {"type": "message", "role": "user", "content": f"after {n}"}])
        ctx.push_back(client.responses.create(**ctx.request(model=MODEL)))
    assert len(ctx.compactions) == 3 and [b.kind for b in ctx.compactions] == ["swap"] * 3
    assert emu.rejections == [] and emu.errors == [] and emu.reasoning_dropped == 0
    assert any("round 0 question 0" in json.dumps(item) for item in ctx[:])


def test_a_lifecycle_and_a_store_continue_across_a_compaction(
    emu: CompactingResponsesEmulator,
) -> None:
    client = emu.client()
    ctx = Context(GW)
    lc = Lifecycle(ctx)
    lc.add(Component(content="Reminder: cite sources.", key="cite", ttl=1))
    feature = ResponsesCompaction(threshold=120)
    store = InMemorySessionStore()
    saved = None
    for turn in range(6):
        ctx.emplace_message(Message(role=Role.user, content=f"turn {turn} " + "w " * 40))
        kwargs = lc.render().request(model=MODEL, features=[feature])
        assert kwargs["context_management"] == [
            {"type": "compaction", "compact_threshold": feature.threshold}]
        ctx.push_back(client.responses.create(**kwargs))
        if turn == 2:
            saved = store.create("s", ctx) if saved is None else saved
            store.save(saved)
            loaded = store.load("s", Context).value
            assert loaded.compactions == ctx.compactions
            assert loaded.request()["input"] == ctx.request()["input"]
    assert ctx.compactions, "the threshold was crossed"
    assert emu.rejections == [] and emu.reasoning_dropped == 0
    restored = Lifecycle.from_json(lc.to_json())
    assert restored.context.compactions == ctx.compactions


def test_a_lifecycle_request_checks_its_features_first() -> None:
    from hydrangea.errors import RequestOptionError, UnsupportedOptionError
    from hydrangea.providers.anthropic import ThresholdCompaction

    ctx = Context(GW)
    lc = Lifecycle(ctx)
    ctx.emplace_message(Message(role=Role.user, content="hello"))
    request = lc.render()
    with pytest.raises(UnsupportedOptionError):
        request.request(model=MODEL, features=[ThresholdCompaction(50_000)])
    with pytest.raises(RequestOptionError, match="head-swap"):
        request.request(model=MODEL, features=[ResponsesCompact()])
    assert request.request(model=MODEL) == {**request.kwargs, "model": MODEL}


def test_an_edited_compaction_item_is_refused(emu: CompactingResponsesEmulator) -> None:
    client = emu.client()
    ctx = Context(GW)
    ctx.emplace_message(Message(role=Role.user, content="x " * 400))
    ctx.push_back(client.responses.create(**ctx.request(
        model=MODEL, features=[ResponsesCompaction(threshold=10)])))
    item = next(i for i in ctx[:] if i.get("type") == "compaction")
    forged = [{**item, "encrypted_content": item["encrypted_content"] + "x"}]
    import openai

    with pytest.raises(openai.BadRequestError):
        client.responses.create(model=MODEL, input=forged)
    assert emu.rejections[-1].rule == "unknown_compaction"
