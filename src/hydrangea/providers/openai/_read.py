"""Reading OpenAI items (Chat messages, Responses items) back as generic Messages."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hydrangea.message import ImagePart, Message, Part, Role, TextPart, ToolCallPart, ToolResultPart
from hydrangea.providers.native import NativeContent
from hydrangea.providers.openai._common import TOOL_ERROR_PREFIX
from hydrangea.providers.pairing import stable_call_id

__all__ = ["RAW_ARGUMENTS_KEY", "read_chat_message", "read_responses_item"]

RAW_ARGUMENTS_KEY = "_raw_arguments"
"""The one key of the arguments of a tool call read back whose arguments were not a JSON object
(the model wrote invalid JSON, or a custom tool's free-form input): it holds the text as sent."""


def _arguments(text: object) -> dict[str, Any]:
    if isinstance(text, str):
        try:
            value = json.loads(text)
        except ValueError:
            return {RAW_ARGUMENTS_KEY: text}
        if isinstance(value, dict):
            return value
    return {RAW_ARGUMENTS_KEY: text if isinstance(text, str) else json.dumps(text)}


def _texts(content: object) -> list[str]:
    if isinstance(content, str):
        return [content] if content else []
    found: list[str] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        for key in ("text", "refusal"):
            if isinstance(part.get(key), str) and part[key]:
                found.append(part[key])
                break
    return found


def _user_parts(content: object) -> list[Part]:
    if isinstance(content, str):
        return [TextPart(text=content)] if content else []
    parts: list[Part] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in ("text", "input_text") and isinstance(part.get("text"), str) and part["text"]:
            parts.append(TextPart(text=part["text"]))
        elif kind == "image_url" and isinstance(part.get("image_url"), dict):
            url = part["image_url"].get("url")
            if isinstance(url, str) and url:
                parts.append(ImagePart(url=url))
        elif kind == "input_image" and isinstance(part.get("image_url"), str):
            parts.append(ImagePart(url=part["image_url"]))
    return parts


def _result(call_id: str, output: object) -> Message:
    text = "\n".join(_texts(output)) if not isinstance(output, str) else output
    error = text.startswith(TOOL_ERROR_PREFIX)
    content = text.removeprefix(TOOL_ERROR_PREFIX) if error else text
    return Message(
        role=Role.user, content=(ToolResultPart(call_id=call_id, content=content, is_error=error),)
    )


def _message(
    role: object, content: object, calls: list[ToolCallPart] | None = None
) -> list[Message]:
    if role in ("system", "developer"):
        text = "\n".join(_texts(content))
        return [Message(role=Role.system, content=text)] if text else []
    if role == "user":
        parts = _user_parts(content)
        return [Message(role=Role.user, content=tuple(parts))] if parts else []
    if role == "assistant":
        found: list[Part] = [TextPart(text=text) for text in _texts(content)]
        found.extend(calls or [])
        return [Message(role=Role.assistant, content=tuple(found))] if found else []
    return []


def read_chat_message(item: NativeContent, ids: Mapping[int, str] | None = None) -> list[Message]:
    """A chat message as Messages (a ``tool`` message reads as a user tool result). A tool call
    with the empty id takes its stable id from ``ids`` (by its slot in ``tool_calls``; the
    history-wide ids), else the one it has in this message alone."""
    role = item.get("role")
    if role == "tool":
        return [_result(str(item["tool_call_id"]), item.get("content", ""))]
    calls: list[ToolCallPart] = []
    local: dict[str, int] = {}
    for slot, call in enumerate(item.get("tool_calls") or [] if role == "assistant" else []):
        kind = call.get("type", "function")
        body = call.get(kind, {})
        raw = body.get("arguments") if kind == "function" else body.get("input")
        ident = call["id"]
        if not ident:
            local[body["name"]] = local.get(body["name"], 0) + 1
            ident = (ids or {}).get(slot) or stable_call_id(body["name"], local[body["name"]])
        calls.append(ToolCallPart(id=ident, name=body["name"], arguments=_arguments(raw)))
    return _message(role, item.get("content"), calls)


def read_responses_item(item: NativeContent) -> list[Message]:
    """A Responses input item as Messages; reasoning and built-in tool items give ``[]``."""
    kind = item.get("type", "message")
    if kind == "message":
        return _message(item.get("role"), item.get("content"))
    if kind == "function_call":
        call = ToolCallPart(
            id=item["call_id"], name=item["name"], arguments=_arguments(item.get("arguments"))
        )
        return [Message(role=Role.assistant, content=(call,))]
    if kind == "custom_tool_call":
        call = ToolCallPart(
            id=item["call_id"],
            name=item["name"],
            arguments={RAW_ARGUMENTS_KEY: item.get("input", "")},
        )
        return [Message(role=Role.assistant, content=(call,))]
    if kind in ("function_call_output", "custom_tool_call_output"):
        return [_result(str(item["call_id"]), item.get("output", ""))]
    return []
