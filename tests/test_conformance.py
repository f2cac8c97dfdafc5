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
from hydrangea.providers.anthropic.caching import AnthropicCaching
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
    stripped: dict[str, Any] = json.loads(
        json.dumps(body).replace(json.dumps(UNKNOWN[gateway]) + ", ", "")
    )
    if gateway is GatewayType.openai:  # the API answers with a string; a list is input-side
        stripped["choices"][0]["message"]["content"] = "Looking."
    return stripped


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
                "candidates": [{"content": {"role": "model", "parts": parts}}],
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
    # the canonical form sorts object keys (the one thing an SDK dump cannot give back)
    unknown = json.dumps(UNKNOWN[gateway], separators=(",", ":"), sort_keys=True)
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
    history: dict[str, Any] = {"messages": [], "contents": [], "input": []}
    with pytest.raises(RequestOptionError):
        context.request(**history)


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
def test_a_stream_event_says_how_to_push_a_stream(
    gateway: GatewayType, source: GatewayType
) -> None:
    context = Context(gateway)
    with pytest.raises(StreamEventError, match="complete stream"):
        context.push_back(STREAM_EVENTS[source])
    assert len(context) == 0


# -- SDK objects ---------------------------------------------------------------------------------


def sdk_response(gateway: GatewayType) -> object:
    """The SDK object of ``response(gateway)``, built the way each SDK builds it from JSON."""
    body = response(gateway)
    match gateway:
        case GatewayType.anthropic:
            from anthropic._models import construct_type as anthropic_construct
            from anthropic.types.beta import BetaMessage

            return anthropic_construct(type_=BetaMessage, value=body)
        case GatewayType.openai:
            from openai._models import construct_type
            from openai.types.chat import ParsedChatCompletion

            return construct_type(type_=ParsedChatCompletion[object], value=body)
        case GatewayType.openai_responses:
            from openai._models import construct_type
            from openai.types.responses import ParsedResponse

            return construct_type(type_=ParsedResponse[object], value=body)
        case GatewayType.gemini:
            from google.genai import types

            return types.GenerateContentResponse.model_validate(body)


@pytest.mark.parametrize("gateway", ALL)
def test_sdk_object_and_raw_body_store_the_same_bytes(gateway: GatewayType) -> None:
    raw, sdk = Context(gateway), Context(gateway)
    raw.push_back(response(gateway))
    sdk.push_back(sdk_response(gateway))
    assert sdk.to_json() == raw.to_json()
    assert json.dumps(sdk.request()) == json.dumps(raw.request())


@pytest.mark.parametrize("gateway", ALL)
def test_another_gateways_sdk_object_is_a_mismatch_naming_it(gateway: GatewayType) -> None:
    for other in ALL:
        if other is not gateway:
            with pytest.raises(GatewayMismatchError, match=LABELS[other]):
                Context(gateway).push_back(sdk_response(other))


def test_sdk_stream_events_are_refused_by_type() -> None:
    from anthropic.types import RawMessageStopEvent
    from openai.types.chat import ChatCompletionChunk
    from openai.types.responses import ResponseCompletedEvent

    events: list[tuple[GatewayType, object]] = [
        (GatewayType.anthropic, RawMessageStopEvent(type="message_stop")),
        (
            GatewayType.openai,
            ChatCompletionChunk.model_construct(
                id="c", choices=[], created=0, model="m", object="chat.completion.chunk"
            ),
        ),
        (
            GatewayType.openai_responses,
            ResponseCompletedEvent.model_construct(type="response.completed", sequence_number=1),
        ),
    ]
    for gateway, event in events:
        with pytest.raises(StreamEventError, match="complete stream"):
            Context(gateway).push_back(event)


# -- server-side tools -------------------------------------------------------------------------


def test_server_tool_pairs_are_kept_whole_and_never_repaired() -> None:
    anthropic = Context(GatewayType.anthropic)
    anthropic.emplace_message(Message(role=Role.user, content="Search."))
    turn = [
        {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"q": "x"}},
        {"type": "web_search_tool_result", "tool_use_id": "srv_1", "content": []},
        {"type": "mcp_tool_use", "id": "mcp_1", "name": "ask", "server_name": "s", "input": {}},
        {"type": "mcp_tool_result", "tool_use_id": "mcp_1", "content": [], "is_error": False},
        {"type": "text", "text": "Found."},
    ]
    anthropic.push_back({"role": "assistant", "content": turn})
    uncached = anthropic.request(caching=AnthropicCaching(enabled=False))
    assert uncached["messages"][-1]["content"] == turn
    assert not anthropic.adapter.opens_exchange(anthropic[-1])  # the pair is complete
    paused = {"role": "assistant", "content": turn[:1]}
    assert anthropic.adapter.opens_exchange(paused)  # a paused turn waits for its result

    gemini = Context(GatewayType.gemini)
    gemini.emplace_message(Message(role=Role.user, content="Search my files."))
    gemini.push_back(
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [
                            {"toolCall": {"id": "t1", "toolType": "FILE_SEARCH"}},
                            {"toolResponse": {"id": "t1", "toolType": "FILE_SEARCH"}},
                            {"text": "Here."},
                        ],
                    }
                }
            ]
        }
    )
    parts = gemini.request()["contents"][-1]["parts"]
    assert parts[:2] == [
        {"tool_call": {"id": "t1", "tool_type": "FILE_SEARCH"}},
        {"tool_response": {"id": "t1", "tool_type": "FILE_SEARCH"}},
    ]
    assert not gemini.adapter.pairing(list(gemini)).calls


