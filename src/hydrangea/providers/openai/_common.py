"""Helpers shared by the two OpenAI adapters (Chat Completions and Responses).

Nothing here imports the ``openai`` SDK; SDK objects are read in :mod:`._intake`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

from hydrangea.errors import InvalidItemError, UnsupportedContentError
from hydrangea.message import ImagePart, Message, TextPart, ToolCallPart, ToolResultPart
from hydrangea.providers._output import dict_entries
from hydrangea.providers.native import NativeContent

__all__ = [
    "TOOL_ERROR_PREFIX",
    "arguments_json",
    "foreign_block_type",
    "image_url",
    "orphan_result_text",
    "output_entries",
    "require_str",
    "split_assistant_parts",
    "split_user_parts",
    "tool_result_text",
]

TOOL_ERROR_PREFIX = "[tool error] "
"""Prefix marking a failed tool result: OpenAI has no error flag on tool results."""


def arguments_json(part: ToolCallPart) -> str:
    """The tool call's arguments as the JSON string OpenAI expects (compact, key order kept)."""
    return json.dumps(part.arguments, ensure_ascii=False, separators=(",", ":"))


def image_url(part: ImagePart) -> str:
    """The image's URL, or a base64 ``data:`` URL for an image given as bytes."""
    if part.url is not None:
        return part.url
    assert part.data is not None and part.media_type is not None  # ImagePart guarantees it
    encoded = base64.b64encode(part.data).decode("ascii")
    return f"data:{part.media_type};base64,{encoded}"


def tool_result_text(part: ToolResultPart) -> str:
    """The tool result's content, prefixed with :data:`TOOL_ERROR_PREFIX` if it is an error."""
    return TOOL_ERROR_PREFIX + part.content if part.is_error else part.content


def orphan_result_text(call_id: str, content: object) -> str:
    """Plain text standing in for a tool result whose call is not in the request.

    ``content`` is the stored result: a string, or a list of parts whose ``text`` values are
    joined by newlines.
    """
    if isinstance(content, list):
        content = "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return f"[tool result {call_id}] {content}"


def output_entries(output: list[Any]) -> Iterator[dict[str, Any]]:
    """The entries of a list of model output, each checked to be a dict as it is read."""
    return dict_entries(output, "model output lists must hold dicts")


def split_user_parts(message: Message) -> tuple[list[ToolResultPart], list[TextPart | ImagePart]]:
    """A user message's tool results and its text and image parts, each in their order.

    Both OpenAI APIs send the tool results as items of their own, ahead of one user message
    holding the rest. Raises UnsupportedContentError for a part a user message cannot carry.
    """
    results: list[ToolResultPart] = []
    parts: list[TextPart | ImagePart] = []
    for part in message.parts:
        if isinstance(part, ToolResultPart):
            results.append(part)
        elif isinstance(part, TextPart | ImagePart):
            parts.append(part)
        else:
            raise UnsupportedContentError(f"a user message cannot carry a {part.type} part")
    return results, parts


def split_assistant_parts(message: Message, api: str) -> tuple[list[str], list[ToolCallPart]]:
    """An assistant message's texts and tool calls, each in their order.

    Raises UnsupportedContentError naming ``api`` for any other part.
    """
    texts: list[str] = []
    calls: list[ToolCallPart] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            texts.append(part.text)
        elif isinstance(part, ToolCallPart):
            calls.append(part)
        else:
            raise UnsupportedContentError(
                f"{api} cannot carry a {part.type} part in an assistant message"
            )
    return texts, calls


def foreign_block_type(item: NativeContent, foreign: frozenset[str]) -> str | None:
    """The type of the first content part of ``item`` whose type is in ``foreign``, if any."""
    content = item.get("content")
    if isinstance(content, list):
        for part in content:
            kind = part.get("type") if isinstance(part, dict) else None
            if isinstance(kind, str) and kind in foreign:
                return kind
    return None


def require_str(item: NativeContent, key: str, where: str, *, empty_ok: bool = True) -> str:
    """``item[key]`` if it is a string (non-empty unless ``empty_ok``), else InvalidItemError."""
    value = item.get(key)
    if not isinstance(value, str):
        raise InvalidItemError(f"{where}: '{key}' must be a string, got {type(value).__name__}")
    if not empty_ok and not value:
        raise InvalidItemError(f"{where}: '{key}' must not be empty")
    return value
