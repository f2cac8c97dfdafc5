"""Properties of the emulators over random sessions and one random change to what was sent.

The oracle is the providers' rule read directly off the two requests, not the emulators'
hashing: the change sits at one position of the request; every bound item (Anthropic thinking
block, Responses reasoning item) after that position has a changed prefix, every one before it
does not. Anthropic refuses at the first such block (``error``) or drops every one of them
(``drop_block``); Responses drops every one of them. A change to ``cache_control`` only, or
none, leaves every bound item valid.
"""

from __future__ import annotations

import copy
from typing import Any

import anthropic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.emulators import AnthropicEmulator, Reply, ResponsesEmulator, text, tool_call
from tests.support.emulators.anthropic import Mismatch
from tests.support.emulators.drive import AnthropicSession, ResponsesSession

Position = tuple[int, int]
"""(message, block) in Anthropic messages; (item, 0) in Responses input."""

ANTHROPIC_EDITS = [
    "none",
    "cache_control",
    "system",
    "tools",
    "user",
    "assistant_text",
    "add_block",
]
RESPONSES_EDITS = ["none", "instructions", "tools", "user", "output_text", "tool_output", "insert"]


def script(shape: list[bool]) -> list[Reply]:
    """A tool call answered then a text for each True, a text for each False."""
    out: list[Reply] = []
    for calls in shape:
        out.extend([tool_call("lookup", q="x"), text("Found.")] if calls else [text("Sure.")])
    return out


def anthropic_edit(
    session: AnthropicSession, edit: str, pick: int
) -> tuple[list[dict[str, Any]], dict[str, Any], Position | None]:
    """A copy of the history with ``edit`` applied: messages, call overrides, changed position."""
    messages = copy.deepcopy(session.messages)
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    match edit:
        case "none":
            return messages, {}, None
        case "cache_control":
            i = users[pick % len(users)]
            content = messages[i]["content"]
            blocks: list[dict[str, Any]] = (
                [{"type": "text", "text": content}] if isinstance(content, str) else content
            )
            blocks[-1]["cache_control"] = {"type": "ephemeral"}
            messages[i]["content"] = blocks
            return messages, {}, None
        case "system":
            return messages, {"system": "Today is Tuesday."}, (-1, 0)
        case "tools":
            extra = {"name": "extra", "input_schema": {"type": "object"}}
            return messages, {"tools": [*session.tools, extra]}, (-1, 0)
        case "user":
            i = users[pick % len(users)]
            content = messages[i]["content"]
            if isinstance(content, str):
                messages[i]["content"] = content + " Edited."
            else:
                content[0]["content"] = "edited result"
            return messages, {}, (i, 0)
        case "assistant_text":
            spots = [
                (i, j)
                for i, m in enumerate(messages)
                if m["role"] == "assistant"
                for j, b in enumerate(m["content"])
                if b["type"] == "text"
            ]
            i, j = spots[pick % len(spots)]
            messages[i]["content"][j]["text"] += " Edited."
            return messages, {}, (i, j)
        case "add_block":
            i = users[pick % len(users)]
            content = messages[i]["content"]
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            blocks.append({"type": "text", "text": "<reminder>Be brief.</reminder>"})
            messages[i]["content"] = blocks
            return messages, {}, (i, len(blocks) - 1)
    raise AssertionError(edit)


def thinking_after(messages: list[dict[str, Any]], position: Position | None) -> list[Position]:
    """Every thinking block strictly after ``position`` (none when nothing changed)."""
    if position is None:
        return []
    return [
        (i, j)
        for i, m in enumerate(messages)
        if m["role"] == "assistant"
        for j, b in enumerate(m["content"])
        if b["type"] in ("thinking", "redacted_thinking") and (i, j) > position
    ]


