"""Message validation, checked against an oracle written from the rules in the docstrings.

The validators have fast paths for the common inputs (plain ASCII text, a tuple of parts); these
properties pin down that every input is still accepted or refused exactly as the rules say.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.errors import HydrangeaError, MessageValidationError, UnencodableTextError
from hydrangea.message import Message, Role, TextPart, ToolCallPart, ToolResultPart

_TEXT = st.text(alphabet=st.characters(codec=None), max_size=8) | st.sampled_from(
    ["", "hi", "caf\u00e9", "\ud800", "a\udfffb", "\U0001f600"]
)


def _has_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)


@st.composite
def _part(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["text", "tool_call", "tool_result"]))
    if kind == "text":
        return {"type": "text", "text": draw(_TEXT)}
    if kind == "tool_call":
        return {"type": "tool_call", "id": "c1", "name": "search", "arguments": {"q": draw(_TEXT)}}
    return {"type": "tool_result", "call_id": "c1", "content": draw(_TEXT)}


def _texts(part: dict[str, Any]) -> list[str]:
    match part["type"]:
        case "text":
            return [part["text"]]
        case "tool_call":
            return [part["arguments"]["q"]]
        case _:
            return [part["content"]]


def _expected(role: Role, content: str | Sequence[dict[str, Any]]) -> type[HydrangeaError] | None:
    """The error the rules give for this input, or None when it is a valid message."""
    if isinstance(content, str):
        return UnencodableTextError if _has_surrogate(content) else None
    texts = [text for part in content for text in _texts(part)]
    if any(_has_surrogate(text) for text in texts):
        return UnencodableTextError
    if not content:
        return MessageValidationError
    for part in content:
        if role is Role.system and part["type"] != "text":
            return MessageValidationError
        if part["type"] == "tool_call" and role is not Role.assistant:
            return MessageValidationError
        if part["type"] == "tool_result" and role is not Role.user:
            return MessageValidationError
    return None


@given(
    role=st.sampled_from(list(Role)),
    content=_TEXT | st.lists(_part(), max_size=3),
    as_tuple=st.booleans(),
)
def test_messages_are_accepted_or_refused_as_the_rules_say(
    role: Role, content: str | list[dict[str, Any]], as_tuple: bool
) -> None:
    given_content: Any = tuple(content) if as_tuple and not isinstance(content, str) else content
    expected = _expected(role, content)
    if expected is not None:
        with pytest.raises(expected):
            Message(role=role, content=given_content)
        return
    message = Message(role=role, content=given_content)
    assert message.role is role
    if isinstance(content, str):
        assert message.content == content
        assert message.parts == (TextPart(text=content),)
    else:
        assert isinstance(message.content, tuple)
        assert [p.model_dump(mode="json") for p in message.content] == [
            {**p, **({"is_error": False, "name": None} if p["type"] == "tool_result" else {})}
            for p in content
        ]


def test_string_subclasses_and_lists_are_taken_as_before() -> None:
    class Name(str):
        pass

    assert type(Message(role=Role.user, content=Name("hi")).content) is str
    parts: Any = [TextPart(text="a"), TextPart(text="b")]
    listed = Message(role=Role.user, content=parts)
    assert listed.content == (TextPart(text="a"), TextPart(text="b"))
    raw: Any = b"bytes"
    assert Message(role=Role.user, content=raw).content == "bytes"  # pydantic's lax str
    with pytest.raises(MessageValidationError):
        Message(role=Role.user, content=None)  # type: ignore[arg-type]
    with pytest.raises(UnencodableTextError, match="content holds a lone surrogate U\\+D800"):
        Message(role=Role.user, content="x\ud800")
    with pytest.raises(UnencodableTextError):
        ToolCallPart(id="c", name="n", arguments={"k\ud800": 1})
    with pytest.raises(UnencodableTextError):
        ToolResultPart(call_id="c", content="\udc00")
