"""Tool definitions in each gateway's shape, checked by the official SDKs' own tool types, and
merged into the request keyword arguments the library builds."""

from __future__ import annotations

import copy
import keyword
from typing import Annotated, Any, Literal

import pytest
from google.genai import types
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field, ValidationError

from hydrangea.context import Context
from hydrangea.coop import CoopContext
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle
from hydrangea.message import Message, Role
from hydrangea.tools import (
    DuplicateToolError,
    FunctionTool,
    ToolDefinitionError,
    tool,
    tool_definitions,
    with_tools,
)
from tests.support.check_tools import validate_tool
from tests.support.sdk_check import validate_request


class Window(BaseModel):
    start: str
    end: str | None = None


@tool
def search(
    query: str, limit: Annotated[int, Field(ge=1)] = 5, within: Window | None = None
) -> list[str]:
    """Search the notes.

    Args:
        query: Words to look for.
        limit: At most this many hits.
    """
    return [query] * limit


@tool
async def clock(zone: Literal["UTC", "JST"] = "UTC") -> str:
    """The current time."""
    return "12:00"


@tool
def ping() -> str:
    """No parameters at all."""
    return "pong"


TOOLS: list[FunctionTool[..., Any]] = [search, clock, ping]


def _names(gateway: GatewayType, definitions: list[dict[str, Any]]) -> list[str]:
    match gateway:
        case GatewayType.openai:
            return [d["function"]["name"] for d in definitions]
        case GatewayType.gemini:
            return [f["name"] for d in definitions for f in d["function_declarations"]]
        case _:
            return [d["name"] for d in definitions]


@pytest.mark.parametrize("gateway", list(GatewayType))
def test_definitions_are_valid_sdk_tool_types(gateway: GatewayType) -> None:
    definitions = tool_definitions(gateway, TOOLS)
    for definition in definitions:
        validate_tool(gateway, definition)
    assert _names(gateway, definitions) == ["search", "clock", "ping"]


@pytest.mark.parametrize(
    ("gateway", "broken"),
    [
        (GatewayType.openai, {"type": "function", "function": {"name": "x", "params": {}}}),
        (GatewayType.openai_responses, {"type": "function", "name": "x", "schema": {}}),
        (GatewayType.anthropic, {"name": "x", "parameters": {"type": "object"}}),
        (GatewayType.gemini, {"function_declarations": [{"name": "x", "params": {}}]}),
    ],
)
def test_the_sdk_check_catches_a_wrong_key(gateway: GatewayType, broken: dict[str, Any]) -> None:
    with pytest.raises((AssertionError, ValidationError)):
        validate_tool(gateway, broken)


names = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True).filter(
    lambda name: not keyword.iskeyword(name) and not keyword.issoftkeyword(name)
)
annotation_texts = st.sampled_from(
    [
        "int",
        "str",
        "float",
        "bool",
        "list[int]",
        "dict[str, str]",
        "int | None",
        "Window",
        "Literal['a', 'b']",
        "list[Window]",
    ]
)


@given(
    name=names,
    params=st.dictionaries(names, st.tuples(annotation_texts, st.booleans()), max_size=4),
    gateway=st.sampled_from(list(GatewayType)),
)
def test_generated_signatures_give_valid_sdk_tools(
    name: str, params: dict[str, tuple[str, bool]], gateway: GatewayType
) -> None:
    ordered = sorted(params.items(), key=lambda item: item[1][1])  # required ones first
    signature = ", ".join(
        f"{p}: {a}" + (" = None" if optional else "") for p, (a, optional) in ordered
    )
    namespace: dict[str, Any] = {"Window": Window, "Literal": Literal}
    exec(f"def {name}({signature}) -> str:\n    '''Generated.'''\n    return ''", namespace)
    made = tool(namespace[name])
    (definition,) = tool_definitions(gateway, [made])
    validate_tool(gateway, definition)
    assert set(made.parameters["properties"]) == set(params)
    required = {p for p, (_, optional) in params.items() if not optional}
    assert set(made.parameters.get("required", [])) == required


