"""The Anthropic Messages gateway (``client.messages.create``).

A stored item is one Anthropic message dict, ``{"role": "user" | "assistant", "content": ...}``,
where ``content`` is a string or a list of content blocks exactly as the API takes them. The API
has no system role inside ``messages`` that we rely on, so a system message is stored as the
pseudo-item ``{"role": "system", "content": "<text>"}`` (:class:`AnthropicSystemItem`);
:meth:`AnthropicAdapter.build_request` places it (see :mod:`._anthropic_request`).

Reasoning state (``thinking`` blocks with their ``signature``, ``redacted_thinking`` blocks with
their ``data``) is stored as the API returned it and sent back unchanged, in its original order,
inside the assistant turn that produced it.

Markers are plain text, not a trust boundary: the ``"[system] "``, ``"[tool result <id>] "`` and
``"[conversation start]"`` texts this adapter writes look exactly like user text that happens to
start the same way, and such text is sent unchanged (rewriting it would change the caller's bytes
and the cached prefix). That is sound because messages put into a Context are trusted,
caller-authored text; untrusted outside text belongs in a :mod:`hydrangea.asof` fence, which it
cannot forge or close. See "Text markers" in docs/en/providers.md.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any, Literal, TypedDict, assert_never

from hydrangea.context._anthropic_request import (
    LEADING_USER_PLACEHOLDER,
    SYSTEM_NOTICE_PREFIX,
    build_anthropic_request,
)
from hydrangea.context._output import dict_entries, reject_other_sdk
from hydrangea.context.adapter import Adapter
from hydrangea.context.native import NativeContent, copy_json
from hydrangea.context.sdk import native_output
from hydrangea.errors import GatewayMismatchError, InvalidItemError, UnsupportedContentError
from hydrangea.gateway import GatewayType
from hydrangea.message import ImagePart, Message, Role, TextPart, ToolCallPart, ToolResultPart

__all__ = [
    "LEADING_USER_PLACEHOLDER",
    "SYSTEM_NOTICE_PREFIX",
    "AnthropicAdapter",
    "AnthropicMessageItem",
    "AnthropicSystemItem",
]

_IMAGE_MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})

_USER_ONLY_BLOCKS = frozenset({"tool_result"})
_ASSISTANT_ONLY_BLOCKS = frozenset(
    {
        "thinking",
        "redacted_thinking",
        "tool_use",
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "tool_search_tool_result",
    }
)
_CALL_BLOCKS = frozenset({"tool_use", "server_tool_use"})
_ANY_ROLE_BLOCKS = frozenset({"text", "image", "document", "search_result", "container_upload"})
_REQUIRED_KEYS: dict[str, tuple[str, ...]] = {
    "text": ("text",),
    "image": ("source",),
    "document": ("source",),
    "thinking": ("thinking", "signature"),
    "redacted_thinking": ("data",),
    "tool_use": ("id", "name", "input"),
    "server_tool_use": ("id", "name", "input"),
    "tool_result": ("tool_use_id",),
}
_STRING_KEYS = frozenset({"text", "thinking", "signature", "data", "id", "name", "tool_use_id"})


class AnthropicSystemItem(TypedDict):
    """A system message; the leading run becomes the top-level ``system`` of the request."""

    role: Literal["system"]
    content: str | list[dict[str, Any]]


class AnthropicMessageItem(TypedDict):
    """One Anthropic input message (``anthropic.types.MessageParam``)."""

    role: Literal["user", "assistant"]
    content: str | list[dict[str, Any]]


class AnthropicAdapter(Adapter):
    """Adapter for the Anthropic Messages API. Stateless."""

    gateway = GatewayType.anthropic

    # -- Message -> items --------------------------------------------------------------------

    def from_message(self, message: Message) -> list[NativeContent]:
        """One item per message: system pseudo-item, or a user/assistant message of blocks."""
        match message.role:
            case Role.system:
                return [{"role": "system", "content": message.text}]
            case Role.user | Role.assistant:
                blocks = [_block_from_part(part) for part in message.parts]
                return [{"role": message.role.value, "content": blocks}]
            case _:
                assert_never(message.role)

    # -- model output -> items ---------------------------------------------------------------

    def from_output(self, output: object) -> list[NativeContent]:
        """Read an ``anthropic.types.Message`` (or beta message), a native dict or a list.

        A raw API response dict (``{"type": "message", "role": "assistant", "content": ...}``)
        is reduced to its role and content. SDK blocks are dumped to JSON with ``None`` fields
        left out; strings (thinking text, signatures, redacted data) are copied verbatim.
        """
        output = native_output(output, self.gateway)
        if isinstance(output, dict):
            return [_strip_response_dict(output)]
        if isinstance(output, list):
            entries = dict_entries(output, "expected an Anthropic message dict")
            return [_strip_response_dict(entry) for entry in entries]
        reject_other_sdk(output, self.gateway, ("openai", "google"))
        if type(output).__module__.startswith("anthropic") and hasattr(output, "content"):
            role = getattr(output, "role", None)
            if role != "assistant":
                raise InvalidItemError(
                    f"an Anthropic response must have role 'assistant', got {role!r}"
                )
            content = output.content
            if not isinstance(content, list):
                raise InvalidItemError("the Anthropic response has no list of content blocks")
            blocks = [_dump_block(block) for block in content]
            return [{"role": "assistant", "content": blocks}]
        raise InvalidItemError(
            f"cannot read {type(output).__name__} as Anthropic output: pass an anthropic "
            "Message, a message dict or a list of message dicts"
        )

    # -- validation --------------------------------------------------------------------------

    def validate(self, item: NativeContent) -> None:
        """Check role, content and every block against what the Messages API accepts."""
        _check_foreign(item)
        role = item.get("role")
        if role not in {"system", "user", "assistant"}:
            raise InvalidItemError(
                f"an Anthropic item needs role 'user', 'assistant' or 'system', got {role!r}"
            )
        extra = set(item) - {"role", "content"}
        if extra:
            raise InvalidItemError(f"unknown key(s) {sorted(extra)} in an Anthropic {role} item")
        if "content" not in item:
            raise InvalidItemError(f"an Anthropic {role} item needs a 'content' key")
        content = item["content"]
        if isinstance(content, str):
            if not content:
                raise InvalidItemError(
                    f"the API rejects an Anthropic {role} item with empty content"
                )
            return
        if not isinstance(content, list) or not content:
            raise InvalidItemError(
                f"the 'content' of an Anthropic {role} item must be a string or a non-empty "
                f"list of blocks, got {type(content).__name__}"
            )
        for index, block in enumerate(content):
            _check_block(role, index, block)

    # -- tool exchanges ----------------------------------------------------------------------

    def opens_exchange(self, item: NativeContent) -> bool:
        """True for an assistant turn holding a ``tool_use`` or ``server_tool_use`` block."""
        return item.get("role") == "assistant" and _has_block(item, _CALL_BLOCKS)

    def closes_exchange(self, item: NativeContent) -> bool:
        """True for a user turn holding a ``tool_result`` block."""
        return item.get("role") == "user" and _has_block(item, _USER_ONLY_BLOCKS)

    # -- requests ----------------------------------------------------------------------------

    def build_request(self, items: Sequence[NativeContent]) -> dict[str, Any]:
        """``{"messages": [...], "system"?: [text blocks]}`` for ``client.messages.create``."""
        return build_anthropic_request(items)

    def item_text(self, item: NativeContent) -> str:
        """Text, tool inputs (as JSON) and tool results of an item; no signatures or images."""
        content = item.get("content")
        if isinstance(content, str):
            return content
        chunks: list[str] = []
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind in {"text", "thinking"}:
                chunks.append(str(block.get(kind, "")))
            elif kind == "tool_use":
                chunks.append(json.dumps(block.get("input", {}), sort_keys=True))
            elif kind == "tool_result":
                chunks.append(_result_text(block.get("content", "")))
        return "\n".join(chunks)


def _block_from_part(part: TextPart | ImagePart | ToolCallPart | ToolResultPart) -> dict[str, Any]:
    match part:
        case TextPart():
            return {"type": "text", "text": part.text}
        case ImagePart():
            if part.url is not None:
                return {"type": "image", "source": {"type": "url", "url": part.url}}
            assert part.data is not None
            if part.media_type not in _IMAGE_MEDIA_TYPES:
                raise UnsupportedContentError(
                    f"Anthropic takes images as {sorted(_IMAGE_MEDIA_TYPES)}, "
                    f"not {part.media_type!r}"
                )
            encoded = base64.b64encode(part.data).decode("ascii")
            source = {"type": "base64", "media_type": part.media_type, "data": encoded}
            return {"type": "image", "source": source}
        case ToolCallPart():
            arguments = copy_json(part.arguments)
            return {"type": "tool_use", "id": part.id, "name": part.name, "input": arguments}
        case ToolResultPart():
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": part.call_id,
                "content": part.content,
            }
            if part.is_error:
                block["is_error"] = True
            return block
        case _:
            assert_never(part)


def _has_block(item: NativeContent, kinds: frozenset[str]) -> bool:
    content = item.get("content")
    return isinstance(content, list) and any(
        isinstance(block, dict) and block.get("type") in kinds for block in content
    )


def _strip_response_dict(output: dict[str, Any]) -> NativeContent:
    """A raw response body (``"type": "message"``) keeps only role and content."""
    if output.get("type") == "message" and "content" in output:
        return {"role": output.get("role"), "content": output["content"]}
    return output


def _dump_block(block: object) -> dict[str, Any]:
    dump = getattr(block, "model_dump", None)
    if dump is None:
        raise InvalidItemError(f"unexpected Anthropic content block {type(block).__name__}")
    dumped = dump(mode="json", exclude_none=True)
    return copy_json(dumped)


def _check_foreign(item: NativeContent) -> None:
    """Recognise the shapes of the other gateways and say so."""
    if "parts" in item or item.get("role") == "model":
        raise GatewayMismatchError("this looks like a Gemini Content (role/parts), not Anthropic")
    if item.get("role") in {"tool", "developer", "function"}:
        raise GatewayMismatchError(
            f"role {item.get('role')!r} is OpenAI's; Anthropic takes 'user' and 'assistant'"
        )
    if "role" not in item and isinstance(item.get("type"), str):
        raise GatewayMismatchError(
            f"a {item['type']!r} item without a role is an OpenAI Responses item, not Anthropic"
        )


def _check_block(role: str, index: int, block: object) -> None:
    where = f"block {index} of an Anthropic {role} item"
    if not isinstance(block, dict):
        raise InvalidItemError(f"{where} must be an object, got {type(block).__name__}")
    kind = block.get("type")
    if not isinstance(kind, str):
        raise InvalidItemError(f"{where} has no 'type'")
    if role == "system":
        if kind != "text":
            raise InvalidItemError(f"{where} must be a text block, got {kind!r}")
    elif kind in _USER_ONLY_BLOCKS:
        if role != "user":
            raise InvalidItemError(f"{where}: a {kind!r} block belongs in a user message")
    elif kind in _ASSISTANT_ONLY_BLOCKS:
        if role != "assistant":
            raise InvalidItemError(f"{where}: a {kind!r} block belongs in an assistant message")
    elif kind not in _ANY_ROLE_BLOCKS:
        if kind in {"thought", "reasoning", "function_call", "function_call_output"}:
            raise GatewayMismatchError(f"{where}: {kind!r} belongs to another gateway")
        raise InvalidItemError(f"{where} has unknown type {kind!r}")
    for key in _REQUIRED_KEYS.get(kind, ()):
        if key not in block:
            raise InvalidItemError(f"{where}: a {kind!r} block needs the key {key!r}")
        if key in _STRING_KEYS and not isinstance(block[key], str):
            raise InvalidItemError(f"{where}: {key!r} must be a string")
    if kind == "text" and not block["text"]:
        raise InvalidItemError(f"{where}: the API rejects an empty text block")
    if kind in {"tool_use", "tool_result"}:
        ident = block["id"] if kind == "tool_use" else block["tool_use_id"]
        if not ident:
            raise InvalidItemError(f"{where}: a {kind!r} block needs a non-empty id")
    if kind == "tool_use" and not isinstance(block["input"], dict):
        raise InvalidItemError(f"{where}: 'input' of a tool_use block must be an object")
    if kind == "image":
        _check_image_source(where, block["source"])
    if kind == "tool_result":
        _check_result_content(where, block)


def _check_result_content(where: str, block: dict[str, Any]) -> None:
    content = block.get("content", "")
    if isinstance(content, list):
        for index, inner in enumerate(content):
            if not isinstance(inner, dict) or inner.get("type") not in {"text", "image"}:
                raise InvalidItemError(
                    f"{where}: tool_result content block {index} must be text or image"
                )
            _check_block("user", index, inner)
    elif not isinstance(content, str):
        raise InvalidItemError(f"{where}: tool_result 'content' must be a string or a list")
    if not isinstance(block.get("is_error", False), bool):
        raise InvalidItemError(f"{where}: tool_result 'is_error' must be a boolean")


def _check_image_source(where: str, source: object) -> None:
    if not isinstance(source, dict):
        raise InvalidItemError(f"{where}: the image 'source' must be an object")
    kind = source.get("type")
    if kind == "url":
        if not isinstance(source.get("url"), str):
            raise InvalidItemError(f"{where}: a url image source needs a 'url' string")
    elif kind == "base64":
        if source.get("media_type") not in _IMAGE_MEDIA_TYPES:
            raise InvalidItemError(
                f"{where}: image media_type must be one of {sorted(_IMAGE_MEDIA_TYPES)}"
            )
        if not isinstance(source.get("data"), str):
            raise InvalidItemError(f"{where}: a base64 image source needs a 'data' string")
    elif kind == "file":
        if not isinstance(source.get("file_id"), str):
            raise InvalidItemError(f"{where}: a file image source needs a 'file_id' string")
    else:
        raise InvalidItemError(f"{where}: unknown image source type {kind!r}")


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(block.get("text", ""))
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        )
    return ""
