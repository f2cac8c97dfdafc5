"""OpenAI request validation by the SDK's own request types, and strategies of model output.

``validate_chat`` / ``validate_responses`` check built request kwargs against the ``openai``
SDK's TypedDicts (``ChatCompletionMessageParam``, ``ResponseInputItemParam``) with pydantic in
strict mode and with unknown keys forbidden. pydantic validates ``Iterable[...]`` fields lazily,
so every validated result is walked and each lazy iterator is drained: that is where a wrong
nested shape raises.
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from hypothesis import strategies as st
from pydantic import ConfigDict, TypeAdapter

from hydrangea.context import NativeContent

__all__ = ["chat_outputs", "responses_outputs", "validate_chat", "validate_responses"]

_STRICT = ConfigDict(extra="forbid", strict=True)

CALL_IDS = tuple(f"call_{n}" for n in range(6))
"""The small pool of tool call ids the strategies draw from, so calls and results meet."""


@cache
def _chat_adapter() -> TypeAdapter[Any]:
    from openai.types.chat import ChatCompletionMessageParam

    return TypeAdapter(list[ChatCompletionMessageParam], config=_STRICT)


@cache
def _responses_adapter() -> TypeAdapter[Any]:
    from openai.types.responses import ResponseInputItemParam

    return TypeAdapter(list[ResponseInputItemParam], config=_STRICT)


def _drain(value: object) -> None:
    """Walk a validated value, forcing every lazy iterator pydantic left in it."""
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return
    if isinstance(value, Mapping):
        for nested in value.values():
            _drain(nested)
    elif isinstance(value, Iterator | list | tuple):
        for nested in list(value):
            _drain(nested)


def _only_keys(kwargs: dict[str, Any], required: str, optional: frozenset[str]) -> None:
    if required not in kwargs:
        raise AssertionError(f"request kwargs lack {required!r}: {sorted(kwargs)}")
    extra = set(kwargs) - {required} - optional
    if extra:
        raise AssertionError(f"unexpected request kwargs {sorted(extra)}")


def validate_chat(kwargs: dict[str, Any]) -> None:
    """Raise unless ``kwargs`` is a valid ``chat.completions.create`` request (without model)."""
    _only_keys(kwargs, "messages", frozenset())
    _drain(_chat_adapter().validate_python(kwargs["messages"]))
    for message in kwargs["messages"]:
        for call in message.get("tool_calls", ()):
            if call["type"] == "function":
                json.loads(call["function"]["arguments"])


def validate_responses(kwargs: dict[str, Any]) -> None:
    """Raise unless ``kwargs`` is a valid ``responses.create`` request (without model)."""
    _only_keys(kwargs, "input", frozenset({"instructions"}))
    if "instructions" in kwargs and not isinstance(kwargs["instructions"], str):
        raise AssertionError("'instructions' must be a string")
    _drain(_responses_adapter().validate_python(kwargs["input"]))
    for item in kwargs["input"]:
        if item.get("type") == "function_call":
            json.loads(item["arguments"])


# -- strategies of model output ------------------------------------------------------------------

_texts = st.text(max_size=40)
_names = st.text(alphabet=string.ascii_letters + "_", min_size=1, max_size=12)
_arguments = st.dictionaries(
    st.text(max_size=8), st.integers() | st.text(max_size=10) | st.booleans(), max_size=3
).map(lambda value: json.dumps(value, ensure_ascii=False))
_opaque = st.text(min_size=1, max_size=60)
"""Signatures / encrypted content: any text, so byte-identity is tested beyond base64."""


@st.composite
def _chat_message(draw: st.DrawFn) -> NativeContent:
    ids = draw(st.lists(st.sampled_from(CALL_IDS), unique=True, max_size=3))
    calls = [
        {
            "id": call_id,
            "type": "function",
            "function": {"name": draw(_names), "arguments": draw(_arguments)},
        }
        for call_id in ids
    ]
    item: NativeContent = {"role": "assistant"}
    text = draw(st.none() | _texts)
    if text is not None or not calls:
        item["content"] = text if text is not None else ""
    if calls:
        item["tool_calls"] = calls
    return item


def chat_outputs() -> st.SearchStrategy[list[NativeContent]]:
    """One Chat Completions assistant message (text and/or tool calls), as a one-item list."""
    return _chat_message().map(lambda item: [item])


_item_ids = st.text(alphabet=string.ascii_lowercase + string.digits, min_size=4, max_size=12)


@st.composite
def _responses_turn(draw: st.DrawFn) -> list[NativeContent]:
    items: list[NativeContent] = []
    if draw(st.booleans()):
        reasoning: NativeContent = {
            "type": "reasoning",
            "id": "rs_" + draw(_item_ids),
            "summary": [
                {"type": "summary_text", "text": text}
                for text in draw(st.lists(_texts, max_size=2))
            ],
            "encrypted_content": draw(_opaque),
        }
        items.append(reasoning)
    ids = draw(st.lists(st.sampled_from(CALL_IDS), unique=True, max_size=3))
    if draw(st.booleans()) or not ids:
        items.append(
            {
                "type": "message",
                "id": "msg_" + draw(_item_ids),
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": draw(_texts), "annotations": []}],
            }
        )
    for call_id in ids:
        items.append(
            {
                "type": "function_call",
                "id": "fc_" + draw(_item_ids),
                "call_id": call_id,
                "name": draw(_names),
                "arguments": draw(_arguments),
                "status": "completed",
            }
        )
    return items


def responses_outputs() -> st.SearchStrategy[list[NativeContent]]:
    """The output items of one Responses turn: maybe reasoning, then a message and/or calls."""
    return _responses_turn()
