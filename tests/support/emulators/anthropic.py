"""Anthropic Messages with preserved thinking, as the provider documents it (late 2026).

Rules implemented (pages: build-with-claude/preserved-thinking, .../prefix-checks,
.../change-tools-or-instructions, mid-conversation-system-messages; the SDK's
``BetaThinkingDroppedInputTransformation`` / ``BetaThinkingBlockBindingParam`` docstrings):

- Every reply carries a ``thinking`` block whose ``signature`` the emulator mints (and a
  ``redacted_thinking`` block on demand), then text or ``tool_use`` blocks.
- Each bound block is recorded with a hash of its prefix: top-level ``system``, ``tools``,
  every earlier message and the earlier blocks of its own message. ``cache_control`` keys and
  ``None`` values are left out; a string ``content``/``system`` counts as one text block.
- A request to a preserved-thinking model that sends a block back is checked block by block:
  an unknown signature or an edited block is always a 400; a block the requested model may not
  read (``reads``) is dropped without error (``model_binding_mismatch``); a changed prefix
  (which also covers a thinking block between others left out or moved) is, by
  ``thinking.block_binding.prefix_mismatch_behavior`` or else the account's ``mismatch``:
  ``"error"`` a 400 ``invalid_request_error`` "... bound to a different conversation",
  ``"drop_block"`` the block and the rest of that turn's consecutive thinking blocks dropped,
  ``"allow"`` (an older account) kept and reported as ``thinking_mismatch_allowed``.
  Drops are listed in ``drops`` always, and in the response's ``input_transformations`` when
  the request sends ``anthropic-beta: thinking-binding-controls-2026-08-01``.
- A mid-conversation ``role: "system"`` message must not be first, must immediately follow a
  user message (or an assistant message ending in ``server_tool_use``), and must be last or be
  followed by an assistant message; otherwise 400. Two system messages in a row are refused
  (the second does not follow a user message).
- ``tool_use`` blocks must be answered by ``tool_result`` blocks in the next message, and a
  ``tool_result`` must answer a ``tool_use`` of the message before it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

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

PRESERVED_THINKING_MODELS = frozenset(
    {
        "claude-fable-5-2",
        "claude-mythos-5-2",
        "claude-fable-5-1",
        "claude-mythos-5-1",
        "claude-opus-5-5",
        "claude-sonnet-5-5",
        "claude-haiku-5-5",
    }
)
"""Models that run the prefix check (a dated suffix such as ``-20261001`` is allowed)."""

BINDING_BETA = "thinking-binding-controls-2026-08-01"
BOUND_TYPES = frozenset({"thinking", "redacted_thinking"})
_DROP = frozenset({"cache_control"})

Mismatch = Literal["error", "drop_block", "allow"]


def preserved(model: str) -> bool:
    """Whether ``model`` (maybe with a date suffix) runs the prefix check."""
    return any(model == m or model.startswith(m + "-") for m in PRESERVED_THINKING_MODELS)


@dataclass(frozen=True, slots=True)
class Bound:
    """A bound block the emulator minted: its model, the context it was produced in (``chain``,
    the block at element ``element``) and its canonical form."""

    model: str
    chain: Chain
    element: int
    block: Any
    request: int


@dataclass(frozen=True, slots=True)
class Dropped:
    """A bound block left out of what the model saw: request, ``messages.i.content.j``, reason."""

    request: int
    path: str
    reason: str


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content or [])


def _key(block: Mapping[str, Any]) -> str:
    value = block.get("signature") if block.get("type") == "thinking" else block.get("data")
    return str(value or "")


class AnthropicEmulator(LoopbackEmulator):
    """``POST /v1/messages`` under the preserved-thinking rules (see the module docstring).

    ``mismatch`` is the account's default prefix-mismatch behaviour; ``reads`` maps a model to
    the other models whose thinking it may read (every model reads its own).
    """

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        default: Reply | None = None,
        mismatch: Mismatch = "error",
        reads: Mapping[str, Iterable[str]] | None = None,
        max_requests: int = 1000,
    ) -> None:
        super().__init__(replies, default=default, max_requests=max_requests)
        self.mismatch: Mismatch = mismatch
        self._reads = {k: frozenset(v) for k, v in (reads or {}).items()}
        self._bound: dict[str, Bound] = {}
        self.drops: list[Dropped] = []
        """Every bound block dropped (model or prefix binding), in request order."""
        self.allowed: list[Dropped] = []
        """Blocks that failed the prefix check but were kept (``mismatch="allow"``)."""
        self.checked = 0
        """How many bound blocks sent back passed every check."""

    def client(self, **kwargs: Any) -> Any:
        """An ``anthropic.Anthropic`` client pointed at this emulator (no retries)."""
        import anthropic

        return anthropic.Anthropic(base_url=self.url, api_key="test", max_retries=0, **kwargs)

    def refusal_body(self, refused: RequestRefused) -> Any:
        kind = "api_error" if refused.status >= 500 else "invalid_request_error"
        return {
            "type": "error",
            "error": {"type": kind, "message": refused.message},
            "request_id": mint("req_"),
        }

    def can_read(self, model: str, producer: str) -> bool:
        """Whether ``model`` may read thinking produced by ``producer``."""
        return model == producer or producer in self._reads.get(model, frozenset())

    # ------------------------------------------------------------------------------------
    def handle(self, method: str, path: str, headers: dict[str, str], body: Any) -> Answer:
        if method != "POST" or path.split("?", maxsplit=1)[0] != "/v1/messages":
            raise RequestRefused(404, path, "path", f"no such endpoint: {method} {path}")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            raise RequestRefused(400, "messages", "shape", "messages: Field required")
        model = str(body.get("model", ""))
        messages: list[dict[str, Any]] = body["messages"]
        if not messages:
            raise RequestRefused(
                400, "messages", "shape", "messages: at least one message is required"
            )
        self._check_structure(messages)
        chain = Chain.of(self._elements(body))
        behaviour = self._behaviour(body)
        dropped = self._check_bound(len(self.requests), model, messages, chain, behaviour)
        reply = self.next_reply()
        message = self._respond(len(self.requests), model, body, reply)
        if BINDING_BETA in headers.get("anthropic-beta", ""):
            message["input_transformations"] = dropped
        if body.get("stream"):
            return Answer(200, None, stream=tuple(self._stream(message)))
        return Answer(200, message)

    def _behaviour(self, body: Mapping[str, Any]) -> Mismatch:
        thinking = body.get("thinking") or {}
        binding = thinking.get("block_binding") or {} if isinstance(thinking, dict) else {}
        chosen = binding.get("prefix_mismatch_behavior") if isinstance(binding, dict) else None
        if chosen in ("error", "drop_block"):
            return "error" if chosen == "error" else "drop_block"
        return self.mismatch

    @staticmethod
    def _elements(body: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
        yield "system", canonical(_blocks(body.get("system")), _DROP)
        yield "tools", canonical(body.get("tools") or [], _DROP)
        for i, message in enumerate(body["messages"]):
            yield f"messages.{i}", {"role": message.get("role")}
            for j, block in enumerate(_blocks(message.get("content"))):
                yield f"messages.{i}.content.{j}", canonical(block, _DROP)

    @staticmethod
    def _check_structure(messages: list[dict[str, Any]]) -> None:
        for i, message in enumerate(messages):
            role = message.get("role")
            if role not in ("user", "assistant", "system"):
                raise RequestRefused(
                    400,
                    f"messages.{i}.role",
                    "shape",
                    f"messages.{i}.role: unexpected role {role!r}",
                )
            if role == "system":
                _check_system_placement(messages, i)
            blocks = _blocks(message.get("content"))
            calls = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
            if role == "assistant" and calls and i + 1 < len(messages):
                after = _blocks(messages[i + 1].get("content"))
                answered = {b.get("tool_use_id") for b in after if b.get("type") == "tool_result"}
                missing = [c for c in calls if c not in answered]
                if messages[i + 1].get("role") != "user" or missing:
                    raise RequestRefused(
                        400,
                        f"messages.{i + 1}",
                        "tool_result",
                        f"messages.{i + 1}: `tool_use` ids were found without `tool_result` "
                        f"blocks immediately after: {', '.join(map(str, missing or calls))}. "
                        "Each `tool_use` block must have a corresponding `tool_result` block "
                        "in the next message.",
                    )
            if role == "user":
                asked = set()
                if i > 0 and messages[i - 1].get("role") == "assistant":
                    asked = {
                        b.get("id")
                        for b in _blocks(messages[i - 1].get("content"))
                        if b.get("type") == "tool_use"
                    }
                for j, b in enumerate(blocks):
                    if b.get("type") == "tool_result" and b.get("tool_use_id") not in asked:
                        raise RequestRefused(
                            400,
                            f"messages.{i}.content.{j}",
                            "tool_result",
                            f"messages.{i}.content.{j}: unexpected `tool_use_id` found in "
                            "`tool_result` blocks. Each `tool_result` block must have a "
                            "corresponding `tool_use` block in the previous message.",
                        )

    def _check_bound(
        self,
        request: int,
        model: str,
        messages: list[dict[str, Any]],
        chain: Chain,
        behaviour: Mismatch,
    ) -> list[dict[str, str]]:
        index = {p: k for k, p in enumerate(chain.paths)}
        report: list[dict[str, str]] = []
        drops: list[Dropped] = []
        allowed: list[Dropped] = []
        checked = 0
        for i, message in enumerate(messages):
            if message.get("role") != "assistant":
                continue
            blocks = _blocks(message.get("content"))
            cascade = False  # a prefix drop takes the rest of the turn's consecutive thinking
            for j, block in enumerate(blocks):
                if block.get("type") not in BOUND_TYPES:
                    cascade = False
                    continue
                path = f"messages.{i}.content.{j}"
                bound = self._bound.get(_key(block))
                if bound is None:
                    raise RequestRefused(
                        400,
                        path,
                        "signature",
                        f"{path}: Invalid `signature` in `{block.get('type')}` block: the "
                        "emulator never produced it.",
                    )
                if canonical(block, _DROP) != bound.block:
                    raise RequestRefused(
                        400,
                        path,
                        "modified",
                        f"{path}: `{block.get('type')}` blocks cannot be modified. Send each "
                        "assistant turn back exactly as the API returned it.",
                    )
                if not self.can_read(model, bound.model):
                    drops.append(Dropped(request, path, "model_binding_mismatch"))
                    continue
                element = index[path]
                same = chain.before(element) == bound.chain.before(bound.element)
                if preserved(model) and (cascade or not same):
                    what = chain.first_difference(bound.chain, bound.element)
                    match behaviour:
                        case "error":
                            raise RequestRefused(
                                400,
                                path,
                                "prefix",
                                f"{path}: The block is bound to a different conversation: "
                                f"{what} differs from the conversation it was created in. "
                                "Send system, tools and every earlier message back exactly, "
                                "and put each update in a new message at the end.",
                            )
                        case "drop_block":
                            drops.append(Dropped(request, path, "prefix_binding_mismatch"))
                            cascade = True
                        case "allow":
                            allowed.append(Dropped(request, path, "prefix_binding_mismatch"))
                    continue
                checked += 1
        # nothing is recorded for a refused request
        self.drops.extend(drops)
        self.allowed.extend(allowed)
        self.checked += checked
        for d in drops:
            report.append({"type": "thinking_dropped", "path": d.path, "reason": d.reason})
        for d in allowed:
            report.append({"type": "thinking_mismatch_allowed", "path": d.path, "reason": d.reason})
        report.sort(key=lambda e: [int(x) for x in e["path"].split(".")[1::2]])
        return report

    def _respond(
        self, request: int, model: str, body: Mapping[str, Any], reply: Reply
    ) -> dict[str, Any]:
        content: list[dict[str, Any]] = [
            {
                "type": "thinking",
                "thinking": f"Reasoning for request {request}.",
                "signature": mint("sig_"),
            }
        ]
        if reply.redacted_thinking:
            content.append({"type": "redacted_thinking", "data": mint("redacted_")})
        if reply.text or not reply.tool_calls:
            content.append({"type": "text", "text": reply.text})
        for call in reply.tool_calls:
            content.append(
                {
                    "type": "tool_use",
                    "id": mint("toolu_"),
                    "name": call.name,
                    "input": call.arguments,
                }
            )
        n = len(body["messages"])
        elements = list(self._elements(body))
        elements.append((f"messages.{n}", {"role": "assistant"}))
        elements.extend(
            (f"messages.{n}.content.{j}", canonical(b, _DROP)) for j, b in enumerate(content)
        )
        produced = Chain.of(elements)
        first = len(elements) - len(content)
        for j, block in enumerate(content):
            if block["type"] in BOUND_TYPES:
                self._bound[_key(block)] = Bound(
                    model, produced, first + j, canonical(block, _DROP), request
                )
        return {
            "id": mint("msg_"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": rough_tokens(body["messages"]),
                "output_tokens": rough_tokens(content),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }

    @staticmethod
    def _stream(message: dict[str, Any]) -> Iterator[str]:
        start = {**message, "content": [], "stop_reason": None}
        events: list[tuple[str | None, Any]] = [
            ("message_start", {"type": "message_start", "message": start})
        ]
        for j, block in enumerate(message["content"]):
            kind = block["type"]
            stub: dict[str, Any]
            deltas: list[dict[str, Any]] = []
            if kind == "thinking":
                stub = {"type": "thinking", "thinking": "", "signature": ""}
                deltas = [
                    {"type": "thinking_delta", "thinking": block["thinking"]},
                    {"type": "signature_delta", "signature": block["signature"]},
                ]
            elif kind == "text":
                stub = {"type": "text", "text": ""}
                deltas = [{"type": "text_delta", "text": block["text"]}] if block["text"] else []
            elif kind == "tool_use":
                stub = {**block, "input": {}}
                deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
            else:
                stub = block
            events.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": j, "content_block": stub},
                )
            )
            events.extend(
                ("content_block_delta", {"type": "content_block_delta", "index": j, "delta": d})
                for d in deltas
            )
            events.append(("content_block_stop", {"type": "content_block_stop", "index": j}))
        events.append(
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                    "usage": {"output_tokens": message["usage"]["output_tokens"]},
                },
            )
        )
        events.append(("message_stop", {"type": "message_stop"}))
        yield from sse(events)


def _check_system_placement(messages: list[dict[str, Any]], i: int) -> None:
    path = f"messages.{i}"
    if i == 0:
        raise RequestRefused(
            400,
            path,
            "system_placement",
            f"{path}: a system message cannot be the first message; put it in the top-level "
            "`system` field.",
        )
    before = messages[i - 1]
    blocks = _blocks(before.get("content"))
    after_server_tool = (
        before.get("role") == "assistant"
        and bool(blocks)
        and blocks[-1].get("type") == "server_tool_use"
    )
    if before.get("role") != "user" and not after_server_tool:
        raise RequestRefused(
            400,
            path,
            "system_placement",
            f"{path}: a system message must immediately follow a user message; it follows a "
            f"{before.get('role')} message. Put it after the latest user message.",
        )
    if i + 1 < len(messages) and messages[i + 1].get("role") != "assistant":
        raise RequestRefused(
            400,
            path,
            "system_placement",
            f"{path}: a system message must be the last message or be followed by an assistant "
            f"message; a {messages[i + 1].get('role')} message follows it.",
        )
