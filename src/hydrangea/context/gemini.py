"""The Google Gemini gateway (google-genai, ``client.models.generate_content``).

A stored item is one Gemini ``Content`` as JSON with the SDK's snake_case field names,
``{"role": "user" | "model", "parts": [...]}``. Bytes are base64 strings: ``inline_data.data``
and ``thought_signature``. A system message is stored as the pseudo-item
``{"role": "system", "parts": [{"text": ...}]}`` (:class:`GeminiSystemItem`);
:meth:`GeminiAdapter.build_request` places it (see :mod:`._gemini_request`).

Reasoning state: a part carrying ``thought_signature`` is kept whole, the signature as the
base64 text the API sent (the SDK hands it over as bytes; it is stored in standard base64 with
padding, which is how the API encodes bytes in JSON). ``thought`` parts are kept as they came.

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
from enum import Enum
from typing import Any, Literal, TypedDict, assert_never

from hydrangea.context._gemini_request import (
    LEADING_USER_PLACEHOLDER,
    SYSTEM_NOTICE_PREFIX,
    build_gemini_request,
    response_text,
)
from hydrangea.context._output import dict_entries, reject_other_sdk
from hydrangea.context.adapter import Adapter
from hydrangea.context.native import NativeContent, copy_json
from hydrangea.context.sdk import native_output
from hydrangea.errors import GatewayMismatchError, InvalidItemError
from hydrangea.gateway import GatewayType
from hydrangea.message import ImagePart, Message, Role, TextPart, ToolCallPart, ToolResultPart

__all__ = [
    "LEADING_USER_PLACEHOLDER",
    "SYSTEM_NOTICE_PREFIX",
    "GeminiAdapter",
    "GeminiContentItem",
    "GeminiSystemItem",
]

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


class GeminiSystemItem(TypedDict):
    """A system message; the leading run becomes ``config.system_instruction``."""

    role: Literal["system"]
    parts: list[dict[str, Any]]


class GeminiContentItem(TypedDict):
    """One Gemini ``Content`` (``google.genai.types.Content`` as snake_case JSON)."""

    role: Literal["user", "model"]
    parts: list[dict[str, Any]]


class GeminiAdapter(Adapter):
    """Adapter for Gemini through the google-genai SDK. Stateless."""

    gateway = GatewayType.gemini

    def from_message(self, message: Message) -> list[NativeContent]:
        """One Content per message (role ``model`` for the assistant)."""
        match message.role:
            case Role.system:
                return [{"role": "system", "parts": [_part_from(p) for p in message.parts]}]
            case Role.user:
                return [{"role": "user", "parts": [_part_from(p) for p in message.parts]}]
            case Role.assistant:
                return [{"role": "model", "parts": [_part_from(p) for p in message.parts]}]
            case _:
                assert_never(message.role)

    def from_output(self, output: object) -> list[NativeContent]:
        """Read a ``GenerateContentResponse`` (first candidate), a ``Content``, or JSON.

        JSON may be a Content dict, a list of them, or a raw REST response body with
        ``candidates``; camelCase keys of the REST form are renamed to snake_case.
        """
        output = native_output(output, self.gateway)
        if isinstance(output, dict):
            if "candidates" in output:
                return [_normalise(_first_candidate_json(output))]
            return [_normalise(output)]
        if isinstance(output, list):
            entries = dict_entries(output, "expected a Gemini Content dict")
            return [_normalise(entry) for entry in entries]
        reject_other_sdk(output, self.gateway, ("openai", "anthropic"))
        if type(output).__module__.startswith("google.genai"):
            content = output
            if hasattr(output, "candidates"):
                candidates = output.candidates or []
                if not candidates or getattr(candidates[0], "content", None) is None:
                    raise InvalidItemError("the Gemini response has no candidate content")
                content = candidates[0].content
            dump = getattr(content, "model_dump", None)
            if dump is not None and hasattr(content, "parts"):
                return [copy_json(_jsonable(dump(mode="python", exclude_none=True)))]
        raise InvalidItemError(
            f"cannot read {type(output).__name__} as Gemini output: pass a "
            "GenerateContentResponse, a Content, a Content dict or a list of them"
        )

    def validate(self, item: NativeContent) -> None:
        """Check role and every part against what the Gemini API accepts."""
        if "content" in item or item.get("role") in {"assistant", "tool", "developer"}:
            raise GatewayMismatchError(
                "this looks like an OpenAI or Anthropic message (role/content), not a Gemini "
                "Content (role/parts)"
            )
        if "role" not in item and isinstance(item.get("type"), str):
            raise GatewayMismatchError(
                f"a {item['type']!r} item is an OpenAI Responses item, not a Gemini Content"
            )
        role = item.get("role")
        if role not in {"user", "model", "system"}:
            raise InvalidItemError(
                f"a Gemini item needs role 'user', 'model' or 'system', got {role!r}"
            )
        extra = set(item) - {"role", "parts"}
        if extra:
            raise InvalidItemError(f"unknown key(s) {sorted(extra)} in a Gemini {role} item")
        parts = item.get("parts")
        if not isinstance(parts, list) or not parts:
            raise InvalidItemError(f"a Gemini {role} item needs a non-empty 'parts' list")
        for index, part in enumerate(parts):
            _check_part(role, index, part)

    def opens_exchange(self, item: NativeContent) -> bool:
        """True for a Content holding a ``function_call`` part."""
        return _has_part(item, "function_call")

    def closes_exchange(self, item: NativeContent) -> bool:
        """True for a Content holding a ``function_response`` part."""
        return _has_part(item, "function_response")

    def build_request(self, items: Sequence[NativeContent]) -> dict[str, Any]:
        """``{"contents": [...], "config"?: {"system_instruction": ...}}``."""
        return build_gemini_request(items)

    def item_text(self, item: NativeContent) -> str:
        """Text, call arguments (JSON) and function responses; no signatures or bytes."""
        chunks: list[str] = []
        for part in item.get("parts", []):
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("text"), str):
                chunks.append(part["text"])
            elif isinstance(part.get("function_call"), dict):
                chunks.append(json.dumps(part["function_call"].get("args", {}), sort_keys=True))
            elif isinstance(part.get("function_response"), dict):
                chunks.append(response_text(part["function_response"].get("response", {})))
        return "\n".join(chunks)


def _part_from(part: TextPart | ImagePart | ToolCallPart | ToolResultPart) -> dict[str, Any]:
    match part:
        case TextPart():
            return {"text": part.text}
        case ImagePart():
            if part.url is not None:
                file_data = {"file_uri": part.url}
                if part.media_type is not None:
                    file_data["mime_type"] = part.media_type
                return {"file_data": file_data}
            assert part.data is not None and part.media_type is not None
            encoded = base64.b64encode(part.data).decode("ascii")
            return {"inline_data": {"mime_type": part.media_type, "data": encoded}}
        case ToolCallPart():
            call = {"id": part.id, "name": part.name, "args": copy_json(part.arguments)}
            return {"function_call": call}
        case ToolResultPart():
            key = "error" if part.is_error else "output"
            return {"function_response": {"id": part.call_id, "response": {key: part.content}}}
        case _:
            assert_never(part)


def _has_part(item: NativeContent, key: str) -> bool:
    parts = item.get("parts")
    return isinstance(parts, list) and any(isinstance(part, dict) and key in part for part in parts)


def _first_candidate_json(body: dict[str, Any]) -> dict[str, Any]:
    candidates = body.get("candidates")
    if not isinstance(candidates, list) or not candidates:
        raise InvalidItemError("the Gemini response has no candidates")
    content = candidates[0].get("content") if isinstance(candidates[0], dict) else None
    if not isinstance(content, dict):
        raise InvalidItemError("the first Gemini candidate has no content")
    return content


def _normalise(content: dict[str, Any]) -> dict[str, Any]:
    """Rename the REST form's camelCase part keys (not inside args or responses)."""
    parts = content.get("parts")
    if not isinstance(parts, list):
        return content
    renamed = []
    for part in parts:
        if not isinstance(part, dict):
            renamed.append(part)
            continue
        fixed: dict[str, Any] = {}
        for key, value in part.items():
            new_key = _CAMEL.get(str(key), str(key))
            nested = new_key in {"inline_data", "file_data", "function_call"}
            if nested and isinstance(value, dict):
                fixed[new_key] = {_CAMEL.get(k, k): v for k, v in value.items()}
            else:
                fixed[new_key] = value
        renamed.append(fixed)
    return {**content, "parts": renamed}


