"""Shape checks for OpenAI Responses input items (used by :mod:`.openai_responses`).

Messages, function and custom tool calls and their outputs, and reasoning items are checked in
detail; the built-in tool items (web search, file search, computer, shell, MCP, ...) are accepted
by their ``type`` and checked by the API itself, so model output using them can be pushed back.
"""

from __future__ import annotations

from typing import Any

from hydrangea.errors import GatewayMismatchError, InvalidItemError
from hydrangea.providers.native import NativeContent
from hydrangea.providers.openai._common import foreign_block_type, require_str

__all__ = [
    "CALL_OUTPUT_TYPES",
    "check_responses_output",
    "is_model_side",
    "validate_responses_item",
]

CALL_OUTPUT_TYPES: dict[str, str] = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
}
"""Tool call item types whose pairing the request builder repairs, with their output types."""

_OPAQUE_TYPES = frozenset(
    {
        "file_search_call",
        "computer_call",
        "computer_call_output",
        "web_search_call",
        "tool_search_call",
        "tool_search_output",
        "additional_tools",
        "configuration_update",
        "compaction",
        "compaction_trigger",
        "image_generation_call",
        "code_interpreter_call",
        "local_shell_call",
        "local_shell_call_output",
        "shell_call",
        "shell_call_output",
        "apply_patch_call",
        "apply_patch_call_output",
        "mcp_list_tools",
        "mcp_approval_request",
        "mcp_approval_response",
        "mcp_call",
        "program",
        "program_output",
    }
)
_MESSAGE_ROLES = frozenset({"user", "assistant", "system", "developer"})
_INPUT_MESSAGE_KEYS = frozenset({"type", "role", "content", "status", "phase"})
_OUTPUT_MESSAGE_KEYS = frozenset({"type", "role", "content", "status", "phase", "id"})
_INPUT_PART_TYPES = frozenset({"input_text", "input_image", "input_file"})
_IMAGE_DETAILS = frozenset({"low", "high", "auto", "original"})
_STATUSES = frozenset({"in_progress", "completed", "incomplete"})
_FOREIGN_BLOCKS = frozenset(
    {"thinking", "redacted_thinking", "tool_use", "tool_result", "text", "image", "image_url"}
)


def _one_of(value: object, options: frozenset[str]) -> bool:
    """``value`` is a string among ``options`` (an unhashable value is simply not one)."""
    return isinstance(value, str) and value in options


def is_model_side(item: NativeContent) -> bool:
    """True for items the model produces in a turn (assistant messages, calls, reasoning)."""
    kind = item.get("type", "message")
    if kind == "message":
        return bool(item.get("role") == "assistant")
    return not (
        str(kind).endswith("_output") or kind in ("item_reference", "mcp_approval_response")
    )


def validate_responses_item(item: NativeContent) -> None:
    """Raise InvalidItemError unless ``item`` is an input item the Responses API accepts.

    Items of another gateway (chat messages, Gemini contents, Anthropic blocks) raise
    :class:`~hydrangea.errors.GatewayMismatchError`.
    """
    _reject_foreign_shape(item)
    kind = item.get("type", "message" if "role" in item else None)
    match kind:
        case "message":
            _validate_message(item)
        case "function_call":
            _require_call(item, kind)
            require_str(item, "name", kind, empty_ok=False)
            require_str(item, "arguments", kind)
        case "custom_tool_call":
            _require_call(item, kind)
            require_str(item, "name", kind, empty_ok=False)
            require_str(item, "input", kind)
        case "function_call_output" | "custom_tool_call_output":
            _require_call(item, kind)
            output = item.get("output")
            if not isinstance(output, str | list):
                raise InvalidItemError(f"{kind}: 'output' must be a string or a list of parts")
        case "reasoning":
            _validate_reasoning(item)
        case "item_reference":
            require_str(item, "id", kind, empty_ok=False)
        case str() if kind in _OPAQUE_TYPES:
            return
        case _:
            raise InvalidItemError(f"unknown Responses input item type {kind!r}")


def _reject_foreign_shape(item: NativeContent) -> None:
    if item.get("role") == "model" or "parts" in item:
        raise GatewayMismatchError(
            "a Gemini Content item cannot go into an openai_responses Context"
        )
    if item.get("role") == "tool" or "tool_calls" in item or "tool_call_id" in item:
        raise GatewayMismatchError(
            "a Chat Completions message cannot go into an openai_responses Context"
        )
    foreign = foreign_block_type(item, _FOREIGN_BLOCKS)
    if foreign is not None:
        raise GatewayMismatchError(
            f"a {foreign!r} content block belongs to another gateway, not Responses"
        )


def _require_call(item: NativeContent, kind: str) -> None:
    require_str(item, "call_id", kind, empty_ok=False)
    status = item.get("status")
    if status is not None and not _one_of(status, _STATUSES):
        raise InvalidItemError(f"{kind}: 'status' must be one of {sorted(_STATUSES)}")


def _validate_message(item: NativeContent) -> None:
    role = item.get("role")
    if not _one_of(role, _MESSAGE_ROLES):
        raise InvalidItemError(
            f"message role must be one of {sorted(_MESSAGE_ROLES)}, got {role!r}"
        )
    where = f"{role} message"
    is_output = role == "assistant" and "id" in item
    allowed = _OUTPUT_MESSAGE_KEYS if is_output else _INPUT_MESSAGE_KEYS
    unknown = sorted(set(item) - allowed)
    if unknown:
        raise InvalidItemError(f"{where}: unknown key(s) {unknown}")
    content = item.get("content")
    if is_output:
        require_str(item, "id", where, empty_ok=False)
        if not _one_of(item.get("status"), _STATUSES):
            raise InvalidItemError(f"{where}: an output message needs a 'status'")
        _validate_output_content(content, where)
        return
    if "status" in item and not _one_of(item["status"], _STATUSES):
        raise InvalidItemError(f"{where}: 'status' must be one of {sorted(_STATUSES)}")
    if isinstance(content, str):
        return
    if role == "assistant":
        raise InvalidItemError(
            f"{where}: without an 'id' the content must be a string (output_text parts need the "
            "message id and status the model gave)"
        )
    if not isinstance(content, list) or not content:
        raise InvalidItemError(f"{where}: 'content' must be a string or a non-empty list")
    for position, part in enumerate(content):
        _validate_input_part(part, f"{where}, part {position}")


