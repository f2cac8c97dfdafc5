"""Generic Context behaviour (append-only, slicing, detach, persistence, all-or-nothing).

The OpenAI Chat Completions gateway is used throughout; nothing here is specific to it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.errors import InvalidItemError, SerializationError
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role

GATEWAY = GatewayType.openai


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def _filled(n: int) -> Context:
    context = Context(GATEWAY)
    for i in range(n):
        context.push_back(_user(f"m{i}"))
    return context


def test_constructor_items_and_read_access() -> None:
    items = [_user("a"), {"role": "assistant", "content": "b"}]
    context = Context(GATEWAY, items)
    assert context.gateway is GatewayType.openai
    assert len(context) == 2
    assert context[0] == items[0] and context[-1] == items[1]
    assert list(context) == items
    assert "2 items" in repr(context)


def test_items_are_copied_on_append() -> None:
    item = _user("original")
    context = Context(GATEWAY)
    context.push_back(item)
    item["content"] = "changed afterwards"
    assert context[0]["content"] == "original"


def test_context_has_no_mutating_sequence_api() -> None:
    context = _filled(2)
    with pytest.raises(TypeError):
        context[0] = _user("x")  # type: ignore[index]
    with pytest.raises(TypeError):
        del context[0]  # type: ignore[attr-defined]
    for name in ("append", "insert", "pop", "remove", "clear", "__setitem__", "__delitem__"):
        assert not hasattr(context, name), name


@given(
    n=st.integers(min_value=0, max_value=8),
    start=st.none() | st.integers(-10, 10),
    stop=st.none() | st.integers(-10, 10),
    step=st.none() | st.sampled_from([1, 2, -1, 3]),
)
def test_slicing_returns_a_tuple_like_a_list_slice(
    n: int, start: int | None, stop: int | None, step: int | None
) -> None:
    context = _filled(n)
    oracle = [_user(f"m{i}") for i in range(n)]
    got = context[start:stop:step]
    assert isinstance(got, tuple)
    assert list(got) == oracle[start:stop:step]


def test_iteration_is_a_snapshot() -> None:
    context = _filled(2)
    seen = []
    for item in context:
        seen.append(item)
        if len(context) < 4:
            context.push_back(_user("appended while iterating"))
    assert len(seen) == 2 and len(context) == 4


@given(n=st.integers(0, 8), data=st.data())
def test_detach_tail_removes_exactly_the_tail(n: int, data: st.DataObject) -> None:
    context = _filled(n)
    start = data.draw(st.integers(0, n))
    detached = context.detach_tail(start)
    assert detached == tuple(_user(f"m{i}") for i in range(start, n))
    assert list(context) == [_user(f"m{i}") for i in range(start)]


@pytest.mark.parametrize("start", [-1, 4])
def test_detach_tail_outside_the_range(start: int) -> None:
    context = _filled(3)
    with pytest.raises(IndexError):
        context.detach_tail(start)
    assert len(context) == 3


def test_extend_is_all_or_nothing() -> None:
    context = _filled(1)
    with pytest.raises(InvalidItemError):
        context.extend([_user("fine"), {"role": "user"}, _user("also fine")])
    assert list(context) == [_user("m0")]


def test_emplace_messages_is_all_or_nothing() -> None:
    context = _filled(1)
    with pytest.raises(TypeError):
        context.emplace_messages([Message(role=Role.user, content="ok"), "not a message"])  # type: ignore[list-item]
    assert len(context) == 1


@pytest.mark.parametrize("item", ["text", 42, None, ["list"], b"bytes"])
def test_push_back_of_a_non_dict(item: object) -> None:
    context = Context(GATEWAY)
    with pytest.raises(InvalidItemError):
        context.push_back(item)
    assert len(context) == 0


def test_push_back_of_unserializable_values() -> None:
    context = Context(GATEWAY)
    with pytest.raises(InvalidItemError):
        context.push_back({"role": "user", "content": float("nan")})
    assert len(context) == 0


_unicode = st.text(max_size=30)


@given(texts=st.lists(_unicode, max_size=6))
def test_json_round_trip_is_byte_identical(texts: list[str]) -> None:
    context = Context(GATEWAY)
    for i, text in enumerate(texts):
        if i % 2:
            context.push_back({"role": "assistant", "content": text})
        else:
            context.emplace_message(Message(role=Role.user, content=text))
    saved = context.to_json()
    loaded = Context.from_json(saved)
    assert loaded.to_json() == saved
    assert list(loaded) == list(context)
    assert loaded.gateway is context.gateway


def test_save_and_load_files(tmp_path: Path) -> None:
    context = _filled(3)
    context.push_back({"role": "assistant", "content": "Zürich \u2603 \U0001f600"})
    path = tmp_path / "context.json"
    context.save(path)
    loaded = Context.load(path)
    assert loaded.to_json() == context.to_json()
    assert path.read_bytes() == context.to_json().encode("utf-8")


def _document(**changes: Any) -> str:
    base: dict[str, Any] = {
        "format": "hydrangea.context",
        "version": 1,
        "gateway": "openai",
        "items": [_user("x")],
    }
    base.update(changes)
    return json.dumps({k: v for k, v in base.items() if v is not ...})


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        "[]",
        _document(format="something else"),
        _document(format=...),
        _document(version=2),
        _document(gateway="carrier-pigeon"),
        _document(gateway=...),
        _document(items={"0": _user("x")}),
        _document(items=...),
    ],
)
def test_from_json_errors_are_serialization_errors(text: str) -> None:
    with pytest.raises(SerializationError):
        Context.from_json(text)


def test_from_json_with_an_invalid_item_is_a_serialization_error() -> None:
    with pytest.raises(SerializationError):
        Context.from_json(_document(items=[{"role": "nobody"}]))


def test_request_defaults_to_the_whole_context_and_takes_an_overlay() -> None:
    context = _filled(2)
    assert context.request() == {"messages": list(context)}
    overlay = [*context, _user("overlay")]
    assert context.request(overlay) == {"messages": overlay}
    assert len(context) == 2


def test_detached_from_reports_the_lowest_start_since_a_count() -> None:
    context = Context(GatewayType.openai, [_user(str(i)) for i in range(6)])
    assert context.detaches == 0
    assert context.detached_from(0) is None
    context.detach_tail(6)  # detaches nothing: not counted
    assert context.detaches == 0
    context.detach_tail(4)
    context.extend([_user("a"), _user("b")])
    context.detach_tail(2)
    context.extend([_user("c"), _user("d"), _user("e")])
    context.detach_tail(3)
    assert context.detaches == 3
    assert len(context) == 3
    assert context.detached_from(0) == 2
    assert context.detached_from(1) == 2
    assert context.detached_from(2) == 3
    assert context.detached_from(3) is None
