"""Scenario tests of the Chat Completions adapter (GatewayType.openai)."""

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
from tests.support.check_openai import validate_chat

ADAPTER = adapter_for(GatewayType.openai)


def _ctx(*messages: Message) -> Context:
    context = Context(GatewayType.openai)
    context.emplace_messages(messages)
    return context


def _assistant_calls(*ids: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids
        ],
    }


# -- conversion ----------------------------------------------------------------------------------


def test_plain_strings_per_role() -> None:
    context = _ctx(
        Message(role=Role.system, content="rules"),
        Message(role=Role.user, content="hi"),
        Message(role=Role.assistant, content="hello"),
    )
    assert list(context) == [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]


def test_lone_text_part_is_a_plain_string() -> None:
    context = _ctx(Message(role=Role.user, content=(TextPart(text="only"),)))
    assert context[0] == {"role": "user", "content": "only"}


def test_images_by_url_and_bytes() -> None:
    raw = b"\x89PNG\r\n\x1a\n\x00\x01"
    context = _ctx(
        Message(
            role=Role.user,
            content=(
                TextPart(text="look"),
                ImagePart(url="https://example.com/a.png"),
                ImagePart(data=raw, media_type="image/png"),
            ),
        )
    )
    parts = context[0]["content"]
    assert parts[0] == {"type": "text", "text": "look"}
    assert parts[1] == {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}
    prefix = "data:image/png;base64,"
    url = parts[2]["image_url"]["url"]
    assert url.startswith(prefix)
    assert base64.b64decode(url[len(prefix) :]) == raw
    validate_chat(context.request())


def test_tool_call_arguments_are_a_json_string() -> None:
    arguments = {"city": "Zürich", "days": 3, "nested": {"a": [1, 2]}}
    context = _ctx(
        Message(
            role=Role.assistant,
            content=(
                TextPart(text="checking"),
                ToolCallPart(id="c1", name="weather", arguments=arguments),
            ),
        )
    )
    item = context[0]
    assert item["content"] == "checking"
    (call,) = item["tool_calls"]
    assert call["id"] == "c1" and call["type"] == "function"
    assert call["function"]["name"] == "weather"
    assert json.loads(call["function"]["arguments"]) == arguments


def test_assistant_with_calls_only_has_no_content_key() -> None:
    context = _ctx(Message(role=Role.assistant, content=(ToolCallPart(id="c1", name="f"),)))
    assert "content" not in context[0]
    assert json.loads(context[0]["tool_calls"][0]["function"]["arguments"]) == {}


def test_tool_results_become_tool_messages_before_the_user_text() -> None:
    context = _ctx(
        Message(
            role=Role.assistant,
            content=(
                ToolCallPart(id="a", name="f"),
                ToolCallPart(id="b", name="g"),
            ),
        ),
        Message(
            role=Role.user,
            content=(
                TextPart(text="and also"),
                ToolResultPart(call_id="a", content="42"),
                ToolResultPart(call_id="b", content="boom", is_error=True),
            ),
        ),
    )
    assert list(context[1:]) == [
        {"role": "tool", "tool_call_id": "a", "content": "42"},
        {"role": "tool", "tool_call_id": "b", "content": "[tool error] boom"},
        {"role": "user", "content": "and also"},
    ]
    request = context.request()
    assert request["messages"] == list(context)
    validate_chat(request)


def test_system_mid_conversation_stays_in_place() -> None:
    context = _ctx(
        Message(role=Role.system, content="first"),
        Message(role=Role.user, content="q"),
        Message(role=Role.system, content="later notice"),
        Message(role=Role.user, content="q2"),
    )
    roles = [m["role"] for m in context.request()["messages"]]
    assert roles == ["system", "user", "system", "user"]
    assert context.request()["messages"][2]["content"] == "later notice"


def test_assistant_image_is_unsupported_and_nothing_appended() -> None:
    context = _ctx(Message(role=Role.user, content="hi"))
    bad = Message(role=Role.assistant, content=(ImagePart(url="https://example.com/x.png"),))
    with pytest.raises(UnsupportedContentError):
        context.emplace_messages([Message(role=Role.user, content="ok"), bad])
    assert len(context) == 1


