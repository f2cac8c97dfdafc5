"""Shape checks for Chat Completions input messages (used by :mod:`.openai_chat`)."""

from __future__ import annotations

from hydrangea.errors import GatewayMismatchError, InvalidItemError
from hydrangea.providers.native import NativeContent
from hydrangea.providers.openai._common import foreign_block_type, require_str

__all__ = ["ASSISTANT_KEYS", "check_chat_output", "validate_chat_message"]

_ALLOWED_KEYS: dict[str, frozenset[str]] = {
    "system": frozenset({"role", "content", "name"}),
    "developer": frozenset({"role", "content", "name"}),
    "user": frozenset({"role", "content", "name"}),
    "assistant": frozenset(
        {"role", "content", "name", "tool_calls", "refusal", "audio", "function_call"}
    ),
    "tool": frozenset({"role", "content", "tool_call_id"}),
}
ASSISTANT_KEYS = _ALLOWED_KEYS["assistant"]
"""The keys an assistant input message may have."""

_USER_PART_TYPES = frozenset({"text", "image_url", "input_audio", "file"})
_ASSISTANT_PART_TYPES = frozenset({"text", "refusal"})
_TEXT_PART_TYPES = frozenset({"text"})
_FOREIGN_BLOCKS = frozenset(
    {"thinking", "redacted_thinking", "tool_use", "tool_result", "input_text", "output_text"}
)


def validate_chat_message(item: NativeContent) -> None:
    """Raise InvalidItemError unless ``item`` is a chat message Chat Completions accepts.

    Items of another gateway (Gemini contents, Responses items, Anthropic blocks) raise
    :class:`~hydrangea.errors.GatewayMismatchError`.
    """
    _reject_foreign_shape(item)
    role = item.get("role")
    if role == "function":
        raise InvalidItemError("role 'function' is deprecated; use a 'tool' message")
    if not isinstance(role, str) or role not in _ALLOWED_KEYS:
        raise InvalidItemError(
            f"chat message role must be one of {sorted(_ALLOWED_KEYS)}, got {role!r}"
        )
    where = f"{role} message"
    unknown = sorted(set(item) - _ALLOWED_KEYS[role])
    if unknown:
        raise InvalidItemError(f"{where}: unknown key(s) {unknown}")
    if "name" in item:
        require_str(item, "name", where, empty_ok=False)
    if role == "assistant":
        _validate_assistant(item)
        return
    if "content" not in item:
        raise InvalidItemError(f"{where}: 'content' is required")
    allowed = _USER_PART_TYPES if role == "user" else _TEXT_PART_TYPES
    _validate_content(item["content"], allowed, where)
    if role == "tool":
        require_str(item, "tool_call_id", where, empty_ok=False)


def _reject_foreign_shape(item: NativeContent) -> None:
    if item.get("role") == "model" or "parts" in item:
        raise GatewayMismatchError("a Gemini Content item cannot go into an openai Context")
    if ("type" in item and "role" not in item) or item.get("type") == "message":
        raise GatewayMismatchError(
            f"a Responses item (type {item.get('type')!r}) cannot go into an openai Context"
        )
    foreign = foreign_block_type(item, _FOREIGN_BLOCKS)
    if foreign is not None:
        raise GatewayMismatchError(
            f"a {foreign!r} block belongs to another gateway, not Chat Completions"
        )


def _validate_content(content: object, allowed: frozenset[str], where: str) -> None:
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise InvalidItemError(
            f"{where}: 'content' must be a string or a list of parts, got {type(content).__name__}"
        )
    if not content:
        raise InvalidItemError(f"{where}: 'content' must not be an empty list")
    for position, part in enumerate(content):
        _validate_part(part, allowed, f"{where}, part {position}")


def _validate_part(part: object, allowed: frozenset[str], where: str) -> None:
    if not isinstance(part, dict):
        raise InvalidItemError(f"{where}: a content part must be a dict")
    kind = part.get("type")
    if not isinstance(kind, str) or kind not in allowed:
        raise InvalidItemError(f"{where}: part type must be one of {sorted(allowed)}, got {kind!r}")
    match kind:
        case "text":
            require_str(part, "text", where)
        case "refusal":
            require_str(part, "refusal", where)
        case "image_url":
            image = part.get("image_url")
            if not isinstance(image, dict):
                raise InvalidItemError(f"{where}: 'image_url' must be an object with a 'url'")
            require_str(image, "url", where, empty_ok=False)
        case "input_audio":
            audio = part.get("input_audio")
            if not isinstance(audio, dict) or audio.get("format") not in ("wav", "mp3"):
                raise InvalidItemError(f"{where}: 'input_audio' needs 'data' and format wav/mp3")
            require_str(audio, "data", where)
        case "file":
            if not isinstance(part.get("file"), dict):
                raise InvalidItemError(f"{where}: 'file' must be an object")


