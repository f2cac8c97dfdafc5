"""The saved-Context JSON codec: orjson's output is the standard library's, byte for byte.

The oracle is the standard library itself (``json.dumps(ensure_ascii=False,
separators=(",", ":"))`` and ``json.loads``), applied to the same values; hypothesis draws JSON
values with the types where orjson is known to differ (small floats, integers beyond 64 bits,
lone surrogates, control characters, deep nesting).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.errors import MissingExtraError, SerializationError
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, ToolCallPart
from hydrangea.providers import _json as codec


def standard(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


characters = st.characters(codec=None) | st.characters(categories=["Cs"]) | st.sampled_from(
    ["\x00", "\x1f", "\x7f", "\u2028", "\u2029", '"', "\\", "/", "\ufeff", "\U0001f600"]
)
texts = st.text(alphabet=characters, max_size=12)
finite_floats = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
    [1e-05, 2.5e-05, 1e-07, 4.2e-9, 1e-10, 0.0001, 1e-4 * 0.999, 1e16, 1.5e16, 5e-324, -0.0,
     1.7976931348623157e308, 123456789012345680.0, 1e22, 0.1]
)
integers = st.integers() | st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63) - 1])
scalars = st.none() | st.booleans() | integers | finite_floats | texts
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(texts, children, max_size=5),
    max_leaves=30,
)


@given(value=json_values)
def test_orjson_output_is_the_standard_librarys(value: Any) -> None:
    assert codec.dumps(value, fast=True) == standard(value)
    assert codec.dumps(value, fast=False) == standard(value)


@given(value=st.dictionaries(st.text(max_size=8), json_values, max_size=4))
def test_default_backend_output_is_the_standard_librarys(value: Any) -> None:
    assert codec.dumps(value) == standard(value)


@pytest.mark.parametrize(
    "value",
    [1e-05, -2.5e-05, 1e-07, 3.0e-06, [0.00001], {"x": 9.99e-05}, 2**64, -(2**63) - 1,
     "\ud800", {"\udfff": 1}, [[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]], "a" * 10 + "\x00"],
)
def test_values_orjson_writes_differently_fall_back_to_the_standard_library(value: Any) -> None:
    assert codec.dumps(value, fast=True) == standard(value)


def test_deep_nesting_beyond_orjsons_limit() -> None:
    value: Any = 1
    for _ in range(300):
        value = [value]
    assert codec.dumps(value, fast=True) == standard(value)


def test_a_string_that_looks_like_a_small_float_is_still_written_right() -> None:
    value = {"text": "1e-5 and 0.00001 in prose", "n": 1}
    assert codec.dumps(value, fast=True) == standard(value)


def test_fast_backend_required_but_missing_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "orjson", None)
    assert not codec.fast_backend_available()
    assert codec.dumps({"a": 1}) == '{"a":1}'
    with pytest.raises(MissingExtraError, match="fast-json"):
        codec.dumps({"a": 1}, fast=True)


@given(value=json_values)
def test_loads_is_the_standard_librarys(value: Any) -> None:
    text = standard(value)
    assert codec.loads(text) == json.loads(text)


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a":-Infinity}', "[1e400]", "-1e999"])
def test_loads_refuses_non_finite_numbers(text: str) -> None:
    with pytest.raises(codec.NonFiniteNumberError):
        codec.loads(text)


def _saved(items: list[Any]) -> str:
    return standard({"format": "hydrangea.context", "version": 1, "gateway": "openai",
                     "items": items})


# what a Message takes: lone surrogates are refused at the boundary (test_reliability_defects)
message_texts = st.text(
    alphabet=characters.filter(lambda c: not "\ud800" <= c <= "\udfff"), max_size=20
)


@given(contents=st.lists(message_texts, max_size=8), weights=st.lists(finite_floats, max_size=3))
def test_to_json_is_the_same_bytes_with_and_without_orjson(
    contents: list[str], weights: list[float]
) -> None:
    context = Context(GatewayType.anthropic)
    for i, content in enumerate(contents):
        role = Role.assistant if i % 2 else Role.user
        context.emplace_message(Message(role=role, content=content or "-"))
    call = ToolCallPart(id="c1", name="score", arguments={"weights": weights, "big": 2**70})
    context.emplace_message(Message(role=Role.assistant, content=(call,)))
    expected = standard({"format": "hydrangea.context", "version": 1, "gateway": "anthropic",
                         "items": list(context)})
    assert context.to_json() == expected
    with pytest.MonkeyPatch.context() as patched:
        patched.setitem(sys.modules, "orjson", None)
        assert context.to_json() == expected
    loaded = Context.from_json(expected)
    assert list(loaded) == list(context)
    assert loaded.to_json() == expected


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_from_json_refuses_non_finite_numbers_in_items(number: str) -> None:
    text = _saved([{"role": "user", "content": "x"}]).replace('"x"', '"x","n":' + number)
    assert number in text
    with pytest.raises(SerializationError, match="invalid item"):
        Context.from_json(text)


@pytest.mark.parametrize("item", [[], "text", 1, None])
def test_from_json_refuses_an_item_that_is_not_an_object(item: Any) -> None:
    with pytest.raises(SerializationError, match="JSON object"):
        Context.from_json(_saved([{"role": "user", "content": "x"}, item]))


def test_from_json_items_belong_to_the_new_context_alone() -> None:
    text = _saved([{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}])
    first, second = Context.from_json(text), Context.from_json(text)
    assert list(first) == list(second)
    assert all(a is not b for a, b in zip(first, second, strict=True))
    first.extend([{"role": "user", "content": "z"}])
    assert len(second) == 2


def test_an_integer_too_long_to_parse_is_a_serialization_error() -> None:
    text = _saved([{"role": "user", "content": "x"}]).replace('"x"', '"x","n":' + "9" * 5000)
    with pytest.raises(SerializationError):
        Context.from_json(text)