# -- validation ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("item", "needle"),
    [
        ({"role": "robot", "content": "x"}, "role"),
        ({"content": "x"}, "role"),
        ({"role": "user"}, "content"),
        ({"role": "user", "content": "x", "extra": 1}, "extra"),
        ({"role": "user", "content": []}, "empty"),
        ({"role": "user", "content": [{"type": "video"}]}, "video"),
        ({"role": "user", "content": [{"type": "text"}]}, "text"),
        ({"role": "user", "content": [{"type": "image_url", "image_url": {}}]}, "url"),
        ({"role": "system", "content": [{"type": "image_url", "image_url": {"url": "u"}}]}, "type"),
        ({"role": "tool", "content": "x"}, "tool_call_id"),
        ({"role": "tool", "content": "x", "tool_call_id": ""}, "tool_call_id"),
        ({"role": "assistant"}, "content"),
        ({"role": "assistant", "tool_calls": []}, "non-empty"),
        ({"role": "assistant", "tool_calls": [{"id": "a", "type": "function"}]}, "function"),
        (_assistant_calls("a", "a"), "duplicate"),
        ({"role": "function", "content": "x", "name": "f"}, "deprecated"),
        ({"role": "user", "content": 5}, "content"),
    ],
)
def test_invalid_items_are_rejected_with_a_reason(item: dict[str, Any], needle: str) -> None:
    """The strict check of caller-authored items (what emplace_message makes)."""
    with pytest.raises(InvalidItemError, match=needle):
        ADAPTER.validate(item)


@pytest.mark.parametrize(
    "item",
    [
        {"role": "model", "parts": [{"text": "gemini"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "x"},
        {"type": "message", "role": "user", "content": "responses"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "x"}]},
    ],
)
def test_items_of_other_gateways_are_a_gateway_mismatch(item: dict[str, Any]) -> None:
    context = Context(GatewayType.openai)
    with pytest.raises(GatewayMismatchError):
        context.push_back(item)
    assert len(context) == 0


def test_non_json_item_is_rejected() -> None:
    with pytest.raises(InvalidItemError):
        Context(GatewayType.openai).push_back({"role": "user", "content": b"bytes"})


# -- model output --------------------------------------------------------------------------------

_COMPLETION: dict[str, Any] = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-test",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": "let me look",
                "refusal": None,
                "annotations": [],
                "tool_calls": [
                    {
                        "id": "call_9",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": '{"q": "x"}'},
                    }
                ],
            },
        }
    ],
}
_EXPECTED_MESSAGE = {
    "role": "assistant",
    "content": "let me look",
    "tool_calls": [
        {
            "id": "call_9",
            "type": "function",
            "function": {"name": "lookup", "arguments": '{"q": "x"}'},
        }
    ],
}


def test_push_back_sdk_chat_completion() -> None:
    from openai.types.chat import ChatCompletion

    context = Context(GatewayType.openai)
    context.push_back(ChatCompletion.model_validate(_COMPLETION))
    assert list(context) == [_EXPECTED_MESSAGE]


def test_push_back_sdk_message_and_completion_dict() -> None:
    from openai.types.chat import ChatCompletion

    completion = ChatCompletion.model_validate(_COMPLETION)
    context = Context(GatewayType.openai)
    context.push_back(completion.choices[0].message)
    context.push_back(_COMPLETION)
    assert list(context) == [_EXPECTED_MESSAGE, _EXPECTED_MESSAGE]


def test_push_back_completion_without_choices() -> None:
    with pytest.raises(InvalidItemError, match="choices"):
        Context(GatewayType.openai).push_back({**_COMPLETION, "choices": []})


def test_push_back_responses_object_is_a_gateway_mismatch() -> None:
    from openai.types.responses import Response

    response = Response.model_validate(
        {
            "id": "resp_1",
            "object": "response",
            "created_at": 1,
            "model": "gpt-test",
            "output": [],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
        }
    )
    context = Context(GatewayType.openai)
    with pytest.raises(GatewayMismatchError):
        context.push_back(response)
    with pytest.raises(GatewayMismatchError):
        context.push_back(response.model_dump(mode="json"))


