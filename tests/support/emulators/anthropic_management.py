"""Anthropic context management as the provider documents it: the rules the emulator enforces.

Pages: build-with-claude/context-editing, compaction, compaction-threshold,
compaction-on-demand, compaction-background, compaction-thinking-blocks; the SDK's beta types
(``BetaCompactionBlock``, ``BetaCompactionConfigParam``, ``BetaCompact20260112EditParam``,
``BetaClear*EditResponse``) for the wire shapes.

- **Gating**: ``context_management.edits`` of ``clear_tool_uses_20250919`` /
  ``clear_thinking_20251015`` need ``anthropic-beta: context-management-2025-06-27``,
  ``compact_20260112`` needs ``compact-2026-01-12`` (trigger at least 50,000 input tokens),
  ``compaction`` (on-demand) needs ``compact-2026-09-04``; each only on the models the page
  lists. Otherwise a 400 ``invalid_request_error``.
- **What the model reads** (:func:`view_of`): "the API automatically drops all content blocks
  before the compaction block" (compaction-threshold), so a request is read from its last
  ``compaction`` block on; what comes before may be sent and is ignored. A block whose
  ``content`` is null is a no-op ("Clients may round-trip compaction blocks with null content;
  the server treats them as no-ops", ``BetaCompactionBlock``).
- **Context editing** (:func:`apply_edits`) changes only what the model reads: "Context
  editing is applied server-side before the prompt reaches Claude. Your client application
  maintains the full, unmodified conversation history" (context-editing). So thinking bound to
  the prefix is checked against the prefix the client sends, never the edited one.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from tests.support.emulators._server import RequestRefused, canonical, rough_tokens
from tests.support.emulators.anthropic_wire import blocks_of

CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"
THRESHOLD_BETA = "compact-2026-01-12"
ON_DEMAND_BETA = "compact-2026-09-04"

_NEWEST = frozenset({"claude-fable-5-2", "claude-mythos-5-2"})
"""The preserved-thinking emulator's newest models, given every feature of their family."""

CONTEXT_EDITING_MODELS = _NEWEST | {
    "claude-fable-5-1", "claude-mythos-5-1", "claude-fable-5", "claude-mythos-5",
    "claude-mythos-preview", "claude-opus-5-5", "claude-opus-5", "claude-sonnet-5-5",
    "claude-sonnet-5", "claude-haiku-5-5", "claude-haiku-4-5", "claude-opus-4-8",
    "claude-opus-4-7", "claude-opus-4-6", "claude-sonnet-4-6", "claude-opus-4-5",
    "claude-sonnet-4-5",
}
"""The context-editing page's supported models (date suffix left off)."""

COMPACTION_MODELS = _NEWEST | {
    "claude-fable-5-1", "claude-mythos-5-1", "claude-fable-5", "claude-mythos-5",
    "claude-mythos-preview", "claude-opus-5-5", "claude-opus-5", "claude-opus-4-8",
    "claude-opus-4-7", "claude-opus-4-6", "claude-sonnet-5-5", "claude-sonnet-5",
    "claude-sonnet-4-6", "claude-haiku-5-5",
}
"""The compaction pages' supported models."""

MIN_TRIGGER = 50_000
"""``compact_20260112`` trigger: "value" at least 50,000 (default 150,000)."""

CLEARED = "[tool result cleared by context editing]"
"""What a cleared tool result reads as to the model."""


def base(model: str) -> str:
    """``model`` without a date suffix."""
    head, _, tail = model.rpartition("-")
    return head if head and len(tail) == 8 and tail.isdigit() else model


@dataclass(frozen=True, slots=True)
class Compacted:
    """One compaction the emulator did: request, ``"threshold"`` or ``"on_demand"``, the
    ``compaction`` block it answered with, and the messages it summarized (what the model read,
    from the previous compaction block on)."""

    request: int
    kind: Literal["threshold", "on_demand"]
    block: dict[str, Any]
    covered: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class Options:
    """The context-management parts of one request, checked."""

    edits: tuple[dict[str, Any], ...]
    """The clearing edits, in the order given."""
    threshold: dict[str, Any] | None
    """The ``compact_20260112`` edit, if any."""
    on_demand: dict[str, Any] | None
    """The ``compaction`` config of an on-demand compaction request, if any."""


