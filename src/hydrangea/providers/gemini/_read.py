"""Reading Gemini Contents back as Messages, and preparing them for another model."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from hydrangea.message import ImagePart, Message, Part, Role, TextPart, ToolCallPart, ToolResultPart
from hydrangea.providers.gemini._request import response_text
from hydrangea.providers.native import NativeContent
from hydrangea.providers.pairing import stable_call_id

__all__ = ["OTHER_MODEL_SIGNATURE", "read_content", "without_signatures"]

OTHER_MODEL_SIGNATURE = "skip_thought_signature_validator"
"""The placeholder thought signature Google documents for function calls that the current model
did not make (history written by another model): Gemini 3 validates signatures on the calls of
the current turn and accepts this value in their place."""


def read_content(item: NativeContent, ids: Mapping[int, str] | None = None) -> list[Message]:
    """``item`` as Messages (see ``GeminiAdapter.to_messages``)."""
    role = item.get("role")
    parts: list[Part] = []
    ordinals: dict[str, int] = {}
    for slot, part in enumerate(item.get("parts", [])):
        if not isinstance(part, dict) or part.get("thought") is True:
            continue
        if isinstance(part.get("text"), str) and part["text"]:
            parts.append(TextPart(text=part["text"]))
        elif isinstance(part.get("inline_data"), dict):
            image = _inline_image(part["inline_data"])
            if image is not None:
                parts.append(image)
        elif isinstance(part.get("file_data"), dict) and isinstance(
            part["file_data"].get("file_uri"), str
        ):
            mime = part["file_data"].get("mime_type")
            if mime is None or (isinstance(mime, str) and mime.startswith("image/")):
                parts.append(ImagePart(url=part["file_data"]["file_uri"], media_type=mime))
        elif role == "model" and isinstance(part.get("function_call"), dict):
            call = part["function_call"]
            ident = call.get("id")
            if not isinstance(ident, str) or not ident:
                if ids is not None and slot in ids:
                    ident = ids[slot]
                else:
                    ordinals[call["name"]] = ordinals.get(call["name"], 0) + 1
                    ident = stable_call_id(call["name"], ordinals[call["name"]])
            args = call.get("args")
            parts.append(
                ToolCallPart(
                    id=ident, name=call["name"], arguments=args if isinstance(args, dict) else {}
                )
            )
        elif role == "user" and isinstance(part.get("function_response"), dict):
            response = part["function_response"]
            ident = response.get("id") or response.get("name")
            payload = response.get("response", {})
            error = isinstance(payload, dict) and "error" in payload and "output" not in payload
            name = response.get("name")
            parts.append(
                ToolResultPart(
                    call_id=str(ident),
                    content=response_text(payload),
                    is_error=error,
                    name=name if isinstance(name, str) and name else None,
                )
            )
    if not parts:
        return []
    if role == "system":
        return [
            Message(
                role=Role.system,
                content="\n".join(p.text for p in parts if isinstance(p, TextPart)),
            )
        ]
    return [Message(role=Role.assistant if role == "model" else Role.user, content=tuple(parts))]


def _inline_image(blob: dict[str, Any]) -> ImagePart | None:
    mime = blob.get("mime_type")
    data = blob.get("data")
    if not (isinstance(mime, str) and mime.startswith("image/") and isinstance(data, str)):
        return None
    try:
        raw = base64.b64decode(data.replace("-", "+").replace("_", "/"))
    except (binascii.Error, ValueError):
        return None
    return ImagePart(data=raw, media_type=mime)


def without_signatures(item: NativeContent) -> NativeContent | None:
    """``item`` for another model: no thought signatures, no ``thought`` parts, and the
    placeholder signature on the first function call of the turn (where Gemini 3 looks for
    one); a part that held only a signature is left out."""
    if item.get("role") != "model":
        return item
    parts: list[dict[str, Any]] = []
    signed_call = False
    for part in item.get("parts", []):
        if part.get("thought") is True:
            continue
        rest = {key: value for key, value in part.items() if key != "thought_signature"}
        if "function_call" in rest and not signed_call:
            rest["thought_signature"] = OTHER_MODEL_SIGNATURE
            signed_call = True
        if set(rest) - {"text"} or rest.get("text"):
            parts.append(rest)
    if parts == item.get("parts"):
        return item
    return {**item, "parts": parts} if parts else None
