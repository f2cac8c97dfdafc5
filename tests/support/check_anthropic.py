"""Anthropic request checks for tests: the SDK's own param types, then the API's turn rules.

``validate(kwargs)`` raises ``AssertionError`` (or pydantic's ``ValidationError``) when the
keyword arguments built for ``client.messages.create`` would not be accepted:

* every message validates as ``anthropic.types.beta.BetaMessageParam`` and ``system`` as a list
  of ``BetaTextBlockParam``, with the lazily validated iterables forced and no key silently dropped;
* the rules the types cannot express: only user/assistant roles, first message from the user,
  thinking and tool_use only from the assistant, tool_result only from the user, and every
  assistant turn's tool_use ids answered exactly, first thing, in the very next user turn.

``outputs()`` draws native assistant output as ``push_back`` takes it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from functools import cache
from typing import Any

from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter

from hydrangea.context import NativeContent
from tests.support.json_strategies import base64_tokens, short_texts, tool_arguments, tool_names

_ASSISTANT_ONLY = {"thinking", "redacted_thinking", "tool_use", "server_tool_use"}


@cache
def _adapters() -> tuple[TypeAdapter[Any], TypeAdapter[Any]]:
    # the beta param types: a superset that also knows the beta blocks the API returns
    # (mcp_tool_use, compaction, advisor_tool_result, ...) and takes back
    from anthropic.types.beta import BetaMessageParam, BetaTextBlockParam

    return TypeAdapter(BetaMessageParam), TypeAdapter(list[BetaTextBlockParam])


def _materialise(value: object) -> object:
    """Force pydantic's lazy iterables (and turn models into dicts) so every element is checked."""
    if isinstance(value, BaseModel):
        return _materialise(value.model_dump(mode="json", exclude_unset=True))
    if isinstance(value, dict):
        return {key: _materialise(inner) for key, inner in value.items()}
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return value
    if isinstance(value, Iterable):
        return [_materialise(inner) for inner in value]
    return value


def _check_types(kwargs: dict[str, Any]) -> None:
    message_adapter, system_adapter = _adapters()
    unknown = set(kwargs) - {"messages", "system"}
    assert not unknown, f"unexpected request keys {sorted(unknown)}"
    messages = kwargs["messages"]
    assert isinstance(messages, list), "messages must be a list"
    for index, message in enumerate(messages):
        checked = _materialise(message_adapter.validate_python(message))
        assert checked == message, f"message {index} changed under validation (extra keys?)"
    if "system" in kwargs:
        system = kwargs["system"]
        assert isinstance(system, list) and system, "system must be a non-empty list of blocks"
        checked = _materialise(system_adapter.validate_python(system))
        assert checked == system, "system blocks changed under validation (extra keys?)"


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def _check_turns(messages: list[dict[str, Any]]) -> None:
    if messages:  # (or a compaction's summary, which the API takes in the first place)
        first = messages[0]
        summary = first["role"] == "assistant" and _blocks(first)[:1] != [] and (
            _blocks(first)[0].get("type") == "compaction"
        )
        assert first["role"] == "user" or summary, "the first message must be a user turn"
    for index, message in enumerate(messages):
        role = message["role"]
        assert role in {"user", "assistant", "system"}, f"message {index} has role {role!r}"
        if role == "system":  # a mid-conversation system message, where the API takes one
            assert index > 0 and messages[index - 1]["role"] == "user", (
                f"system message {index} does not follow a user message"
            )
            assert index + 1 == len(messages) or messages[index + 1]["role"] == "assistant", (
                f"system message {index} is neither last nor followed by an assistant turn"
            )
            assert all(b["type"] == "text" for b in _blocks(message)), "system text blocks only"
            continue
        blocks = _blocks(message)
        assert blocks, f"message {index} has no content"
        kinds = [block["type"] for block in blocks]
        if role == "user":
            assert not set(kinds) & _ASSISTANT_ONLY, f"user message {index} holds {kinds}"
            results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
            if results:
                previous = messages[index - 1] if index else None
                assert previous is not None and previous["role"] == "assistant", (
                    f"tool results in message {index} do not follow an assistant turn"
                )
                calls = [b["id"] for b in _blocks(previous) if b["type"] == "tool_use"]
                assert Counter(results) == Counter(calls), (
                    f"message {index} answers {results}, the calls were {calls}"
                )
                head = kinds[: len(results)]
                assert head == ["tool_result"] * len(results), (
                    f"tool results must come first in message {index}: {kinds}"
                )
        else:
            assert "tool_result" not in kinds, f"assistant message {index} holds a tool_result"
            calls = [b["id"] for b in blocks if b["type"] == "tool_use"]
            if calls:
                assert index + 1 < len(messages), f"the calls of message {index} go unanswered"
                following = messages[index + 1]
                assert following["role"] == "user", f"message {index + 1} must answer the calls"
                answered = [b for b in _blocks(following) if b["type"] == "tool_result"]
                assert answered, f"message {index + 1} does not answer the calls {calls}"


def validate(kwargs: dict[str, Any]) -> None:
    """Raise unless ``kwargs`` is a request ``client.messages.create`` would accept."""
    _check_types(kwargs)
    _check_turns(kwargs["messages"])


# -- model output ------------------------------------------------------------------------------


@st.composite
def _assistant_output(draw: st.DrawFn) -> NativeContent:
    blocks: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 2))):
        if draw(st.booleans()):
            blocks.append(
                {
                    "type": "thinking",
                    "thinking": draw(short_texts),
                    "signature": draw(base64_tokens),
                }
            )
        else:
            blocks.append({"type": "redacted_thinking", "data": draw(base64_tokens)})
    for _ in range(draw(st.integers(0, 2))):
        blocks.append({"type": "text", "text": draw(short_texts)})
    ids = draw(st.lists(st.uuids().map(lambda u: f"toolu_{u.hex}"), max_size=3, unique=True))
    for call_id in ids:
        arguments = draw(tool_arguments)
        name = draw(tool_names)
        blocks.append({"type": "tool_use", "id": call_id, "name": name, "input": arguments})
    if not blocks:
        blocks.append({"type": "text", "text": draw(short_texts)})
    return {"role": "assistant", "content": blocks}


def outputs() -> st.SearchStrategy[list[NativeContent]]:
    """Native assistant output (thinking with signatures, redacted thinking, text, tool_use)."""
    return st.lists(_assistant_output(), min_size=1, max_size=2)
