"""The request cache holds no second copy of the items it built messages from (issue 28, memory).

* ``share_items``: whatever it replaces, the messages write the same JSON bytes (key order
  included: ``json.dumps`` without sorting, made before the call, is the oracle), and what it
  puts in is the items' own objects.
* a tool-loop session on every gateway: the cached messages' blocks are the Context's items'
  blocks (the same objects), not copies; every request still equals a build from scratch.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, ToolResultPart
from hydrangea.providers.anthropic.blocks import CachedBlocks, message_blocks
from hydrangea.providers.native import share_items
from tests.test_request_cache import ALL, dumped, oracle
from tests.test_request_tool_loops import model_step

scalar = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["a", "b"]))
value = st.recursive(
    scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("xyz"), inner, max_size=3)
    ),
    max_leaves=8,
)
block = st.dictionaries(st.sampled_from(["type", "text", "id", "input"]), value, max_size=4)
item = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant"]), "content": st.lists(block, max_size=3)}
)


def _reordered(value: Any) -> Any:
    """``value`` with every object's keys in reverse order (equal, written otherwise)."""
    if isinstance(value, dict):
        return {k: _reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reordered(v) for v in value]
    return value


@given(
    items=st.lists(item, max_size=6),
    edits=st.lists(st.tuples(st.integers(0, 5), st.sampled_from(["same", "flip", "drop", "1"])),
                   max_size=8),
)
def test_shared_messages_write_the_same_bytes_and_hold_the_items_objects(
    items: list[dict[str, Any]], edits: list[tuple[int, str]]
) -> None:
    messages: list[Any] = copy.deepcopy(items)
    for n, edit in edits:  # messages that differ from their items, or differ only in order
        if n >= len(messages):
            continue
        match edit:
            case "flip":
                messages[n] = _reordered(messages[n])
            case "drop":
                messages[n]["content"] = messages[n]["content"][1:]
            case "1":  # True == 1, but json writes them otherwise
                messages[n]["content"].append({"type": True})
                items[n]["content"].append({"type": 1})
    written = json.dumps(messages)
    before = [(id(m), [id(b) for b in m["content"]]) for m in messages]
    share_items(messages, items)
    assert json.dumps(messages) == written
    held = {id(i) for i in items} | {id(b) for i in items for b in i["content"]}
    for message, (was, blocks) in zip(messages, before, strict=True):
        if id(message) != was:
            assert id(message) in held
            continue
        for b, old in zip(message["content"], blocks, strict=True):
            assert id(b) == old or id(b) in held


def test_the_cached_messages_hold_the_items_blocks_not_copies() -> None:
    for gateway in ALL:
        context = Context(gateway)
        for t in range(12):
            context.emplace_message(Message(role=Role.user, content=f"task {t} " + "x" * 300))
            context.request()
            body, refs = model_step(gateway, [f"c{t}"], server=False, idless=False)
            context.push_back(body)
            context.request()
            context.emplace_message(Message(role=Role.user, content=(
                ToolResultPart(call_id=refs[0], content="r" * 300),)))
            assert dumped(context.request()) == dumped(oracle(context, len(context), []))
        held: set[int] = set()
        for stored in context:
            held.add(id(stored))
            for key in ("content", "parts"):
                if isinstance(stored.get(key), list):
                    held.update(id(b) for b in stored[key])
        cache = context._requests
        cached = cache._messages[: cache._checkpoints[-1].messages]
        blocks = [b for m in cached for key in ("content", "parts")
                  if isinstance(m.get(key), list) for b in m[key]]
        shared = sum(id(m) in held for m in cached) + sum(id(b) in held for b in blocks)
        # every turn's question and call (at least) is the stored object, not a copy
        assert shared >= 2 * 11, (gateway, shared, len(cached), len(blocks))


def test_gemini_responses_named_after_their_call_keep_the_stored_response() -> None:
    """A Gemini function response the builder rewrites (its call's name and id put first) is a
    new part, but the ``response`` object inside it is the stored item's own."""
    context = Context(GatewayType.gemini)
    for t in range(6):
        context.emplace_message(Message(role=Role.user, content=f"task {t}"))
        body, refs = model_step(GatewayType.gemini, [f"c{t}"], server=False, idless=False)
        context.push_back(body)
        context.emplace_message(Message(role=Role.user, content=(
            ToolResultPart(call_id=refs[0], content="r" * 300),)))
        assert dumped(context.request()) == dumped(oracle(context, len(context), []))
    stored = {id(p["function_response"]["response"]) for item in context
              for p in item.get("parts", []) if "function_response" in p}
    cache = context._requests
    sent = [p["function_response"] for m in cache._messages for p in m["parts"]
            if "function_response" in p]
    assert len(sent) >= 5
    assert all(id(r["response"]) in stored for r in sent), sent


message = st.fixed_dictionaries(
    {"role": st.just("user"),
     "content": st.one_of(st.text("ab", max_size=2), st.lists(block, max_size=3))}
)


@given(messages=st.lists(message, max_size=8), cut=st.integers(0, 9), more=st.integers(0, 3))
def test_cached_blocks_read_as_the_blocks_of_each_message(
    messages: list[dict[str, Any]], cut: int, more: int
) -> None:
    """One offset per message reads as :func:`message_blocks` of each, after a cut too."""
    blocks = CachedBlocks(messages)
    for m in messages:
        blocks.add(m)
    listed = [b for n, m in enumerate(messages) for b in message_blocks(n, m)]
    assert list(blocks) == listed and len(blocks) == len(listed)
    assert [blocks[-n] for n in range(1, len(listed) + 1)] == listed[::-1]
    keep = min(cut, len(messages))
    blocks.cut(keep)
    del messages[keep:]
    messages.extend([{"role": "user", "content": "x"}] * more)
    for m in messages[keep:]:
        blocks.add(m)
    assert list(blocks) == [b for n, m in enumerate(messages) for b in message_blocks(n, m)]