def _validate_assistant(item: NativeContent) -> None:
    where = "assistant message"
    content = item.get("content")
    if content is not None:
        _validate_content(content, _ASSISTANT_PART_TYPES, where)
    if "refusal" in item and item["refusal"] is not None:
        require_str(item, "refusal", where)
    calls = item.get("tool_calls")
    if "tool_calls" in item:
        _validate_tool_calls(calls)
    if item.get("audio") is not None:
        audio = item["audio"]
        if not isinstance(audio, dict) or set(audio) != {"id"}:
            raise InvalidItemError(f"{where}: 'audio' must be {{'id': ...}}")
        require_str(audio, "id", where, empty_ok=False)
    function_call = item.get("function_call")
    if function_call is not None:
        if not isinstance(function_call, dict):
            raise InvalidItemError(f"{where}: 'function_call' must be an object")
        require_str(function_call, "name", where, empty_ok=False)
        require_str(function_call, "arguments", where)
    said = (content, calls or None, function_call, item.get("audio"), item.get("refusal"))
    if all(value is None for value in said):
        raise InvalidItemError(f"{where}: needs 'content' or 'tool_calls'")


def _validate_tool_calls(calls: object, *, output: bool = False) -> None:
    """The ``tool_calls`` list; ``output`` allows the empty ``"id": ""`` some providers send
    (Gemini's OpenAI-compatible endpoint): such a call is id-less to the pairing engine."""
    where = "assistant message tool_calls"
    if not isinstance(calls, list) or not calls:
        raise InvalidItemError(f"{where}: must be a non-empty list")
    seen: set[str] = set()
    for position, call in enumerate(calls):
        at = f"{where}[{position}]"
        if not isinstance(call, dict):
            raise InvalidItemError(f"{at}: must be an object")
        call_id = require_str(call, "id", at, empty_ok=output)
        if call_id and call_id in seen:  # (id-less calls, output only, may share "")
            raise InvalidItemError(f"{at}: duplicate tool call id {call_id!r}")
        seen.add(call_id)
        kind = call.get("type")
        body = call.get(kind) if isinstance(kind, str) else None
        if kind == "function" and isinstance(body, dict):
            require_str(body, "name", at, empty_ok=False)
            require_str(body, "arguments", at)
        elif kind == "custom" and isinstance(body, dict):
            require_str(body, "name", at, empty_ok=False)
            require_str(body, "input", at)
        else:
            raise InvalidItemError(
                f"{at}: type must be 'function' or 'custom' with its object, got {kind!r}"
            )


def check_chat_output(item: NativeContent) -> None:
    """Check only what the library relies on in a stored chat message.

    The role, the tool pairing fields (``tool_calls`` ids and names, ``tool_call_id``) and the
    shape of ``content`` (a string, null, or a list of objects with a string ``type``); part
    types it does not know are kept.
    """
    _reject_foreign_shape(item)
    role = item.get("role")
    if not isinstance(role, str) or role not in _ALLOWED_KEYS:
        raise InvalidItemError(
            f"chat message role must be one of {sorted(_ALLOWED_KEYS)}, got {role!r}"
        )
    where = f"{role} message"
    content = item.get("content")
    if role != "assistant" and "content" not in item:
        raise InvalidItemError(f"{where}: 'content' is required")
    if content is not None and not isinstance(content, str):
        if not isinstance(content, list):
            raise InvalidItemError(f"{where}: 'content' must be a string or a list of parts")
        for position, part in enumerate(content):
            if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                raise InvalidItemError(f"{where}, part {position}: needs a string 'type'")
    if role == "tool":
        require_str(item, "tool_call_id", where, empty_ok=False)
    if "tool_calls" in item:
        if role != "assistant":
            raise InvalidItemError(f"{where}: only an assistant message has 'tool_calls'")
        _validate_tool_calls(item["tool_calls"], output=True)
    if role == "assistant":
        said = ("content", "tool_calls", "function_call", "audio", "refusal")
        if all(item.get(key) is None for key in said):
            raise InvalidItemError(f"{where}: needs 'content' or 'tool_calls'")
