"""End to end through the real anthropic client against a local capture server."""

from __future__ import annotations

from typing import Any

from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, ToolResultPart
from hydrangea.providers.anthropic.caching import strip_cache_control
from tests.support import check_anthropic
from tests.support.capture_server import capture_server

SIGNATURE = "EqQBCkYIAxgCIkBz+/9Qx0=\u00e9\\n"
REDACTED_DATA = "EmwKAhgBEgy3va3pzix/LafPsn4a+Zz=="
THINKING_TEXT = 'The user wants a lookup.\nI\'ll call the tool. 🌸 "quoted"'

REPLY: dict[str, Any] = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": "claude-test",
    "content": [
        {"type": "thinking", "thinking": THINKING_TEXT, "signature": SIGNATURE},
        {"type": "redacted_thinking", "data": REDACTED_DATA},
        {"type": "text", "text": "Looking it up."},
        {"type": "tool_use", "id": "toolu_01", "name": "lookup", "input": {"q": "hydrangea"}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 20},
}
FINAL: dict[str, Any] = {
    **REPLY,
    "id": "msg_02",
    "content": [{"type": "text", "text": "Done."}],
    "stop_reason": "end_turn",
}


def test_round_trip_through_the_anthropic_sdk() -> None:
    import anthropic

    context = Context(GatewayType.anthropic)
    context.emplace_message(Message(role=Role.system, content="You are terse."))
    context.emplace_message(Message(role=Role.user, content="Look up hydrangea."))

    with capture_server([(200, REPLY), (200, FINAL)]) as server:
        client = anthropic.Anthropic(api_key="test", base_url=server.base_url, max_retries=0)
        first_request = context.request()
        check_anthropic.validate(first_request)
        response = client.messages.create(model="claude-test", max_tokens=64, **first_request)

        first = server.captured[0]
        assert first.path == "/v1/messages"
        assert context[0] == {"role": "system", "content": "You are terse."}
        assert strip_cache_control(first.body["messages"]) == list(context)[1:]
        # the default breakpoint sits on the last block of the stable history
        assert first.body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
        assert first.body["system"] == [{"type": "text", "text": "You are terse."}]
        assert set(first.body) == {"model", "max_tokens", "messages", "system"}

        context.push_back(response)
        context.emplace_message(
            Message(
                role=Role.user, content=(ToolResultPart(call_id="toolu_01", content="a shrub"),)
            )
        )
        reloaded = Context.from_json(context.to_json())
        second_request = reloaded.request()
        check_anthropic.validate(second_request)
        client.messages.create(model="claude-test", max_tokens=64, **second_request)

    second = server.captured[1]
    assert strip_cache_control(second.body["messages"]) == list(context)[1:]
    sent_turn = second.body["messages"][1]
    assert sent_turn == {"role": "assistant", "content": REPLY["content"]}
    thinking, redacted = sent_turn["content"][0], sent_turn["content"][1]
    assert thinking["signature"] == SIGNATURE
    assert thinking["thinking"] == THINKING_TEXT
    assert redacted["data"] == REDACTED_DATA
    assert second.body["messages"][2]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_01",
        "content": "a shrub",
        "cache_control": {"type": "ephemeral"},
    }