def _jsonable(value: object) -> object:
    """SDK python dump to JSON values: bytes as standard base64, enums as their values."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {key: _jsonable(inner) for key, inner in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(inner) for inner in value]
    return value


def _check_part(role: str, index: int, part: object) -> None:
    where = f"part {index} of a Gemini {role} item"
    if not isinstance(part, dict):
        raise InvalidItemError(f"{where} must be an object, got {type(part).__name__}")
    if part.get("type") in _FOREIGN_PART_TYPES:
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


def _check_values(where: str, part: dict[str, Any]) -> None:
    if "text" in part and not isinstance(part["text"], str):
        raise InvalidItemError(f"{where}: 'text' must be a string")
    if part.get("text") == "" and "thought_signature" not in part:
        raise InvalidItemError(f"{where}: the API rejects an empty text part")
    if "thought" in part and not isinstance(part["thought"], bool):
        raise InvalidItemError(f"{where}: 'thought' must be a boolean")
    if "thought_signature" in part:
        _check_base64(where, "thought_signature", part["thought_signature"])
    if "inline_data" in part:
        blob = part["inline_data"]
        if not isinstance(blob, dict) or not isinstance(blob.get("mime_type"), str):
            raise InvalidItemError(f"{where}: 'inline_data' needs a 'mime_type' string")
        _check_base64(where, "inline_data.data", blob.get("data"))
    if "file_data" in part:
        file_data = part["file_data"]
        if not isinstance(file_data, dict) or not isinstance(file_data.get("file_uri"), str):
            raise InvalidItemError(f"{where}: 'file_data' needs a 'file_uri' string")
    if "function_call" in part:
        call = part["function_call"]
        if not isinstance(call, dict) or not isinstance(call.get("name"), str) or not call["name"]:
            raise InvalidItemError(f"{where}: 'function_call' needs a non-empty 'name'")
        if not isinstance(call.get("args", {}), dict):
            raise InvalidItemError(f"{where}: 'function_call.args' must be an object")
        if "id" in call and (not isinstance(call["id"], str) or not call["id"]):
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