def test_push_back_anthropic_object_is_a_gateway_mismatch() -> None:
    from anthropic.types import Message as AnthropicMessage

    message = AnthropicMessage.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [{"type": "text", "text": "hi"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    )
    with pytest.raises(GatewayMismatchError, match="anthropic"):
        Context(GatewayType.openai).push_back(message)


def test_push_back_unknown_objects() -> None:
    context = Context(GatewayType.openai)
    with pytest.raises(InvalidItemError):
        context.push_back(42)
    with pytest.raises(InvalidItemError):
        context.push_back([{"role": "assistant", "content": "x"}, "not a dict"])
    assert len(context) == 0


def test_push_back_list_is_all_or_nothing() -> None:
    context = Context(GatewayType.openai)
    with pytest.raises(InvalidItemError):
        context.push_back([{"role": "assistant", "content": "fine"}, {"role": "assistant"}])
    assert len(context) == 0


# -- request building and orphan repair ----------------------------------------------------------


def test_orphan_call_gets_a_notice_at_the_end_of_its_run() -> None:
    items = [
        {"role": "user", "content": "go"},
        _assistant_calls("a", "b"),
        {"role": "tool", "tool_call_id": "b", "content": "B"},
        {"role": "user", "content": "next"},
    ]
    messages = ADAPTER.build_request(items)["messages"]
    assert messages == [
        items[0],
        items[1],
        items[2],
        {"role": "tool", "tool_call_id": "a", "content": ORPHAN_CALL_NOTICE},
        items[3],
    ]
    validate_chat({"messages": messages})


def test_orphan_result_becomes_user_text() -> None:
    items = [
        {"role": "user", "content": "go"},
        {"role": "tool", "tool_call_id": "gone", "content": "late"},
    ]
    assert ADAPTER.build_request(items)["messages"][1] == {
        "role": "user",
        "content": "[tool result gone] late",
    }


def test_late_result_moves_up_next_to_its_call() -> None:
    # The answer arrives after a user message: it is moved into the run after its call (as the
    # Anthropic and Gemini builders do), not answered twice by a notice and a user text.
    items = [
        _assistant_calls("a"),
        {"role": "user", "content": "interrupt"},
        {"role": "tool", "tool_call_id": "a", "content": "late"},
    ]
    messages = ADAPTER.build_request(items)["messages"]
    assert messages == [items[0], items[2], items[1]]
    assert ORPHAN_CALL_NOTICE not in json.dumps(messages)
    validate_chat({"messages": messages})


def test_late_results_join_the_run_in_stored_order_and_the_rest_keeps_its_order() -> None:
    items = [
        {"role": "user", "content": "go"},
        _assistant_calls("a", "b", "c"),
        {"role": "tool", "tool_call_id": "c", "content": "C"},
        {"role": "user", "content": "u1"},
        {"role": "tool", "tool_call_id": "a", "content": "A"},
        {"role": "assistant", "content": "thinking aloud"},
        {"role": "tool", "tool_call_id": "z", "content": "Z"},
        {"role": "user", "content": "u2"},
    ]
    messages = ADAPTER.build_request(items)["messages"]
    assert messages == [
        items[0],
        items[1],
        items[2],
        items[4],
        {"role": "tool", "tool_call_id": "b", "content": ORPHAN_CALL_NOTICE},
        items[3],
        items[5],
        {"role": "user", "content": "[tool result z] Z"},
        items[7],
    ]
    validate_chat({"messages": messages})


def test_a_late_result_answers_the_earliest_open_call_with_its_id() -> None:
    # Two calls reuse the id "a" (in separate messages); each answer pairs with the first
    # earlier call still open, and an answer placed before any call stays a stray.
    items = [
        {"role": "tool", "tool_call_id": "a", "content": "early"},
        _assistant_calls("a"),
        {"role": "user", "content": "u"},
        _assistant_calls("a"),
        {"role": "tool", "tool_call_id": "a", "content": "first"},
        {"role": "tool", "tool_call_id": "a", "content": "second"},
    ]
    messages = ADAPTER.build_request(items)["messages"]
    assert messages == [
        {"role": "user", "content": "[tool result a] early"},
        items[1],
        items[4],
        items[2],
        items[3],
        items[5],
    ]
    validate_chat({"messages": messages})


def test_duplicate_and_foreign_results_in_a_run_move_after_it() -> None:
    items = [
        _assistant_calls("a"),
        {"role": "tool", "tool_call_id": "a", "content": "one"},
        {"role": "tool", "tool_call_id": "a", "content": "two"},
        {"role": "tool", "tool_call_id": "z", "content": [{"type": "text", "text": "zz"}]},
    ]
    assert ADAPTER.build_request(items)["messages"] == [
        items[0],
        items[1],
        {"role": "user", "content": "[tool result a] two"},
        {"role": "user", "content": "[tool result z] zz"},
    ]


def test_request_is_deterministic_and_does_not_touch_the_items() -> None:
    context = _ctx(
        Message(role=Role.user, content="go"),
        Message(role=Role.assistant, content=(ToolCallPart(id="a", name="f", arguments={"k": 1}),)),
    )
    before = context.to_json()
    first = context.request()
    # the lists are the caller's; the message dicts are shared read-only ("What you may mutate")
    first["messages"][1] = {**first["messages"][1], "tool_calls": [{"id": "mutated"}]}
    first["messages"].append({"role": "user", "content": "x"})
    assert context.request() == ADAPTER.build_request(list(context))
    assert context.to_json() == before
    assert json.dumps(context.request()) == json.dumps(context.request())


def test_empty_context_gives_empty_messages() -> None:
    assert Context(GatewayType.openai).request() == {"messages": []}


def test_item_text_reads_content_and_arguments() -> None:
    context = _ctx(
        Message(
            role=Role.assistant,
            content=(
                TextPart(text="hm"),
                ToolCallPart(id="a", name="f", arguments={"q": "v"}),
            ),
        )
    )
    text = ADAPTER.item_text(context[0])
    assert "hm" in text and '"q"' in text


# -- the SDK validator itself must be able to fail -----------------------------------------------

_BAD_CALL = {"id": "a", "type": "function", "function": {"name": "f"}}


@pytest.mark.parametrize(
    "kwargs",
    [
        {"messages": [{"role": "assistant", "tool_calls": [_BAD_CALL]}]},
        {"messages": [{"role": "user", "content": [{"type": "text"}]}]},
        {"messages": [{"role": "user", "content": "x", "extra": 1}]},
        {"messages": [{"role": "tool", "content": "x"}]},
        {"messages": [], "model": "not here"},
        {},
        {
            "messages": [
                {
                    "role": "assistant",
                    "tool_calls": [
                        {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{"}}
                    ],
                }
            ]
        },
    ],
)
def test_sdk_validator_rejects_wrong_shapes(kwargs: dict[str, Any]) -> None:
    with pytest.raises((ValueError, AssertionError)):
        validate_chat(kwargs)


def test_sdk_validator_needs_to_drain_lazy_iterables() -> None:
    from openai.types.chat import ChatCompletionMessageParam
    from pydantic import TypeAdapter

    bad = [{"role": "assistant", "tool_calls": [_BAD_CALL]}]
    TypeAdapter(list[ChatCompletionMessageParam]).validate_python(bad)  # lazily "valid"
    with pytest.raises(ValueError, match="arguments"):
        validate_chat({"messages": bad})


def test_push_back_model_dump_of_a_message() -> None:
    from openai.types.chat import ChatCompletion

    message = ChatCompletion.model_validate(_COMPLETION).choices[0].message
    context = Context(GatewayType.openai)
    context.push_back(message.model_dump())  # with nulls and annotations
    assert list(context) == [_EXPECTED_MESSAGE]
    # output-only keys Chat Completions does not take back as input are not stored
    context.push_back({"role": "assistant", "content": "x", "reasoning_content": "y"})
    assert context[-1] == {"role": "assistant", "content": "x"}