# -- wrong types and stored dumps ----------------------------------------------------------------

WRONG_TYPED: dict[GatewayType, list[dict[str, Any]]] = {
    GatewayType.anthropic: [
        {"role": "assistant", "content": [{"type": ["text"], "text": "x"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": ["c"], "name": "f"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": {}}]},
    ],
    GatewayType.gemini: [
        {"role": "model", "parts": [{"text": ["x"]}]},
        {"role": "model", "parts": [{"function_call": {"name": ["f"]}}]},
        {"role": "model", "parts": [{"text": "x", "thought_signature": ["s"]}]},
    ],
    GatewayType.openai: [
        {"role": "assistant", "content": [{"type": ["text"], "text": "x"}]},
        {"role": "assistant", "tool_calls": [{"id": "c", "type": ["function"]}]},
        {"role": "tool", "tool_call_id": ["c"], "content": "x"},
    ],
    GatewayType.openai_responses: [
        {"type": "message", "role": "user", "content": [{"type": "input_image", "detail": []}]},
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}", "status": []},
        {"type": "reasoning", "id": "rs", "summary": [], "encrypted_content": ["x"]},
    ],
}


@pytest.mark.parametrize("gateway", ALL)
def test_a_wrong_typed_field_in_output_is_an_invalid_item(gateway: GatewayType) -> None:
    context = Context(gateway)
    for item in WRONG_TYPED[gateway]:
        with pytest.raises(InvalidItemError):
            context.push_back(item)
    assert len(context) == 0


@pytest.mark.parametrize(
    ("gateway", "item"),
    [
        (
            GatewayType.anthropic,
            {
                "role": "user",
                "content": [
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": ["image/png"], "data": "eA=="},
                    }
                ],
            },
        ),
        (GatewayType.openai, {"role": "user", "content": [{"type": ["text"], "text": "x"}]}),
        (
            GatewayType.openai_responses,
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_image", "detail": ["auto"], "image_url": "https://x"}],
            },
        ),
        (
            GatewayType.openai_responses,
            {"type": "message", "role": "user", "status": [], "content": "x"},
        ),
        (GatewayType.gemini, {"role": "model", "parts": [{"type": ["tool_use"]}]}),
    ],
)
def test_the_strict_check_types_fields_too(gateway: GatewayType, item: dict[str, Any]) -> None:
    with pytest.raises(InvalidItemError):
        Context(gateway).adapter.validate(item)


def test_stored_sdk_dumps_load() -> None:
    from openai.types.chat import ChatCompletionMessage

    dumped = ChatCompletionMessage.model_validate(
        {"role": "assistant", "content": "Hi.", "annotations": [], "refusal": None}
    ).model_dump(mode="json")
    assert dumped["annotations"] == [] and "audio" in dumped
    context = Context(GatewayType.openai, [{"role": "user", "content": "Hello"}, dumped])
    assert context[1] == {"role": "assistant", "content": "Hi."}
    assert Context.from_json(context.to_json()).to_json() == context.to_json()


def test_model_names_compare_without_prefix_and_date_suffixes() -> None:
    from hydrangea.context.readback import same_model

    assert same_model("claude-sonnet-4-20250514", "claude-sonnet-4-0")
    assert same_model("models/gemini-2.5-flash", "gemini-2.5-flash")
    assert same_model("gpt-4o-2024-08-06", "GPT-4o")
    assert not same_model("gpt-4o", "gpt-4o-mini")
    assert not same_model("claude-opus-4-1-20250805", "claude-opus-4-20250514")


def test_anthropic_system_keyword_comes_before_the_contexts() -> None:
    context = Context(GatewayType.anthropic)
    context.emplace_message(Message(role=Role.system, content="Be brief."))
    context.emplace_message(Message(role=Role.user, content="hi"))
    kwargs = context.request(system="You are a pirate.", max_tokens=5)
    assert kwargs["system"] == [
        {"type": "text", "text": "You are a pirate."},
        {"type": "text", "text": "Be brief."},
    ]
    with pytest.raises(RequestOptionError):
        context.request(system=42)
