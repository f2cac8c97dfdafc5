"""Checkpoints inside tool loops: CompactingConversation(in_loops=True) and push_reply."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.areas import AreaUsageError, CompactingConversation
from hydrangea.asof import InMemoryRecordStore
from hydrangea.context import Context
from hydrangea.coop import CoopContext
from hydrangea.errors import ContextStateError
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, TextPart, ToolCallPart, ToolResultPart
from tests.areas_support import SYSTEM, coop_with_system
from tests.support.sdk_check import validate_request


def _call(n: int, size: int = 40) -> tuple[dict[str, Any], Message]:
    """An Anthropic reply that thinks (with a signature) and calls one tool, natively and as a
    Message."""
    native = {"role": "assistant", "content": [
        {"type": "thinking", "thinking": f"step {n} " + "think " * size, "signature": f"SIG{n}=="},
        {"type": "tool_use", "id": f"call_{n}", "name": "read_file", "input": {"n": n}},
    ]}
    message = Message(role=Role.assistant, content=(
        ToolCallPart(id=f"call_{n}", name="read_file", arguments={"n": n}),
    ))
    return native, message


def _answer(text: str) -> tuple[dict[str, Any], Message]:
    native = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    return native, Message(role=Role.assistant, content=(TextPart(text=text),))


def _result(n: int, size: int = 40) -> Message:
    return Message(role=Role.user, content=(
        ToolResultPart(call_id=f"call_{n}", content=f"file {n}: FACT-{n} " + "data " * size),
    ))


def _dumped(items: object) -> str:
    return json.dumps(items, sort_keys=True)


def _conversation(
    *, in_loops: bool, threshold: int = 200, rollup: int = 10_000
) -> tuple[Context, CoopContext, CompactingConversation]:
    context, coop = coop_with_system(GatewayType.anthropic)
    conversation = CompactingConversation(
        coop, threshold_tokens=threshold, rollup_tokens=rollup, records=InMemoryRecordStore(),
        in_loops=in_loops,
    )
    return context, coop, conversation


def _loop(conversation: CompactingConversation, coop: CoopContext, steps: int, size: int = 40,
          ) -> list[Any]:
    """A user task, then ``steps`` tool calls with their results; a render after each."""
    conversation.user("Task: read every file and report.")
    coop.render()
    summaries = []
    for n in range(steps):
        native, message = _call(n, size)
        summaries.append(conversation.push_reply(native, message))
        conversation.user(_result(n, size))
        coop.render()
    return summaries


def test_a_long_tool_loop_checkpoints_between_exchanges() -> None:
    context, coop, conversation = _conversation(in_loops=True)
    summaries = _loop(conversation, coop, 8)
    assert any(s is not None for s in summaries)
    assert len(conversation.segments) > 2
    # the request still ends with the open exchange: the latest call, then its result
    items = context[:]
    assert items[-2]["content"][1]["id"] == "call_7"
    assert items[-1]["content"][0]["tool_use_id"] == "call_7"
    validate_request(GatewayType.anthropic, context.request())


def test_without_in_loops_nothing_is_compacted_before_the_answer() -> None:
    context, coop, conversation = _conversation(in_loops=False)
    summaries = _loop(conversation, coop, 8)
    assert summaries == [None] * 8
    assert len(conversation.segments) == 1
    assert sum(1 for item in context[:] if "tool_use_id" in _dumped(item)) == 8
    native, message = _answer("Done.")
    assert conversation.push_reply(native, message) is not None  # the turn end still compacts


def test_the_reply_after_a_checkpoint_is_pushed_byte_for_byte_after_the_summary() -> None:
    context, coop, conversation = _conversation(in_loops=True)
    conversation.user("Task: read the files.")
    coop.render()
    for n in range(2):
        native, message = _call(n)
        assert conversation.push_reply(native, message) is None or n > 0
        conversation.user(_result(n))
        coop.render()
    head = _dumped(context[:1])
    native, message = _call(2)
    sent = _dumped(native["content"])
    summary = conversation.push_reply(native, message)
    assert summary is not None
    pushed = context[-1]
    assert _dumped(pushed["content"]) == sent  # thinking and its signature unchanged
    assert _dumped(context[:1]) == head  # the system prompt before the segment is untouched
    assert "were compacted into this summary" in _dumped(context[-2])
    # the compacted segment held complete exchanges: no call without its result is left
    assert "call_0" not in _dumped(context[:]) and "call_1" not in _dumped(context[:])
    conversation.user(_result(2))
    coop.render()
    assert context[-1]["content"][0]["tool_use_id"] == "call_2"
    validate_request(GatewayType.anthropic, context.request())


def test_a_queued_user_turn_is_not_a_safe_point() -> None:
    _, coop, conversation = _conversation(in_loops=True, threshold=1)
    conversation.user("Task.")
    coop.render()
    conversation.user("One more thing before you go on.")  # queued, not rendered yet
    native, message = _call(0)
    assert conversation.push_reply(native, message) is None
    assert len(conversation.segments) == 1


def test_push_reply_refuses_a_user_message() -> None:
    _, _, conversation = _conversation(in_loops=True)
    with pytest.raises(AreaUsageError):
        conversation.push_reply({}, Message(role=Role.user, content="hi"))


def test_in_loops_needs_a_rollup() -> None:
    _, coop = coop_with_system(GatewayType.anthropic)
    with pytest.raises(AreaUsageError, match="rollup_tokens"):
        CompactingConversation(coop, threshold_tokens=100, in_loops=True)


def test_continue_turn_only_on_a_fresh_segment() -> None:
    _, coop, conversation = _conversation(in_loops=True)
    conversation.user("Task.")
    coop.render()
    with pytest.raises(ContextStateError):
        conversation.current.continue_turn(1)


_POINTER = re.compile(r"conversation/(?:turn-\d+/(?:user|reply-\d+)|summary-\d+|rollup-\d+)")


def parse_pointers(text: str) -> list[str]:
    return _POINTER.findall(text)


def _reachable(conversation: CompactingConversation, context: Context) -> str:
    """Everything the final Context shows plus every record reachable through pointers (an
    oracle of the test's own: breadth first over the pointers written in the text)."""
    store = conversation.records
    seen: set[str] = set()
    texts = [_dumped(context[:])]
    queue = [p for text in texts for p in parse_pointers(text)]
    while queue:
        pointer = queue.pop()
        if pointer in seen or pointer not in store.ids():
            continue
        seen.add(pointer)
        text = store.require(pointer).content
        texts.append(text)
        queue.extend(parse_pointers(text))
    return "\n".join(texts)


@given(
    loops=st.lists(st.lists(st.integers(1, 120), min_size=1, max_size=9), min_size=1, max_size=5),
    threshold=st.integers(50, 600),
    rollup=st.sampled_from([60, 10_000]),
)
def test_loops_stay_well_formed_and_every_fact_stays_reachable(
    loops: list[list[int]], threshold: int, rollup: int
) -> None:
    context, coop, conversation = _conversation(
        in_loops=True, threshold=threshold, rollup=rollup
    )  # a rollup of 60 tokens rolls up at nearly every checkpoint
    n = 0
    for loop, sizes in enumerate(loops):
        conversation.user(f"Task {loop}.")
        coop.render()
        for size in sizes:
            head = _dumped(context[:1])
            native, message = _call(n, size)
            conversation.push_reply(native, message)
            assert _dumped(context[-1]) == _dumped(native)  # pushed as sent, last
            assert _dumped(context[:1]) == head
            conversation.user(_result(n, size))
            coop.render()
            # every tool call in the Context has its result right after it (oracle: a scan)
            items = context[:]
            for k, item in enumerate(items):
                for block in item.get("content", []) if isinstance(item, dict) else []:
                    if isinstance(block, dict) and block.get("type") == "tool_use":
                        after = _dumped(items[k + 1]) if k + 1 < len(items) else ""
                        assert block["id"] in after
            n += 1
        native, message = _answer(f"Loop {loop} done.")
        conversation.push_reply(native, message)
        coop.render()
    validate_request(GatewayType.anthropic, context.request())
    shown = _reachable(conversation, context)
    assert all(f"FACT-{k} " in shown for k in range(n))
    assert context[0] == {"role": "system", "content": SYSTEM} or SYSTEM in _dumped(context[0])