def test_duplicate_names_are_refused() -> None:
    other = tool(name="search")(lambda: "")
    for gateway in GatewayType:
        with pytest.raises(DuplicateToolError, match="'search'"):
            tool_definitions(gateway, [search, other])
    with pytest.raises(ToolDefinitionError, match="FunctionTool"):
        tool_definitions(GatewayType.openai, [lambda: ""])  # type: ignore[list-item]


def _request(gateway: GatewayType) -> dict[str, Any]:
    context = Context(gateway)
    context.emplace_message(Message(role=Role.system, content="Be brief."))
    context.emplace_message(Message(role=Role.user, content="Find the note on hydrangeas."))
    return context.request()


@pytest.mark.parametrize("gateway", list(GatewayType))
def test_with_tools_adds_them_where_each_sdk_wants_them(gateway: GatewayType) -> None:
    request = _request(gateway)
    before = copy.deepcopy(request)
    merged = with_tools(request, gateway, TOOLS)
    assert request == before  # the given kwargs are not changed
    without = {k: v for k, v in merged.items() if k not in {"tools", "config"}}
    assert without == {k: v for k, v in before.items() if k not in {"tools", "config"}}
    if gateway is GatewayType.gemini:
        config = types.GenerateContentConfig.model_validate(merged["config"])
        assert config.system_instruction is not None  # what the builder put there stays
        assert merged["config"]["system_instruction"] == before["config"]["system_instruction"]
        tools = merged["config"]["tools"]
    else:
        tools = merged["tools"]
        validate_request(gateway, without)
    for definition in tools:
        validate_tool(gateway, definition)
    assert _names(gateway, tools) == ["search", "clock", "ping"]


@pytest.mark.parametrize("gateway", list(GatewayType))
def test_with_tools_keeps_existing_tools_and_refuses_a_name_twice(gateway: GatewayType) -> None:
    first = with_tools(_request(gateway), gateway, [search])
    second = with_tools(first, gateway, [clock])
    tools = second["config"]["tools"] if gateway is GatewayType.gemini else second["tools"]
    assert _names(gateway, tools) == ["search", "clock"]
    with pytest.raises(DuplicateToolError):
        with_tools(second, gateway, [search])
    assert with_tools(first, gateway, []) == first


def test_gemini_config_may_be_absent_or_an_sdk_object() -> None:
    bare = with_tools({"contents": []}, GatewayType.gemini, [ping])
    assert bare["config"] == {"tools": tool_definitions(GatewayType.gemini, [ping])}
    config = types.GenerateContentConfig(
        temperature=0.2,
        tools=[
            types.Tool(
                function_declarations=[types.FunctionDeclaration(name="existing", description="d")]
            )
        ],
    )
    merged = with_tools({"contents": [], "config": config}, GatewayType.gemini, [ping])
    out = merged["config"]
    assert isinstance(out, types.GenerateContentConfig) and out is not config
    assert out.temperature == 0.2 and config.tools is not None and len(config.tools) == 1
    assert out.tools is not None
    assert [
        f.name
        for t in out.tools
        if isinstance(t, types.Tool)
        for f in (t.function_declarations or [])
    ] == [
        "existing",
        "ping",
    ]
    with pytest.raises(DuplicateToolError):
        with_tools(merged, GatewayType.gemini, [ping])
    with pytest.raises(ToolDefinitionError, match="config"):
        with_tools({"contents": [], "config": 3}, GatewayType.gemini, [ping])


def test_with_tools_over_a_lifecycle_request() -> None:
    context = Context(GatewayType.gemini)
    context.emplace_message(Message(role=Role.system, content="Be brief."))
    lifecycle = Lifecycle(CoopContext(context))
    lifecycle.add(Component("Reminder: cite the note.", ttl=2))
    context.emplace_message(Message(role=Role.user, content="Find it."))
    kwargs = with_tools(lifecycle.render().kwargs, GatewayType.gemini, [search])
    assert "Reminder" in str(kwargs["contents"])
    assert kwargs["config"]["tools"] == tool_definitions(GatewayType.gemini, [search])
    assert "system_instruction" in kwargs["config"]
