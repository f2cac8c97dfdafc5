"""Message and its parts: immutability and hashing, tool-call arguments included."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import adapter_for
from hydrangea.errors import MessageValidationError
from hydrangea.gateway import GatewayType
from hydrangea.message import (
    FrozenJSONArray,
    FrozenJSONObject,
    Message,
    Role,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
_arguments = st.dictionaries(st.text(max_size=4), _json_values, max_size=4)


def _call_message(arguments: dict[str, Any], call_id: str = "c1") -> Message:
    return Message(
        role=Role.assistant,
        content=(
            TextPart(text="Looking."),
            ToolCallPart(id=call_id, name="f", arguments=arguments),
        ),
    )


def test_a_message_with_a_tool_call_hashes() -> None:
    message = _call_message({"city": "Kyoto", "days": [1, 2], "opts": {"units": "metric"}})
    same = _call_message({"city": "Kyoto", "days": [1, 2], "opts": {"units": "metric"}})
    assert message == same and hash(message) == hash(same)
    assert len({message, same, _call_message({"city": "Osaka"})}) == 2


@given(arguments=_arguments)
def test_equal_messages_hash_equal(arguments: dict[str, Any]) -> None:
    # An independent copy through JSON (key order reversed: dict equality ignores it).
    again = dict(reversed(list(json.loads(json.dumps(arguments)).items())))
    first, second = _call_message(arguments), _call_message(again)
    assert first == second
    assert hash(first) == hash(second)
    assert first.parts[1] == ToolCallPart(id="c1", name="f", arguments=again)


def test_numbers_equal_in_python_hash_equal() -> None:
    # 1 == 1.0 == True in Python, so the parts are equal and must hash alike.
    parts = [ToolCallPart(id="c", name="f", arguments={"n": n}) for n in (1, 1.0, True)]
    assert parts[0] == parts[1] == parts[2]
    assert len({hash(part) for part in parts}) == 1


def test_changing_the_constructor_argument_does_not_reach_the_part() -> None:
    arguments: dict[str, Any] = {"q": "kyoto", "tags": ["a"], "opts": {"n": 1}}
    part = ToolCallPart(id="c1", name="search", arguments=arguments)
    before = hash(part)
    arguments["q"] = "osaka"
    arguments["tags"].append("b")
    arguments["opts"]["n"] = 2
    assert part.arguments == {"q": "kyoto", "tags": ["a"], "opts": {"n": 1}}
    assert hash(part) == before


@pytest.mark.parametrize(
    "change",
    [
        lambda a: a.__setitem__("q", "x"),
        lambda a: a.__delitem__("q"),
        lambda a: a.update(q="x"),
        lambda a: a.setdefault("new", 1),
        lambda a: a.pop("q"),
        lambda a: a.popitem(),
        lambda a: a.clear(),
        lambda a: a.__ior__({"q": "x"}),
        lambda a: a["tags"].append("b"),
        lambda a: a["tags"].extend(["b"]),
        lambda a: a["tags"].__setitem__(0, "b"),
        lambda a: a["tags"].__iadd__(["b"]),
        lambda a: a["tags"].insert(0, "b"),
        lambda a: a["tags"].sort(),
        lambda a: a["tags"].reverse(),
        lambda a: a["tags"].pop(),
        lambda a: a["tags"].remove("a"),
        lambda a: a["tags"].clear(),
        lambda a: a["opts"].__setitem__("n", 2),
    ],
)
def test_the_arguments_refuse_changes(change: Any) -> None:
    part = ToolCallPart(
        id="c1", name="search", arguments={"q": "k", "tags": ["a"], "opts": {"n": 1}}
    )
    message = Message(role=Role.assistant, content=(part,))
    before = hash(message)
    with pytest.raises(TypeError, match="read-only"):
        change(part.arguments)
    assert part.arguments == {"q": "k", "tags": ["a"], "opts": {"n": 1}}
    assert hash(message) == before


def test_the_arguments_read_like_a_json_mapping() -> None:
    part = ToolCallPart(id="c1", name="f", arguments={"b": [1, {"c": None}], "a": 2.5})
    assert isinstance(part.arguments, FrozenJSONObject)
    assert isinstance(part.arguments["b"], FrozenJSONArray)
    assert list(part.arguments) == ["b", "a"]  # key order kept
    assert json.dumps(part.arguments) == '{"b": [1, {"c": null}], "a": 2.5}'
    mutable = dict(part.arguments)
    mutable["a"] = 3
    assert part.arguments["a"] == 2.5
    assert ToolCallPart(id="c1", name="f").arguments == {}
    assert ToolCallPart(id="c", name="f", arguments={"t": (1, 2)}).arguments == {"t": [1, 2]}


def test_copies_pickles_and_json_round_trips_keep_the_message() -> None:
    message = _call_message({"q": ["a", {"b": 1}]})
    for again in (
        copy.copy(message),
        copy.deepcopy(message),
        message.model_copy(deep=True),
        pickle.loads(pickle.dumps(message)),
        Message.model_validate_json(message.model_dump_json()),
        Message.model_validate(message.model_dump()),
    ):
        assert again == message and hash(again) == hash(message)
        arguments = again.parts[1].arguments  # type: ignore[union-attr]
        with pytest.raises(TypeError):
            arguments["q"].append(1)


@pytest.mark.parametrize(
    "bad",
    [{"x": float("nan")}, {"x": float("inf")}, {"x": {1, 2}}, {"x": {1: "a"}}, {"x": b"raw"}],
)
def test_arguments_must_be_json(bad: dict[str, Any]) -> None:
    with pytest.raises(MessageValidationError, match="arguments"):
        ToolCallPart(id="c1", name="f", arguments=bad)


def _plain(value: object) -> bool:
    """True if no frozen container is left anywhere inside ``value``."""
    if isinstance(value, FrozenJSONObject | FrozenJSONArray):
        return False
    if isinstance(value, dict):
        return all(_plain(item) for item in value.values())
    if isinstance(value, list):
        return all(_plain(item) for item in value)
    return True


@pytest.mark.parametrize("gateway", list(GatewayType))
def test_adapters_write_plain_json_arguments(gateway: GatewayType) -> None:
    message = _call_message({"q": ["kyoto-arg", {"b": 1}]})
    items = adapter_for(gateway).from_message(message)
    assert items and _plain(items)
    assert "kyoto-arg" in json.dumps(items)


def test_messages_given_every_field_share_one_set_of_given_names() -> None:
    """A model given every field shares its class's set of given field names (memory: one
    set per class, not per message); copies with updates, and models given fewer fields,
    keep their own, and no change to one reaches another."""
    first = Message(role=Role.user, content="one")
    second = Message(role=Role.assistant, content="two")
    assert first.__pydantic_fields_set__ is second.__pydantic_fields_set__
    assert first.model_fields_set == {"role", "content"}
    changed = first.model_copy(update={"content": "three"})
    assert changed.content == "three" and first.content == "one"
    assert first.model_fields_set == second.model_fields_set == {"role", "content"}
    short = ToolResultPart(call_id="c", content="r")
    assert short.model_fields_set == {"call_id", "content"}
    full = [
        ToolResultPart(type="tool_result", call_id=c, content="r", is_error=False, name="f")
        for c in ("a", "b")
    ]
    assert full[0].__pydantic_fields_set__ is full[1].__pydantic_fields_set__
    assert full[0].model_fields_set == {"type", "call_id", "content", "is_error", "name"}
    assert short.__pydantic_fields_set__ is not full[0].__pydantic_fields_set__
