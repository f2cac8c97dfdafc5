"""Each provider's compaction rule, as its documentation states it, through a Context.

Anthropic: a reply holding a ``compaction`` block starts later requests at that message (the
API ignores the blocks before it), and the reply to an on-demand compaction request
(``stop_reason: "compaction"``) takes the place of exactly the messages that request sent,
leading the request without a placeholder turn. Responses: the latest ``compaction`` item starts
later requests ("drop items that came before the most recent compaction item"), and a
``/responses/compact`` window replaces what the compact request sent. Fixtures are written
here in the shapes the providers return.
"""

from __future__ import annotations

from typing import Any

import anthropic.types.beta as beta
import pytest

from hydrangea.context import Context
from hydrangea.errors import CompactionPlacementError
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role


class OnDemand:
    """A head-swap compaction request (its own keywords are the provider module's concern)."""

    swaps_head = True

    def apply(self, request: dict[str, Any], gateway: GatewayType, model: str | None) -> None:
        return None


def _anthropic(content: list[dict[str, Any]], stop: str = "end_turn") -> dict[str, Any]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-opus-4-6",
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 40, "output_tokens": 9, "cache_read_input_tokens": 0,
                      "cache_creation_input_tokens": 0, "iterations": [
                          _iteration("compaction", 6000, 300), _iteration("message", 40, 9)]},
            "context_management": {"applied_edits": []}}


def _iteration(kind: str, tokens_in: int, tokens_out: int) -> dict[str, Any]:
    return {"type": kind, "input_tokens": tokens_in, "output_tokens": tokens_out,
            "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}}


def _user(ctx: Context, text: str) -> None:
    ctx.emplace_message(Message(role=Role.user, content=text))


@pytest.mark.parametrize("as_sdk", [False, True])
def test_anthropic_threshold_compaction_starts_later_requests(as_sdk: bool) -> None:
    ctx = Context(GatewayType.anthropic)
    _user(ctx, "a long document")
    body = _anthropic([{"type": "compaction", "content": "what came before, summarized"},
                       {"type": "text", "text": "hello"}])
    ctx.push_back(beta.BetaMessage.model_validate(body) if as_sdk else body)
    _user(ctx, "next")
    messages = ctx.request()["messages"]
    assert [m["role"] for m in messages] == ["assistant", "user"]
    assert messages[0]["content"][0] == {"type": "compaction",
                                         "content": "what came before, summarized"}
    assert ctx[0]["content"][0]["text"] == "a long document"  # still held
    last = ctx.usage.last
    assert last is not None and last.usage.compaction_tokens == (6000, 300)  # its cost


def test_anthropic_blocks_before_the_compaction_are_not_sent() -> None:
    ctx = Context(GatewayType.anthropic)
    _user(ctx, "q")
    ctx.push_back(_anthropic([{"type": "text", "text": "before"},
                              {"type": "compaction", "content": "summary"},
                              {"type": "text", "text": "after"}]))
    _user(ctx, "next")
    first = ctx.request()["messages"][0]
    assert [b.get("text", b.get("content")) for b in first["content"]] == ["summary", "after"]
    assert ctx[1]["content"][0]["text"] == "before"  # the item is kept as the API sent it


def test_anthropic_on_demand_compaction_swaps_the_sent_messages() -> None:
    ctx = Context(GatewayType.anthropic)
    for text in ("one", "two"):
        _user(ctx, text)
        ctx.push_back(_anthropic([{"type": "text", "text": f"re {text}"}]))
    ctx.request(features=[OnDemand()])
    _user(ctx, "while it ran")
    ctx.push_back(_anthropic([{"type": "compaction", "content": "one and two"}], "compaction"))
    messages = ctx.request()["messages"]
    assert messages[0] == {"role": "assistant",
                           "content": [{"type": "compaction", "content": "one and two"}]}
    assert messages[1]["content"][0]["text"] == "while it ran"
    assert len(messages) == 2
    last = ctx.usage.last
    assert last is not None and last.usage.input_tokens == 40  # the compaction's usage


def test_anthropic_paused_threshold_compaction_starts_later_requests() -> None:
    ctx = Context(GatewayType.anthropic)
    _user(ctx, "one")
    # pause_after_compaction: the reply is the compaction block alone, stop_reason "compaction",
    # with no on-demand request pending
    ctx.push_back(_anthropic([{"type": "compaction", "content": "one, summarized"}],
                             "compaction"))
    _user(ctx, "go on")
    messages = ctx.request()["messages"]
    assert messages[0]["content"] == [{"type": "compaction", "content": "one, summarized"}]
    assert len(messages) == 2 and [b.kind for b in ctx.compactions] == ["in_reply"]


def _window() -> dict[str, Any]:
    return {"id": "resp_c", "object": "response.compaction", "output": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "one"}]},
        {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAA"}],
        "usage": {"input_tokens": 100, "output_tokens": 10, "total_tokens": 110}}


