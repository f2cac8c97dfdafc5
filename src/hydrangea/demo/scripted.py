"""A deterministic, offline stand-in for a model, speaking each gateway's native output.

For every call it returns the provider's own response body (what the REST API would send),
including reasoning state where the provider has it: an Anthropic ``thinking`` block with its
``signature``, an OpenAI Responses ``reasoning`` item with ``encrypted_content``, a Gemini part with
a ``thoughtSignature``. The values are derived from a hash of (gateway, turn, call), so every run
is identical and every value is distinct.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from typing import Any, assert_never

from hydrangea.demo.scenario import TurnSpec
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, TextPart, ToolCallPart
from hydrangea.providers.native import NativeContent

__all__ = ["ModelReply", "ReasoningState", "ScriptedModel"]


@dataclass(frozen=True, slots=True)
class ReasoningState:
    """One piece of reasoning state in a model output: which field, and its exact value."""

    field: str
    value: str


@dataclass(frozen=True, slots=True)
class ModelReply:
    """What a model call gave: the output to ``push_back``, and a generic message to route.

    ``message`` is ``None`` when the caller has to derive it from the pushed items (live runs).
    ``native`` is the raw JSON body for the report, when there is one.
    """

    output: object
    message: Message | None
    reasoning: tuple[ReasoningState, ...]
    native: NativeContent | None


def _token(*parts: object, size: int = 48) -> str:
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    while len(digest) < size:
        digest += hashlib.sha256(digest).digest()
    return base64.b64encode(digest[:size]).decode("ascii")


class ScriptedModel:
    """Answers the scenario's turns for one gateway, without network or key."""

    name = "scripted"

    def __init__(self, gateway: GatewayType) -> None:
        """Speak ``gateway``'s native output."""
        self._gateway = gateway

    def reply(self, spec: TurnSpec, call: int, kwargs: dict[str, Any]) -> ModelReply:
        """The output for ``call`` (1-based) of ``spec``'s turn: tool calls first (if the turn
        has any), then the answer. ``kwargs`` (the request) is not needed by the script."""
        _ = kwargs
        calls: tuple[ToolCallPart, ...] = ()
        if call == 1 and spec.tool_calls:
            calls = tuple(
                ToolCallPart(id=f"call_{spec.turn}_{n}", name=c.name, arguments=dict(c.arguments))
                for n, c in enumerate(spec.tool_calls, start=1)
            )
        text = "" if calls else spec.answer
        thought = f"{spec.thought} (turn {spec.turn}, call {call})"
        secret = _token(self._gateway.value, spec.turn, call)
        message = Message(
            role=Role.assistant,
            content=calls if calls else (TextPart(text=text),),
        )
        native, reasoning = self._native(
            spec.turn, call, text=text, thought=thought, secret=secret, calls=calls
        )
        return ModelReply(output=native, message=message, reasoning=reasoning, native=native)

    def _native(
        self,
        turn: int,
        call: int,
        *,
        text: str,
        thought: str,
        secret: str,
        calls: tuple[ToolCallPart, ...],
    ) -> tuple[NativeContent, tuple[ReasoningState, ...]]:
        tag = f"{turn}_{call}"
        match self._gateway:
            case GatewayType.openai:
                message: dict[str, Any] = {"role": "assistant", "content": text or None}
                if calls:
                    message["tool_calls"] = [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                        }
                        for c in calls
                    ]
                body: NativeContent = {
                    "id": f"chatcmpl-demo-{tag}",
                    "object": "chat.completion",
                    "model": "scripted-demo",
                    "choices": [
                        {
                            "index": 0,
                            "message": message,
                            "finish_reason": "tool_calls" if calls else "stop",
                        }
                    ],
                }
                return body, ()
            case GatewayType.openai_responses:
                output: list[dict[str, Any]] = [
                    {
                        "type": "reasoning",
                        "id": f"rs_demo_{tag}",
                        "summary": [{"type": "summary_text", "text": thought}],
                        "encrypted_content": secret,
                    }
                ]
                if calls:
                    output.extend(
                        {
                            "type": "function_call",
                            "id": f"fc_demo_{tag}_{n}",
                            "call_id": c.id,
                            "name": c.name,
                            "arguments": json.dumps(c.arguments),
                            "status": "completed",
                        }
                        for n, c in enumerate(calls, start=1)
                    )
                else:
                    output.append(
                        {
                            "type": "message",
                            "id": f"msg_demo_{tag}",
                            "role": "assistant",
                            "status": "completed",
                            "content": [{"type": "output_text", "text": text, "annotations": []}],
                        }
                    )
                body = {
                    "id": f"resp_demo_{tag}",
                    "object": "response",
                    "model": "scripted-demo",
                    "status": "completed",
                    "output": output,
                }
                return body, (ReasoningState("encrypted_content", secret),)
            case GatewayType.anthropic:
                blocks: list[dict[str, Any]] = [
                    {"type": "thinking", "thinking": thought, "signature": secret}
                ]
                if calls:
                    blocks.extend(
                        {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
                        for c in calls
                    )
                else:
                    blocks.append({"type": "text", "text": text})
                body = {
                    "id": f"msg_demo_{tag}",
                    "type": "message",
                    "role": "assistant",
                    "model": "scripted-demo",
                    "content": blocks,
                    "stop_reason": "tool_use" if calls else "end_turn",
                }
                return body, (ReasoningState("signature", secret),)
            case GatewayType.gemini:
                parts: list[dict[str, Any]]
                if calls:
                    parts = [
                        {"functionCall": {"id": c.id, "name": c.name, "args": c.arguments}}
                        for c in calls
                    ]
                else:
                    parts = [{"text": text}]
                parts[0]["thoughtSignature"] = secret
                body = {
                    "candidates": [
                        {
                            "index": 0,
                            "content": {"role": "model", "parts": parts},
                            "finishReason": "STOP",
                        }
                    ],
                    "modelVersion": "scripted-demo",
                }
                return body, (ReasoningState("thought_signature", secret),)
            case _:
                assert_never(self._gateway)
