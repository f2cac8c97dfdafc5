"""Anthropic context-management bodies of the recorded shapes round-trip through a Context.

Fixtures are written here (own text and ids) in the shapes of real recorded responses: a
threshold compaction block before text with ``usage.iterations``; context editing's
``context_management.applied_edits`` (clear_thinking, clear_tool_uses, both); a memory-tool
call; the streamed forms (a ``compaction`` block start with null content and one
``compaction_delta``, ``context_management`` on ``message_delta``); a signed on-demand summary;
a failed (null) summary. Each is pushed as a raw dict, as an SDK ``BetaMessage`` and (streamed
shapes) as raw and SDK events; the next request must send every block back as it came and
``Usage`` must read what the body reports.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from anthropic.types.beta import BetaMessage, BetaRawMessageStreamEvent
from pydantic import TypeAdapter

from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role

GW = GatewayType.anthropic


def _usage(input_tokens: int, output_tokens: int, **extra: Any) -> dict[str, Any]:
    return {"input_tokens": input_tokens, "output_tokens": output_tokens,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
            "service_tier": "standard", **extra}


def _step(kind: str, input_tokens: int, output_tokens: int) -> dict[str, Any]:
    return {"type": kind, "input_tokens": input_tokens, "output_tokens": output_tokens,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}}


def _message(content: list[dict[str, Any]], usage: dict[str, Any], *, stop: str = "end_turn",
             edits: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    body = {"id": "msg_h27shape", "type": "message", "role": "assistant",
            "model": "claude-opus-4-6", "content": content, "stop_reason": stop,
            "stop_sequence": None, "usage": usage}
    if edits is not None:
        body["context_management"] = {"applied_edits": edits}
    return body


THINKING = {"type": "thinking", "thinking": "Compare 4.10 and 4.9 digit by digit.",
            "signature": "SIGh27-own-fixture-signature=="}
CLEAR_THINKING = {"type": "clear_thinking_20251015", "cleared_thinking_turns": 2,
                  "cleared_input_tokens": 812}
CLEAR_TOOLS = {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 3,
               "cleared_input_tokens": 4096}
SUMMARY = "## Summary\nThe user pasted a garden manual and asked about soil pH twice."

BODIES: dict[str, dict[str, Any]] = {
    "threshold compaction": _message(
        [{"type": "compaction", "content": SUMMARY}, {"type": "text", "text": "Go on: pH 5.5."}],
        _usage(140, 9, iterations=[_step("compaction", 61000, 210), _step("message", 140, 9)]),
        edits=[]),
    "clear_thinking": _message([THINKING, {"type": "text", "text": "4.9 is bigger."}],
                               _usage(70, 30), edits=[CLEAR_THINKING]),
    "clear_tool_uses": _message([{"type": "text", "text": "Both cities are dry."}],
                                _usage(900, 40), edits=[CLEAR_TOOLS]),
    "combined editing": _message([THINKING, {"type": "text", "text": "Found two files."}],
                                 _usage(55, 400), edits=[CLEAR_THINKING, CLEAR_TOOLS]),
    "memory tool": _message(
        [{"type": "tool_use", "id": "toolu_h27memory", "name": "memory",
          "input": {"command": "view", "path": "/memories"}}],
        _usage(1500, 60), stop="tool_use", edits=[]),
    "on-demand summary": _message(
        [{"type": "compaction", "content": SUMMARY, "signature": "CMPh27-signed=="}],
        _usage(3000, 120, iterations=[_step("compaction", 3000, 120)]), stop="compaction"),
    "failed summary": _message(
        [{"type": "compaction", "content": None}, {"type": "text", "text": "Still here."}],
        _usage(800, 5), edits=[]),
}


def _events(body: dict[str, Any]) -> list[dict[str, Any]]:
    """``body`` as the recorded streams send it (ping included)."""
    start = {**copy.deepcopy(body), "content": [], "stop_reason": None}
    start.pop("context_management", None)
    start["usage"] = {k: v for k, v in body["usage"].items() if k != "iterations"}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for j, block in enumerate(body["content"]):
        if block["type"] == "compaction":
            stub: dict[str, Any] = {"type": "compaction", "content": None}
            deltas = [{"type": "compaction_delta", "content": block["content"]}]
        elif block["type"] == "thinking":
            stub = {"type": "thinking", "thinking": "", "signature": ""}
            half = len(block["thinking"]) // 2
            deltas = [{"type": "thinking_delta", "thinking": block["thinking"][:half]},
                      {"type": "thinking_delta", "thinking": block["thinking"][half:]},
                      {"type": "signature_delta", "signature": block["signature"]}]
        else:
            stub = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": w} for w in block["text"].split(" ")[:1]]
            deltas.append({"type": "text_delta", "text": block["text"][len(deltas[0]["text"]):]})
        events.append({"type": "content_block_start", "index": j, "content_block": stub})
        events.append({"type": "ping"})
        events += [{"type": "content_block_delta", "index": j, "delta": d} for d in deltas]
        events.append({"type": "content_block_stop", "index": j})
    final = {"type": "message_delta",
             "delta": {"stop_reason": body["stop_reason"], "stop_sequence": None},
             "usage": body["usage"]}
    if "context_management" in body:
        final["context_management"] = body["context_management"]
    return [*events, final, {"type": "message_stop"}]


STREAMED = ("threshold compaction", "clear_thinking")
_EVENT = TypeAdapter(BetaRawMessageStreamEvent)


def _forms(name: str) -> list[tuple[str, Callable[[Context], None]]]:
    body = BODIES[name]
    forms: list[tuple[str, Callable[[Context], None]]] = [
        ("raw", lambda ctx: ctx.push_back(copy.deepcopy(body))),
        ("sdk", lambda ctx: ctx.push_back(BetaMessage.model_validate(body))),
    ]
    if name in STREAMED:
        events = _events(body)
        sdk = [_EVENT.validate_python(e) for e in events if e["type"] != "ping"]
        forms += [("stream", lambda ctx: ctx.push_stream(copy.deepcopy(events))),
                  ("sdk stream", lambda ctx: ctx.push_stream(sdk))]
    return forms


CASES = [(name, form, push) for name in BODIES for form, push in _forms(name)]


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@pytest.mark.parametrize(("name", "form", "push"), CASES, ids=[f"{n}-{f}" for n, f, _ in CASES])
def test_a_recorded_shape_is_sent_back_as_it_came_and_read(
    name: str, form: str, push: Callable[[Context], None]
) -> None:
    body = BODIES[name]
    ctx = Context(GW)
    ctx.emplace_message(Message(role=Role.user, content="Earlier question."))
    if name == "on-demand summary":
        ctx.request(features=[_on_demand()], model="claude-opus-4-6")
    push(ctx)
    if name == "memory tool":
        ctx.extend([{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_h27memory", "content": "(empty)"}]}])
    else:
        ctx.emplace_message(Message(role=Role.user, content="Next."))
    sent = ctx.request()["messages"]
    replies = [m for m in sent if m["role"] == "assistant"]
    assert len(replies) == 1
    assert _canon(_bare(replies[0]["content"])) == _canon(body["content"])
    compacted = body["content"][0].get("type") == "compaction" and (
        body["content"][0]["content"] is not None)
    # after a summary the API reads from it on; a failed (null) summary is a no-op
    assert (sent[0]["role"] == "assistant") is compacted
    assert len(ctx.compactions) == int(compacted)
    record = ctx.usage.last
    assert record is not None
    usage = record.usage
    assert usage.input_tokens == body["usage"]["input_tokens"]
    assert usage.output_tokens == body["usage"]["output_tokens"]
    assert usage.applied_edits == tuple(body.get("context_management", {}).get(
        "applied_edits", ()))
    steps = [s for s in body["usage"].get("iterations", []) if s["type"] == "compaction"]
    expected = (sum(s["input_tokens"] for s in steps), sum(s["output_tokens"] for s in steps))
    assert usage.compaction_tokens == (expected if steps else None)


def _bare(value: Any) -> Any:
    """``value`` without the cache breakpoints the request puts on its blocks."""
    if isinstance(value, dict):
        return {k: _bare(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_bare(v) for v in value]
    return value


def _on_demand() -> Any:
    from hydrangea.providers.anthropic import OnDemandCompaction

    return OnDemandCompaction()
