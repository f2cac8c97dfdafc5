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
- Mid-conversation ``role: "system"`` placement and tool-result pairing: see
  :mod:`tests.support.emulators.anthropic_wire`.
"""

from __future__ import annotations

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
)
from tests.support.emulators.anthropic_wire import blocks_of, check_structure, stream_events

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


def base_model(model: str) -> str:
    """``model`` without a date suffix (``claude-sonnet-5-5-20261001`` -> ``claude-sonnet-5-5``)."""
    head, _, tail = model.rpartition("-")
    return head if head and len(tail) == 8 and tail.isdigit() else model


def preserved(model: str) -> bool:
    """Whether ``model`` (maybe with a date suffix) runs the prefix check."""
    return base_model(model) in PRESERVED_THINKING_MODELS


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
        model, producer = base_model(model), base_model(producer)
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
        check_structure(messages)
        chain = Chain.of(self._elements(body))
        behaviour = self._behaviour(body)
        dropped = self._check_bound(len(self.requests), model, messages, chain, behaviour)
        reply = self.next_reply()
        message = self._respond(len(self.requests), model, body, reply)
        if BINDING_BETA in headers.get("anthropic-beta", ""):
            message["input_transformations"] = dropped
        if body.get("stream"):
            return Answer(200, None, stream=tuple(stream_events(message)))
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
        yield "system", canonical(blocks_of(body.get("system")), _DROP)
        yield "tools", canonical(body.get("tools") or [], _DROP)
        for i, message in enumerate(body["messages"]):
            yield f"messages.{i}", {"role": message.get("role")}
            for j, block in enumerate(blocks_of(message.get("content"))):
                yield f"messages.{i}.content.{j}", canonical(block, _DROP)

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
            blocks = blocks_of(message.get("content"))
            for j, block in enumerate(blocks):
                if block.get("type") not in BOUND_TYPES:
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
                if preserved(model) and not same:
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
