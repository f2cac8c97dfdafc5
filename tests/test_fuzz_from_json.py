"""Fuzz: ``Context.from_json`` and ``Lifecycle.from_json`` on damaged files.

A real saved document is damaged at one random place (a value replaced by anything, a number
pushed out of range, a string given a lone surrogate, a list entry dropped or doubled). Loading
must either raise :class:`~hydrangea.errors.SerializationError` or return a session that works:
it renders, its snapshots read back and build requests, and it saves again byte-stably.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.coop import CoopContext
from hydrangea.errors import HydrangeaError, SerializationError
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle, Placement, Stage
from hydrangea.message import Message, Role, TextPart, ToolCallPart, ToolResultPart
from tests.support.coop_areas import Probe
from tests.support.wild import SURROGATES, wild

Path = tuple[str | int, ...]


@pytest.fixture(autouse=True)
def _every_request_is_checked_by_the_sdk() -> None:
    """Overrides conftest's SDK check here: a damaged file can hold provider output that the
    adapter accepts (output is kept as the provider sent it, unknown fields included) and the
    SDK's request types would not. What this suite checks is that the library itself never
    crashes on what it loaded: requests are still built, by the library's own code."""


def _paths(value: Any, path: Path = ()) -> Iterator[Path]:
    yield path
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _paths(inner, (*path, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _paths(inner, (*path, index))


def _get(value: Any, path: Path) -> Any:
    for step in path:
        value = value[step]
    return value


def _damaged(document: Any, path: Path, how: str, replacement: Any) -> Any:
    if not path:
        return replacement
    damaged = copy.deepcopy(document)
    parent = _get(damaged, path[:-1])
    last = path[-1]
    current = parent[last]
    if how == "replace":
        parent[last] = replacement
    elif how == "number" and isinstance(current, int | float) and not isinstance(current, bool):
        parent[last] = replacement if isinstance(replacement, int | float) else current + 1
    elif how == "surrogate" and isinstance(current, str):
        parent[last] = current + SURROGATES[0]
    elif how == "drop" and isinstance(parent, list) and isinstance(last, int):
        del parent[last]
    elif how == "double" and isinstance(parent, list) and isinstance(last, int):
        parent.insert(last, copy.deepcopy(current))
    elif how == "delete" and isinstance(parent, dict):
        del parent[last]
    else:
        parent[last] = replacement
    return damaged


damage = st.tuples(
    st.integers(min_value=0),
    st.sampled_from(["replace", "number", "surrogate", "drop", "double", "delete"]),
    st.one_of(
        wild,
        st.sampled_from([-1, 0, 1, 2**63, 2**64, 1e999, -1e999, True, None, "", "#1"]),
    ),
)


def _context_document(gateway: GatewayType) -> Any:
    context = Context(gateway)
    context.emplace_message(Message(role=Role.system, content="Be brief."))
    context.emplace_message(Message(role=Role.user, content="Weather in Kyoto?"))
    context.emplace_message(
        Message(
            role=Role.assistant,
            content=(
                TextPart(text="Checking."),
                ToolCallPart(id="c1", name="weather", arguments={"city": "Kyoto"}),
            ),
        )
    )
    context.emplace_message(
        Message(role=Role.user, content=(ToolResultPart(call_id="c1", content="sunny"),))
    )
    return json.loads(context.to_json())


def _session_document(gateway: GatewayType) -> Any:
    log: list[Any] = []
    coop = CoopContext(Context(gateway))
    tool = Probe("tool", log, [["tool output"]])
    coop.register(tool)
    coop.register(Probe("chat", log, [["one"], ["two"], ["three"]]))
    session = Lifecycle(coop)
    session.add(Component("Alice", key="name", tags=["user"]))
    session.add(Component("hint", ttl=2, placement="before"))
    session.add(Component("mode", ttl=1, cadence=1, key="mode"))
    stages = [Stage(Placement.after, 1), Stage(Placement.before, 1)]
    session.add(Component("alert", key="alert", stages=stages, cycle=2))
    coop.context.emplace_message(Message(role=Role.user, content="hello"))
    session.render()
    session.seal("first")
    tool.retire()
    session.render()  # collects the tool area, the permanent component comes back
    session.seal("second")
    return json.loads(session.to_json())


DOCUMENTS = {
    gateway: (_context_document(gateway), _session_document(gateway)) for gateway in GatewayType
}


def _works(session: Lifecycle) -> None:
    """A loaded session must be usable all the way: render, snapshots, requests, save."""
    for snapshot_id in session.history.ids():
        snapshot = session.at_snapshot(snapshot_id)
        assert snapshot.kwargs is not None and len(snapshot.items) >= len(snapshot.history)
    for state in session.states():
        assert state.committed is None or state.committed[1] <= len(session.context)
    text = session.to_json()
    assert Lifecycle.from_json(text).to_json() == text
    session.context.emplace_message(Message(role=Role.user, content="next"))
    session.render().kwargs  # noqa: B018 - builds the request
    session.render()


@pytest.mark.parametrize("gateway", list(GatewayType))
@seed(14)
@settings(suppress_health_check=[HealthCheck.too_slow])
@given(damage=damage)
def test_a_damaged_context_file_loads_or_raises_a_serialization_error(
    gateway: GatewayType, damage: tuple[int, str, Any]
) -> None:
    document = DOCUMENTS[gateway][0]
    paths = list(_paths(document))
    index, how, replacement = damage
    damaged = _damaged(document, paths[index % len(paths)], how, replacement)
    try:
        text = json.dumps(damaged)
    except (TypeError, ValueError):
        return  # not JSON text at all (bytes, sets): nothing a file could hold
    try:
        context = Context.from_json(text)
    except SerializationError:
        return
    saved = context.to_json()
    assert Context.from_json(saved).to_json() == saved
    context.request()


@pytest.mark.parametrize("gateway", list(GatewayType))
@seed(1414)
@settings(suppress_health_check=[HealthCheck.too_slow])
@given(damage=damage)
def test_a_damaged_session_file_loads_working_or_raises_a_serialization_error(
    gateway: GatewayType, damage: tuple[int, str, Any]
) -> None:
    document = DOCUMENTS[gateway][1]
    paths = list(_paths(document))
    index, how, replacement = damage
    damaged = _damaged(document, paths[index % len(paths)], how, replacement)
    try:
        text = json.dumps(damaged)
    except (TypeError, ValueError):
        return
    try:
        session = Lifecycle.from_json(text)
    except SerializationError:
        return
    _works(session)


@seed(141414)
@given(text=st.one_of(st.text(max_size=40), wild.map(lambda v: json.dumps(v, default=repr))))
def test_any_text_loads_or_raises_a_serialization_error(text: str) -> None:
    for load in (Context.from_json, Lifecycle.from_json):
        with contextlib.suppress(SerializationError):
            load(text)


def test_the_undamaged_documents_load_and_work() -> None:
    for context_document, session_document in DOCUMENTS.values():
        Context.from_json(json.dumps(context_document)).request()
        _works(Lifecycle.from_json(json.dumps(session_document)))
        with pytest.raises(HydrangeaError):
            Lifecycle.from_json(json.dumps(context_document))
