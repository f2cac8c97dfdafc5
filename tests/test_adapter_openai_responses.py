"""Scenario tests of the Responses adapter (GatewayType.openai_responses)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from hydrangea.context import Context, adapter_for
from hydrangea.errors import GatewayMismatchError, InvalidItemError, UnsupportedContentError
from hydrangea.gateway import GatewayType
from hydrangea.message import ImagePart, Message, Role, TextPart, ToolCallPart, ToolResultPart
from hydrangea.providers.adapter import ORPHAN_CALL_NOTICE
from tests.support.check_openai import validate_responses

GATEWAY = GatewayType.openai_responses
ADAPTER = adapter_for(GATEWAY)

REASONING: dict[str, Any] = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "thinking about it"}],
    "encrypted_content": "gAAAAB\u00e9\u2603==/+opaque",
}


def _ctx(*messages: Message) -> Context:
    context = Context(GATEWAY)
    context.emplace_messages(messages)
    return context


def _call(call_id: str, name: str = "f") -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": "{}"}


def _output(call_id: str, output: Any = "ok") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def _user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": text}


# -- conversion ----------------------------------------------------------------------------------


def test_plain_strings_per_role() -> None:
    context = _ctx(
        Message(role=Role.system, content="rules"),
        Message(role=Role.user, content="hi"),
        Message(role=Role.assistant, content="hello"),
    )
    assert list(context) == [
        {"type": "message", "role": "system", "content": "rules"},
        {"type": "message", "role": "user", "content": "hi"},
        {"type": "message", "role": "assistant", "content": "hello"},
    ]
    validate_responses(context.request())


def test_images_by_url_and_bytes() -> None:
    raw = b"GIF89a\x01\x00"
    context = _ctx(
        Message(
            role=Role.user,
            content=(
                ImagePart(url="https://example.com/a.gif"),
                TextPart(text="what is it"),
                ImagePart(data=raw, media_type="image/gif"),
            ),
        )
    )
    parts = context[0]["content"]
    assert parts[0] == {
        "type": "input_image",
        "image_url": "https://example.com/a.gif",
        "detail": "auto",
    }
    assert parts[1] == {"type": "input_text", "text": "what is it"}
    url = parts[2]["image_url"]
    prefix = "data:image/gif;base64,"
    assert url.startswith(prefix) and base64.b64decode(url[len(prefix) :]) == raw
    validate_responses(context.request())


def test_assistant_text_then_function_calls() -> None:
    arguments = {"q": "Zürich", "n": [1, 2]}
    context = _ctx(
        Message(
            role=Role.assistant,
            content=(
                TextPart(text="one"),
                ToolCallPart(id="c1", name="search", arguments=arguments),
                TextPart(text="two"),
                ToolCallPart(id="c2", name="noop"),
            ),
        )
    )
    assert context[0] == {"type": "message", "role": "assistant", "content": "one\ntwo"}
    assert [(i["type"], i["call_id"], i["name"]) for i in context[1:]] == [
        ("function_call", "c1", "search"),
        ("function_call", "c2", "noop"),
    ]
    assert json.loads(context[1]["arguments"]) == arguments
    assert json.loads(context[2]["arguments"]) == {}


def test_tool_results_become_outputs_before_the_user_text() -> None:
    context = _ctx(
        Message(role=Role.assistant, content=(ToolCallPart(id="a", name="f"),)),
        Message(
            role=Role.user,
            content=(
                TextPart(text="also"),
                ToolResultPart(call_id="a", content="failed", is_error=True),
            ),
        ),
    )
    assert list(context[1:]) == [_output("a", "[tool error] failed"), _user("also")]
    assert context.request()["input"] == list(context)
    validate_responses(context.request())


def test_system_mid_conversation_stays_in_place() -> None:
    context = _ctx(
        Message(role=Role.system, content="first"),
        Message(role=Role.user, content="q"),
        Message(role=Role.system, content="notice"),
    )
    request = context.request()
    assert "instructions" not in request
    assert [i["role"] for i in request["input"]] == ["system", "user", "system"]
    assert request["input"][2]["content"] == "notice"


def test_assistant_image_is_unsupported() -> None:
    context = Context(GATEWAY)
    with pytest.raises(UnsupportedContentError):
        context.emplace_message(
            Message(role=Role.assistant, content=(ImagePart(url="https://example.com/x.png"),))
        )
    assert len(context) == 0


# -- validation ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("item", "needle"),
    [
        ({"type": "teleport"}, "teleport"),
        ({"content": "no role or type"}, "type"),
        ({"type": "message", "role": "robot", "content": "x"}, "role"),
        ({"type": "message", "role": "user", "content": []}, "non-empty"),
        ({"type": "message", "role": "user", "content": "x", "extra": 1}, "extra"),
        ({"type": "message", "role": "user", "content": [{"type": "input_video"}]}, "input_video"),
        ({"type": "message", "role": "user", "content": [{"type": "input_image"}]}, "detail"),
        (
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_image", "detail": "auto"}],
            },
            "image_url",
        ),
        (
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "x"}],
            },
            "id",
        ),
        (
            {
                "type": "message",
                "role": "assistant",
                "id": "msg_1",
                "status": "completed",
                "content": [{"type": "output_text", "text": "x"}],
            },
            "annotations",
        ),
        ({"type": "function_call", "call_id": "a", "arguments": "{}"}, "name"),
        ({"type": "function_call", "name": "f", "arguments": "{}"}, "call_id"),
        ({"type": "function_call", "call_id": "a", "name": "f"}, "arguments"),
        ({"type": "function_call_output", "call_id": "a"}, "output"),
        ({"type": "reasoning", "summary": []}, "id"),
        ({"type": "reasoning", "id": "rs", "summary": "x"}, "summary"),
        ({**REASONING, "encrypted_content": 5}, "encrypted_content"),
    ],
)
def test_invalid_items_are_rejected_with_a_reason(item: dict[str, Any], needle: str) -> None:
    """The strict check of caller-authored items (what emplace_message makes)."""
    with pytest.raises(InvalidItemError, match=needle):
        ADAPTER.validate(item)


@pytest.mark.parametrize(
    "item",
    [
        {"role": "model", "parts": [{"text": "gemini", "thought_signature": "c2ln"}]},
        {"role": "tool", "tool_call_id": "a", "content": "chat"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"}]},
        {"role": "assistant", "content": [{"type": "redacted_thinking", "data": "d"}]},
    ],
)
def test_items_of_other_gateways_are_a_gateway_mismatch(item: dict[str, Any]) -> None:
    context = Context(GATEWAY)
    with pytest.raises(GatewayMismatchError):
        context.push_back(item)
    assert len(context) == 0


def test_builtin_tool_items_are_accepted() -> None:
    context = Context(GATEWAY)
    context.push_back(
        {
            "type": "web_search_call",
            "id": "ws_1",
            "status": "completed",
            "action": {"type": "search"},
        }
    )
    context.push_back({"type": "item_reference", "id": "msg_0"})
    assert len(context) == 2


# -- model output --------------------------------------------------------------------------------

RESPONSE: dict[str, Any] = {
    "id": "resp_1",
    "object": "response",
    "created_at": 1,
    "model": "gpt-test",
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
    "output": [
        REASONING,
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "calling", "annotations": []}],
        },
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "lookup",
            "arguments": '{"q":1}',
            "status": "completed",
        },
    ],
}


def test_push_back_sdk_response_keeps_reasoning_byte_identical() -> None:
    from openai.types.responses import Response

    context = Context(GATEWAY)
    context.push_back(Response.model_validate(RESPONSE))
    assert list(context) == RESPONSE["output"]
    assert context[0]["encrypted_content"] == REASONING["encrypted_content"]
    assert ADAPTER.build_request(list(context))["input"][0] == REASONING


def test_push_back_response_dict_and_single_sdk_item() -> None:
    from openai.types.responses import Response

    response = Response.model_validate(RESPONSE)
    context = Context(GATEWAY)
    context.push_back(RESPONSE)
    context.push_back(response.output[0])
    assert list(context) == [*RESPONSE["output"], REASONING]


def test_round_trip_through_json_keeps_reasoning(tmp_path: Any) -> None:
    context = Context(GATEWAY)
    context.emplace_message(Message(role=Role.user, content="q"))
    context.push_back(RESPONSE)
    path = tmp_path / "ctx.json"
    context.save(path)
    loaded = Context.load(path)
    assert loaded.to_json() == context.to_json()
    assert loaded[1]["encrypted_content"] == REASONING["encrypted_content"]


def test_push_back_chat_completion_is_a_gateway_mismatch() -> None:
    from openai.types.chat import ChatCompletion

    completion = ChatCompletion.model_validate(
        {
            "id": "c",
            "object": "chat.completion",
            "created": 1,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "hi"},
                }
            ],
        }
    )
    context = Context(GATEWAY)
    with pytest.raises(GatewayMismatchError):
        context.push_back(completion)
    with pytest.raises(GatewayMismatchError):
        context.push_back(completion.model_dump(mode="json"))
    assert len(context) == 0


def test_push_back_google_object_is_a_gateway_mismatch() -> None:
    from google.genai import types

    content = types.Content(role="model", parts=[types.Part(text="hi")])
    with pytest.raises(GatewayMismatchError, match="Gemini"):
        Context(GATEWAY).push_back(content)


def test_push_back_bad_outputs() -> None:
    context = Context(GATEWAY)
    with pytest.raises(InvalidItemError):
        context.push_back("text")
    with pytest.raises(InvalidItemError, match="output"):
        context.push_back({**RESPONSE, "output": None})
    with pytest.raises(InvalidItemError):
        context.push_back([REASONING, {"type": "reasoning"}])
    assert len(context) == 0


# -- request building and orphan repair ----------------------------------------------------------


def test_orphan_call_gets_a_notice_after_its_turn() -> None:
    items = [_user("go"), REASONING, _call("a"), _call("b"), _user("next"), _output("b")]
    assert ADAPTER.build_request(items)["input"] == [
        items[0],
        items[1],
        items[2],
        items[3],
        _output("a", ORPHAN_CALL_NOTICE),
        items[4],
        items[5],
    ]
    validate_responses(ADAPTER.build_request(items))


def test_orphan_result_becomes_user_text_in_place() -> None:
    items = [_output("gone", [{"type": "input_text", "text": "late"}]), _user("q")]
    assert ADAPTER.build_request(items)["input"] == [_user("[tool result gone] late"), items[1]]


def test_result_before_its_call_does_not_pair() -> None:
    items = [_output("a", "early"), _call("a")]
    assert ADAPTER.build_request(items)["input"] == [
        _user("[tool result a] early"),
        items[1],
        _output("a", ORPHAN_CALL_NOTICE),
    ]


def test_late_result_pairs_with_its_call_where_it_stands() -> None:
    # Responses pairs an output with the first earlier open call of its call_id anywhere before
    # it, so an output that arrives after a user message needs no repair at all.
    items = [_user("go"), _call("c1"), _user("interrupt"), _output("c1", "r1")]
    request = ADAPTER.build_request(items)
    assert request["input"] == items
    assert ORPHAN_CALL_NOTICE not in json.dumps(request)
    validate_responses(request)


def test_second_result_for_one_call_is_stray() -> None:
    items = [_call("a"), _output("a", "1"), _output("a", "2")]
    assert ADAPTER.build_request(items)["input"] == [items[0], items[1], _user("[tool result a] 2")]


def test_custom_tool_calls_are_paired_too() -> None:
    call = {"type": "custom_tool_call", "call_id": "k", "name": "patch", "input": "diff"}
    notice = {"type": "custom_tool_call_output", "call_id": "k", "output": ORPHAN_CALL_NOTICE}
    assert ADAPTER.build_request([call])["input"] == [call, notice]


def test_request_is_deterministic_and_does_not_touch_the_items() -> None:
    context = Context(GATEWAY)
    context.push_back(RESPONSE)
    before = context.to_json()
    first = context.request()
    # the lists are the caller's; the item dicts are shared read-only ("What you may mutate")
    first["input"][0] = {**first["input"][0], "encrypted_content": "mutated"}
    assert context.to_json() == before
    assert context.request() == ADAPTER.build_request(list(context))
    assert json.dumps(context.request()) == json.dumps(context.request())


def test_empty_context_gives_empty_input() -> None:
    assert Context(GATEWAY).request() == {"input": []}


def test_item_text_skips_encrypted_content() -> None:
    text = ADAPTER.item_text(REASONING)
    assert "thinking about it" in text and "opaque" not in text


# -- the SDK validator itself must be able to fail -----------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"input": [{**REASONING, "summary": [{"type": "summary_text"}]}]},
        {"input": [{"type": "message", "role": "user", "content": [{"type": "input_text"}]}]},
        {"input": [{"type": "function_call", "call_id": "a", "name": "f"}]},
        {"input": [{"type": "function_call", "call_id": "a", "name": "f", "arguments": "{"}]},
        {"input": [{"type": "message", "role": "user", "content": "x", "bogus": True}]},
        {"input": [], "instructions": 5},
        {"input": [], "messages": []},
    ],
)
def test_sdk_validator_rejects_wrong_shapes(kwargs: dict[str, Any]) -> None:
    with pytest.raises((ValueError, AssertionError)):
        validate_responses(kwargs)


def test_push_back_model_dump_with_nulls() -> None:
    from openai.types.responses import Response

    response = Response.model_validate(RESPONSE)
    context = Context(GATEWAY)
    context.push_back([item.model_dump() for item in response.output])
    context.push_back(response.model_dump())
    assert list(context) == RESPONSE["output"] * 2
    validate_responses(context.request())


def test_reasoning_without_its_following_item_is_left_out() -> None:
    second = {**REASONING, "id": "rs_2"}
    items = [_user("q"), REASONING, second, _call("a"), _output("a"), REASONING]
    assert ADAPTER.build_request(items)["input"] == [items[0], second, items[3], items[4]]
    assert ADAPTER.build_request([REASONING, _user("q")])["input"] == [_user("q")]
