"""The Gemini adapter: conversion, validation, request building and SDK checks."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest
from hypothesis import given

from hydrangea.context import Context
from hydrangea.errors import GatewayMismatchError, InvalidItemError
from hydrangea.gateway import GatewayType
from hydrangea.message import ImagePart, Message, Role, TextPart, ToolCallPart, ToolResultPart
from hydrangea.providers.adapter import ORPHAN_CALL_NOTICE
from hydrangea.providers.gemini._request import LEADING_USER_PLACEHOLDER
from hydrangea.providers.gemini.adapter import NAME_LOOKBACK, GeminiAdapter
from tests.support import check_gemini
from tests.support.steps import checked_request, mixed_steps, play

ADAPTER = GeminiAdapter()
GW = GatewayType.gemini
SIG = base64.b64encode(bytes([0xFB, 0xEF, 0xFF, 0x10, 0x20]) * 3).decode()


def user(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "parts": list(parts)}


def model(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": "model", "parts": list(parts)}


def call(call_id: str | None, name: str = "search") -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "args": {"q": name}}
    if call_id is not None:
        body["id"] = call_id
    return {"function_call": body}


def response(call_id: str | None, output: str = "ok", name: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"response": {"output": output}}
    if call_id is not None:
        body["id"] = call_id
    if name is not None:
        body["name"] = name
    return {"function_response": body}


def orphan_answer(call_id: str | None, name: str = "search") -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "response": {"error": ORPHAN_CALL_NOTICE}}
    if call_id is not None:
        body = {"id": call_id, **body}
    return {"function_response": body}


# -- Message -> items --------------------------------------------------------------------------


def test_every_part_kind_converts() -> None:
    msg = Message(
        role=Role.user,
        content=(
            TextPart(text="look"),
            ImagePart(url="gs://bucket/cat.png", media_type="image/png"),
            ImagePart(url="https://example.com/cat"),
            ImagePart(data=b"\x89PNG", media_type="image/png"),
            ToolResultPart(call_id="c1", content="42"),
            ToolResultPart(call_id="c2", content="boom", is_error=True),
        ),
    )
    assert ADAPTER.from_message(msg) == [
        user(
            {"text": "look"},
            {"file_data": {"file_uri": "gs://bucket/cat.png", "mime_type": "image/png"}},
            {"file_data": {"file_uri": "https://example.com/cat"}},
            {"inline_data": {"mime_type": "image/png", "data": "iVBORw=="}},
            {"function_response": {"id": "c1", "response": {"output": "42"}}},
            {"function_response": {"id": "c2", "response": {"error": "boom"}}},
        )
    ]
    reply = Message(
        role=Role.assistant,
        content=(TextPart(text="calling"), ToolCallPart(id="c1", name="add", arguments={"a": 1})),
    )
    assert ADAPTER.from_message(reply) == [
        model({"text": "calling"}, {"function_call": {"id": "c1", "name": "add", "args": {"a": 1}}})
    ]
    system = Message(role=Role.system, content=(TextPart(text="a"), TextPart(text="b")))
    assert ADAPTER.from_message(system) == [
        {"role": "system", "parts": [{"text": "a"}, {"text": "b"}]}
    ]


# -- request building --------------------------------------------------------------------------


def test_leading_system_goes_to_config_and_later_system_stays_in_place() -> None:
    items: list[dict[str, Any]] = [
        {"role": "system", "parts": [{"text": "be brief"}]},
        {"role": "system", "parts": [{"text": "be kind"}]},
        user({"text": "hi"}),
        model({"text": "hello"}),
        {"role": "system", "parts": [{"text": "time"}, {"text": "is up"}]},
        user({"text": "bye"}),
    ]
    assert ADAPTER.build_request(items) == {
        "config": {"system_instruction": {"parts": [{"text": "be brief"}, {"text": "be kind"}]}},
        "contents": [
            user({"text": "hi"}),
            model({"text": "hello"}),
            user({"text": "[system] time\nis up"}, {"text": "bye"}),
        ],
    }


def test_conversation_opening_with_model_gets_a_fixed_user_turn() -> None:
    contents = ADAPTER.build_request([model({"text": "welcome"})])["contents"]
    assert contents == [user({"text": LEADING_USER_PLACEHOLDER}), model({"text": "welcome"})]


def test_response_gets_the_call_name_and_comes_first() -> None:
    items = [
        user({"text": "q"}),
        model({"text": "calling", "thought_signature": SIG}, call("c1", "lookup")),
        user({"text": "also"}, response("c1", "found")),
    ]
    assert ADAPTER.build_request(items)["contents"] == [
        user({"text": "q"}),
        model({"text": "calling", "thought_signature": SIG}, call("c1", "lookup")),
        user(response("c1", "found", name="lookup"), {"text": "also"}),
    ]


def test_a_named_result_is_stored_with_its_name_and_sent_as_stored() -> None:
    """A ToolResultPart naming its tool keeps the name in the stored response; once the
    result is in the cached prefix the request holds that stored part itself (no copy made to
    add the name), and reading it back gives the name again. A result without a name, or
    naming another tool, is sent with its call's name all the same."""
    context = Context(GW)
    context.emplace_messages((
        Message(role=Role.user, content="q"),
        Message(role=Role.assistant,
                content=(ToolCallPart(id="c1", name="lookup", arguments={"q": "x"}),)),
        Message(role=Role.user,
                content=(ToolResultPart(call_id="c1", content="found", name="lookup"),)),
        Message(role=Role.user, content="thanks"),
    ))
    stored = context[2]["parts"][0]
    assert stored == response("c1", "found", name="lookup")
    context.request()
    context.emplace_message(Message(role=Role.assistant, content="welcome"))
    sent = context.request()["contents"][2]["parts"]
    assert sent == [stored, {"text": "thanks"}]
    assert sent[0] is stored
    back = context.messages()[2].parts[0]
    assert isinstance(back, ToolResultPart) and back.name == "lookup"
    for named in (None, "other"):
        item = ADAPTER.from_message(
            Message(role=Role.user,
                    content=(ToolResultPart(call_id="c1", content="found", name=named),)))[0]
        contents = ADAPTER.build_request(
            [user({"text": "q"}), model(call("c1", "lookup")), item])["contents"]
        assert contents[2]["parts"] == [response("c1", "found", name="lookup")]


