"""Responses compaction bodies, in the shapes the API returns, round-trip through a Context.

Fixtures are written here (ids and text are ours), in the recorded shapes: a response whose
output holds a message and then a ``compaction`` item (server-side compaction), the same as a
stream (with the ``response.compaction.compacting`` event the API sends while it summarizes),
and a ``response.compaction`` window from ``/responses/compact`` (every user message, then one
compaction item). Each goes in as a raw dict, as the SDK's object and, where it streams, as
events; the compaction item goes back byte-identical and the usage is read.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from openai._models import construct_type
from openai.types.responses import CompactedResponse, Response

from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role

GW = GatewayType.openai_responses
_COMPACTION = {"id": "cmp_0f1e2d", "type": "compaction",
               "encrypted_content": "gAAAAABpZmFrZS1lbmNyeXB0ZWQtc3RhdGU="}
_USAGE = {"input_tokens": 41_200, "input_tokens_details": {"cached_tokens": 40_960,
                                                           "cache_write_tokens": 0},
          "output_tokens": 310, "output_tokens_details": {"reasoning_tokens": 64},
          "total_tokens": 41_510}


def _response() -> dict[str, Any]:
    return {
        "id": "resp_0a1b2c", "object": "response", "created_at": 1_770_000_000,
        "model": "gpt-5.5-2026-08-01", "status": "completed", "error": None,
        "incomplete_details": None, "instructions": None, "metadata": {},
        "parallel_tool_calls": True, "temperature": 1.0, "tool_choice": "auto", "tools": [],
        "top_p": 1.0, "store": False,
        "context_management": [{"type": "compaction", "compact_threshold": 40_000}],
        "output": [
            {"id": "msg_9a8b7c", "type": "message", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": "The otter slid into the river.",
                          "annotations": [], "logprobs": []}]},
            copy.deepcopy(_COMPACTION),
        ],
        "usage": copy.deepcopy(_USAGE),
    }


def _window() -> dict[str, Any]:
    return {
        "id": "respcomp_55aa", "object": "response.compaction", "created_at": 1_770_000_100,
        "output": [
            {"id": "msg_u1", "type": "message", "role": "user", "status": "completed",
             "content": [{"type": "input_text", "text": "Tell me about otters."}]},
            {"id": "msg_u2", "type": "message", "role": "user", "status": "completed",
             "content": [{"type": "input_text", "text": "And beavers?"}]},
            copy.deepcopy(_COMPACTION),
        ],
        "usage": copy.deepcopy(_USAGE),
    }


def _events(response: dict[str, Any]) -> list[dict[str, Any]]:
    shell = {**response, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": shell}]
    for k, item in enumerate(response["output"]):
        events.append({"type": "response.output_item.added", "output_index": k, "item": item})
        if item["type"] == "compaction":
            events.append({"type": "response.compaction.compacting", "item_id": item["id"],
                           "output_index": k})
        events.append({"type": "response.output_item.done", "output_index": k, "item": item})
    events.append({"type": "response.completed", "response": response})
    return [{**e, "sequence_number": n} for n, e in enumerate(events)]


@pytest.mark.parametrize("form", ["raw", "sdk", "stream"])
def test_a_server_compaction_goes_back_as_it_came(form: str) -> None:
    ctx = Context(GW)
    ctx.emplace_message(Message(role=Role.user, content="Tell me about otters."))
    body = _response()
    match form:
        case "raw":
            ctx.push_back(copy.deepcopy(body))
        case "sdk":
            ctx.push_back(Response.model_validate(copy.deepcopy(body)))
        case "stream":
            ctx.push_stream(_events(copy.deepcopy(body)))
    assert ctx[2] == _COMPACTION  # stored exactly as sent
    ctx.emplace_message(Message(role=Role.user, content="And beavers?"))
    sent = ctx.request()["input"]
    assert sent[0] == _COMPACTION  # requests start at it, byte-identical
    assert sent[1]["content"] == "And beavers?" and len(sent) == 2
    last = ctx.usage.last
    assert last is not None
    assert (last.usage.input_tokens, last.usage.cache_read_tokens) == (41_200, 40_960)
    assert last.usage.cache_write_tokens == 0


@pytest.mark.parametrize("form", ["raw", "sdk"])
def test_a_compact_window_opens_a_context_and_is_sent_whole(form: str) -> None:
    window = _window()
    ctx = Context(GW)
    # (the SDK builds its object without validating, as its client does: a window's user
    # messages are not among the output item types it validates)
    ctx.push_back(construct_type(type_=CompactedResponse, value=window) if form == "sdk"
                  else window)
    ctx.emplace_message(Message(role=Role.user, content="Which one builds dams?"))
    sent = ctx.request()["input"]
    assert sent[-2] == _COMPACTION
    assert [item.get("role") for item in sent[:2]] == ["user", "user"]
    assert [p["text"] for item in sent[:2] for p in item["content"]] == [
        "Tell me about otters.", "And beavers?"]
    assert sent[-1]["content"] == "Which one builds dams?"
    assert Context.from_json(ctx.to_json()).request() == ctx.request()
