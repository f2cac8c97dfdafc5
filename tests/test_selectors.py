"""Depth selectors against an independent model of the request, over random sessions."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hydrangea import Component, Context, GatewayType, Lifecycle, Message, Placement, Role
from hydrangea.errors import SelectorError
from hydrangea.lifecycle.history import LifecycleRequest, OverlayItem
from hydrangea.selectors import Coordinates, Turn, parse_selector, select, turns


@dataclass(frozen=True)
class ModelTurn:
    item: object
    attached: list[OverlayItem]


def model_turns(request: LifecycleRequest) -> list[ModelTurn]:
    """Walk the request's items in order: the run of items each component of this episode sent
    (told by its content) belongs to the history item it stands before; a run with no item
    after it belongs to the newest item. Newest first."""
    items = list(request.items)
    runs: list[tuple[int, OverlayItem]] = []  # (where its items start, the component)
    cursor = len(items)
    for entry in reversed(request.after):  # the after components end the request
        cursor -= len(entry.items)
        runs.append((cursor, entry))
    at = request.anchor
    for entry in request.before:
        runs.append((at, entry))
        at += len(entry.items)
    owner: dict[int, OverlayItem] = {}
    for begin, entry in runs:
        for offset, native in enumerate(entry.items):
            assert items[begin + offset] == native  # sent exactly as the component holds it
            owner[begin + offset] = entry
    pending: list[OverlayItem] = []
    found: list[ModelTurn] = []
    for index, native in enumerate(items):
        overlay_entry = owner.get(index)
        if overlay_entry is not None:
            if not pending or pending[-1] is not overlay_entry:
                pending.append(overlay_entry)
            continue
        found.append(ModelTurn(native, pending))
        pending = []
    if pending:
        found[-1].attached.extend(pending)
    return found[::-1]


steps = st.lists(
    st.one_of(
        st.tuples(st.just("say"), st.sampled_from([Role.user, Role.assistant]),
                  st.text(min_size=1, max_size=8)),
        st.tuples(st.just("add"), st.integers(1, 3), st.sampled_from(list(Placement))),
        st.tuples(st.just("render")),
    ),
    min_size=1, max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(gateway=st.sampled_from(list(GatewayType)), plan=steps, data=st.data())
def test_selectors_agree_with_the_model(gateway: GatewayType, plan: list[tuple[object, ...]],
                                        data: st.DataObject) -> None:
    lifecycle = Lifecycle(Context(gateway))
    lifecycle.context.emplace_message(Message(role=Role.user, content="start"))
    for number, step in enumerate(plan):
        if step[0] == "say":
            role, text = step[1], step[2]
            assert isinstance(role, Role) and isinstance(text, str)
            lifecycle.context.emplace_message(Message(role=role, content=text))
            continue
        if step[0] == "add":
            ttl, placement = step[1], step[2]
            assert isinstance(ttl, int) and isinstance(placement, Placement)
            lifecycle.add(Component(f"note {number}", ttl=ttl, placement=placement))
            continue
        request = lifecycle.render()
        expected = model_turns(request)
        got = turns(request)
        assert [t.depth for t in got] == list(range(len(expected)))
        for turn, model in zip(got, expected, strict=True):
            assert turn.item == model.item
            assert list(turn.attached) == model.attached
        depth = data.draw(st.integers(0, len(expected) - 1))
        model = expected[depth]
        assert select(request, f"d{depth}") == Turn(depth, model.item, tuple(model.attached))  # type: ignore[arg-type]
        assert select(request, f"d{depth}, 0") == model.item
        for position, entry in enumerate(model.attached, start=1):
            assert select(request, f"d{depth},{position}") is entry
            assert select(request, f"d{depth}, {position}, 0") is entry.items[0]
        with pytest.raises(SelectorError):
            select(request, f"d{depth}, {len(model.attached) + 1}")
        with pytest.raises(SelectorError):
            select(request, f"d{len(expected)}")


def test_selector_grammar() -> None:
    assert parse_selector("d0") == Coordinates(0)
    assert parse_selector(" d2 , 1 ") == Coordinates(2, 1)
    assert parse_selector("d0, 1, -1") == Coordinates(0, 1, -1)
    for bad in ("", "0", "d", "d-1", "d0,", "d0, 1, 2, 3", "x0"):
        with pytest.raises(SelectorError):
            parse_selector(bad)
    with pytest.raises(SelectorError):
        parse_selector(3)  # type: ignore[arg-type]


def test_a_reminder_before_the_newest_turn_is_its_first_attachment() -> None:
    lifecycle = Lifecycle(Context(GatewayType.anthropic))
    lifecycle.context.emplace_message(Message(role=Role.user, content="Is HW-1 closed?"))
    lifecycle.context.emplace_message(Message(role=Role.assistant, content="Yes."))
    lifecycle.context.emplace_message(Message(role=Role.user, content="Thanks"))
    lifecycle.add(Component("Cite the ticket.", ttl=1, key="cite"))
    request = lifecycle.render()
    attached = select(request, "d0, 1")
    assert isinstance(attached, OverlayItem) and attached.key == "cite"
    older = select(request, "d2, 0")
    assert isinstance(older, dict) and "Is HW-1 closed?" in str(older)
    content = older["content"]
    first = content[0] if isinstance(content, list) else content
    assert select(request, "d2, 0, 0") == first


def test_get_by_key_is_egregores_name_for_get() -> None:
    lifecycle = Lifecycle(Context(GatewayType.openai))
    component = Component("note", ttl=1, key="k")
    lifecycle.add(component)
    assert lifecycle.get_by_key("k") is lifecycle.get("k") is component
