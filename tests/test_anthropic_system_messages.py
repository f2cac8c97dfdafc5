"""Mid-conversation system messages on Anthropic (``Context(..., system_messages=True)``).

The oracle for the placement is the API's rule as its documentation states it, written here
independently of the builder: a ``role: "system"`` message is never first, comes right after a
user message, and is last or followed by an assistant message.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.errors import ContextStateError
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle
from hydrangea.message import Message, Role, ToolCallPart, ToolResultPart
from tests.support.unmarked import unmarked


def _placement_ok(messages: list[dict[str, Any]]) -> bool:
    for i, message in enumerate(messages):
        if message["role"] != "system":
            continue
        if i == 0 or messages[i - 1]["role"] != "user":
            return False
        if i + 1 < len(messages) and messages[i + 1]["role"] != "assistant":
            return False
    return True



def test_a_system_item_after_the_users_turn_goes_as_a_system_message() -> None:
    context = Context(GatewayType.anthropic, system_messages=True)
    context.emplace_message(Message(role=Role.system, content="You are careful."))
    context.emplace_message(Message(role=Role.user, content="Is HW-1 closed?"))
    context.emplace_message(Message(role=Role.system, content="Cite the ticket number."))
    first = context.request()
    assert first["system"] == [{"type": "text", "text": "You are careful."}]
    assert unmarked(first["messages"][-1]) == {
        "role": "system", "content": [{"type": "text", "text": "Cite the ticket number."}]
    }
    context.push_back({"role": "assistant", "content": [{"type": "text", "text": "Yes, HW-1."}]})
    second = context.request()
    assert unmarked(second["messages"][: len(first["messages"])]) == unmarked(first["messages"])


def test_without_the_flag_or_where_the_rule_forbids_it_a_notice_is_sent() -> None:
    plain = Context(GatewayType.anthropic)
    plain.emplace_message(Message(role=Role.user, content="hi"))
    plain.emplace_message(Message(role=Role.system, content="rule"))
    assert plain.request()["messages"][-1]["role"] == "user"
    flagged = Context(GatewayType.anthropic, system_messages=True)
    flagged.emplace_message(Message(role=Role.user, content="hi"))
    flagged.push_back({"role": "assistant", "content": [{"type": "text", "text": "hello"}]})
    flagged.emplace_message(Message(role=Role.system, content="after the reply"))
    messages = flagged.request()["messages"]
    assert messages[-1]["role"] == "user"  # right after Claude's turn: not allowed
    assert "[system] after the reply" in json.dumps(messages[-1])


def test_the_flag_is_anthropic_only_and_survives_save_and_load() -> None:
    with pytest.raises(ContextStateError, match="Anthropic"):
        Context(GatewayType.openai, system_messages=True)
    context = Context(GatewayType.anthropic, system_messages=True)
    context.emplace_message(Message(role=Role.user, content="hi"))
    context.emplace_message(Message(role=Role.system, content="rule"))
    loaded = Context.from_json(context.to_json())
    assert loaded.request() == context.request()
    assert "system_messages" not in Context(GatewayType.anthropic).to_json()


def test_a_lifecycle_system_component_is_sent_as_a_system_message() -> None:
    context = Context(GatewayType.anthropic, system_messages=True)
    lifecycle = Lifecycle(context)
    lifecycle.add(Component(Message(role=Role.system, content="Be brief."), ttl=1, cadence=1))
    previous: list[Any] = []
    for turn in range(3):
        context.emplace_message(Message(role=Role.user, content=f"question {turn}"))
        messages = unmarked(lifecycle.render().kwargs["messages"])
        assert messages[: len(previous)] == previous
        assert messages[-1]["role"] == "system" and _placement_ok(messages)
        context.push_back({"role": "assistant", "content": [{"type": "text", "text": "ok"}]})
        previous = [*messages, {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]


_step = st.sampled_from(["user", "system", "reply", "call", "result"])


@given(st.lists(_step, max_size=24))
def test_every_step_builds_what_a_fresh_build_gives_and_places_system_messages_legally(
    steps: list[str],
) -> None:
    context = Context(GatewayType.anthropic, system_messages=True)
    context.emplace_message(Message(role=Role.system, content="head"))
    calls = 0
    open_calls: list[str] = []
    for n, step in enumerate(steps):
        match step:
            case "user":
                context.emplace_message(Message(role=Role.user, content=f"u{n}"))
            case "system":
                context.emplace_message(Message(role=Role.system, content=f"s{n}"))
            case "reply":
                context.push_back({"role": "assistant", "content": [{"type": "text", "text": "r"}]})
            case "call":
                calls += 1
                open_calls.append(f"toolu_{calls}")
                context.emplace_message(Message(role=Role.assistant, content=(
                    ToolCallPart(id=open_calls[-1], name="f", arguments={}),
                )))
            case _:
                if open_calls:
                    context.emplace_message(Message(role=Role.user, content=(
                        ToolResultPart(call_id=open_calls.pop(), content="x"),
                    )))
        built = context.request()
        fresh = Context.from_json(context.to_json()).request()
        assert unmarked(built) == unmarked(fresh)  # the incremental path is exact
        assert _placement_ok(built["messages"])
