"""Anthropic's context-management options: validated, gated, merged, accepted by the real SDK.

The kwargs go through ``client.beta.messages.create`` to a loopback server that records the
body and headers; the reply comes back in the documented shape and the Context continues from
it (a threshold compaction's block, an on-demand compaction's summary).
"""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from hydrangea.context import Context
from hydrangea.errors import RequestOptionError, UnsupportedOptionError
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role
from hydrangea.providers.anthropic import (
    ClearThinking,
    ClearToolUses,
    ContextEditing,
    OnDemandCompaction,
    ThresholdCompaction,
)
from tests.support.capture_server import capture_server

MODEL = "claude-opus-4-6"


def _reply(content: list[dict[str, Any]], stop: str = "end_turn") -> dict[str, Any]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": MODEL,
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 12, "output_tokens": 3},
            "context_management": {"applied_edits": []}}


def _asked(ctx: Context, text: str) -> None:
    ctx.emplace_message(Message(role=Role.user, content=text))


def test_edits_and_compaction_reach_the_wire_with_their_beta_headers() -> None:
    edits = ContextEditing((ClearToolUses(trigger_input_tokens=30000, keep_tool_uses=3,
                                          exclude_tools=("memory",)),
                            ClearThinking(keep_turns=2)))
    replies = [(200, _reply([{"type": "text", "text": "hi"}])),
               (200, _reply([{"type": "compaction", "content": "summary"},
                             {"type": "text", "text": "go on"}]))]
    with capture_server(replies) as server:
        client = anthropic.Anthropic(api_key="k", base_url=server.base_url, max_retries=0)
        ctx = Context(GatewayType.anthropic)
        for text in ("first", "second"):
            _asked(ctx, text)
            kwargs = ctx.request(features=[edits, ThresholdCompaction(50000)], model=MODEL)
            ctx.push_back(client.beta.messages.create(max_tokens=100, **kwargs))
    first = server.captured[0]
    assert first.body["context_management"]["edits"] == [
        {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 2}},
        {"type": "clear_tool_uses_20250919",
         "trigger": {"type": "input_tokens", "value": 30000},
         "keep": {"type": "tool_uses", "value": 3}, "exclude_tools": ["memory"]},
        {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 50000}},
    ]
    betas = first.headers["anthropic-beta"].split(",")
    assert sorted(betas) == ["compact-2026-01-12", "context-management-2025-06-27"]
    _asked(ctx, "third")
    assert ctx.request()["messages"][0]["content"][0] == {"type": "compaction",
                                                          "content": "summary"}


def test_what_the_server_cleared_is_read_back() -> None:
    cleared = {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 4,
               "cleared_input_tokens": 5200}
    body = _reply([{"type": "text", "text": "done"}])
    body["context_management"] = {"applied_edits": [cleared]}
    for pushed in (body, anthropic.types.beta.BetaMessage.model_validate(body)):
        ctx = Context(GatewayType.anthropic)
        _asked(ctx, "q")
        ctx.push_back(pushed)
        last = ctx.usage.last
        assert last is not None and last.usage.applied_edits == (cleared,)


def test_three_on_demand_compactions_each_swap_what_their_request_sent() -> None:
    replies: list[tuple[int, Any]] = []
    for n in range(3):
        replies.append((200, _reply([{"type": "text", "text": f"answer {n}"}])))
        replies.append((200, _reply([{"type": "compaction", "content": f"summary {n}"}],
                                    "compaction")))
    with capture_server(replies) as server:
        client = anthropic.Anthropic(api_key="k", base_url=server.base_url, max_retries=0)
        ctx = Context(GatewayType.anthropic)
        for n in range(3):
            _asked(ctx, f"question {n}")
            ctx.push_back(client.beta.messages.create(
                max_tokens=100, **ctx.request(model=MODEL)))
            kwargs = ctx.request(features=[OnDemandCompaction()], model=MODEL)
            ctx.push_compaction(client.beta.messages.create(max_tokens=100, **kwargs))
    bodies = [c.body for c in server.captured]
    compact_requests = bodies[1::2]
    assert all(b["compaction"] == {"type": "summarize"} for b in compact_requests)
    assert "context_management" not in compact_requests[0]
    # after each swap the next request starts with the previous summary
    assert bodies[2]["messages"][0]["content"][0]["content"] == "summary 0"
    assert bodies[4]["messages"][0]["content"][0]["content"] == "summary 1"
    assert [b.kind for b in ctx.compactions] == ["swap"] * 3
    _asked(ctx, "after")
    messages = ctx.request()["messages"]
    assert messages[0]["content"][0]["content"] == "summary 2" and len(messages) == 2


def test_options_are_checked_before_anything_is_built() -> None:
    with pytest.raises(RequestOptionError, match="one trigger"):
        ClearToolUses(trigger_input_tokens=1, trigger_tool_uses=1)
    with pytest.raises(RequestOptionError):
        ClearThinking(keep_turns=0)
    with pytest.raises(RequestOptionError):
        ContextEditing(())
    with pytest.raises(RequestOptionError, match="at least 50000"):
        ThresholdCompaction(49_999)  # the API's smallest trigger is 50,000
    assert ThresholdCompaction(50_000).trigger_input_tokens == 50_000
    ctx = Context(GatewayType.anthropic, [{"role": "user", "content": [{"type": "text",
                                                                          "text": "q"}]}])
    with pytest.raises(UnsupportedOptionError) as raised:
        ctx.request(features=[OnDemandCompaction()], model="claude-3-5-sonnet-20241022")
    assert raised.value.model == "claude-3-5-sonnet-20241022"
    assert raised.value.option == "on-demand compaction"
    assert not ctx.compaction_pending
    with pytest.raises(RequestOptionError, match="without context_management"):
        ctx.request(features=[ContextEditing((ClearThinking(),)), OnDemandCompaction()])
    chat = Context(GatewayType.openai, [{"role": "user", "content": "q"}])
    with pytest.raises(UnsupportedOptionError, match="Anthropic option"):
        chat.request(features=[ThresholdCompaction()])
