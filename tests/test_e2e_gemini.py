"""End to end through the real google-genai client against a local capture server.

google-genai turns a base64 ``thought_signature`` into bytes when it validates the request and
writes those bytes back out in URL-safe base64. So the wire text of a signature whose standard
base64 contains ``+`` or ``/`` differs in those characters while the bytes are identical; a
signature without them goes out as the very same text. Both cases are asserted below.
"""

from __future__ import annotations

import base64
from typing import Any

from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, ToolResultPart
from tests.support import check_gemini
from tests.support.capture_server import capture_server

SIG_PLAIN = base64.b64encode(b"signature-without-plus-or-slash!!").decode()
SIG_SPECIAL = base64.b64encode(bytes([0xFB, 0xEF, 0xFF, 0x3E, 0x3F]) * 7).decode()

REPLY: dict[str, Any] = {
    "candidates": [
        {
            "content": {
                "role": "model",
                "parts": [
                    {"text": "Thinking about hydrangeas.", "thought": True},
                    {"text": "Let me look.", "thoughtSignature": SIG_PLAIN},
                    {
                        "functionCall": {
                            "id": "call_1",
                            "name": "lookup",
                            "args": {"q": "hydrangea"},
                        },
                        "thoughtSignature": SIG_SPECIAL,
                    },
                ],
            },
            "finishReason": "STOP",
        }
    ],
    "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 7},
}
FINAL: dict[str, Any] = {
    "candidates": [
        {"content": {"role": "model", "parts": [{"text": "Done."}]}, "finishReason": "STOP"}
    ]
}

_WIRE_KEYS = {
    "thought_signature": "thoughtSignature",
    "function_call": "functionCall",
    "function_response": "functionResponse",
    "inline_data": "inlineData",
    "file_data": "fileData",
    "mime_type": "mimeType",
    "file_uri": "fileUri",
}


def wire(contents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The request contents as google-genai puts them on the wire (camelCase, URL-safe bytes)."""
    out = []
    for content in contents:
        parts = []
        for part in content["parts"]:
            sent: dict[str, Any] = {}
            for key, stored in part.items():
                value = stored
                if key == "thought_signature":
                    value = base64.urlsafe_b64encode(base64.b64decode(stored)).decode()
                elif key in {"inline_data", "file_data"}:
                    value = {_WIRE_KEYS.get(k, k): v for k, v in stored.items()}
                sent[_WIRE_KEYS.get(key, key)] = value
            parts.append(sent)
        out.append({"parts": parts, "role": content["role"]})
    return out


def signature_bytes(text: str) -> bytes:
    return base64.urlsafe_b64decode(text.replace("+", "-").replace("/", "_"))


def test_round_trip_through_the_genai_sdk() -> None:
    from google import genai
    from google.genai import types

    context = Context(GatewayType.gemini)
    context.emplace_message(Message(role=Role.system, content="You are terse."))
    context.emplace_message(Message(role=Role.user, content="Look up hydrangea."))

    with capture_server([(200, REPLY), (200, FINAL)]) as server:
        options = types.HttpOptions(
            base_url=server.base_url, retry_options=types.HttpRetryOptions(attempts=1)
        )
        client = genai.Client(api_key="test", http_options=options)
        first_request = context.request()
        check_gemini.validate(first_request)
        response = client.models.generate_content(model="gemini-test", **first_request)

        first = server.captured[0]
        assert first.path.endswith("/models/gemini-test:generateContent")
        assert first.body["contents"] == wire(list(context)[1:])
        assert first.body["contents"] == [
            {"parts": [{"text": "Look up hydrangea."}], "role": "user"}
        ]
        assert first.body["systemInstruction"] == {"parts": [{"text": "You are terse."}]}

        context.push_back(response)
        stored = context[2]["parts"]
        assert stored[1]["thought_signature"] == SIG_PLAIN
        assert stored[2]["thought_signature"] == SIG_SPECIAL
        context.emplace_message(
            Message(role=Role.user, content=(ToolResultPart(call_id="call_1", content="a shrub"),))
        )
        reloaded = Context.from_json(context.to_json())
        second_request = reloaded.request()
        check_gemini.validate(second_request)
        client.models.generate_content(model="gemini-test", **second_request)

    sent = server.captured[1].body["contents"]
    assert sent == wire(second_request["contents"])
    canned = REPLY["candidates"][0]["content"]
    model_turn = sent[1]
    assert model_turn["role"] == "model"
    assert model_turn["parts"][0] == canned["parts"][0]
    assert model_turn["parts"][1]["text"] == "Let me look."
    assert model_turn["parts"][1]["thoughtSignature"] == SIG_PLAIN
    assert model_turn["parts"][2]["functionCall"] == canned["parts"][2]["functionCall"]
    assert signature_bytes(model_turn["parts"][2]["thoughtSignature"]) == base64.b64decode(
        SIG_SPECIAL
    )
    assert sent[2] == {
        "parts": [
            {
                "functionResponse": {
                    "id": "call_1",
                    "name": "lookup",
                    "response": {"output": "a shrub"},
                }
            }
        ],
        "role": "user",
    }
