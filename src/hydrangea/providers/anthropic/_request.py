"""Building the ``client.messages.create`` keyword arguments from stored Anthropic items.

The rules, all deterministic (same items, same request) and none of them touching stored items:

* The leading run of system pseudo-items becomes the top-level ``system`` (a list of text
  blocks, so a caller may put a cache breakpoint on it). A system item later in the conversation
  stays where it is (moving it to the top would change the prefix every later reply is bound
  to): for a model that takes mid-conversation system messages (``system_messages``), as a
  ``role: "system"`` message where the API's placement rule allows one (right after a user
  message, and either last or followed by an assistant message), otherwise as a user turn
  reading ``"[system] <text>"``.
* Every ``tool_use`` block of an assistant turn is answered in the user turn right after it, with
  the ``tool_result`` blocks first in that turn (the API's rule). The result for a call is the
  first later ``tool_result`` with the same id; it is moved there if it sits further down.
  Results keep their stored order; a call with no result gets an error result reading
  :data:`~hydrangea.providers.adapter.ORPHAN_CALL_NOTICE` after them. A user turn is inserted
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

from collections.abc import Callable, Sequence
from typing import Any

from hydrangea.providers._turns import (
    LEADING_USER_PLACEHOLDER,
    SYSTEM_NOTICE_PREFIX,
    Turn,
    emit_turns,
    split_leading_system,
)
from hydrangea.providers.adapter import ORPHAN_CALL_NOTICE
from hydrangea.providers.native import NativeContent
from hydrangea.providers.pairing import Pairing

__all__ = ["LEADING_USER_PLACEHOLDER", "SYSTEM_NOTICE_PREFIX", "build_anthropic_request"]


def build_anthropic_request(
    items: Sequence[NativeContent],
    pairing_of: Callable[[Sequence[NativeContent]], Pairing],
    *,
    system_messages: bool = False,
) -> dict[str, Any]:
    """The keyword arguments (``messages`` and, if any, ``system``) for ``items``;
    ``pairing_of`` is the adapter's pairing (:meth:`Adapter.pairing`)."""
    if _without_tools(items):
        return _plain_request(items, system_messages)
    system, rest = split_leading_system(items, _system_blocks)
    turns = [_turn_of(item, system_messages) for item in rest]
    answers = _pair_calls(turns, pairing_of)
    messages = emit_turns(turns, answers, key="content", orphan=_orphan_result_blocks)
    if system_messages:
        _place_system(messages)
    return _request(system, messages)


def _request(system: list[dict[str, Any]], messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The request of ``system`` and ``messages``, the leading-user placeholder put first when
    the conversation would start with the assistant (but for a compaction's summary, which
    the API takes in the first place: "put the returned message in their place")."""
    if messages and messages[0]["role"] == "assistant" and not _compacted(messages[0]):
        placeholder = {"type": "text", "text": LEADING_USER_PLACEHOLDER}
        messages.insert(0, {"role": "user", "content": [placeholder]})
    request: dict[str, Any] = {"messages": messages}
    if system:
        request["system"] = system
    return request


_TOOL_BLOCKS = frozenset({"tool_use", "tool_result"})


def _without_tools(items: Sequence[NativeContent]) -> bool:
    """True if no item holds a ``tool_use`` or ``tool_result`` block (of any role) and every
    content is a string or a list: then nothing is paired, moved or repaired."""
    for item in items:
        content = item.get("content")
        if type(content) is list:
            for block in content:
                if type(block) is not dict or block.get("type") in _TOOL_BLOCKS:
                    return False
        elif type(content) is not str:
            return False
    return True


def _plain_request(items: Sequence[NativeContent], system_messages: bool) -> dict[str, Any]:
    """:func:`build_anthropic_request` of items without tool blocks (the general path less
    the pairing): the leading system run, the rest as copies of their items (a system item as
    a system message or a user notice, an item with no blocks left out), the placeholder if
    needed."""
    system, rest = split_leading_system(items, _system_blocks)
    messages: list[dict[str, Any]] = []
    for item in rest:
        content = item["content"]
        if item["role"] == "system":
            if system_messages:
                messages.append({"role": "system", "content": _system_blocks(item)})
            else:
                messages.append({"role": "user", "content": [_notice(item)]})
        elif content or type(content) is str:  # "" is one empty text block: it is sent
            messages.append(item)
    if system_messages:
        _place_system(messages)
    return _request(system, messages)


def _place_system(messages: list[dict[str, Any]]) -> None:
    """Keep a ``role: "system"`` message only where the API takes one (right after a user
    message, and last or followed by an assistant message); make the others notices."""
    for n, message in enumerate(messages):
        if message["role"] != "system":
            continue
        fits = n > 0 and messages[n - 1]["role"] == "user" and (
            n + 1 == len(messages) or messages[n + 1]["role"] == "assistant"
        )
        if not fits:
            text = "\n".join(block["text"] for block in message["content"])
            notice = {"type": "text", "text": SYSTEM_NOTICE_PREFIX + text}
            messages[n] = {"role": "user", "content": [notice]}


def _as_blocks(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content


def _system_blocks(item: dict[str, Any]) -> list[dict[str, Any]]:
    return _as_blocks(item["content"])


def _notice(item: dict[str, Any]) -> dict[str, Any]:
    """The text block a system item after the leading run is sent as (in a user turn)."""
    text = "\n".join(block["text"] for block in _as_blocks(item["content"]))
    return {"type": "text", "text": SYSTEM_NOTICE_PREFIX + text}


def _turn_of(item: dict[str, Any], system_messages: bool) -> Turn:
    if item["role"] == "system":
        if system_messages:  # (placed, or made a notice, once the turns are written out)
            return Turn("system", _system_blocks(item), None)
        return Turn("user", [_notice(item)], None)
    return Turn(item["role"], _as_blocks(item["content"]), item)


def _pair_calls(
    turns: list[Turn], pairing_of: Callable[[Sequence[NativeContent]], Pairing]
) -> dict[int, list[dict[str, Any]]]:
    """For each assistant turn with calls: the result blocks that answer it.

    The pairing engine decides who answers whom; here the answers are laid out (results in
    stored order, then an error result per unanswered call), moved results marked on their
    source turns and orphan results marked for conversion to text.
    """
    pairing = pairing_of([{"role": turn.role, "content": turn.parts} for turn in turns])
    answers: dict[int, list[dict[str, Any]]] = {}
    for t, (found, missing) in pairing.by_call_item().items():
        positions = sorted(site for site, _ in found)
        blocks = [turns[src].parts[b] for src, b in positions]
        for src, b in positions:
            turns[src].moved.add(b)
        blocks.extend(
            {
                "type": "tool_result",
                "tool_use_id": call_id,
                "content": ORPHAN_CALL_NOTICE,
                "is_error": True,
            }
            for call_id in missing
        )
        answers[t] = blocks
    for t, b in pairing.orphans:
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


def _compacted(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return (
        isinstance(content, list) and bool(content) and isinstance(content[0], dict)
        and content[0].get("type") == "compaction"
    )
