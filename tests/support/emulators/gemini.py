"""Gemini ``generateContent`` with thought signatures, as the provider documents it (Gemini 3+).

Rules implemented (Gemini thinking / thought-signatures docs, function calling):

- A reply's first ``functionCall`` part of each step carries a ``thoughtSignature`` minted by
  the emulator (parallel calls after it carry none); a text-only reply carries one on its text
  part (returned by the client as recommended, not enforced).
- A signature sent back must be one the emulator minted and sit on the same part it came on:
  a function-call signature on a part holding that same ``functionCall`` (name and args), a
  text signature on a text part. Otherwise 400 ``INVALID_ARGUMENT`` "Invalid thought
  signature" (a signature moved to another part, or edited).
- In the current turn (the model turns after the latest user content with text; function
  responses do not start a turn), the first ``functionCall`` of each model content, and every
  call that was minted with a signature, must carry its signature, else 400 "Function call is
  missing a thought_signature in functionCall parts". ``check_all_turns=True`` applies this
  to every turn.
- Signatures compare as bytes: google-genai re-encodes them in URL-safe base64.
"""

from __future__ import annotations

import base64
import binascii
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tests.support.emulators._server import (
    Answer,
    LoopbackEmulator,
    Reply,
    RequestRefused,
    canonical,
    digest,
    mint,
    rough_tokens,
    sse,
)


@dataclass(frozen=True, slots=True)
class Signed:
    """A minted signature: the part kind it rides on and, for a call, the call's canonical form."""

    kind: str
    call: Any
    request: int


def signature_bytes(value: str) -> bytes | None:
    """The bytes of a base64 signature in either alphabet, or ``None`` if it is not base64."""
    text_ = value.replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(text_ + "=" * (-len(text_) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


def _call(part: dict[str, Any]) -> Any:
    call = part.get("functionCall") or {}
    return canonical({"name": call.get("name"), "args": call.get("args") or {}})


class GeminiEmulator(LoopbackEmulator):
    """``POST /{version}/models/{model}:generateContent`` (and ``:streamGenerateContent``)."""

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        default: Reply | None = None,
        check_all_turns: bool = False,
        max_requests: int = 1000,
    ) -> None:
        super().__init__(replies, default=default, max_requests=max_requests)
        self.check_all_turns = check_all_turns
        self._signed: dict[bytes, Signed] = {}
        self._signed_calls: set[str] = set()
        self.signatures_checked = 0
        """Signatures sent back on their own part."""

    def client(self, **kwargs: Any) -> Any:
        """A ``google.genai.Client`` pointed at this emulator (one attempt, no retries)."""
        from google import genai
        from google.genai import types

        options = types.HttpOptions(
            base_url=self.url, retry_options=types.HttpRetryOptions(attempts=1)
        )
        return genai.Client(api_key="test", http_options=options, **kwargs)

    def refusal_body(self, refused: RequestRefused) -> Any:
        status = "INVALID_ARGUMENT" if refused.status < 500 else "INTERNAL"
        return {"error": {"code": refused.status, "message": refused.message, "status": status}}

    def handle(self, method: str, path: str, headers: dict[str, str], body: Any) -> Answer:
        route = path.split("?", maxsplit=1)[0]
        streamed = route.endswith(":streamGenerateContent")
        if method != "POST" or not (route.endswith(":generateContent") or streamed):
            raise RequestRefused(404, path, "path", f"no such endpoint: {method} {path}")
        if not isinstance(body, dict) or not isinstance(body.get("contents"), list):
            raise RequestRefused(
                400,
                "contents",
                "shape",
                "* GenerateContentRequest.contents: contents is not specified",
            )
        contents: list[dict[str, Any]] = body["contents"]
        self._check(contents)
        reply = self.next_reply()
        parts = self._parts(len(self.requests), reply)
        model = route.rsplit("/", 1)[-1].split(":")[0]
        response = {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": rough_tokens(contents),
                "candidatesTokenCount": rough_tokens(parts),
                "totalTokenCount": rough_tokens(contents) + rough_tokens(parts),
            },
            "modelVersion": model,
            "responseId": mint("gen_"),
        }
        if streamed:
            return Answer(200, None, stream=sse([(None, response)]))
        return Answer(200, response)

    def _current_turn_start(self, contents: list[dict[str, Any]]) -> int:
        if self.check_all_turns:
            return 0
        for c in range(len(contents) - 1, -1, -1):
            content = contents[c]
            if content.get("role", "user") == "user" and any(
                "text" in p for p in content.get("parts") or []
            ):
                return c
        return 0

    def _check(self, contents: list[dict[str, Any]]) -> None:
        start = self._current_turn_start(contents)
        checked = 0
        for c, content in enumerate(contents):
            if content.get("role") != "model":
                continue
            first_call = True
            for p, part in enumerate(content.get("parts") or []):
                where = f"contents[{c}].parts[{p}]"
                is_call = "functionCall" in part
                raw = part.get("thoughtSignature")
                if raw is not None:
                    key = signature_bytes(str(raw))
                    signed = self._signed.get(key) if key is not None else None
                    if signed is None:
                        raise RequestRefused(
                            400,
                            where,
                            "invalid_signature",
                            f"Invalid thought signature at {where}: corrupted or not issued.",
                        )
                    if signed.kind == "functionCall" and (
                        not is_call or _call(part) != signed.call
                    ):
                        raise RequestRefused(
                            400,
                            where,
                            "moved_signature",
                            f"Invalid thought signature at {where}: it was issued with function "
                            f"call `{signed.call['name']}` and must come back on that same part.",
                        )
                    if signed.kind == "text" and is_call:
                        raise RequestRefused(
                            400,
                            where,
                            "moved_signature",
                            f"Invalid thought signature at {where}: it was issued on a text part.",
                        )
                    checked += 1
                elif (
                    is_call
                    and c >= start
                    and (first_call or digest(_call(part)) in self._signed_calls)
                ):
                    name = (part.get("functionCall") or {}).get("name")
                    raise RequestRefused(
                        400,
                        where,
                        "missing_signature",
                        "Function call is missing a thought_signature in functionCall parts. "
                        "This is required for tools to work correctly, and missing "
                        "thought_signature may lead to degraded model performance. Additional "
                        f"data, function call `default_api:{name}`, position {p + 1} ({where}).",
                    )
                if is_call:
                    first_call = False
        self.signatures_checked += checked

    def _parts(self, request: int, reply: Reply) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        if reply.text or not reply.tool_calls:
            parts.append({"text": reply.text})
        for n, call in enumerate(reply.tool_calls):
            part: dict[str, Any] = {"functionCall": {"name": call.name, "args": call.arguments}}
            if n == 0:
                part["thoughtSignature"] = self._mint(Signed("functionCall", _call(part), request))
                self._signed_calls.add(digest(_call(part)))
            parts.append(part)
        if not reply.tool_calls:
            parts[-1]["thoughtSignature"] = self._mint(Signed("text", None, request))
        return parts

    def _mint(self, signed: Signed) -> str:
        raw = secrets.token_bytes(24)
        self._signed[raw] = signed
        return base64.b64encode(raw).decode()