def test_a_result_without_a_name_is_stored_with_its_calls() -> None:
    """Emplaced, a result that does not name its tool takes the name of its call (by id, in the
    same batch or among the last NAME_LOOKBACK items); one that names a tool keeps its own;
    one whose call is further back, or not there, stays without (the request names it all the
    same)."""
    context = Context(GW)
    context.emplace_messages((
        Message(role=Role.user, content="q"),
        Message(role=Role.assistant, content=(
            ToolCallPart(id="a", name="lookup", arguments={}),
            ToolCallPart(id="b", name="fetch", arguments={}),
        )),
        Message(role=Role.user, content=(
            ToolResultPart(call_id="b", content="2"),
            ToolResultPart(call_id="a", content="1", name="mine"),
            ToolResultPart(call_id="zz", content="?"),
        )),
    ))
    names = [p["function_response"].get("name") for p in context[2]["parts"]]
    assert names == ["fetch", "mine", None]
    context.emplace_message(
        Message(role=Role.assistant, content=(ToolCallPart(id="far", name="old", arguments={}),))
    )
    for n in range(NAME_LOOKBACK):
        context.emplace_message(Message(role=Role.user if n % 2 else Role.assistant,
                                        content=f"filler {n}"))
    context.emplace_message(
        Message(role=Role.user, content=(ToolResultPart(call_id="far", content="late"),)))
    assert "name" not in context[-1]["parts"][0]["function_response"]
    moved = context.request()["contents"]
    answers = [p["function_response"] for c in moved for p in c["parts"]
               if "function_response" in p and p["function_response"].get("id") == "far"]
    assert [a["name"] for a in answers] == ["old"]  # named by the request, paired by id
    chat = Context(GatewayType.openai)
    chat.emplace_messages((
        Message(role=Role.assistant,
                content=(ToolCallPart(id="a", name="lookup", arguments={}),)),
        Message(role=Role.user, content=(ToolResultPart(call_id="a", content="1"),)),
    ))
    assert chat[1] == {"content": "1", "role": "tool", "tool_call_id": "a"}


