"""Checks of Anthropic items: strict for what the caller builds, lenient for model output.

:func:`validate_strict` checks a caller-authored message block by block against what the
Messages API accepts. :func:`check_output` checks only what the library relies on (roles, the
tool pairing fields, reasoning fields), each with an ``isinstance`` check, and keeps every block
type it does not know (``mcp_tool_use``, ``compaction``, ``advisor_tool_result``, next month's).
"""

from __future__ import annotations

from typing import Any

from hydrangea.errors import GatewayMismatchError, InvalidItemError
from hydrangea.providers.native import NativeContent

__all__ = ["check_output", "validate_strict"]

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


def validate_strict(item: NativeContent) -> None:
    """Check role, content and every block against what the Messages API accepts."""
    _check_foreign(item)
    role = item.get("role")
    if not isinstance(role, str) or role not in {"system", "user", "assistant"}:
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
            raise InvalidItemError(f"the API rejects an Anthropic {role} item with empty content")
        return
    if not isinstance(content, list) or not content:
        raise InvalidItemError(
            f"the 'content' of an Anthropic {role} item must be a string or a non-empty "
            f"list of blocks, got {type(content).__name__}"
        )
    for index, block in enumerate(content):
        _check_block(role, index, block)


def _check_foreign(item: NativeContent) -> None:
    """Recognise the shapes of the other gateways and say so."""
    if "parts" in item or item.get("role") == "model":
        raise GatewayMismatchError("this looks like a Gemini Content (role/parts), not Anthropic")
    if item.get("role") in ("tool", "developer", "function"):
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
            if not isinstance(inner, dict) or inner.get("type") not in ("text", "image"):
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
        media_type = source.get("media_type")
        if not isinstance(media_type, str) or media_type not in _IMAGE_MEDIA_TYPES:
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


# -- lenient: model output ------------------------------------------------------------------

_OUTPUT_STRINGS: dict[str, tuple[str, ...]] = {
    "text": ("text",),
    "thinking": ("thinking", "signature"),
    "redacted_thinking": ("data",),
    "tool_use": ("id", "name"),
    "server_tool_use": ("id",),
    "mcp_tool_use": ("id",),
    "tool_result": ("tool_use_id",),
}


def check_output(item: NativeContent) -> None:
    """Check only what the library relies on in a stored Anthropic item (see the module)."""
    _check_foreign(item)
    role = item.get("role")
    if not isinstance(role, str) or role not in ("system", "user", "assistant"):
        raise InvalidItemError(
            f"an Anthropic item needs role 'user', 'assistant' or 'system', got {role!r}"
        )
    extra = set(item) - {"role", "content"}
    if extra:
        raise InvalidItemError(f"unknown key(s) {sorted(extra)} in an Anthropic {role} item")
    content = item.get("content")
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise InvalidItemError(
            f"the 'content' of an Anthropic {role} item must be a string or a list of blocks, "
            f"got {type(content).__name__}"
        )
    for index, block in enumerate(content):
        where = f"block {index} of an Anthropic {role} item"
        if not isinstance(block, dict):
            raise InvalidItemError(f"{where} must be an object, got {type(block).__name__}")
        kind = block.get("type")
        if not isinstance(kind, str):
            raise InvalidItemError(f"{where} needs a string 'type'")
        if kind in ("thought", "reasoning", "function_call", "function_call_output"):
            raise GatewayMismatchError(f"{where}: {kind!r} belongs to another gateway")
        if role == "system" and kind != "text":
            raise InvalidItemError(f"{where} must be a text block, got {kind!r}")
        if kind == "tool_result" and role != "user":
            raise InvalidItemError(f"{where}: a 'tool_result' block belongs in a user message")
        if kind in ("tool_use", "thinking", "redacted_thinking") and role != "assistant":
            raise InvalidItemError(f"{where}: a {kind!r} block belongs in an assistant message")
        for key in _OUTPUT_STRINGS.get(kind, ()):
            if not isinstance(block.get(key), str):
                raise InvalidItemError(f"{where}: a {kind!r} block needs a string {key!r}")
        if kind.endswith("_tool_result") and not isinstance(block.get("tool_use_id", ""), str):
            raise InvalidItemError(f"{where}: 'tool_use_id' must be a string")
        if kind == "tool_use" and not block["id"]:
            raise InvalidItemError(f"{where}: a 'tool_use' block needs a non-empty id")
        if kind == "tool_result" and not block["tool_use_id"]:
            raise InvalidItemError(f"{where}: a 'tool_result' block needs a non-empty id")
        if kind == "tool_use" and not isinstance(block.get("input", {}), dict):
            raise InvalidItemError(f"{where}: 'input' of a tool_use block must be an object")
        if kind == "tool_result" and not isinstance(block.get("is_error", False), bool):
            raise InvalidItemError(f"{where}: tool_result 'is_error' must be a boolean")
