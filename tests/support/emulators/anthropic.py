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
- Context editing and compaction (gating, what the model reads, cleared tool results and
  thinking): see :mod:`tests.support.emulators.anthropic_management`. Binding is checked on
  what the model reads from the last compaction block on; bound blocks sent before it are
  ignored (``ignored``). A threshold compaction (``compact_20260112`` past its trigger) answers
  with a ``compaction`` block first, then the reply, whose thinking is bound to the block. An
  on-demand compaction request answers ``stop_reason: "compaction"`` with one message holding a
  signed ``compaction`` block (no scripted reply is used); sent back first, it stands for
  exactly the messages that request sent, so thinking in the turns kept after it stays valid
  ("the check accepts that replacement when the API wrote the summary",
  compaction-thinking-blocks) while a request that sends compacted messages after it again, or
  leaves kept ones out, fails the prefix check of the kept thinking (400, or dropped under
  ``drop_block``). ``compactions`` lists every compaction done, ``seen`` what the model read.
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
from tests.support.emulators.anthropic_management import (
    Compacted,
    Options,
    apply_edits,
    check_options,
    check_summary,
    is_summary,
    iteration,
    read_from,
    view_of,
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
        self.ignored: list[Dropped] = []
        """Bound blocks sent before the last compaction block (the API ignores them)."""
        self.compactions: list[Compacted] = []
        """Every compaction, in request order."""
        self.seen: dict[int, list[dict[str, Any]]] = {}
        """Per answered request: the messages the model read (after compaction and edits)."""
        self.answers: dict[int, dict[str, Any]] = {}
        """Per answered request: the message it answered (streamed or not)."""
        self._summaries: dict[str, tuple[Any, tuple[tuple[str, Any], ...]]] = {}

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
        options = check_options(body, headers.get("anthropic-beta", ""), model)
        start = view_of(messages)
        check_summary(messages, start, self._summaries, _DROP)
        chain = Chain.of(self._elements(body, start))
        behaviour = self._behaviour(body)
        request = len(self.requests)
        dropped = self._check_bound(request, model, messages, chain, behaviour, start)
        seen = read_from(messages, start)
        if options.on_demand is not None:
            message = self._summarize(request, model, body, seen, start)
        else:
            applied = apply_edits(seen, options.edits)
            message = self._respond(request, model, body, self.next_reply(), seen, start,
                                    options)
            if "context_management" in body:
                message["context_management"] = {"applied_edits": applied}
        self.seen[request] = seen
        self.answers[request] = message
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

    def _elements(
        self, body: Mapping[str, Any], start: tuple[int, int] = (0, 0)
    ) -> Iterator[tuple[str, Any]]:
        """system, tools and what the model reads (from ``start``); an on-demand summary read
        first stands for the elements of the messages it summarized."""
        yield "system", canonical(blocks_of(body.get("system")), _DROP)
        yield "tools", canonical(body.get("tools") or [], _DROP)
        first, skip = start
        for i, message in enumerate(body["messages"]):
            if i < first:
                continue
            blocks = blocks_of(message.get("content"))
            offset = skip if i == first else 0
            lead: dict[str, Any] = blocks[offset] if offset < len(blocks) else {}
            known = (
                self._summaries.get(str(lead.get("signature")))
                if i == first and is_summary(lead) and "signature" in lead else None
            )
            if known is not None:
                yield from known[1]
                offset += 1
            else:
                yield f"messages.{i}", {"role": message.get("role")}
            for j in range(offset, len(blocks)):
                yield f"messages.{i}.content.{j}", canonical(blocks[j], _DROP)

    def _check_bound(
        self,
        request: int,
        model: str,
        messages: list[dict[str, Any]],
        chain: Chain,
        behaviour: Mismatch,
        start: tuple[int, int] = (0, 0),
    ) -> list[dict[str, str]]:
        index = {p: k for k, p in enumerate(chain.paths)}
        report: list[dict[str, str]] = []
        drops: list[Dropped] = []
        allowed: list[Dropped] = []
        ignored: list[Dropped] = []
        checked = 0
        for i, message in enumerate(messages):
            if message.get("role") != "assistant":
                continue
            blocks = blocks_of(message.get("content"))
            for j, block in enumerate(blocks):
                if block.get("type") not in BOUND_TYPES:
                    continue
                path = f"messages.{i}.content.{j}"
                if (i, j) < start:
                    ignored.append(Dropped(request, path, "before_compaction"))
                    continue
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
        self.ignored.extend(ignored)
        self.checked += checked
        for d in drops:
            report.append({"type": "thinking_dropped", "path": d.path, "reason": d.reason})
        for d in allowed:
            report.append({"type": "thinking_mismatch_allowed", "path": d.path, "reason": d.reason})
        report.sort(key=lambda e: [int(x) for x in e["path"].split(".")[1::2]])
        return report

    def _respond(
        self,
        request: int,
        model: str,
        body: Mapping[str, Any],
        reply: Reply,
        seen: list[dict[str, Any]],
        start: tuple[int, int],
        options: Options,
    ) -> dict[str, Any]:
        tokens = rough_tokens(seen)
        edit = options.threshold
        trigger = ((edit or {}).get("trigger") or {}).get("value", 150_000)
        summary: dict[str, Any] | None = None
        if edit is not None and tokens >= trigger:
            summary = {"type": "compaction",
                       "content": f"Summary of the conversation up to request {request}."}
            self.compactions.append(Compacted(request, "threshold", summary, tuple(seen)))
        content: list[dict[str, Any]] = [] if summary is None else [summary]
        paused = summary is not None and bool((edit or {}).get("pause_after_compaction"))
        if not paused:
            content.append({"type": "thinking", "thinking": f"Reasoning for request {request}.",
                            "signature": mint("sig_")})
            if reply.redacted_thinking:
                content.append({"type": "redacted_thinking", "data": mint("redacted_")})
            if reply.text or not reply.tool_calls:
                content.append({"type": "text", "text": reply.text})
            for call in reply.tool_calls:
                content.append({"type": "tool_use", "id": mint("toolu_"), "name": call.name,
                                "input": call.arguments})
        # after a compaction the model reads the block alone: the reply is bound to it
        elements = list(self._elements(body, start))[: 2 if summary else None]
        n = 0 if summary else len(body["messages"])
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
        usage: dict[str, Any] = {
            "input_tokens": tokens,
            "output_tokens": rough_tokens(content),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        if summary is not None:
            read = rough_tokens([summary])
            usage["input_tokens"] = read
            usage["iterations"] = [iteration("compaction", tokens, read),
                                   iteration("message", read, usage["output_tokens"])]
        return {
            "id": mint("msg_"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": "compaction" if paused else (
                "tool_use" if reply.tool_calls else "end_turn"),
            "stop_sequence": None,
            "usage": usage,
        }

    def _summarize(
        self, request: int, model: str, body: Mapping[str, Any], seen: list[dict[str, Any]],
        start: tuple[int, int],
    ) -> dict[str, Any]:
        """The answer to an on-demand compaction request: one signed ``compaction`` block."""
        block = {"type": "compaction", "signature": mint("cmp_"),
                 "content": f"Summary of the {len(seen)} messages of request {request}."}
        covered = tuple(list(self._elements(body, start))[2:])
        self._summaries[block["signature"]] = (canonical(block, _DROP), covered)
        self.compactions.append(Compacted(request, "on_demand", block, tuple(seen)))
        tokens, out = rough_tokens(seen), rough_tokens([block])
        return {
            "id": mint("msg_"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [block],
            "stop_reason": "compaction",
            "stop_sequence": None,
            "usage": {"input_tokens": tokens, "output_tokens": out,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                      "iterations": [iteration("compaction", tokens, out)]},
        }
