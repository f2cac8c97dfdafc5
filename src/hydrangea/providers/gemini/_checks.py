"""Checks of Gemini Contents: strict for what the caller builds, lenient for model output,
and the one canonical (snake_case) form of a Content.

:func:`validate_strict` checks every part against what the API accepts. :func:`check_output`
checks only what the library relies on (roles, function calls and responses, signatures),
keeping part kinds it does not know. :func:`canonical` renames the REST API's camelCase keys
to the SDK's snake_case, deterministically, outside tool payloads (``args``, ``response``),
so the REST body and the SDK object of one response give the same item.
"""

from __future__ import annotations

import base64
import re
from typing import Any

from hydrangea.errors import GatewayMismatchError, InvalidItemError
from hydrangea.providers.native import NativeContent

__all__ = ["canonical", "check_output", "validate_strict"]

_DATA_KEYS = frozenset(
    {
        "text",
        "inline_data",
        "file_data",
        "function_call",
        "function_response",
        "executable_code",
        "code_execution_result",
        "tool_call",
        "tool_response",
    }
)
_META_KEYS = frozenset(
    {
        "thought",
        "thought_signature",
        "video_metadata",
        "media_resolution",
        "part_metadata",
        "audio_transcription",
        "media_processing",
        "speech_metadata",
        "document_metadata",
        "spreadsheet_metadata",
        "audio_metadata",
    }
)
_MODEL_ONLY = frozenset({"function_call", "thought", "thought_signature", "executable_code"})
_USER_ONLY = frozenset({"function_response"})
_CAMEL = {
    "thoughtSignature": "thought_signature",
    "inlineData": "inline_data",
    "fileData": "file_data",
    "functionCall": "function_call",
    "functionResponse": "function_response",
    "executableCode": "executable_code",
    "codeExecutionResult": "code_execution_result",
    "videoMetadata": "video_metadata",
    "mediaResolution": "media_resolution",
    "partMetadata": "part_metadata",
    "mimeType": "mime_type",
    "fileUri": "file_uri",
    "displayName": "display_name",
    "willContinue": "will_continue",
    "partialArgs": "partial_args",
}
_FOREIGN_PART_TYPES = frozenset(
    {"thinking", "redacted_thinking", "tool_use", "tool_result", "reasoning", "function_call"}
)


def _check_foreign(item: NativeContent) -> None:
    role = item.get("role")
    if "content" in item or role in ("assistant", "tool", "developer"):
        raise GatewayMismatchError(
            "this looks like an OpenAI or Anthropic message (role/content), not a Gemini "
            "Content (role/parts)"
        )
    if "role" not in item and isinstance(item.get("type"), str):
        raise GatewayMismatchError(
            f"a {item['type']!r} item is an OpenAI Responses item, not a Gemini Content"
        )


def _role_and_parts(item: NativeContent) -> tuple[str, list[Any]]:
    _check_foreign(item)
    role = item.get("role")
    if not isinstance(role, str) or role not in ("user", "model", "system"):
        raise InvalidItemError(
            f"a Gemini item needs role 'user', 'model' or 'system', got {role!r}"
        )
    extra = set(item) - {"role", "parts"}
    if extra:
        raise InvalidItemError(f"unknown key(s) {sorted(extra)} in a Gemini {role} item")
    parts = item.get("parts")
    if not isinstance(parts, list) or not parts:
        raise InvalidItemError(f"a Gemini {role} item needs a non-empty 'parts' list")
    return role, parts


def validate_strict(item: NativeContent) -> None:
    """Check role and every part against what the Gemini API accepts."""
    role, parts = _role_and_parts(item)
    for index, part in enumerate(parts):
        _check_part(role, index, part)


def check_output(item: NativeContent) -> None:
    """Check only what the library relies on; part kinds it does not know are kept."""
    role, parts = _role_and_parts(item)
    for index, part in enumerate(parts):
        where = f"part {index} of a Gemini {role} item"
        if not isinstance(part, dict):
            raise InvalidItemError(f"{where} must be an object, got {type(part).__name__}")
        if isinstance(part.get("type"), str) and part["type"] in _FOREIGN_PART_TYPES:
            raise GatewayMismatchError(
                f"{where}: a {part['type']!r} block belongs to another gateway"
            )
        if role == "system" and not isinstance(part.get("text"), str):
            raise InvalidItemError(f"{where}: a system item carries text parts only")
        for key in ("function_call", "thought", "thought_signature"):
            if key in part and role != "model":
                raise InvalidItemError(f"{where}: {key!r} belongs in a model turn")
        if "function_response" in part and role != "user":
            raise InvalidItemError(f"{where}: 'function_response' belongs in a user turn")
        _check_values(where, part, strict=False)


def _snake(key: str) -> str:
    return _CAMEL.get(key) or _CAMEL_RE.sub(lambda m: "_" + m.group(0).lower(), key)


_CAMEL_RE = re.compile(r"(?<=[a-z0-9])[A-Z]")
_PAYLOAD_KEYS = frozenset({"args", "response", "partial_args"})


_NAMES: dict[str, str] = {}
"""Memo of :func:`_snake` for the keys met so far (bounded: cleared when it gets large)."""


