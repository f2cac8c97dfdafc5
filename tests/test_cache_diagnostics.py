"""What the server did, read back: cache diagnostics, compaction cost and applied edits in
Usage and in the request span; the diagnostics options, checked and sent by the real SDKs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anthropic
import openai
import pytest
from anthropic.types import Message as AnthropicMessage
from openai.types.responses import Response
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from hydrangea.context import Context
from hydrangea.errors import RequestOptionError, UnsupportedOptionError
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role
from hydrangea.providers.anthropic import CacheDiagnostics
from hydrangea.providers.openai import CacheComparison, OpenAIExplicitCaching
from hydrangea.providers.usage import usage_of
from tests.support.capture_server import capture_server
from tests.support.otel import spans

__all__ = ["spans"]  # (the fixture)


def _anthropic(diagnostics: Any = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
        "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
        "stop_sequence": None, "usage": {"input_tokens": 30, "output_tokens": 2}, **extra}
    if diagnostics is not None:
        body["diagnostics"] = diagnostics
    return body


def _responses(diagnosis: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "resp_01", "object": "response", "created_at": 1, "model": "gpt-5.6",
        "status": "completed", "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status":
                    "completed", "content": [{"type": "output_text", "text": "ok",
                                              "annotations": []}]}],
        "usage": {"input_tokens": 900, "output_tokens": 3, "total_tokens": 903,
                  "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 0}}}
    if diagnosis is not None:
        body["prompt_cache_diagnostics"] = diagnosis
    return body


@pytest.mark.parametrize("as_sdk", [False, True])
def test_anthropic_diagnostics_are_read_as_sent(as_sdk: bool) -> None:
    cases: list[tuple[Any, tuple[str, int | None] | None]] = [
        ({"cache_miss_reason": {"type": "tools_changed", "cache_missed_input_tokens": 4100}},
         ("tools_changed", 4100)),
        ({"cache_miss_reason": {"type": "messages_changed", "cache_missed_input_tokens": 77}},
         ("messages_changed", 77)),
        ({"cache_miss_reason": None}, None),  # still being compared
        (None, None),  # not asked for
    ]
    for diagnostics, expected in cases:
        body = _anthropic(diagnostics)
        output: object = AnthropicMessage.model_validate(body) if as_sdk else body
        usage = usage_of(GatewayType.anthropic, output)
        assert usage is not None
        assert usage.cache_miss == expected
        if diagnostics is None:
            assert usage.cache_diagnosis is None
        else:
            assert usage.cache_diagnosis is not None
            assert usage.cache_diagnosis.get("cache_miss_reason") == diagnostics[
                "cache_miss_reason"]


@pytest.mark.parametrize("as_sdk", [False, True])
def test_responses_diagnostics_are_read_as_sent(as_sdk: bool) -> None:
    cases: list[tuple[Any, tuple[str, int | None] | None]] = [
        ({"type": "cache_miss", "reason": "context_compacted", "cache_missed_tokens": 850,
          "comparison_reusable_tokens": 0}, ("context_compacted", 850)),
        ({"type": "cache_hit"}, None),
        ({"type": "comparison_response_not_found"}, ("comparison_response_not_found", None)),
        (None, None),
    ]
    for diagnosis, expected in cases:
        body = _responses(diagnosis)
        output: object = Response.model_validate(body) if as_sdk else body
        usage = usage_of(GatewayType.openai_responses, output)
        assert usage is not None and usage.cache_miss == expected
        assert (usage.cache_diagnosis is None) == (diagnosis is None)


def test_anthropic_diagnostics_reach_the_wire_through_the_sdk() -> None:
    ctx = Context(GatewayType.anthropic)
    ctx.emplace_message(Message(role=Role.user, content="hello"))
    first = ctx.request(features=[CacheDiagnostics()])
    assert first["diagnostics"] == {"previous_message_id": None}
    replies = [(200, _anthropic({"cache_miss_reason": None})),
               (200, _anthropic({"cache_miss_reason": {
                   "type": "system_changed", "cache_missed_input_tokens": 12}}))]
    with capture_server(replies) as server:
        client = anthropic.Anthropic(base_url=server.base_url, api_key="k", max_retries=0)
        reply = client.messages.create(model="claude-sonnet-5-5", max_tokens=50, **first)
        ctx.push_back(reply)
        ctx.emplace_message(Message(role=Role.user, content="again"))
        again = ctx.request(features=[CacheDiagnostics(reply.id)])
        ctx.push_back(client.messages.create(model="claude-sonnet-5-5", max_tokens=50,
                                             **again))
    bodies = [c.body for c in server.captured]
    assert bodies[0]["diagnostics"] == {"previous_message_id": None}
    assert bodies[1]["diagnostics"] == {"previous_message_id": "msg_01"}
    assert [r.usage.cache_miss for r in ctx.usage] == [None, ("system_changed", 12)]


def test_responses_comparison_is_gated_and_merges_with_explicit_caching() -> None:
    ctx = Context(GatewayType.openai_responses)
    ctx.emplace_message(Message(role=Role.user, content="hello"))
    for model in (None, "gpt-5.5", "gpt-4o"):
        with pytest.raises(UnsupportedOptionError) as raised:
            ctx.request(model=model, features=[CacheComparison("resp_0")])
        assert raised.value.model == model
        assert "comparison_response_id" in str(raised.value)
    kwargs = ctx.request(model="gpt-5.6", features=[CacheComparison("resp_0")],
                         caching=OpenAIExplicitCaching("gpt-5.6", ttl="12h"))
    assert kwargs["prompt_cache_options"]["comparison_response_id"] == "resp_0"
    assert kwargs["prompt_cache_options"]["ttl"] == "12h"
    with capture_server([(200, _responses({"type": "cache_hit"}))]) as server:
        client = openai.OpenAI(base_url=server.base_url + "/v1", api_key="k", max_retries=0)
        ctx.push_back(client.responses.create(**kwargs))
    sent = server.captured[0].body["prompt_cache_options"]
    assert sent["comparison_response_id"] == "resp_0"


def test_the_options_refuse_bad_input_and_other_gateways() -> None:
    with pytest.raises(RequestOptionError):
        CacheDiagnostics("  ")
    with pytest.raises(RequestOptionError):
        CacheComparison("")
    chat = Context(GatewayType.openai)
    chat.emplace_message(Message(role=Role.user, content="hi"))
    with pytest.raises(UnsupportedOptionError, match="Anthropic option"):
        chat.request(features=[CacheDiagnostics()])
    with pytest.raises(UnsupportedOptionError, match="Responses API option"):
        chat.request(model="gpt-5.6", features=[CacheComparison("resp_1")])


def _named(finished: Sequence[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [s for s in finished if s.name == name]


def test_the_request_span_shows_what_the_server_did(spans: InMemorySpanExporter) -> None:
    ctx = Context(GatewayType.anthropic)
    ctx.emplace_message(Message(role=Role.user, content="hello"))
    ctx.push_back(_anthropic(
        {"cache_miss_reason": {"type": "messages_changed", "cache_missed_input_tokens": 321}},
        context_management={"applied_edits": [
            {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 2,
             "cleared_input_tokens": 900},
            {"type": "clear_thinking_20251015", "cleared_thinking_turns": 1,
             "cleared_input_tokens": 40}]},
        usage={"input_tokens": 30, "output_tokens": 2, "iterations": [
            {"type": "compaction", "input_tokens": 5000, "output_tokens": 400},
            {"type": "message", "input_tokens": 600, "output_tokens": 2}]},
    ))
    ctx.emplace_message(Message(role=Role.user, content="next"))
    ctx.request()
    (span,) = _named(spans.get_finished_spans(), "hydrangea.request")
    got = dict(span.attributes or {})
    assert got["hydrangea.compaction.input_tokens"] == 5000
    assert got["hydrangea.compaction.output_tokens"] == 400
    assert got["hydrangea.context_management.applied_edits"] == (
        "clear_tool_uses_20250919,clear_thinking_20251015")
    assert got["hydrangea.cache.miss_reason"] == "messages_changed"
    assert got["hydrangea.cache.missed_tokens"] == 321


def test_a_plain_reply_adds_no_management_attributes(spans: InMemorySpanExporter) -> None:
    ctx = Context(GatewayType.anthropic)
    ctx.emplace_message(Message(role=Role.user, content="hello"))
    ctx.push_back(_anthropic())
    ctx.emplace_message(Message(role=Role.user, content="next"))
    ctx.request()
    (span,) = _named(spans.get_finished_spans(), "hydrangea.request")
    got = dict(span.attributes or {})
    assert got["hydrangea.cache.reported_input_tokens"] == 30
    assert not any(k.startswith(("hydrangea.compaction.", "hydrangea.context_management."))
                   or k in ("hydrangea.cache.miss_reason", "hydrangea.cache.missed_tokens")
                   for k in got)