@given(
    shape=st.lists(st.booleans(), min_size=1, max_size=3),
    edit=st.sampled_from(ANTHROPIC_EDITS),
    pick=st.integers(0, 1000),
    drop=st.booleans(),
)
def test_anthropic_a_change_invalidates_exactly_the_thinking_after_it(
    shape: list[bool], edit: str, pick: int, drop: bool
) -> None:
    mode: Mismatch = "drop_block" if drop else "error"
    with AnthropicEmulator(script(shape), default=text("ok"), mismatch=mode) as emu:
        session = AnthropicSession(emu.client())
        for k, calls in enumerate(shape):
            reply = session.turn(f"Question {k}.")
            if calls:
                session.turn(session.results_for(reply))
        sent_back = len(thinking_after(session.messages, (-2, 0)))
        messages, overrides, position = anthropic_edit(session, edit, pick)
        messages.append({"role": "user", "content": "Final."})
        invalid = [f"messages.{i}.content.{j}" for i, j in thinking_after(messages, position)]
        assert emu.rejections == [] and emu.drops == []
        if invalid and not drop:
            with pytest.raises(anthropic.BadRequestError):
                session.call(messages, **overrides)
            assert [r.path for r in emu.rejections] == invalid[:1]
        else:
            session.call(messages, **overrides)
            assert emu.rejections == []
            assert [d.path for d in emu.drops] == invalid
    checked_before = sum(range(len(session.messages) // 2))  # request k sent back k blocks
    if not invalid:
        assert emu.checked == checked_before + sent_back
    elif drop:
        assert emu.checked == checked_before + sent_back - len(invalid)


def responses_edit(
    session: ResponsesSession, edit: str, pick: int
) -> tuple[list[Any], dict[str, Any], int | None]:
    """A copy of the history with ``edit`` applied: items, call overrides, changed index."""
    items = copy.deepcopy(session.items)

    def chosen(pred: Any) -> int:
        spots = [k for k, it in enumerate(items) if pred(it)]
        return spots[pick % len(spots)]

    match edit:
        case "none":
            return items, {}, None
        case "instructions":
            return items, {"instructions": "New rules."}, -1
        case "tools":
            extra = {"type": "function", "name": "extra", "parameters": {"type": "object"}}
            return items, {"tools": [*session.tools, extra]}, -1
        case "user":
            k = chosen(lambda it: it.get("role") == "user")
            items[k]["content"] += " Edited."
            return items, {}, k
        case "output_text":
            k = chosen(lambda it: it.get("type") == "message" and it.get("role") == "assistant")
            items[k]["content"][0]["text"] += " Edited."
            return items, {}, k
        case "tool_output":
            if not any(it.get("type") == "function_call_output" for it in items):
                return items, {}, None
            k = chosen(lambda it: it.get("type") == "function_call_output")
            items[k]["output"] = "edited result"
            return items, {}, k
        case "insert":
            # never between a reasoning item and the item that follows it
            k = chosen(lambda it: it.get("type") != "reasoning") + 1
            items.insert(k, {"role": "developer", "content": "Be brief."})
            return items, {}, k
    raise AssertionError(edit)


@given(
    shape=st.lists(st.booleans(), min_size=1, max_size=3),
    edit=st.sampled_from(RESPONSES_EDITS),
    pick=st.integers(0, 1000),
)
def test_responses_a_change_drops_exactly_the_reasoning_after_it(
    shape: list[bool], edit: str, pick: int
) -> None:
    with ResponsesEmulator(script(shape), default=text("ok")) as emu:
        session = ResponsesSession(emu.client())
        for k, calls in enumerate(shape):
            reply = session.turn(f"Question {k}.")
            if calls:
                session.turn(*session.outputs_for(reply))
        before = emu.reasoning_accepted
        items, overrides, position = responses_edit(session, edit, pick)
        reasoning = [k for k, it in enumerate(items) if it.get("type") == "reasoning"]
        invalid = [] if position is None else [k for k in reasoning if k > position]
        reply = session.call([*items, {"role": "user", "content": "Final."}], **overrides)
    assert emu.rejections == []
    assert [d.path for d in emu.dropped] == [f"input.{k}" for k in invalid]
    assert [t.id for t in reply.input_transformations or []] == [items[k]["id"] for k in invalid]
    assert emu.reasoning_accepted - before == len(reasoning) - len(invalid)
