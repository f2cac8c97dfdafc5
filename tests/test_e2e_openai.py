"""End to end through the real ``openai`` SDK against a local capture server (127.0.0.1 only)."""

from __future__ import annotations

import copy
from typing import Any

from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.message import ImagePart, Message, Role, TextPart, ToolCallPart, ToolResultPart
from tests.support.capture_server import capture_server
from tests.support.check_openai import validate_chat, validate_responses

ENCRYPTED = 'gAAAAABo\u00e9\u2603+/=\\"quoted" \U0001f600 end'
"""Opaque reasoning state with characters JSON must escape, to test byte identity."""


def _conversation(context: Context) -> None:
    context.emplace_messages(
        [
            Message(role=Role.system, content="You are terse."),
            Message(
                role=Role.user,
                content=(
                    TextPart(text="What is on this picture?"),
                    ImagePart(data=b"\x89PNG\r\n", media_type="image/png"),
                ),
            ),
            Message(
                role=Role.assistant,
                content=(ToolCallPart(id="call_a", name="zoom", arguments={"factor": 2}),),
            ),
            Message(role=Role.user, content=(ToolResultPart(call_id="call_a", content="a cat"),)),
            Message(role=Role.system, content="Answer in one word."),
        ]
    )


def _client(base_url: str) -> Any:
    import openai

    return openai.OpenAI(api_key="test", base_url=base_url + "/v1", max_retries=0)


CHAT_REPLY: dict[str, Any] = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-test",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "logprobs": None,
            "message": {
                "role": "assistant",
                "content": "Checking.",
                "refusal": None,
                "annotations": [],
                "tool_calls": [
                    {
                        "id": "call_b",
                        "type": "function",
                        "function": {"name": "look", "arguments": '{"where": "\\u00e9"}'},
                    }
                ],
            },
        }
    ],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}


def test_chat_completions_round_trip() -> None:
    context = Context(GatewayType.openai)
    _conversation(context)
    with capture_server([(200, CHAT_REPLY), (200, CHAT_REPLY)]) as server:
        client = _client(server.base_url)
        request = context.request()
        validate_chat(request)
        completion = client.chat.completions.create(model="gpt-test", **request)
        first = server.captured[0]
        assert first.path == "/v1/chat/completions"
        assert first.body["model"] == "gpt-test"
        assert first.body["messages"] == list(context)

        context.push_back(completion)
        second_request = context.request()
        validate_chat(second_request)
        client.chat.completions.create(model="gpt-test", **second_request)
        sent = server.captured[1].body["messages"]

    reply_message = CHAT_REPLY["choices"][0]["message"]
    assert sent[: len(first.body["messages"])] == first.body["messages"]
    last_call = next(m for m in sent if m.get("content") == "Checking.")
    assert last_call["tool_calls"] == reply_message["tool_calls"]
    # the unanswered call of the reply is closed by the builder's notice, not left dangling
    assert sent[-1]["role"] == "tool" and sent[-1]["tool_call_id"] == "call_b"


def _response_reply(output: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": "gpt-test",
        "status": "completed",
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "output": output,
    }


REASONING_ITEM: dict[str, Any] = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "Looking closer."}],
    "encrypted_content": ENCRYPTED,
}
RESPONSES_REPLY = _response_reply(
    [
        REASONING_ITEM,
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_b",
            "name": "look",
            "arguments": '{"where":"here"}',
            "status": "completed",
        },
    ]
)
FINAL_REPLY = _response_reply(
    [
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Cat.", "annotations": []}],
        }
    ]
)


def test_responses_round_trip_keeps_encrypted_reasoning() -> None:
    context = Context(GatewayType.openai_responses)
    _conversation(context)
    replies = [(200, RESPONSES_REPLY), (200, FINAL_REPLY), (200, FINAL_REPLY)]
    with capture_server(copy.deepcopy(replies)) as server:
        client = _client(server.base_url)
        request = context.request()
        validate_responses(request)
        response = client.responses.create(
            model="gpt-test", store=False, include=["reasoning.encrypted_content"], **request
        )
        first = server.captured[0]
        assert first.path == "/v1/responses"
        assert first.body["input"] == list(context)
        assert first.body["store"] is False

        context.push_back(response)
        context.emplace_message(
            Message(role=Role.user, content=(ToolResultPart(call_id="call_b", content="here"),))
        )
        client.responses.create(model="gpt-test", **context.request())
        second = server.captured[1].body["input"]

        restored = Context.from_json(context.to_json())
        client.responses.create(model="gpt-test", **restored.request())
        third = server.captured[2].body["input"]

    reasoning = [item for item in second if item.get("type") == "reasoning"]
    assert reasoning == [REASONING_ITEM]
    assert reasoning[0]["encrypted_content"] == ENCRYPTED
    assert second[: len(first.body["input"])] == first.body["input"]
    assert second[-1] == {"type": "function_call_output", "call_id": "call_b", "output": "here"}
    assert third == second