def _refuse(path: str, message: str) -> RequestRefused:
    return RequestRefused(400, path, "context_management", message)


def check_options(body: Mapping[str, Any], betas: str, model: str) -> Options:
    """The request's context-management options, or a 400 as the API answers."""
    sent = {b.strip() for b in betas.split(",") if b.strip()}
    edits: list[dict[str, Any]] = []
    threshold: dict[str, Any] | None = None
    managed = body.get("context_management")
    if managed is not None:
        raw = managed.get("edits") if isinstance(managed, dict) else None
        if not isinstance(raw, list):
            raise _refuse("context_management.edits", "context_management.edits: Field required")
        for k, edit in enumerate(raw):
            path = f"context_management.edits.{k}"
            kind = edit.get("type") if isinstance(edit, dict) else None
            if kind in ("clear_tool_uses_20250919", "clear_thinking_20251015"):
                need, models = CONTEXT_MANAGEMENT_BETA, CONTEXT_EDITING_MODELS
                edits.append(edit)
            elif kind == "compact_20260112":
                need, models = THRESHOLD_BETA, COMPACTION_MODELS
                value = (edit.get("trigger") or {}).get("value", 150_000)
                if not isinstance(value, int) or value < MIN_TRIGGER:
                    raise _refuse(f"{path}.trigger.value", f"{path}.trigger.value: must be at "
                                  f"least {MIN_TRIGGER}, got {value!r}")
                threshold = edit
            else:
                raise _refuse(f"{path}.type", f"{path}.type: unknown edit type {kind!r}")
            if need not in sent:
                raise _refuse(path, f"{path}: {kind} requires the `anthropic-beta: {need}` "
                              "header")
            if base(model) not in models:
                raise _refuse(path, f"{path}: {kind} is not supported on model {model}")
    config = body.get("compaction")
    if config is not None:
        if ON_DEMAND_BETA not in sent:
            raise _refuse("compaction", "compaction: Extra inputs are not permitted (it "
                          f"requires the `anthropic-beta: {ON_DEMAND_BETA}` header)")
        if not isinstance(config, dict) or config.get("type") != "summarize":
            raise _refuse("compaction.type", "compaction.type: Input should be 'summarize'")
        if base(model) not in COMPACTION_MODELS:
            raise _refuse("compaction", f"compaction: not supported on model {model}")
    return Options(tuple(edits), threshold, config)


def is_summary(block: Any) -> bool:
    """Whether ``block`` is a compaction block that counts (null content is a no-op)."""
    return isinstance(block, dict) and block.get("type") == "compaction" and (
        block.get("content") is not None or block.get("encrypted_content") is not None
    )


def check_summary(
    messages: list[dict[str, Any]],
    start: tuple[int, int],
    summaries: Mapping[str, tuple[Any, Any]],
    drop: frozenset[str],
) -> None:
    """A signed compaction block the model reads must be one the emulator wrote, unchanged."""
    i, j = start
    block = blocks_of(messages[i].get("content"))[j]
    if not is_summary(block) or "signature" not in block:
        return
    path = f"messages.{i}.content.{j}"
    known = summaries.get(str(block.get("signature")))
    if known is None:
        raise RequestRefused(400, path, "signature", f"{path}: Invalid `signature` in "
                             "`compaction` block: the emulator never produced it.")
    if canonical(block, drop) != known[0]:
        raise RequestRefused(400, path, "modified", f"{path}: `compaction` blocks cannot be "
                             "modified. Send the block back exactly as the API returned it.")


def view_of(messages: list[dict[str, Any]]) -> tuple[int, int]:
    """Where the model starts reading: (message, block) of the last compaction block, or
    (0, 0)."""
    start = (0, 0)
    for i, message in enumerate(messages):
        for j, block in enumerate(blocks_of(message.get("content"))):
            if is_summary(block):
                start = (i, j)
    return start


def read_from(messages: list[dict[str, Any]], start: tuple[int, int]) -> list[dict[str, Any]]:
    """The messages the model reads, from ``start`` on (deep copies)."""
    i, j = start
    if not messages:
        return []
    first = {**messages[i], "content": copy.deepcopy(blocks_of(messages[i].get("content"))[j:])}
    return [first, *copy.deepcopy(messages[i + 1 :])]


