"""FunctionTool: schema and descriptions from a typed function, argument validation, results.

The validation property is checked against an independent oracle: the ``jsonschema`` package
applied to the schema the model is shown. Whatever the model sends, the tool either gets
arguments the schema allows or the model gets a ToolError message, never anything else.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable
from enum import Enum
from typing import Annotated, Any, Literal

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from hydrangea.errors import HydrangeaError
from hydrangea.tools import (
    FunctionTool,
    ToolDefinitionError,
    ToolError,
    ToolResultError,
    parse_docstring,
    result_text,
    tool,
)
from tests.support.json_strategies import json_values


class Unit(Enum):
    celsius = "celsius"
    fahrenheit = "fahrenheit"


class Place(BaseModel):
    city: str
    country: str = "JP"


@tool
def forecast(
    city: str,
    days: Annotated[int, Field(ge=1, le=7)] = 1,
    unit: Unit = Unit.celsius,
    detail: Literal["short", "long"] = "short",
    tags: list[str] | None = None,
    near: Place | None = None,
    ratio: float = 0.5,
    metric: bool = True,
) -> dict[str, Any]:
    """Today's forecast for one city.

    Longer explanation for the model.

    Args:
        city: The city, in English.
        days (int): How many days ahead,
            from 1 to 7.
        unit: Temperature unit.

    Returns:
        The forecast.
    """
    return {
        "city": city,
        "days": days,
        "unit": unit.value,
        "detail": detail,
        "tags": tags,
        "near": near.city if near else None,
        "ratio": ratio,
        "metric": metric,
    }


def test_schema_and_descriptions_come_from_the_signature_and_docstring() -> None:
    schema = forecast.parameters
    assert forecast.name == "forecast"
    assert (
        forecast.description
        == "Today's forecast for one city.\n\nLonger explanation for the model."
    )
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["required"] == ["city"]
    props = schema["properties"]
    assert list(props) == ["city", "days", "unit", "detail", "tags", "near", "ratio", "metric"]
    assert props["city"] == {"type": "string", "description": "The city, in English."}
    assert props["days"]["description"] == "How many days ahead, from 1 to 7."
    assert (props["days"]["minimum"], props["days"]["maximum"]) == (1, 7)
    assert props["detail"]["enum"] == ["short", "long"]
    assert "title" not in schema and all("title" not in p for p in props.values())
    assert "Place" in schema["$defs"]
    json.dumps(schema)  # plain JSON
    assert forecast("Kyoto")["city"] == "Kyoto"  # still callable as the function


def test_an_annotated_description_wins_over_the_docstring() -> None:
    def f(x: Annotated[int, Field(description="from Field")]) -> int:
        """F.

        Args:
            x: from the docstring
        """
        return x

    assert tool(f).parameters["properties"]["x"]["description"] == "from Field"


def test_name_and_description_can_be_given() -> None:
    with pytest.raises(ToolDefinitionError, match="letters, digits"):
        tool(lambda: None)  # "<lambda>" is no name a model can call

    def look(q: str) -> str:
        return q

    renamed = tool(name="search", description="Search.")(look)
    assert (renamed.name, renamed.description) == ("search", "Search.")
    assert FunctionTool.from_function(look).name == "look"


@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        ("def f(x): return x", "no type annotation"),
        ("def f(*xs: int) -> int: return 0", "*args"),
        ("def f(**kw: int) -> int: return 0", "*args"),
        ("def f(x: int, /) -> int: return x", "positional-only"),
        ("def f(x: 'Nowhere') -> int: return 0", "cannot be resolved"),
        ("def f(x: Callable[[], int]) -> int: return 0", "JSON schema"),
    ],
)
def test_functions_that_cannot_be_tools_are_refused(source: str, fragment: str) -> None:
    namespace: dict[str, Any] = {"Callable": Callable}
    exec(source, namespace)
    with pytest.raises(ToolDefinitionError, match=fragment.replace("*", r"\*")) as info:
        tool(namespace["f"])
    assert isinstance(info.value, TypeError) and isinstance(info.value, HydrangeaError)


def test_async_functions_methods_and_callable_objects() -> None:
    async def slow(x: int) -> int:
        await asyncio.sleep(0)
        return x * 2

    class Counter:
        def add(self, by: int) -> int:
            return by + 1

        def __call__(self, word: str) -> str:
            return word.upper()

    class AsyncCallable:
        async def __call__(self, n: int) -> int:
            return n

    made = tool(slow)
    assert made.is_async and asyncio.run(made.invoke({"x": 4})) == 8
    method = tool(Counter().add)
    assert not method.is_async and list(method.parameters["properties"]) == ["by"]
    assert method.invoke({"by": 2}) == 3
    instance = FunctionTool.from_function(Counter(), name="shout")
    assert instance.invoke({"word": "hi"}) == "HI"
    assert FunctionTool.from_function(AsyncCallable(), name="echo").is_async


def test_arguments_are_validated_strictly_and_converted() -> None:
    values = forecast.arguments(
        {"city": "Kyoto", "unit": "fahrenheit", "near": {"city": "Nara"}, "ratio": 1}
    )
    assert values["unit"] is Unit.fahrenheit and values["near"] == Place(city="Nara")
    assert values["days"] == 1 and values["ratio"] == 1.0
    with pytest.raises(ToolError) as info:
        forecast.arguments({"city": 3, "days": 9, "extra": True, "metric": 1})
    message = str(info.value)
    assert message.startswith("invalid arguments for tool 'forecast': ")
    for fragment in ("city:", "days:", "extra: not a parameter of this tool", "metric:"):
        assert fragment in message
    with pytest.raises(ToolError, match="city: Field required"):
        forecast.invoke({})
    with pytest.raises(ToolError, match="expected a JSON object"):
        forecast.arguments(["Kyoto"])  # type: ignore[arg-type]


small_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-20, 20)
    | st.floats(-5, 5, allow_nan=False).filter(lambda x: not x.is_integer())
    | st.sampled_from(["Kyoto", "celsius", "fahrenheit", "short", "long", "JP", "", "3", "true"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["city", "country", "x"]), inner, max_size=2)
    ),
    max_leaves=5,
)
# Valid values per parameter, and near misses (boundaries, look-alikes such as "3" for 3).
valid: dict[str, st.SearchStrategy[Any]] = {
    "city": st.sampled_from(["Kyoto", "Osaka", ""]),
    "days": st.integers(1, 7),
    "unit": st.sampled_from(["celsius", "fahrenheit"]),
    "detail": st.sampled_from(["short", "long"]),
    "tags": st.lists(st.sampled_from(["a", "b"]), max_size=2) | st.none(),
    "near": st.fixed_dictionaries({"city": st.just("Nara")}, optional={"country": st.just("JP")}),
    "ratio": st.integers(-1, 1) | st.floats(-1, 1, allow_nan=False),
    "metric": st.booleans(),
}
near_miss: dict[str, st.SearchStrategy[Any]] = {
    "city": st.sampled_from([3, None, ["Kyoto"]]),
    "days": st.sampled_from([0, 8, "3", True, 2.5]),
    "unit": st.sampled_from(["kelvin", "Celsius", 1]),
    "detail": st.sampled_from(["Short", None]),
    "tags": st.sampled_from([["a", 1], "a", [None]]),
    "near": st.sampled_from([{}, {"city": 1}, {"city": "Nara", "zip": "630"}, "Nara"]),
    "ratio": st.sampled_from(["0.5", None, True]),
    "metric": st.sampled_from([0, 1, "true", None]),
    "other": small_json,
}


@st.composite
def argument_objects(draw: st.DrawFn) -> dict[str, Any]:
    """A valid argument object, then (most of the time) one change that may break it."""
    optional = {name: strategy for name, strategy in valid.items() if name != "city"}
    arguments = draw(st.fixed_dictionaries({"city": valid["city"]}, optional=optional))
    change = draw(st.sampled_from(["none", "miss", "any", "drop"]))
    name = draw(st.sampled_from(sorted(near_miss)))
    if change == "miss":
        arguments[name] = draw(near_miss[name])
    elif change == "any":
        arguments[name] = draw(small_json)
    elif change == "drop":
        arguments.pop(name, None)
    return arguments


@given(argument_objects())
def test_validation_agrees_with_a_json_schema_validator(arguments: dict[str, Any]) -> None:
    oracle = jsonschema.Draft202012Validator(dict(forecast.parameters)).is_valid(arguments)
    try:
        values = forecast.arguments(arguments)
    except ToolError:
        accepted = False
    else:
        accepted = True
        assert set(values) == set(forecast.parameters["properties"])
    assert accepted == oracle, (arguments, accepted)


@given(json_values)
def test_any_json_the_model_sends_gives_values_or_a_tool_error(arguments: Any) -> None:
    try:
        forecast.invoke(arguments)
    except ToolError as exc:
        assert str(exc).startswith("invalid arguments for tool 'forecast'")


# -- docstrings ----------------------------------------------------------------------------------

words = st.text(st.characters(categories=("L", "N"), max_codepoint=0x7F), min_size=1, max_size=8)
identifiers = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)


@given(
    summary=st.lists(words, min_size=1, max_size=4).map(" ".join),
    params=st.dictionaries(
        identifiers,
        st.lists(st.lists(words, min_size=1, max_size=3).map(" ".join), min_size=1, max_size=3),
        max_size=4,
    ),
    typed=st.booleans(),
)
def test_google_docstrings_parse_back_to_what_they_were_built_from(
    summary: str, params: dict[str, list[str]], typed: bool
) -> None:
    lines = [summary, ""]
    if params:
        lines.append("Args:")
        for name, chunks in params.items():
            label = f"{name} (int)" if typed else name
            lines.append(f"    {label}: {chunks[0]}")
            lines.extend(f"        {chunk}" for chunk in chunks[1:])
    lines += ["", "Returns:", "    something: not a parameter"]
    parsed = parse_docstring("\n".join(lines))
    assert parsed.description == summary
    assert parsed.parameters == {name: " ".join(chunks) for name, chunks in params.items()}


def test_a_function_without_docstring_has_an_empty_description() -> None:
    def bare(x: int) -> int:
        return x

    made = tool(bare)
    assert made.description == "" and "description" not in made.parameters["properties"]["x"]


# -- results -----------------------------------------------------------------------------------


@given(json_values)
def test_results_are_json_text_that_reads_back_as_the_value(value: Any) -> None:
    text = result_text(value)
    if isinstance(value, str):
        assert text == value
    else:
        assert json.loads(text) == value


def test_models_and_dataclasses_are_results_too() -> None:
    @dataclasses.dataclass
    class Reading:
        city: str
        celsius: float

    assert json.loads(result_text(Place(city="Kyoto"))) == {"city": "Kyoto", "country": "JP"}
    assert json.loads(result_text(Reading("Osaka", 21.5))) == {"city": "Osaka", "celsius": 21.5}
    with pytest.raises(ToolResultError, match="'weather' returned a object"):
        result_text(object(), "weather")
