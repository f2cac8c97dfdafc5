"""OpenAI Responses with reasoning bound to its prefix, as the provider documents it (late 2026).

Rules implemented (guide keep-prefix-unchanged; the SDK's ``Response.input_transformations``):

- Every response's ``output`` is a ``reasoning`` item (``id`` and ``encrypted_content`` minted
  by the emulator) followed by a ``message`` or one ``function_call`` per scripted call.
- A reasoning item's prefix is the request-level ``tools`` and ``text.format`` (and
  ``instructions`` unless ``instructions_bound=False``, the newer models' per-turn
  instructions), then every input item before it (``previous_response_id`` expands to that
  response's input and output). Items are compared by meaning: ids, ``status``, annotations
  and ``None`` values are left out, a string input or content counts as one text part, and
  ``input_text`` / ``output_text`` parts compare by their text.
- A reasoning item sent back whose prefix changed is dropped without error: counted in
  ``reasoning_dropped`` and reported as ``{"type": "reasoning", "action": "removed", "reason":
  "prefix_mismatch"}`` in the response's ``input_transformations``; otherwise it counts in
  ``reasoning_accepted``. An unknown reasoning item, or one not followed by the item that
  followed it, is a 400 (``invalid_request_error``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from tests.support.emulators._server import (
    Answer,
    Chain,
    LoopbackEmulator,
    Reply,
    RequestRefused,
    canonical,
    mint,
    rough_tokens,
    sse,
)

_DROP = frozenset({"id", "status", "annotations", "logprobs"})


@dataclass(frozen=True, slots=True)
class Reasoned:
    """A reasoning item the emulator minted: where it was produced and what followed it."""

    id: str
    chain: Chain
    element: int
    following: str | None
    """The kind of the item that followed it (``message:assistant`` or ``function_call``)."""
    request: int


@dataclass(frozen=True, slots=True)
class DroppedItem:
    """A reasoning item withheld from the model: request, ``input.k`` position, its id."""

    request: int
    path: str
    id: str


def _items(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    return list(value)


def _item_key(item: Mapping[str, Any]) -> str:
    return str(item.get("encrypted_content") or item.get("id") or "")


def _kind(item: Any) -> str | None:
    if not isinstance(item, dict):
        return None
    value = canonical_item(item)
    return f"message:{value['role']}" if value.get("type") == "message" else value.get("type")


def canonical_item(item: Any) -> Any:
    """The meaning of one input/output item, as the prefix comparison sees it."""
    if not isinstance(item, dict):
        return canonical(item)
    kind = item.get("type") or ("message" if "role" in item else None)
    if kind == "reasoning":
        return {"type": "reasoning", "key": _item_key(item)}
    if kind == "message":
        content = item.get("content")
        parts = (
            [{"type": "input_text", "text": content}]
            if isinstance(content, str)
            else list(content or [])
        )
        norm = []
        for part in parts:
            if isinstance(part, dict) and part.get("type") in ("input_text", "output_text"):
                norm.append({"type": "text", "text": part.get("text")})
            else:
                norm.append(canonical(part, _DROP))
        return {"type": "message", "role": item.get("role"), "content": norm}
    return canonical({**item, "type": kind}, _DROP)


class ResponsesEmulator(LoopbackEmulator):
    """``POST /v1/responses`` with reasoning dropped after a prefix change (module docstring)."""

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        default: Reply | None = None,
        instructions_bound: bool = True,
        max_requests: int = 1000,
    ) -> None:
        super().__init__(replies, default=default, max_requests=max_requests)
        self.instructions_bound = instructions_bound
        self._reasoned: dict[str, Reasoned] = {}
        self._contexts: dict[str, list[Any]] = {}
        self.reasoning_accepted = 0
        """Reasoning items sent back whose prefix was unchanged."""
        self.reasoning_dropped = 0
        """Reasoning items sent back after a prefix change (withheld from the model)."""
        self.dropped: list[DroppedItem] = []
        """Each dropped reasoning item, in request order."""

    def client(self, **kwargs: Any) -> Any:
        """An ``openai.OpenAI`` client pointed at this emulator (no retries)."""
        import openai

        return openai.OpenAI(base_url=self.url + "/v1", api_key="test", max_retries=0, **kwargs)

    def refusal_body(self, refused: RequestRefused) -> Any:
        return {
            "error": {
                "message": refused.message,
                "type": "invalid_request_error" if refused.status < 500 else "server_error",
                "param": refused.path or None,
                "code": None,
            }
        }

    def handle(self, method: str, path: str, headers: dict[str, str], body: Any) -> Answer:
        if method != "POST" or path.split("?", maxsplit=1)[0] != "/v1/responses":
            raise RequestRefused(404, path, "path", f"no such endpoint: {method} {path}")
        if not isinstance(body, dict) or "input" not in body:
            raise RequestRefused(400, "input", "shape", "Missing required parameter: 'input'.")
        request = len(self.requests)
        items = self._read(request, body)
        chain = Chain.of(self._elements(body, items))
        removed = self._check(request, items, chain)
        reply = self.next_reply()
        output, after = self._produce(request, body, items, self._output(reply))
        response_id = mint("resp_")
        self._contexts[response_id] = after
        model = str(body.get("model", ""))
        response = {
            "id": response_id,
            "object": "response",
            "created_at": time.time(),
            "model": model,
            "status": "completed",
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "input_transformations": removed,
            "usage": {
                "input_tokens": rough_tokens(items),
                "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                "output_tokens": rough_tokens(output),
                "output_tokens_details": {"reasoning_tokens": 8},
                "total_tokens": rough_tokens(items) + rough_tokens(output),
            },
        }
        if body.get("stream"):
            return Answer(200, None, stream=tuple(self._stream(response)))
        return Answer(200, response)

    def _read(self, request: int, body: Mapping[str, Any]) -> list[Any]:
        """What the model reads of the request: its whole context."""
        return self._context(body)

    def _produce(
        self, request: int, body: Mapping[str, Any], items: list[Any], output: list[Any]
    ) -> tuple[list[Any], list[Any]]:
        """The response's output for ``items``, its reasoning recorded, and the context a
        ``previous_response_id`` naming it stands for."""
        self._record(request, body, items, output)
        return output, items + output

    def _context(self, body: Mapping[str, Any]) -> list[Any]:
        earlier: list[Any] = []
        previous = body.get("previous_response_id")
        if previous is not None:
            if previous not in self._contexts:
                raise RequestRefused(
                    400,
                    "previous_response_id",
                    "previous",
                    f"Previous response with id '{previous}' not found.",
                )
            earlier = list(self._contexts[previous])
        return earlier + _items(body.get("input"))

    def _elements(self, body: Mapping[str, Any], items: list[Any]) -> Iterator[tuple[str, Any]]:
        yield "tools", canonical(body.get("tools") or [], _DROP)
        text = body.get("text") or {}
        yield "text.format", canonical(text.get("format") if isinstance(text, dict) else None)
        if self.instructions_bound:
            yield "instructions", body.get("instructions")
        for k, item in enumerate(items):
            yield f"input.{k}", canonical_item(item)

    def _check(self, request: int, items: list[Any], chain: Chain) -> list[dict[str, str]]:
        offset = len(chain.paths) - len(items)
        removed: list[dict[str, str]] = []
        dropped: list[DroppedItem] = []
        accepted = 0
        for k, item in enumerate(items):
            if not isinstance(item, dict) or item.get("type") != "reasoning":
                continue
            known = self._reasoned.get(_item_key(item))
            if known is None:
                raise RequestRefused(
                    400,
                    f"input.{k}",
                    "unknown_reasoning",
                    f"Item '{item.get('id')}' of type 'reasoning' was not produced here: its "
                    "encrypted content could not be verified.",
                )
            after = items[k + 1] if k + 1 < len(items) else None
            if _kind(after) != known.following:
                raise RequestRefused(
                    400,
                    f"input.{k}",
                    "following_item",
                    f"Item '{known.id}' of type 'reasoning' was provided without its required "
                    "following item.",
                )
            if chain.before(offset + k) == known.chain.before(known.element):
                accepted += 1
                continue
            dropped.append(DroppedItem(request, f"input.{k}", known.id))
            removed.append(
                {
                    "id": known.id,
                    "action": "removed",
                    "reason": "prefix_mismatch",
                    "type": "reasoning",
                }
            )
        self.reasoning_accepted += accepted
        self.reasoning_dropped += len(dropped)
        self.dropped.extend(dropped)
        return removed

    @staticmethod
    def _output(reply: Reply) -> list[dict[str, Any]]:
        output: list[dict[str, Any]] = [
            {
                "type": "reasoning",
                "id": mint("rs_"),
                "summary": [],
                "encrypted_content": mint("enc_"),
            }
        ]
        if reply.text or not reply.tool_calls:
            output.append(
                {
                    "type": "message",
                    "id": mint("msg_"),
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
                }
            )
        for call in reply.tool_calls:
            output.append(
                {
                    "type": "function_call",
                    "id": mint("fc_"),
                    "call_id": mint("call_"),
                    "name": call.name,
                    "arguments": json.dumps(call.arguments),
                    "status": "completed",
                }
            )
        return output

    def _record(
        self, request: int, body: Mapping[str, Any], items: list[Any], output: list[Any]
    ) -> None:
        produced = Chain.of(self._elements(body, items + output))
        offset = len(produced.paths) - len(items) - len(output)
        for k, item in enumerate(output):
            if item["type"] == "reasoning":
                following = _kind(output[k + 1]) if k + 1 < len(output) else None
                reasoned = Reasoned(
                    item["id"], produced, offset + len(items) + k, following, request
                )
                self._reasoned[item["encrypted_content"]] = reasoned
                self._reasoned[item["id"]] = reasoned

    @staticmethod
    def _stream(response: dict[str, Any]) -> Iterator[str]:
        shell = {**response, "status": "in_progress", "output": []}
        events: list[tuple[str | None, Any]] = [
            (
                "response.created",
                {"type": "response.created", "response": shell, "sequence_number": 0},
            ),
        ]
        for k, item in enumerate(response["output"]):
            events.append(
                (
                    "response.output_item.added",
                    {"type": "response.output_item.added", "output_index": k, "item": item},
                )
            )
            events.append(
                (
                    "response.output_item.done",
                    {"type": "response.output_item.done", "output_index": k, "item": item},
                )
            )
        events.append(("response.completed", {"type": "response.completed", "response": response}))
        numbered = []
        for n, (name, data) in enumerate(events):
            numbered.append((name, {**data, "sequence_number": n}))
        yield from sse(numbered)