def _tool_uses(seen: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Every (tool_use block, its tool_result block or None), oldest first."""
    pairs: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
    for i, message in enumerate(seen):
        if message.get("role") != "assistant":
            continue
        after = blocks_of(seen[i + 1].get("content")) if i + 1 < len(seen) else []
        results = {b.get("tool_use_id"): b for b in after if b.get("type") == "tool_result"}
        pairs.extend(
            (b, results.get(b.get("id")))
            for b in blocks_of(message.get("content"))
            if b.get("type") == "tool_use"
        )
    return pairs


def _clear_tool_uses(seen: list[dict[str, Any]], edit: Mapping[str, Any]) -> dict[str, Any]:
    """Clear the oldest tool results in ``seen`` (in place) as ``edit`` says; what it did."""
    trigger = edit.get("trigger") or {"type": "input_tokens", "value": 100_000}
    pairs = [(u, r) for u, r in _tool_uses(seen) if r is not None and r.get("content") != CLEARED]
    reached = (
        len(_tool_uses(seen)) >= trigger["value"] if trigger.get("type") == "tool_uses"
        else rough_tokens(seen) >= trigger["value"]
    )
    keep = (edit.get("keep") or {"value": 3})["value"]
    excluded = set(edit.get("exclude_tools") or ())
    inputs = edit.get("clear_tool_inputs", False)
    candidates = [(u, r) for u, r in pairs[: max(0, len(pairs) - keep)]
                  if u.get("name") not in excluded]
    freed = 0
    for use, result in candidates:
        freed += rough_tokens(result.get("content"))
        if inputs is True or (isinstance(inputs, list) and use.get("name") in inputs):
            freed += rough_tokens(use.get("input"))
    least = (edit.get("clear_at_least") or {"value": 0})["value"]
    if not reached or not candidates or freed < least:
        return {}
    for use, result in candidates:
        assert result is not None
        result["content"] = CLEARED
        if inputs is True or (isinstance(inputs, list) and use.get("name") in inputs):
            use["input"] = {}
    return {"type": "clear_tool_uses_20250919", "cleared_tool_uses": len(candidates),
            "cleared_input_tokens": freed}


def _turns(seen: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The assistant turns: the assistant messages from one user prompt to the next (a tool
    loop's messages are one turn: "an assistant turn may include multiple content blocks")."""
    turns: list[list[dict[str, Any]]] = []
    prompted = True
    for message in seen:
        if message.get("role") == "user":
            prompted = prompted or any(
                b.get("type") != "tool_result" for b in blocks_of(message.get("content")))
        elif message.get("role") == "assistant":
            if prompted or not turns:
                turns.append([])
            turns[-1].append(message)
            prompted = False
    return turns


def _clear_thinking(seen: list[dict[str, Any]], edit: Mapping[str, Any]) -> dict[str, Any]:
    """Keep thinking in the latest ``keep`` assistant turns that have it (default 1)."""
    keep = edit.get("keep") or {"value": 1}
    if keep == "all":
        return {}
    bound = ("thinking", "redacted_thinking")
    turns = [t for t in _turns(seen) if any(
        b.get("type") in bound for m in t for b in blocks_of(m.get("content")))]
    old = turns[: max(0, len(turns) - keep["value"])]
    freed = 0
    for turn in old:
        for message in turn:
            blocks = blocks_of(message.get("content"))
            kept = [b for b in blocks if b.get("type") not in bound]
            freed += rough_tokens(blocks) - rough_tokens(kept)
            message["content"] = kept
    if not old:
        return {}
    return {"type": "clear_thinking_20251015", "cleared_thinking_turns": len(old),
            "cleared_input_tokens": freed}


def apply_edits(
    seen: list[dict[str, Any]], edits: tuple[dict[str, Any], ...]
) -> list[dict[str, Any]]:
    """Apply the clearing ``edits`` to ``seen`` (in place), in order; the applied edits."""
    applied: list[dict[str, Any]] = []
    for edit in edits:
        done = (_clear_thinking(seen, edit) if edit["type"] == "clear_thinking_20251015"
                else _clear_tool_uses(seen, edit))
        if done:
            applied.append(done)
    return applied


def iteration(kind: str, input_tokens: int, output_tokens: int) -> dict[str, Any]:
    """One ``usage.iterations`` entry."""
    return {"type": kind, "input_tokens": input_tokens, "output_tokens": output_tokens,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}}