def _validate_input_part(part: object, where: str) -> None:
    if not isinstance(part, dict):
        raise InvalidItemError(f"{where}: a content part must be a dict")
    kind = part.get("type")
    if not _one_of(kind, _INPUT_PART_TYPES):
        raise InvalidItemError(
            f"{where}: part type must be one of {sorted(_INPUT_PART_TYPES)}, got {kind!r}"
        )
    if kind == "input_text":
        require_str(part, "text", where)
    elif kind == "input_image":
        if not _one_of(part.get("detail"), _IMAGE_DETAILS):
            raise InvalidItemError(
                f"{where}: input_image needs 'detail' in {sorted(_IMAGE_DETAILS)}"
            )
        if not isinstance(part.get("image_url"), str) and not isinstance(part.get("file_id"), str):
            raise InvalidItemError(f"{where}: input_image needs an 'image_url' or a 'file_id'")


def _validate_output_content(content: object, where: str) -> None:
    if not isinstance(content, list):
        raise InvalidItemError(f"{where}: an output message's 'content' must be a list")
    for position, part in enumerate(content):
        at = f"{where}, part {position}"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "output_text":
            assert isinstance(part, dict)
            require_str(part, "text", at)
            if not isinstance(part.get("annotations"), list):
                raise InvalidItemError(f"{at}: output_text needs an 'annotations' list")
        elif kind == "refusal":
            assert isinstance(part, dict)
            require_str(part, "refusal", at)
        else:
            raise InvalidItemError(f"{at}: part type must be output_text or refusal, got {kind!r}")


def _validate_reasoning(item: NativeContent) -> None:
    where = "reasoning item"
    require_str(item, "id", where, empty_ok=False)
    summary: Any = item.get("summary")
    if not isinstance(summary, list):
        raise InvalidItemError(f"{where}: 'summary' must be a list (possibly empty)")
    _require_text_parts(summary, "summary", "summary_text", where)
    encrypted = item.get("encrypted_content")
    if encrypted is not None and not isinstance(encrypted, str):
        raise InvalidItemError(f"{where}: 'encrypted_content' must be a string")
    content: Any = item.get("content")
    if content is not None:
        if not isinstance(content, list):
            raise InvalidItemError(f"{where}: 'content' must be a list")
        _require_text_parts(content, "content", "reasoning_text", where)


def _require_text_parts(parts: list[Any], label: str, kind: str, where: str) -> None:
    """Every entry of ``parts`` is a ``{"type": kind, "text": str}`` object."""
    for part in parts:
        if not isinstance(part, dict) or part.get("type") != kind:
            raise InvalidItemError(f"{where}: {label} parts must be {kind}")
        require_str(part, "text", where)


def check_responses_output(item: NativeContent) -> None:
    """Check only what the library relies on in a stored Responses item.

    The item's ``type`` (and a message's ``role``), the tool pairing fields of function and
    custom tool calls and outputs, the reasoning fields, and that ``status`` is a string when
    present. Built-in tool items and types the library does not know are kept.
    """
    _reject_foreign_shape(item)
    kind = item.get("type", "message" if "role" in item else None)
    if not isinstance(kind, str):
        raise InvalidItemError(f"a Responses item needs a string 'type', got {kind!r}")
    if "status" in item and not isinstance(item["status"], str):
        raise InvalidItemError(f"{kind}: 'status' must be a string")
    match kind:
        case "message":
            if not _one_of(item.get("role"), _MESSAGE_ROLES):
                role = item.get("role")
                raise InvalidItemError(
                    f"message role must be one of {sorted(_MESSAGE_ROLES)}, got {role!r}"
                )
            content = item.get("content")
            if not isinstance(content, str | list):
                raise InvalidItemError("message: 'content' must be a string or a list of parts")
            for position, part in enumerate(content if isinstance(content, list) else []):
                if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                    raise InvalidItemError(f"message, part {position}: needs a string 'type'")
                for key in ("detail", "text"):
                    if key in part and not isinstance(part[key], str):
                        where = f"message, part {position}"
                        raise InvalidItemError(f"{where}: {key!r} must be a string")
        case "function_call" | "custom_tool_call":
            require_str(item, "call_id", kind, empty_ok=False)
            require_str(item, "name", kind, empty_ok=False)
            require_str(item, "arguments" if kind == "function_call" else "input", kind)
        case "function_call_output" | "custom_tool_call_output":
            require_str(item, "call_id", kind, empty_ok=False)
            if not isinstance(item.get("output"), str | list):
                raise InvalidItemError(f"{kind}: 'output' must be a string or a list of parts")
        case "reasoning":
            require_str(item, "id", kind, empty_ok=False)
            if "encrypted_content" in item and not isinstance(item["encrypted_content"], str):
                raise InvalidItemError("reasoning item: 'encrypted_content' must be a string")
            for key in ("summary", "content"):
                if key in item and not isinstance(item[key], list):
                    raise InvalidItemError(f"reasoning item: {key!r} must be a list")
        case _:
            return