def test_calls_without_ids_pair_by_name_in_call_order() -> None:
    items = [
        user({"text": "q"}),
        model(call(None, "a"), call(None, "b")),
        user(response(None, "rb", name="b"), response(None, "ra", name="a")),
    ]
    assert ADAPTER.build_request(items)["contents"][2] == user(
        response(None, "ra", name="a"), response(None, "rb", name="b")
    )


def test_orphan_calls_and_results() -> None:
    items = [
        user({"text": "q"}, response("gone", "lost")),
        model(call("c1"), call("c2")),
        user(response("c2", "two")),
        model(call("c3")),
    ]
    assert ADAPTER.build_request(items)["contents"] == [
        user({"text": "q"}, {"text": "[tool result gone] lost"}),
        model(call("c1"), call("c2")),
        user(orphan_answer("c1"), response("c2", "two", name="search")),
        model(call("c3")),
        user(orphan_answer("c3")),
    ]


def test_distant_result_moves_up_and_turns_merge() -> None:
    items = [
        user({"text": "q"}),
        model(call("c1")),
        model({"text": "still waiting"}),
        user(response("c1", "late")),
    ]
    assert ADAPTER.build_request(items)["contents"] == [
        user({"text": "q"}),
        model(call("c1")),
        user(response("c1", "late", name="search")),
        model({"text": "still waiting"}),
    ]


def test_empty_request() -> None:
    assert ADAPTER.build_request([]) == {"contents": []}
    check_gemini.validate(ADAPTER.build_request([]))


def test_build_request_is_deterministic_and_does_not_mutate() -> None:
    items = [user({"text": "q"}), model(call("c1")), user(response("c1"))]
    before = copy.deepcopy(items)
    first = ADAPTER.build_request(items)
    assert json.dumps(first) == json.dumps(ADAPTER.build_request(items))
    first["contents"][2]["parts"][0]["function_response"]["name"] = "changed"
    first["contents"][0]["parts"].append({"text": "mutated"})
    assert items == before


# -- validation --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("item", "fragment"),
    [
        ({"role": "bot", "parts": [{"text": "x"}]}, "role"),
        ({"role": "user"}, "parts"),
        ({"role": "user", "parts": []}, "parts"),
        ({"role": "user", "parts": [{"text": "x"}], "extra": 1}, "extra"),
        (user("x"), "object"),  # type: ignore[arg-type]
        (user({"thoughtSignature": SIG, "text": "x"}), "snake_case"),
        (user({"colour": "red"}), "colour"),
        (user({"text": "x", "inline_data": {"mime_type": "a/b", "data": "AAAA"}}), "several"),
        (user({"thought": True}), "no data"),
        (user({"text": "x", "thought_signature": SIG}), "model turn"),
        (model(response("c1")), "user turn"),
        (user(call("c1")), "model turn"),
        (
            {"role": "system", "parts": [{"inline_data": {"mime_type": "a", "data": "AA=="}}]},
            "text",
        ),
        (model({"text": 5}), "string"),
        (user({"text": ""}), "empty text"),
        (model({"text": "x", "thought_signature": "not base64!"}), "base64"),
        (model({"function_call": {"args": {}}}), "name"),
        (model({"function_call": {"name": "f", "args": []}}), "args"),
        (user({"function_response": {"response": {}}}), "'id' or a 'name'"),
        (user({"inline_data": {"data": "AAAA"}}), "mime_type"),
        (user({"file_data": {"mime_type": "image/png"}}), "file_uri"),
    ],
)
def test_invalid_items_are_rejected(item: dict[str, Any], fragment: str) -> None:
    with pytest.raises(InvalidItemError, match=fragment):
        ADAPTER.validate(item)