def test_responses_compact_window_replaces_what_the_compact_request_sent() -> None:
    ctx = Context(GatewayType.openai_responses)
    _user(ctx, "one")
    ctx.push_back({"object": "response", "id": "resp_1", "model": "gpt-5", "output": [
        {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "re one", "annotations": []}]}]})
    with pytest.raises(CompactionPlacementError):
        ctx.push_back(_window())  # no compact request pending: refused as before
    ctx.request(features=[OnDemand()])
    _user(ctx, "two")
    ctx.push_back(_window())
    sent = ctx.request()["input"]
    assert [i.get("type", "message") for i in sent] == ["message", "compaction", "message"]
    assert sent[-1]["content"] == "two"


def test_responses_requests_start_at_the_latest_compaction_item() -> None:
    ctx = Context(GatewayType.openai_responses)
    _user(ctx, "one")
    for n in (1, 2):
        ctx.push_back({"object": "response", "id": f"resp_{n}", "model": "gpt-5", "output": [
            {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": "x", "annotations": []}]},
            {"type": "compaction", "id": f"cmp_{n}", "encrypted_content": f"e{n}"}]})
        _user(ctx, f"after {n}")
    sent = ctx.request()["input"]
    assert sent[0] == {"type": "compaction", "id": "cmp_2", "encrypted_content": "e2"}
    assert len(sent) == 2 and len(ctx.compactions) == 2


def _system(ctx: Context, text: str) -> None:
    ctx.emplace_message(Message(role=Role.system, content=text))


@pytest.mark.parametrize("on_demand", [False, True])
def test_anthropic_keeps_the_system_prompt_across_a_compaction(on_demand: bool) -> None:
    """A compaction summarizes the messages; ``system`` is outside them and stays."""
    ctx = Context(GatewayType.anthropic)
    _system(ctx, "You are terse.")
    _user(ctx, "one")
    before = ctx.request()["system"]
    if on_demand:
        ctx.push_back(_anthropic([{"type": "text", "text": "re one"}]))
        ctx.request(features=[OnDemand()])
        ctx.push_back(_anthropic([{"type": "compaction", "content": "sum"}], "compaction"))
    else:
        ctx.push_back(_anthropic([{"type": "compaction", "content": "sum"},
                                  {"type": "text", "text": "re one"}]))
    _user(ctx, "two")
    after = ctx.request()
    assert after["system"] == before
    assert after["messages"][0]["content"][0] == {"type": "compaction", "content": "sum"}


def test_responses_keeps_leading_system_items_once() -> None:
    ctx = Context(GatewayType.openai_responses)
    _system(ctx, "You are terse.")
    _user(ctx, "one")
    ctx.push_back({"object": "response", "id": "resp_1", "model": "gpt-5", "output": [
        {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "x", "annotations": []}]},
        {"type": "compaction", "id": "cmp_1", "encrypted_content": "e1"}]})
    _user(ctx, "two")
    sent = ctx.request()["input"]
    assert [i.get("role", i.get("type")) for i in sent] == ["system", "compaction", "user"]
    # a compact window that repeats the system prompt: it is not sent twice
    ctx.request(features=[OnDemand()])
    window = _window()
    window["output"].insert(0, {"type": "message", "role": "system", "content": "You are terse."})
    ctx.push_back(window)
    _user(ctx, "three")
    sent = ctx.request()["input"]
    assert [i.get("role", i.get("type")) for i in sent] == [
        "system", "user", "compaction", "user"]
