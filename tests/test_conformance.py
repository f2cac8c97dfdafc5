"""Conformance: one suite every gateway adapter passes (issue 11).

Pairing, orphan repair, unknown output kept byte-identical, JSON round trip, read back to
Messages, model switching, request keyword composition and refusals, each parametrized over
GatewayType. The samples below are written here (not recorded traffic) in each provider's
documented shape.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from hydrangea.context import Context
from hydrangea.errors import (
    GatewayMismatchError,
    InvalidItemError,
    RequestOptionError,
    StreamEventError,
)
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, TextPart, ToolCallPart, ToolResultPart
from tests.support.tool_exchange import two_call_exchange

ALL = list(GatewayType)

# One assistant response per gateway: text, a tool call and a block/part/item type the library
# has never heard of (it must be kept and re-sent byte for byte).
UNKNOWN: dict[GatewayType, dict[str, Any]] = {
    GatewayType.anthropic: {"type": "future_block", "payload": {"k": None, "list": [1, "x"]}},
    GatewayType.gemini: {"future_part": {"payload": {"k": None}}, "thought_signature": "c2ln"},
    GatewayType.openai: {"type": "future_part", "payload": {"k": [1, 2]}},
    GatewayType.openai_responses: {"type": "future_item", "id": "fi_1", "payload": {"k": 1}},
}


def response(gateway: GatewayType, *, unknown: bool = False) -> dict[str, Any]:
    """A whole response body of ``gateway`` from ``model-a`` with reasoning state, text and one
    tool call ``c1`` (``lookup``; Gemini's carries no id), and the unknown block if asked."""
    body = _response(gateway, UNKNOWN[gateway])
    if unknown:
        return body
    return json.loads(json.dumps(body).replace(json.dumps(UNKNOWN[gateway]) + ", ", ""))


def _response(gateway: GatewayType, unknown: dict[str, Any]) -> dict[str, Any]:
    model = "model-a"
    match gateway:
        case GatewayType.anthropic:
            content = [
                {"type": "thinking", "thinking": "hmm", "signature": "sig-a"},
                {"type": "text", "text": "Looking.", "citations": None},
                unknown,
                {"type": "tool_use", "id": "c1", "name": "lookup", "input": {"q": None}},
            ]
            return {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": content,
                "stop_reason": "tool_use",
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            }
        case GatewayType.gemini:
            parts = [
                {"text": "Looking.", "thoughtSignature": "c2lnLWE="},
                unknown,
                {"functionCall": {"name": "lookup", "args": {"q": None}}},
            ]
            return {
                "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
                "modelVersion": model,
            }
        case GatewayType.openai:
            message = {
                "role": "assistant",
                "content": [unknown, {"type": "text", "text": "Looking."}],
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": '{"q":null}'},
                    }
                ],
                "refusal": None,
                "annotations": [],
            }
            return {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
            }
        case GatewayType.openai_responses:
            output = [
                {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc-a"},
                {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": "Looking.", "annotations": []}],
                },
                unknown,
                {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "c1",
                    "name": "lookup",
                    "arguments": '{"q":null}',
                    "status": "completed",
                },
            ]
            return {"id": "resp_1", "object": "response", "model": model, "output": output}


def answered(gateway: GatewayType, *, unknown: bool = False) -> Context:
    """The response answered by a ToolResultPart naming the call (Gemini: by function name)."""
    context = Context(gateway)
    context.emplace_message(Message(role=Role.user, content="Look it up."))
    context.push_back(response(gateway, unknown=unknown))
    call_id = "lookup" if gateway is GatewayType.gemini else "c1"
    result = ToolResultPart(call_id=call_id, content="found")
    context.emplace_message(Message(role=Role.user, content=(result,)))
    return context


def request_items(gateway: GatewayType, kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    key = {"anthropic": "messages", "gemini": "contents", "openai": "messages"}
    items: list[dict[str, Any]] = kwargs[key.get(gateway.value, "input")]
    return items


# -- pairing and orphan repair ------------------------------------------------------------------


@pytest.mark.parametrize("gateway", ALL)
def test_a_tool_exchange_pairs_and_the_request_holds_no_orphan(gateway: GatewayType) -> None:
    context = Context(gateway)
    context.emplace_messages(two_call_exchange())
    pairing = context.adapter.pairing(list(context))
    assert len(pairing.answer) == 2 and not pairing.unanswered and not pairing.orphans
    sent = request_items(gateway, context.request())
    again = context.adapter.pairing(sent)
    assert len(again.answer) == 2 and not again.unanswered and not again.orphans


@pytest.mark.parametrize("gateway", ALL)
def test_orphans_are_repaired_deterministically(gateway: GatewayType) -> None:
    context = Context(gateway)
    context.emplace_message(Message(role=Role.user, content="go"))
    lost = ToolResultPart(call_id="nobody", content="stray")
    context.emplace_message(Message(role=Role.user, content=(lost, TextPart(text="and"))))
    call = ToolCallPart(id="open", name="lookup", arguments={})
    context.emplace_message(Message(role=Role.assistant, content=(call,)))
    pairing = context.adapter.pairing(list(context))
    assert len(pairing.unanswered) == 1 and len(pairing.orphans) == 1
    first = json.dumps(context.request(), sort_keys=True)
    assert first == json.dumps(context.request(), sort_keys=True)
    sent = request_items(gateway, context.request())
    repaired = context.adapter.pairing(sent)
    assert not repaired.unanswered and not repaired.orphans
    assert "stray" in first and "nobody" in first  # the orphan result became text


@pytest.mark.parametrize("gateway", ALL)
def test_the_response_call_is_answered_by_a_tool_result_part(gateway: GatewayType) -> None:
    context = answered(gateway)
    pairing = context.adapter.pairing(list(context))
    assert len(pairing.answer) == 1 and not pairing.unanswered and not pairing.orphans


# -- output kept as sent -------------------------------------------------------------------------


@pytest.mark.parametrize("gateway", ALL)
def test_unknown_output_is_kept_and_resent_byte_identical(
    gateway: GatewayType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.undo()  # the SDKs' request types do not know the block either; the API would
    context = answered(gateway, unknown=True)
    assert UNKNOWN[gateway] in [*context[1].get("content", []), *context[1].get("parts", [])] or (
        UNKNOWN[gateway] in list(context)
    )
    unknown = json.dumps(UNKNOWN[gateway], separators=(",", ":"))
    assert unknown in json.dumps(list(context), separators=(",", ":"))
    assert unknown in json.dumps(context.request(), separators=(",", ":"))


@pytest.mark.parametrize("gateway", ALL)
def test_json_round_trip_gives_the_same_bytes(gateway: GatewayType) -> None:
    context = answered(gateway)
    saved = context.to_json()
    loaded = Context.from_json(saved)
    assert loaded.to_json() == saved
    assert loaded.model_of(1) == "model-a"
    assert json.dumps(loaded.request()) == json.dumps(context.request())


@pytest.mark.parametrize("gateway", ALL)
def test_wrong_typed_fields_are_invalid_items_not_type_errors(gateway: GatewayType) -> None:
    context = Context(gateway)
    bad: list[dict[str, Any]] = [{"role": []}, {"role": {}, "content": "x"}, {"type": ["x"]}]
    for item in bad:
        with pytest.raises(InvalidItemError):
            context.push_back(item)
    assert len(context) == 0


# -- reading back --------------------------------------------------------------------------------


@pytest.mark.parametrize("gateway", ALL)
def test_read_back_gives_text_calls_and_results(gateway: GatewayType) -> None:
    context = answered(gateway)
    messages = context.messages()
    parts = [part for message in messages for part in message.parts]
    calls = [p for p in parts if isinstance(p, ToolCallPart)]
    results = [p for p in parts if isinstance(p, ToolResultPart)]
    texts = [p.text for p in parts if isinstance(p, TextPart)]
    assert [c.name for c in calls] == ["lookup"] and calls[0].arguments == {"q": None}
    assert results[0].content == "found" and results[0].call_id in ("c1", "lookup")
    assert "Look it up." in texts and "Looking." in texts


@pytest.mark.parametrize("gateway", ALL)
def test_a_result_built_from_a_call_read_back_answers_it(gateway: GatewayType) -> None:
    context = Context(gateway)
    context.emplace_message(Message(role=Role.user, content="go"))
    context.push_back(response(gateway))
    call = next(
        part
        for message in context.messages()
        for part in message.parts
        if isinstance(part, ToolCallPart)
    )
    context.emplace_message(
        Message(role=Role.user, content=(ToolResultPart(call_id=call.id, content="ok"),))
    )
    pairing = context.adapter.pairing(list(context))
    assert len(pairing.answer) == 1 and not pairing.orphans and not pairing.unanswered


class Recorder:
    def __init__(self, fail: bool = False) -> None:
        self.replies: list[Message] = []
        self.fail = fail

    def route(self, reply: Message) -> None:
        if self.fail:
            raise RuntimeError("area refused")
        self.replies.append(reply)


@pytest.mark.parametrize("gateway", ALL)
def test_push_back_routes_the_reply_and_rolls_back_if_the_area_raises(
    gateway: GatewayType,
) -> None:
    context = Context(gateway)
    context.emplace_message(Message(role=Role.user, content="go"))
    area = Recorder()
    context.push_back(response(gateway), route=area)
    (reply,) = area.replies
    assert reply.role is Role.assistant
    assert [p.name for p in reply.parts if isinstance(p, ToolCallPart)] == ["lookup"]
    before = context.to_json()
    with pytest.raises(RuntimeError):
        context.push_back(response(gateway), route=Recorder(fail=True))
    assert context.to_json() == before


# -- model switching -----------------------------------------------------------------------------

SIGNATURES = {
    GatewayType.anthropic: "sig-a",
    GatewayType.gemini: "c2lnLWE=",
    GatewayType.openai_responses: "enc-a",
}


@pytest.mark.parametrize("gateway", list(SIGNATURES))
def test_another_models_reasoning_state_is_never_sent(gateway: GatewayType) -> None:
    context = answered(gateway)
    same = json.dumps(context.request(model="model-a"))
    other = json.dumps(context.request(model="model-b"))
    assert SIGNATURES[gateway] in same
    assert SIGNATURES[gateway] not in other
    assert json.loads(other)["model"] == "model-b"
    sent = request_items(gateway, json.loads(other))
    pairing = context.adapter.pairing(sent)
    assert not pairing.orphans and not pairing.unanswered


# -- composing request keywords ------------------------------------------------------------------


@pytest.mark.parametrize("gateway", ALL)
def test_caller_keywords_compose_and_history_keys_are_refused(gateway: GatewayType) -> None:
    context = Context(gateway)
    context.emplace_message(Message(role=Role.system, content="Be brief."))
    context.emplace_message(Message(role=Role.user, content="hi"))
    tools = [{"name": "lookup"}]
    kwargs = context.request(tools=tools, max_tokens=10)
    assert kwargs["tools"] is tools and kwargs["max_tokens"] == 10
    assert "Be brief." in json.dumps(kwargs)
    with pytest.raises(RequestOptionError):
        context.request(**{"messages": [], "contents": [], "input": []})


# -- refusals ------------------------------------------------------------------------------------

BODIES = {gateway: response(gateway) for gateway in ALL}
STREAM_EVENTS: dict[GatewayType, dict[str, Any]] = {
    GatewayType.anthropic: {"type": "message_start", "message": {"content": []}},
    GatewayType.openai: {"object": "chat.completion.chunk", "choices": []},
    GatewayType.openai_responses: {"type": "response.created", "response": {}},
}
LABELS = {
    GatewayType.anthropic: "Anthropic",
    GatewayType.gemini: "Gemini",
    GatewayType.openai: "Chat Completions",
    GatewayType.openai_responses: "OpenAI Responses",
}


@pytest.mark.parametrize("gateway", ALL)
@pytest.mark.parametrize("other", ALL)
def test_another_gateways_body_is_a_mismatch_naming_it(
    gateway: GatewayType, other: GatewayType
) -> None:
    if other is gateway:
        return
    context = Context(gateway)
    with pytest.raises(GatewayMismatchError, match=LABELS[other]):
        context.push_back(BODIES[other])
    assert len(context) == 0


@pytest.mark.parametrize("gateway", ALL)
@pytest.mark.parametrize("source", list(STREAM_EVENTS))
def test_a_stream_event_says_how_to_push_a_stream(gateway: GatewayType, source: GatewayType) -> None:
    context = Context(gateway)
    with pytest.raises(StreamEventError, match="complete stream"):
        context.push_back(STREAM_EVENTS[source])
    assert len(context) == 0
