"""The Anthropic Messages adapter: conversion, validation, request building and SDK checks."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given

from hydrangea.context import Context
from hydrangea.errors import GatewayMismatchError, InvalidItemError, UnsupportedContentError
from hydrangea.gateway import GatewayType
from hydrangea.message import ImagePart, Message, Role, TextPart, ToolCallPart, ToolResultPart
from hydrangea.providers.adapter import ORPHAN_CALL_NOTICE
from hydrangea.providers.anthropic._request import LEADING_USER_PLACEHOLDER
from hydrangea.providers.anthropic.adapter import AnthropicAdapter
from tests.support import check_anthropic
from tests.support.steps import checked_request, mixed_steps, play

ADAPTER = AnthropicAdapter()
GW = GatewayType.anthropic


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def call(call_id: str, name: str = "search") -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": {"q": call_id}}


def result(call_id: str, content: str = "ok") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": content}


THINKING = {
    "type": "thinking",
    "thinking": "Let me think…\n",
    "signature": "EqQBCkYIAxgCIkB+/sig==",
}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}


# -- Message -> items --------------------------------------------------------------------------


def test_every_part_kind_converts() -> None:
    msg = Message(
        role=Role.user,
        content=(
            TextPart(text="look"),
            ImagePart(url="https://example.com/cat.png"),
            ImagePart(data=b"\x89PNG", media_type="image/png"),
            ToolResultPart(call_id="c1", content="42"),
            ToolResultPart(call_id="c2", content="boom", is_error=True),
        ),
    )
    assert ADAPTER.from_message(msg) == [
        user(
            text("look"),
            {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw=="},
            },
            {"type": "tool_result", "tool_use_id": "c1", "content": "42"},
            {"type": "tool_result", "tool_use_id": "c2", "content": "boom", "is_error": True},
        )
    ]
    reply = Message(
        role=Role.assistant,
        content=(TextPart(text="calling"), ToolCallPart(id="c1", name="add", arguments={"a": 1})),
    )
    assert ADAPTER.from_message(reply) == [
        assistant(
            text("calling"), {"type": "tool_use", "id": "c1", "name": "add", "input": {"a": 1}}
        )
    ]
    assert ADAPTER.from_message(Message(role=Role.user, content="hi")) == [user(text("hi"))]


def test_system_message_is_a_pseudo_item() -> None:
    msg = Message(role=Role.system, content=(TextPart(text="a"), TextPart(text="b")))
    assert ADAPTER.from_message(msg) == [{"role": "system", "content": "a\nb"}]


def test_unsupported_image_type_raises() -> None:
    msg = Message(role=Role.user, content=(ImagePart(data=b"BM", media_type="image/bmp"),))
    with pytest.raises(UnsupportedContentError, match="image/bmp"):
        ADAPTER.from_message(msg)


# -- request building --------------------------------------------------------------------------


def test_leading_system_goes_top_level_and_later_system_stays_in_place() -> None:
    items: list[dict[str, Any]] = [
        {"role": "system", "content": "be brief"},
        {"role": "system", "content": [text("be kind")]},
        user(text("hi")),
        assistant(text("hello")),
        {"role": "system", "content": "time is up"},
        user(text("bye")),
    ]
    assert ADAPTER.build_request(items) == {
        "system": [text("be brief"), text("be kind")],
        "messages": [
            user(text("hi")),
            assistant(text("hello")),
            user(text("[system] time is up")),
            user(text("bye")),
        ],
    }


def test_conversation_opening_with_assistant_gets_a_fixed_user_turn() -> None:
    request = ADAPTER.build_request([assistant(text("welcome")), user(text("hi"))])
    assert request["messages"][0] == user(text(LEADING_USER_PLACEHOLDER))
    assert request["messages"][1:] == [assistant(text("welcome")), user(text("hi"))]


def test_orphan_call_gets_an_error_result_first_in_the_next_user_turn() -> None:
    items = [user(text("q")), assistant(call("c1"), call("c2")), user(text("next"), result("c2"))]
    assert ADAPTER.build_request(items)["messages"] == [
        user(text("q")),
        assistant(call("c1"), call("c2")),
        user(
            result("c2"),
            {
                "type": "tool_result",
                "tool_use_id": "c1",
                "content": ORPHAN_CALL_NOTICE,
                "is_error": True,
            },
            text("next"),
        ),
    ]


def test_call_at_the_end_gets_a_new_user_turn() -> None:
    items = [user(text("q")), assistant(THINKING, call("c1"))]
    messages = ADAPTER.build_request(items)["messages"]
    assert messages[1] == assistant(THINKING, call("c1"))
    assert messages[2] == user(
        {
            "type": "tool_result",
            "tool_use_id": "c1",
            "content": ORPHAN_CALL_NOTICE,
            "is_error": True,
        }
    )


def test_distant_result_moves_up_to_its_call() -> None:
    items = [
        user(text("q")),
        assistant(call("c1")),
        {"role": "system", "content": "note"},
        assistant(text("waiting")),
        user(result("c1", "found")),
    ]
    assert ADAPTER.build_request(items)["messages"] == [
        user(text("q")),
        assistant(call("c1")),
        user(result("c1", "found"), text("[system] note")),
        assistant(text("waiting")),
    ]


def test_orphan_result_becomes_text() -> None:
    items = [
        user(text("q")),
        user({"type": "tool_result", "tool_use_id": "gone", "content": "x", "is_error": True}),
        user(result("gone2", "y")),
    ]
    assert ADAPTER.build_request(items)["messages"] == [
        user(text("q")),
        user(text("[tool result gone, error] x")),
        user(text("[tool result gone2] y")),
    ]


def test_string_content_is_sent_as_stored() -> None:
    items = [{"role": "user", "content": "plain"}, {"role": "assistant", "content": "reply"}]
    assert ADAPTER.build_request(items) == {"messages": items}


def test_empty_request() -> None:
    assert ADAPTER.build_request([]) == {"messages": []}
    check_anthropic.validate(ADAPTER.build_request([]))


def test_build_request_is_deterministic_and_does_not_mutate() -> None:
    items = [user(text("q")), assistant(THINKING, REDACTED, call("c1")), user(text("x"))]
    before = copy.deepcopy(items)
    first = ADAPTER.build_request(items)
    second = ADAPTER.build_request(items)
    assert first == second
    assert json.dumps(first) == json.dumps(second)
    assert items == before
    first["messages"][1]["content"].append(text("mutated"))
    assert items == before


# -- validation --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("item", "fragment"),
    [
        ({"role": "bot", "content": "x"}, "role"),
        ({"role": "user"}, "'content'"),
        ({"role": "user", "content": []}, "non-empty"),
        ({"role": "system", "content": ""}, "empty content"),
        (user(text("")), "empty text"),
        ({"role": "user", "content": "x", "extra": 1}, "extra"),
        (user({"text": "no type"}), "'type'"),
        (user({"type": "hologram"}), "hologram"),
        (user(THINKING), "assistant"),
        (assistant(result("c1")), "user"),
        (user({"type": "text"}), "'text'"),
        (assistant({"type": "tool_use", "id": "", "name": "n", "input": {}}), "id"),
        (assistant({"type": "tool_use", "id": "c", "name": "n", "input": []}), "input"),
        (
            user(
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/bmp", "data": "x"},
                }
            ),
            "media_type",
        ),
        (user({"type": "image", "source": {"type": "ftp"}}), "ftp"),
        ({"role": "system", "content": [{"type": "image", "source": {}}]}, "text block"),
        (user({"type": "tool_result", "tool_use_id": "c", "content": 3}), "content"),
        (user({"type": "tool_result", "tool_use_id": "c", "is_error": "yes"}), "is_error"),
        (assistant({"type": "thinking", "thinking": "t"}), "signature"),
    ],
)
def test_invalid_items_are_rejected(item: dict[str, Any], fragment: str) -> None:
    with pytest.raises(InvalidItemError, match=fragment):
        ADAPTER.validate(item)


@pytest.mark.parametrize(
    "item",
    [
        {"role": "model", "parts": [{"text": "hi", "thought_signature": "AAAA"}]},
        {"role": "tool", "tool_call_id": "c", "content": "x"},
        {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAA", "summary": []},
        assistant({"type": "reasoning", "encrypted_content": "x"}),
    ],
)
def test_items_of_other_gateways_are_mismatches(item: dict[str, Any]) -> None:
    with pytest.raises(GatewayMismatchError):
        ADAPTER.validate(item)


def test_sdk_object_of_another_gateway_is_a_mismatch() -> None:
    from google.genai import types
    from openai.types.chat import ChatCompletion

    completion = ChatCompletion.model_construct(id="x", choices=[], created=0, model="m")
    with pytest.raises(GatewayMismatchError):
        ADAPTER.from_output(completion)
    with pytest.raises(GatewayMismatchError):
        ADAPTER.from_output(types.Content(role="model", parts=[types.Part(text="hi")]))
    with pytest.raises(InvalidItemError):
        ADAPTER.from_output(42)


def test_appends_are_all_or_nothing() -> None:
    context = Context(GW)
    context.emplace_message(Message(role=Role.user, content="hi"))
    with pytest.raises(InvalidItemError):
        context.extend([assistant(text("fine")), user(THINKING)])
    with pytest.raises(InvalidItemError):
        context.push_back([assistant(text("fine")), {"role": "assistant"}])
    bad_image = Message(role=Role.user, content=(ImagePart(data=b"x", media_type="image/tiff"),))
    with pytest.raises(UnsupportedContentError):
        context.emplace_messages([Message(role=Role.user, content="ok"), bad_image])
    assert list(context) == [user(text("hi"))]


# -- model output ------------------------------------------------------------------------------

CANNED: dict[str, Any] = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": "claude-test",
    "content": [THINKING, REDACTED, text("Checking."), call("toolu_1", "lookup")],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 3, "output_tokens": 5},
}


def test_sdk_message_is_read_with_reasoning_intact() -> None:
    from anthropic.types import Message as SdkMessage

    sdk = SdkMessage.model_validate(CANNED)
    assert ADAPTER.from_output(sdk) == [assistant(*CANNED["content"])]
    assert ADAPTER.from_output(CANNED) == [assistant(*CANNED["content"])]


def test_json_round_trip_keeps_reasoning_byte_identical() -> None:
    context = Context(GW)
    context.emplace_message(Message(role=Role.system, content="sys"))
    context.emplace_message(Message(role=Role.user, content="q"))
    context.push_back(CANNED)
    context.emplace_message(
        Message(role=Role.user, content=(ToolResultPart(call_id="toolu_1", content="r"),))
    )
    saved = context.to_json()
    loaded = Context.from_json(saved)
    assert loaded.to_json() == saved
    assert list(loaded) == list(context)
    assert loaded[2]["content"][0]["signature"] == THINKING["signature"]
    assert loaded[2]["content"][1]["data"] == REDACTED["data"]


def test_item_text_skips_opaque_state() -> None:
    item = assistant(THINKING, REDACTED, text("visible"), call("c1"))
    out = ADAPTER.item_text(item)
    assert "visible" in out and THINKING["thinking"] in out
    assert THINKING["signature"] not in out and REDACTED["data"] not in out


# -- SDK request validation --------------------------------------------------------------------


@given(mixed_steps(check_anthropic.outputs()))
def test_requests_from_any_sequence_pass_the_sdk_check(steps: list[list[Any]]) -> None:
    context = Context(GW)
    play(context, steps)
    request = checked_request(context, check_anthropic.validate)
    sent = [
        block
        for m in request["messages"]
        if isinstance(m["content"], list)
        for block in m["content"]
    ]
    for item in context:
        if item["role"] == "assistant" and isinstance(item["content"], list):
            for block in item["content"]:
                if block["type"] in {"thinking", "redacted_thinking"}:
                    assert block in sent


@pytest.mark.parametrize(
    "kwargs",
    [
        {"messages": [user({"type": "text", "txt": "typo"})]},
        {"messages": [user({"type": "text", "text": "x", "bogus": 1})]},
        {"messages": [{"role": "system", "content": "x"}]},
        {"messages": [assistant(text("first"))]},
        {"messages": [user(text("q")), assistant(call("c1"))]},
        {"messages": [user(text("q")), assistant(call("c1")), user(text("x"), result("c1"))]},
        {"messages": [user(text("q")), assistant(call("c1")), user(result("c2"))]},
        {"messages": [user(result("c1"))]},
        {"messages": [user(text("q"))], "system": "plain"},
        {"messages": [user(text("q"))], "max_tokens": 5},
        {
            "messages": [
                user({"type": "image", "source": {"type": "base64", "media_type": "image/png"}})
            ]
        },
    ],
)
def test_the_sdk_check_rejects_wrong_shapes(kwargs: dict[str, Any]) -> None:
    with pytest.raises((AssertionError, ValueError)):
        check_anthropic.validate(kwargs)
