"""An async agent loop on all four gateways, through the real SDKs' async clients.

Each run: a CoopContext with an async area (an inbox that awaits before it renders) and a
ToolLoopArea with one async and one sync FunctionTool; a Lifecycle over it with a sticky
reminder; ``await lifecycle.arender()`` every model call; the tools declared with
``loop.with_tools``; the SDK's async client posts to a scripted server on 127.0.0.1. The model
first calls a tool with arguments that do not fit its schema (it gets an error result and tries
again), then calls it properly, then answers. The test reads what each SDK put on the wire.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any, assert_never

import pytest

from hydrangea.areas import ToolLoopArea
from hydrangea.context import Context, NativeContent
from hydrangea.context.area import AreaFlowState, AreaLifeState
from hydrangea.coop import CoopContext
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle
from hydrangea.message import Message, Role, TextPart, ToolCallPart
from hydrangea.tools import tool, unfence_tool_output
from tests.support.capture_server import capture_server

Call = tuple[str, str, dict[str, Any]]
Turn = list[Call] | str

SCRIPT: list[Turn] = [
    [("call_1", "weather", {"town": "Kyoto"}), ("call_2", "to_fahrenheit", {"celsius": 18})],
    [("call_3", "weather", {"city": "Kyoto"})],
    "Kyoto: rain, 18°C (64.4°F).",
]


@tool
async def weather(city: str) -> dict[str, Any]:
    """Today's forecast for one city.

    Args:
        city: The city, in English.
    """
    await asyncio.sleep(0)
    return {"city": city, "sky": "rain", "celsius": 18}


@tool
def to_fahrenheit(celsius: float) -> float:
    """Convert a temperature.

    Args:
        celsius: Degrees Celsius.
    """
    return round(celsius * 9 / 5 + 32, 1)


class AsyncInbox:
    """An async area: user turns that arrive from elsewhere, rendered after an await."""

    def __init__(self) -> None:
        self.queue: list[str] = []
        self.life_state = AreaLifeState.retain
        self.flow_state = AreaFlowState.yielded
        self.observed = 0

    async def observe(self, context: Sequence[NativeContent]) -> None:
        await asyncio.sleep(0)
        self.observed += 1

    async def render(self) -> list[Message]:
        await asyncio.sleep(0)
        out = [Message(role=Role.user, content=text) for text in self.queue]
        self.queue = []
        return out

    async def promote(self) -> tuple[Message, ...]:
        return ()

    async def gc_prologue(self) -> None:
        return None


# -- scripted provider replies, in each API's wire JSON ----------------------------------------


def _reply(gateway: GatewayType, turn: Turn) -> dict[str, Any]:
    match gateway:
        case GatewayType.openai:
            message: dict[str, Any] = {"role": "assistant", "content": None}
            if isinstance(turn, str):
                message["content"] = turn
            else:
                message["tool_calls"] = [
                    {
                        "id": i,
                        "type": "function",
                        "function": {"name": n, "arguments": json.dumps(a)},
                    }
                    for i, n, a in turn
                ]
            return {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 1,
                "model": "gpt-test",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop" if isinstance(turn, str) else "tool_calls",
                        "message": message,
                    }
                ],
            }
        case GatewayType.openai_responses:
            if isinstance(turn, str):
                output: list[dict[str, Any]] = [
                    {
                        "type": "message",
                        "id": "msg_1",
                        "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": turn, "annotations": []}],
                    }
                ]
            else:
                output = [
                    {
                        "type": "function_call",
                        "id": f"fc_{i}",
                        "call_id": i,
                        "name": n,
                        "arguments": json.dumps(a),
                        "status": "completed",
                    }
                    for i, n, a in turn
                ]
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
        case GatewayType.anthropic:
            if isinstance(turn, str):
                content: list[dict[str, Any]] = [{"type": "text", "text": turn}]
            else:
                content = [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in turn]
            return {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-test",
                "content": content,
                "stop_reason": "end_turn" if isinstance(turn, str) else "tool_use",
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 5},
            }
        case GatewayType.gemini:
            if isinstance(turn, str):
                parts: list[dict[str, Any]] = [{"text": turn}]
            else:
                parts = [{"functionCall": {"id": i, "name": n, "args": a}} for i, n, a in turn]
            return {
                "candidates": [
                    {"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}
                ],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5},
            }
        case _:
            assert_never(gateway)


# -- the SDKs' async clients -------------------------------------------------------------------


async def _call(gateway: GatewayType, base_url: str, kwargs: dict[str, Any]) -> Any:
    match gateway:
        case GatewayType.openai | GatewayType.openai_responses:
            import openai

            client = openai.AsyncOpenAI(api_key="test", base_url=base_url + "/v1", max_retries=0)
            async with client:
                if gateway is GatewayType.openai:
                    return await client.chat.completions.create(model="gpt-test", **kwargs)
                return await client.responses.create(model="gpt-test", **kwargs)
        case GatewayType.anthropic:
            import anthropic

            aclient = anthropic.AsyncAnthropic(api_key="test", base_url=base_url, max_retries=0)
            async with aclient:
                return await aclient.messages.create(model="claude-test", max_tokens=256, **kwargs)
        case GatewayType.gemini:
            from google import genai
            from google.genai import types

            options = types.HttpOptions(
                base_url=base_url, retry_options=types.HttpRetryOptions(attempts=1)
            )
            gclient = genai.Client(api_key="test", http_options=options)
            return await gclient.aio.models.generate_content(model="gemini-test", **kwargs)
        case _:
            assert_never(gateway)


def _reply_message(gateway: GatewayType, response: Any) -> Message:
    """The SDK response as a generic Message (text and tool calls) to route to the loop."""
    calls: list[ToolCallPart] = []
    texts: list[str] = []
    match gateway:
        case GatewayType.openai:
            message = response.choices[0].message
            for call in message.tool_calls or ():
                calls.append(
                    ToolCallPart(
                        id=call.id,
                        name=call.function.name,
                        arguments=json.loads(call.function.arguments),
                    )
                )
            texts.extend([message.content] if message.content else [])
        case GatewayType.openai_responses:
            for item in response.output:
                if item.type == "function_call":
                    calls.append(
                        ToolCallPart(
                            id=item.call_id, name=item.name, arguments=json.loads(item.arguments)
                        )
                    )
            texts.extend([response.output_text] if response.output_text else [])
        case GatewayType.anthropic:
            for block in response.content:
                if block.type == "tool_use":
                    calls.append(ToolCallPart(id=block.id, name=block.name, arguments=block.input))
                elif block.type == "text":
                    texts.append(block.text)
        case GatewayType.gemini:
            for fc in response.function_calls or ():
                calls.append(
                    ToolCallPart(id=fc.id or fc.name, name=fc.name, arguments=fc.args or {})
                )
            if not calls:
                texts.append(response.text)
        case _:
            assert_never(gateway)
    return Message(role=Role.assistant, content=(*(TextPart(text=t) for t in texts), *calls))


# -- what went over the wire -------------------------------------------------------------------


def _declared(gateway: GatewayType, body: dict[str, Any]) -> dict[str, Any]:
    """Tool name -> the JSON schema its parameters were declared with, as sent."""
    match gateway:
        case GatewayType.openai:
            return {t["function"]["name"]: t["function"]["parameters"] for t in body["tools"]}
        case GatewayType.openai_responses:
            return {t["name"]: t["parameters"] for t in body["tools"]}
        case GatewayType.anthropic:
            return {t["name"]: t["input_schema"] for t in body["tools"]}
        case GatewayType.gemini:
            (entry,) = body["tools"]
            # google-genai passes dict declarations through with their snake_case keys, which
            # the API's proto JSON parser accepts as well as camelCase
            return {
                f["name"]: f.get("parametersJsonSchema", f.get("parameters_json_schema"))
                for f in entry["functionDeclarations"]
            }
        case _:
            assert_never(gateway)


def _marked(text: str) -> tuple[str, bool]:
    """OpenAI has no error flag on tool results: the adapter marks the text instead."""
    marker = "[tool error] "
    return (text.removeprefix(marker), text.startswith(marker))


def _results(gateway: GatewayType, body: dict[str, Any]) -> dict[str, tuple[str, bool]]:
    """Call id -> (result text, is error) of every tool result in a request body."""
    out: dict[str, tuple[str, bool]] = {}
    match gateway:
        case GatewayType.openai:
            for m in body["messages"]:
                if m["role"] == "tool":
                    out[m["tool_call_id"]] = _marked(m["content"])
        case GatewayType.openai_responses:
            for item in body["input"]:
                if item.get("type") == "function_call_output":
                    out[item["call_id"]] = _marked(item["output"])
        case GatewayType.anthropic:
            for m in body["messages"]:
                for block in m["content"] if isinstance(m["content"], list) else ():
                    if block.get("type") == "tool_result":
                        content = block["content"]
                        text = content if isinstance(content, str) else content[0]["text"]
                        out[block["tool_use_id"]] = (text, bool(block.get("is_error")))
        case GatewayType.gemini:
            for content in body["contents"]:
                for part in content["parts"]:
                    if "functionResponse" in part:
                        fr = part["functionResponse"]
                        response = fr["response"]
                        error = "error" in response
                        text = response["error"] if error else response["output"]
                        out[fr["id"]] = (text if isinstance(text, str) else json.dumps(text), error)
        case _:
            assert_never(gateway)
    # every result reached its slot fenced as untrusted data; recovered exactly here
    return {key: (unfence_tool_output(text), error) for key, (text, error) in out.items()}


async def _agent(gateway: GatewayType, base_url: str) -> tuple[ToolLoopArea, AsyncInbox, Lifecycle]:
    context = Context(gateway)
    context.emplace_message(Message(role=Role.system, content="Use the tools, then answer."))
    coop = CoopContext(context)
    inbox = AsyncInbox()
    coop.register(inbox)
    lifecycle = Lifecycle(coop)
    lifecycle.add(Component("Reminder: give both units.", ttl=1, cadence=1))
    inbox.queue.append("What's the weather in Kyoto?")
    loop = ToolLoopArea([weather, to_fahrenheit], anchor=inbox)
    coop.register(loop)
    while not loop.answered:
        request = await lifecycle.arender()
        response = await _call(gateway, base_url, loop.with_tools(request.kwargs, gateway))
        context.push_back(response)
        await loop.aroute(_reply_message(gateway, response))
    return loop, inbox, lifecycle


@pytest.mark.parametrize("gateway", list(GatewayType))
def test_async_agent_loop_through_the_async_sdk_client(gateway: GatewayType) -> None:
    replies = [(200, _reply(gateway, turn)) for turn in SCRIPT]
    with capture_server(replies) as server:
        loop, inbox, lifecycle = asyncio.run(_agent(gateway, server.base_url))
    bodies = [c.body for c in server.captured]
    assert len(bodies) == 3 and loop.answered and loop.rounds == 2
    assert lifecycle.episode == 2 and inbox.observed >= 1

    # every request declared both tools with the schema derived from the functions
    for body in bodies:
        declared = _declared(gateway, body)
        assert declared["weather"]["required"] == ["city"]
        assert declared["weather"]["properties"]["city"]["description"] == "The city, in English."
        assert declared["to_fahrenheit"]["properties"]["celsius"]["type"] == "number"

    # the bad arguments came back to the model as an error result, not as an exception
    second = _results(gateway, bodies[1])
    text, error = second["call_1"]
    assert error and "invalid arguments for tool 'weather'" in text
    assert "town: not a parameter of this tool" in text and "city: Field required" in text
    assert second["call_2"] == ("64.4", False)

    # the corrected call ran the async tool; its JSON result reached the model
    third = _results(gateway, bodies[2])
    assert json.loads(third["call_3"][0]) == {"city": "Kyoto", "sky": "rain", "celsius": 18}
    assert not third["call_3"][1]
    assert [(r.name, r.is_error) for r in loop.runs] == [
        ("weather", True),
        ("to_fahrenheit", False),
        ("weather", False),
    ]
    # the inbox's user turn and the sticky reminder are in every request
    for body in bodies:
        sent = json.dumps(body, ensure_ascii=False)
        assert "What's the weather in Kyoto?" in sent and "Reminder: give both units." in sent
