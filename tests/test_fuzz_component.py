"""Fuzz: components, messages and the lifecycle's look-ups take anything and raise only
library errors; a refused call leaves the session exactly as it was."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import given, seed
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.errors import HydrangeaError
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle, Placement, Stage
from hydrangea.message import ImagePart, Message, TextPart, ToolCallPart, ToolResultPart
from tests.support.wild import texts, wild

maybe = st.one_of(st.none(), wild)
stages = st.one_of(
    wild,
    st.lists(
        st.one_of(
            st.builds(
                Stage, st.sampled_from(list(Placement)), st.one_of(st.none(), st.integers(1, 3))
            ),
            wild,
        ),
        max_size=3,
    ),
)
contents = st.one_of(texts, wild, st.builds(Message, role=st.just("user"), content=st.just("hi")))


def _library_error_only(call: Callable[..., object], *args: Any, **kwargs: Any) -> object | None:
    """``call(*args, **kwargs)``, or ``None`` if it raised a library error (anything else fails)."""
    try:
        return call(*args, **kwargs)
    except HydrangeaError as error:
        assert isinstance(error, ValueError | TypeError | KeyError | RuntimeError), type(error)
        return None


@seed(14)
@given(
    content=contents,
    key=maybe,
    tags=st.one_of(wild, st.lists(texts, max_size=3)),
    ttl=st.one_of(st.none(), st.integers(-1, 4), wild),
    cadence=st.one_of(st.none(), st.integers(-1, 4), wild),
    placement=st.one_of(st.none(), st.sampled_from(["before", "after"]), wild),
    stages=st.one_of(st.none(), stages),
    cycle=st.one_of(st.booleans(), st.integers(-1, 3), wild),
)
def test_component_takes_anything_and_raises_only_library_errors(
    content: Any,
    key: Any,
    tags: Any,
    ttl: Any,
    cadence: Any,
    placement: Any,
    stages: Any,
    cycle: Any,
) -> None:
    component = _library_error_only(
        lambda: Component(
            content,
            key=key,
            tags=tags,
            ttl=ttl,
            cadence=cadence,
            placement=placement,
            stages=stages,
            cycle=cycle,
        )
    )
    if component is None:
        return
    assert isinstance(component, Component)
    session = Lifecycle(Context(GatewayType.anthropic))
    added = _library_error_only(lambda: session.add(component))
    if added is not None:
        session.render()
        Lifecycle.from_json(session.to_json())


@seed(1414)
@given(
    role=st.one_of(st.sampled_from(["user", "assistant", "system"]), wild),
    content=st.one_of(texts, wild, st.lists(wild, max_size=3)),
)
def test_message_and_parts_raise_only_library_errors(role: Any, content: Any) -> None:
    _library_error_only(lambda: Message(role=role, content=content))
    _library_error_only(lambda: Message.model_validate({"role": role, "content": content}))
    _library_error_only(lambda: TextPart(text=content))
    _library_error_only(lambda: ToolCallPart(id=role, name="n", arguments=content))
    _library_error_only(lambda: ToolResultPart(call_id=role, content=content))
    _library_error_only(lambda: ImagePart(url=content, media_type=role))


@seed(141414)
@given(
    calls=st.lists(
        st.tuples(
            st.sampled_from(["get", "get_by_tags", "update", "delete", "add", "contains"]),
            st.one_of(st.sampled_from(["name", "#2", "hint", "user", ["user"]]), wild),
            st.one_of(st.sampled_from(["any", "all", "text", ["hints"]]), wild),
        ),
        max_size=6,
    )
)
def test_lookups_and_changes_with_anything_change_nothing_when_refused(
    calls: list[tuple[str, Any, Any]],
) -> None:
    session = Lifecycle(Context(GatewayType.openai))
    session.add(Component("Alice", key="name", tags=["user"]))
    session.add(Component("hint", ttl=2, tags=["hints"]))
    session.render()
    for name, first, second in calls:
        before = session.to_json()
        actions: dict[str, tuple[Callable[..., object], dict[str, Any]]] = {
            "get": (session.get, {}),
            "get_by_tags": (session.get_by_tags, {"match": second}),
            "update": (session.update, {"content": second, "tags": second}),
            "delete": (session.delete, {}),
            "add": (session.add, {"replace": second}),
            "contains": (session.__contains__, {}),
        }
        call, kwargs = actions[name]
        if _library_error_only(call, first, **kwargs) is None:
            assert session.to_json() == before, f"a refused {name} changed the session"