@pytest.mark.parametrize(
    "item",
    [
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"}]},
        {"role": "tool", "tool_call_id": "c", "content": "x"},
        {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAA", "summary": []},
        model({"type": "redacted_thinking", "data": "abc"}),
    ],
)
def test_items_of_other_gateways_are_mismatches(item: dict[str, Any]) -> None:
    with pytest.raises(GatewayMismatchError):
        ADAPTER.validate(item)


def test_sdk_object_of_another_gateway_is_a_mismatch() -> None:
    from anthropic.types import Message as AnthropicMessage

    reply = AnthropicMessage.model_construct(id="m", content=[], role="assistant", model="x")
    with pytest.raises(GatewayMismatchError):
        ADAPTER.from_output(reply)
    with pytest.raises(InvalidItemError):
        ADAPTER.from_output(3.5)


def test_appends_are_all_or_nothing() -> None:
    context = Context(GW, [user({"text": "hi"})])
    with pytest.raises(InvalidItemError):
        context.extend([model({"text": "fine"}), user({"text": "x", "thought": True})])
    with pytest.raises(InvalidItemError):
        context.push_back([model({"text": "fine"}), {"role": "model", "parts": []}])
    bad = Message(role=Role.user, content=(ToolResultPart(call_id="c", content="x"),))
    with pytest.raises(InvalidItemError):
        context.extend([*ADAPTER.from_message(bad), model(response("c"))])
    assert list(context) == [user({"text": "hi"})]


# -- model output ------------------------------------------------------------------------------

REST_REPLY: dict[str, Any] = {
    "candidates": [
        {
            "content": {
                "role": "model",
                "parts": [
                    {"text": "pondering", "thought": True},
                    {"text": "Looking.", "thoughtSignature": SIG},
                    {
                        "functionCall": {"id": "c1", "name": "lookup", "args": {"camelCase": 1}},
                        "thoughtSignature": SIG,
                    },
                ],
            },
            "finishReason": "STOP",
        }
    ]
}
STORED = model(
    {"text": "pondering", "thought": True},
    {"text": "Looking.", "thought_signature": SIG},
    {
        "function_call": {"id": "c1", "name": "lookup", "args": {"camelCase": 1}},
        "thought_signature": SIG,
    },
)


def test_rest_json_and_sdk_response_read_the_same() -> None:
    from google.genai import types

    assert ADAPTER.from_output(REST_REPLY) == [STORED]
    sdk = types.GenerateContentResponse.model_validate(REST_REPLY)
    read = ADAPTER.from_output(sdk)
    assert read == [STORED]
    assert ADAPTER.from_output(sdk.candidates[0].content) == [STORED]  # type: ignore[index]


def test_json_round_trip_keeps_signatures_byte_identical() -> None:
    context = Context(GW)
    context.emplace_message(Message(role=Role.system, content="sys"))
    context.emplace_message(Message(role=Role.user, content="q"))
    context.push_back(REST_REPLY)
    saved = context.to_json()
    loaded = Context.from_json(saved)
    assert loaded.to_json() == saved
    assert loaded[2]["parts"][1]["thought_signature"] == SIG


def test_signature_only_part_with_empty_text_is_kept() -> None:
    part = {"text": "", "thought_signature": SIG}
    ADAPTER.validate(model(part))
    assert ADAPTER.build_request([user({"text": "q"}), model(part)])["contents"][1] == model(part)


def test_item_text_skips_signatures() -> None:
    out = ADAPTER.item_text(STORED)
    assert "Looking." in out and '"camelCase": 1' in out and SIG not in out


# -- SDK request validation --------------------------------------------------------------------


@given(mixed_steps(check_gemini.outputs()))
def test_requests_from_any_sequence_pass_the_sdk_check(steps: list[list[Any]]) -> None:
    context = Context(GW)
    play(context, steps)
    request = checked_request(context, check_gemini.validate)
    sent = [part for content in request["contents"] for part in content["parts"]]
    for item in context:
        for part in item["parts"]:
            if "thought_signature" in part:
                assert part in sent


@pytest.mark.parametrize(
    "kwargs",
    [
        {"contents": [user({"txt": "typo"})]},
        {"contents": [{"role": "system", "parts": [{"text": "x"}]}]},
        {"contents": [model({"text": "first"})]},
        {"contents": [user({"text": "a"}), user({"text": "b"})]},
        {"contents": [user({"text": "q"}), model(call("c1"))]},
        {"contents": [user({"text": "q"}), model(call("c1")), user({"text": "x"})]},
        {
            "contents": [
                user({"text": "q"}),
                model(call("c1")),
                user({"text": "x"}, response("c1", name="search")),
            ]
        },
        {"contents": [user({"text": "q"}), model(call("c1")), user(response("c1"))]},
        {"contents": [user({"text": "q"}), model(call("c1", "a")), user(response("c1", name="b"))]},
        {"contents": [user({"text": "q", "thought_signature": SIG})]},
        {
            "contents": [user({"text": "q"})],
            "config": {"system_instruction": {"parts": [{"txt": "x"}]}},
        },
        {"contents": [user({"text": "q"})], "model": "m"},
    ],
)
def test_the_sdk_check_rejects_wrong_shapes(kwargs: dict[str, Any]) -> None:
    with pytest.raises((AssertionError, ValueError)):
        check_gemini.validate(kwargs)


def test_request_merges_the_callers_config_object() -> None:
    from google.genai import types

    context = Context(GW)
    context.emplace_message(Message(role=Role.system, content="Be terse."))
    context.emplace_message(Message(role=Role.user, content="hi"))
    mine = types.GenerateContentConfig(temperature=0.5, system_instruction="Travel agent.")
    kwargs = context.request(config=mine)
    merged = kwargs["config"]
    assert isinstance(merged, types.GenerateContentConfig) and merged.temperature == 0.5
    assert merged.system_instruction == types.Content(
        parts=[types.Part(text="Travel agent."), types.Part(text="Be terse.")]
    )
    assert mine.system_instruction == "Travel agent."  # the caller's object is not changed
    assert set(kwargs) == {"contents", "config"}
    assert context.request(config=None)["config"] == {
        "system_instruction": {"parts": [{"text": "Be terse."}]}
    }


def test_parallel_id_less_calls_answered_by_function_name() -> None:
    """Issue 11: three id-less calls of one name (the real shape, signature on the first),
    answered with ToolResultPart(call_id=<function name>): each call gets its own result, in
    order, and nothing turns into an error notice or orphan text."""
    context = Context(GW)
    context.emplace_message(Message(role=Role.user, content="Three topics, please."))
    first = {"functionCall": {"name": "topic", "args": {}}, "thoughtSignature": SIG}
    later = {"functionCall": {"name": "topic", "args": {}}}
    body = {"candidates": [{"content": {"role": "model", "parts": [first, later, later]}}]}
    context.push_back(body)
    answers = tuple(ToolResultPart(call_id="topic", content=t) for t in ("cars", "owls", "tea"))
    context.emplace_message(Message(role=Role.user, content=answers))
    contents = context.request()["contents"]
    assert contents[1]["parts"][0]["thought_signature"] == SIG
    responses = [part["function_response"] for part in contents[2]["parts"]]
    assert responses == [
        {"name": "topic", "response": {"output": text}} for text in ("cars", "owls", "tea")
    ]
    sent = json.dumps(contents)
    assert ORPHAN_CALL_NOTICE not in sent and "[tool result" not in sent
    read = [p for m in context.messages() for p in m.parts if isinstance(p, ToolCallPart)]
    assert [call.id for call in read] == ["topic#1", "topic#2", "topic#3"]