def _renamed(value: Any) -> Any:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, inner in value.items():
            text = str(key)
            name = _NAMES.get(text)
            if name is None:
                if len(_NAMES) >= 4096:
                    _NAMES.clear()
                name = _NAMES[text] = _snake(text)
            plain = name in _PAYLOAD_KEYS or type(inner) in _ATOMS
            out[name] = inner if plain else _renamed(inner)
        return out
    if isinstance(value, list):
        return [inner if type(inner) in _ATOMS else _renamed(inner) for inner in value]
    return value


_ATOMS = frozenset({str, int, float, bool, type(None)})


def canonical(content: NativeContent) -> NativeContent:
    """``content`` with its parts' camelCase keys renamed to snake_case (payloads untouched).

    The rule is mechanical (an upper-case letter after a lower-case one or digit becomes ``_``
    plus its lower case), so a part kind the library does not know yet is renamed the same way
    the SDK names it. Keys already in snake_case are left as they are.
    """
    parts = content.get("parts")
    if not isinstance(parts, list):
        return content
    return {**content, "parts": [_renamed(part) for part in parts]}


def _check_part(role: str, index: int, part: object) -> None:
    where = f"part {index} of a Gemini {role} item"
    if not isinstance(part, dict):
        raise InvalidItemError(f"{where} must be an object, got {type(part).__name__}")
    if isinstance(part.get("type"), str) and part["type"] in _FOREIGN_PART_TYPES:
        raise GatewayMismatchError(f"{where}: a {part['type']!r} block belongs to another gateway")
    camel = sorted(key for key in part if key in _CAMEL)
    if camel:
        raise InvalidItemError(f"{where}: use snake_case keys, not {camel}")
    unknown = set(part) - _DATA_KEYS - _META_KEYS
    if unknown:
        raise InvalidItemError(f"{where} has unknown key(s) {sorted(unknown)}")
    data = [key for key in part if key in _DATA_KEYS]
    if len(data) > 1:
        raise InvalidItemError(f"{where} holds several kinds of data {sorted(data)}")
    if not data and "thought_signature" not in part:
        raise InvalidItemError(f"{where} holds no data (text, inline_data, function_call, ...)")
    if role == "system" and set(part) != {"text"}:
        raise InvalidItemError(f"{where}: a system item carries text parts only")
    for key in part:
        if key in _MODEL_ONLY and role != "model":
            raise InvalidItemError(f"{where}: {key!r} belongs in a model turn")
        if key in _USER_ONLY and role != "user":
            raise InvalidItemError(f"{where}: {key!r} belongs in a user turn")
    _check_values(where, part)


def _check_values(where: str, part: dict[str, Any], *, strict: bool = True) -> None:
    if "text" in part and not isinstance(part["text"], str):
        raise InvalidItemError(f"{where}: 'text' must be a string")
    if strict and part.get("text") == "" and "thought_signature" not in part:
        raise InvalidItemError(f"{where}: the API rejects an empty text part")
    if "thought" in part and not isinstance(part["thought"], bool):
        raise InvalidItemError(f"{where}: 'thought' must be a boolean")
    if "thought_signature" in part:
        _check_base64(where, "thought_signature", part["thought_signature"])
    if "inline_data" in part:
        blob = part["inline_data"]
        if not isinstance(blob, dict) or not isinstance(blob.get("mime_type"), str):
            raise InvalidItemError(f"{where}: 'inline_data' needs a 'mime_type' string")
        if strict or "data" in blob:
            _check_base64(where, "inline_data.data", blob.get("data"))
    if "file_data" in part and strict:
        file_data = part["file_data"]
        if not isinstance(file_data, dict) or not isinstance(file_data.get("file_uri"), str):
            raise InvalidItemError(f"{where}: 'file_data' needs a 'file_uri' string")
    if "function_call" in part:
        call = part["function_call"]
        if not isinstance(call, dict) or not isinstance(call.get("name"), str) or not call["name"]:
            raise InvalidItemError(f"{where}: 'function_call' needs a non-empty 'name'")
        if not isinstance(call.get("args", {}), dict):
            raise InvalidItemError(f"{where}: 'function_call.args' must be an object")
        if call.get("id") is not None and (not isinstance(call["id"], str) or not call["id"]):
            raise InvalidItemError(f"{where}: 'function_call.id' must be a non-empty string")
    if "function_response" in part:
        response = part["function_response"]
        if not isinstance(response, dict):
            raise InvalidItemError(f"{where}: 'function_response' must be an object")
        ident, name = response.get("id"), response.get("name")
        if not (isinstance(ident, str) and ident) and not (isinstance(name, str) and name):
            raise InvalidItemError(f"{where}: 'function_response' needs an 'id' or a 'name'")
        if not isinstance(response.get("response", {}), dict):
            raise InvalidItemError(f"{where}: 'function_response.response' must be an object")


def _check_base64(where: str, key: str, value: object) -> None:
    if not isinstance(value, str) or not value:
        raise InvalidItemError(f"{where}: {key!r} must be a non-empty base64 string")
    try:
        base64.b64decode(value.replace("-", "+").replace("_", "/"), validate=True)
    except ValueError as exc:
        raise InvalidItemError(f"{where}: {key!r} is not valid base64 ({exc})") from exc
