"""The Responses context-management options: validated, gated, and accepted by the real SDK.

Each request goes through the ``openai`` client to an ``httpx.MockTransport`` that records the
body on the wire and answers with a reply of the documented shape; the Context then continues
from what came back (a ``compaction`` item, a ``/responses/compact`` window).
"""

from __future__ import annotations

from typing import Any

import openai
import pytest

from hydrangea.context import Context
from hydrangea.errors import RequestOptionError, UnsupportedOptionError
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role
from hydrangea.providers.openai import ResponsesCompact, ResponsesCompaction, ResponsesTruncation
from tests.support.capture_server import capture_server

GW = GatewayType.openai_responses


def _client(base_url: str) -> openai.OpenAI:
    return openai.OpenAI(api_key="test", base_url=base_url + "/v1", max_retries=0)


def _response(n: int, *, compaction: bool = False) -> dict[str, Any]:
    output: list[dict[str, Any]] = [
        {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": f"answer {n}", "annotations": []}]}]
    if compaction:
        output.append({"type": "compaction", "id": f"cmp_{n}", "encrypted_content": f"e{n}"})
    return {"id": f"resp_{n}", "object": "response", "created_at": 0, "model": "gpt-5",
            "status": "completed", "output": output, "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": [],
            "usage": {"input_tokens": 10, "output_tokens": 2, "total_tokens": 12,
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}}}


def test_server_compaction_continues_from_each_compaction_item() -> None:
    with capture_server([(200, _response(n, compaction=n > 0)) for n in range(4)]) as server:
        client, ctx = _client(server.base_url), Context(GW)
        for n in range(4):
            ctx.emplace_message(Message(role=Role.user, content=f"question {n}"))
            kwargs = ctx.request(features=[ResponsesCompaction(1000)], model="gpt-5")
            ctx.push_back(client.responses.create(**kwargs))
    sent = [c.body for c in server.captured]
    assert all(b["context_management"] == [{"type": "compaction", "compact_threshold": 1000}]
               for b in sent)
    assert sent[1]["input"][: len(sent[0]["input"])] == sent[0]["input"]  # no compaction yet
    # three compactions: each request after one starts at the latest compaction item
    assert sent[2]["input"][0]["id"] == "cmp_1" and sent[3]["input"][0]["id"] == "cmp_2"
    assert len(ctx.compactions) == 3
    ctx.emplace_message(Message(role=Role.user, content="last"))
    assert ctx.request()["input"][0]["id"] == "cmp_3"


def test_a_compact_request_goes_to_the_compact_endpoint_and_its_window_is_swapped_in() -> None:
    window = {"id": "cr_1", "object": "response.compaction", "created_at": 0, "output": [
        {"type": "message", "id": "u1", "role": "user", "status": "completed",
         "content": [{"type": "input_text", "text": "question 0"}]},
        {"type": "compaction", "id": "cmp_w", "encrypted_content": "w"}],
        "usage": {"input_tokens": 50, "output_tokens": 5, "total_tokens": 55,
                  "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 0}}}
    with capture_server([(200, _response(0)), (200, window)]) as server:
        client, ctx = _client(server.base_url), Context(GW)
        ctx.emplace_message(Message(role=Role.user, content="question 0"))
        ctx.push_back(client.responses.create(**ctx.request(model="gpt-5")))
        kwargs = ctx.request(features=[ResponsesCompact(instructions="keep names")],
                             model="gpt-5")
        ctx.emplace_message(Message(role=Role.user, content="meanwhile"))
        ctx.push_back(client.responses.compact(**kwargs))
    path, body = server.captured[-1].path, server.captured[-1].body
    assert path.endswith("/responses/compact") and body["instructions"] == "keep names"
    assert len(body["input"]) == 2
    after = ctx.request()["input"]
    assert after[0]["role"] == "user" and after[1]["id"] == "cmp_w"  # the window, in order
    assert after[2]["content"] == "meanwhile"


def test_options_are_checked_before_anything_is_built() -> None:
    with pytest.raises(RequestOptionError):
        ResponsesCompaction(0)
    with pytest.raises(RequestOptionError, match="drops items"):
        ResponsesTruncation("auto")
    assert ResponsesTruncation("auto", drops_history=True).mode == "auto"
    chat = Context(GatewayType.openai, [{"role": "user", "content": "q"}])
    with pytest.raises(UnsupportedOptionError) as raised:
        chat.request(features=[ResponsesCompaction(1000)], model="gpt-5")
    assert (raised.value.option, raised.value.gateway) == ("context_management", "openai")
    ctx = Context(GW, [{"role": "user", "content": "q"}])
    with pytest.raises(UnsupportedOptionError, match="requires a model"):
        ctx.request(features=[ResponsesCompact()])
    assert not ctx.compaction_pending  # the refusal changed nothing
