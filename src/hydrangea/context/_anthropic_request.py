"""Building the ``client.messages.create`` keyword arguments from stored Anthropic items.

The rules, all deterministic (same items, same request) and none of them touching stored items:

* The leading run of system pseudo-items becomes the top-level ``system`` (a list of text
  blocks, so a caller may put a cache breakpoint on it). A system item later in the conversation
  stays where it is, as a user turn reading ``"[system] <text>"``: moving it to the top would
  change the cached prefix.
* Every ``tool_use`` block of an assistant turn is answered in the user turn right after it, with
  the ``tool_result`` blocks first in that turn (the API's rule). The result for a call is the
  first later ``tool_result`` with the same id; it is moved there if it sits further down.
  Results keep their stored order; a call with no result gets an error result reading
  :data:`~hydrangea.context.adapter.ORPHAN_CALL_NOTICE` after them. A user turn is inserted
  when the next turn is not a user turn.
* A ``tool_result`` that answers no earlier call becomes text, ``"[tool result <id>] ..."``.
* Consecutive turns of one role are left as they are: the API combines them itself.
* The Anthropic API has rejected conversations whose first message is an assistant turn, so
  when the first message would be an assistant turn a fixed user turn reading
  :data:`LEADING_USER_PLACEHOLDER` is put before it. The head of a Context never changes, so
  this does not disturb caching.

Items are otherwise sent exactly as stored: unchanged turns are copies of their items.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hydrangea.context._turns import (
    LEADING_USER_PLACEHOLDER,
    SYSTEM_NOTICE_PREFIX,
    Turn,
    emit_turns,
    split_leading_system,
)
from hydrangea.context.adapter import ORPHAN_CALL_NOTICE
from hydrangea.context.native import NativeContent

__all__ = ["LEADING_USER_PLACEHOLDER", "SYSTEM_NOTICE_PREFIX", "build_anthropic_request"]


def build_anthropic_request(items: Sequence[NativeContent]) -> dict[str, Any]:
    """The keyword arguments (``messages`` and, if any, ``system``) for ``items``."""
    system, rest = split_leading_system(items, lambda item: _as_blocks(item["content"]))
    turns = [_turn_of(item) for item in rest]
    answers = _pair_calls(turns)
    messages = emit_turns(turns, answers, key="content", orphan=_orphan_result_blocks)
    if messages and messages[0]["role"] == "assistant":
        placeholder = {"type": "text", "text": LEADING_USER_PLACEHOLDER}
        messages.insert(0, {"role": "user", "content": [placeholder]})
    request: dict[str, Any] = {"messages": messages}
    if system:
        request["system"] = system
    return request


def _as_blocks(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content


def _turn_of(item: dict[str, Any]) -> Turn:
    if item["role"] == "system":
        text = "\n".join(block["text"] for block in _as_blocks(item["content"]))
        notice = {"type": "text", "text": SYSTEM_NOTICE_PREFIX + text}
        return Turn("user", [notice], None)
    return Turn(item["role"], _as_blocks(item["content"]), item)


def _pair_calls(turns: list[Turn]) -> dict[int, list[dict[str, Any]]]:
    """For each assistant turn with calls: the result blocks that answer it, in order.

    Marks moved results on their source turns and unanswered-call-free results as orphans.
    """
    pending: dict[str, list[tuple[int, int]]] = {}
    for t, turn in enumerate(turns):
        if turn.role != "user":
            continue
        for b, block in enumerate(turn.parts):
            if block.get("type") == "tool_result":
                pending.setdefault(block["tool_use_id"], []).append((t, b))
    answers: dict[int, list[dict[str, Any]]] = {}
    for t, turn in enumerate(turns):
        if turn.role != "assistant":
            continue
        found: list[tuple[int, int]] = []
        missing: list[str] = []
        for block in turn.parts:
            if block.get("type") != "tool_use":
                continue
            queue = pending.get(block["id"], [])
            later = next((pos for pos in queue if pos[0] > t), None)
            if later is None:
                missing.append(block["id"])
                continue
            queue.remove(later)
            found.append(later)
        if not found and not missing:
            continue
        found.sort()
        result_blocks = [turns[src].parts[b] for src, b in found]
        for src, b in found:
            turns[src].moved.add(b)
        for call_id in missing:
            result_blocks.append(
                {
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": ORPHAN_CALL_NOTICE,
                    "is_error": True,
                }
            )
        answers[t] = result_blocks
    for queue in pending.values():
        for t, b in queue:
            turns[t].orphans.add(b)
    return answers


def _orphan_result_blocks(block: dict[str, Any]) -> list[dict[str, Any]]:
    """A tool result that answers no call, as plain user content."""
    content = block.get("content", "")
    label = f"[tool result {block['tool_use_id']}"
    label += ", error] " if block.get("is_error") else "] "
    if isinstance(content, str):
        return [{"type": "text", "text": label + content}]
    texts = [part["text"] for part in content if part.get("type") == "text"]
    others = [part for part in content if part.get("type") != "text"]
    return [{"type": "text", "text": label + "\n".join(texts)}, *others]
