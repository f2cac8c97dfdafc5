"""ToolLoopArea with FunctionTools: validation before the call, error results for the model,
JSON results, async tools through aroute(), and the loop unchanged when a tool fails."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from hydrangea.areas import AreaUsageError, RawTool, ToolError, ToolLoopArea
from hydrangea.context import Context
from hydrangea.context.area import AreaFlowState
from hydrangea.coop import CoopContext
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle
from hydrangea.message import Message, Role, ToolCallPart, ToolResultPart
from hydrangea.tools import (
    DuplicateToolError,
    FunctionTool,
    ToolDefinitionError,
    tool,
    tool_definitions,
    unfence_tool_output,
)
from tests.support.json_strategies import json_values, tool_arguments
from tests.support.unmarked import unmarked


class Forecast(BaseModel):
    city: str
    sky: str
    celsius: float


@tool
def weather(city: str, days: int = 1) -> Forecast:
    """Forecast for a city.

    Args:
        city: The city, in English.
        days: Days ahead.
    """
    if city == "Atlantis":
        raise ToolError("no forecast for Atlantis")
    return Forecast(city=city, sky="rain", celsius=18.0 + days)


@tool
async def population(city: str) -> dict[str, int]:
    """How many people live in a city."""
    await asyncio.sleep(0)
    return {city: {"Kyoto": 1_460_000, "Osaka": 2_750_000}.get(city, 0)}


def calls(*parts: tuple[str, str, dict[str, Any]]) -> Message:
    return Message(
        role=Role.assistant,
        content=tuple(ToolCallPart(id=i, name=n, arguments=a) for i, n, a in parts),
    )


def results(area: ToolLoopArea) -> list[ToolResultPart]:
    """The rendered results, each recovered from its fence (every tool here is untrusted)."""
    (message,) = area.render()
    return [p.model_copy(update={"content": unfence_tool_output(p.content)})
            for p in message.parts if isinstance(p, ToolResultPart)]


def test_results_are_json_values_and_bad_arguments_are_error_results() -> None:
    loop = ToolLoopArea([weather])
    loop.route(
        calls(
            ("a", "weather", {"city": "Kyoto", "days": 2}),
            ("b", "weather", {"city": 3}),
            ("c", "weather", {"city": "Kyoto", "when": "now"}),
            ("d", "weather", {"city": "Atlantis"}),
        )
    )
    a, b, c, d = results(loop)
    assert json.loads(a.content) == {"city": "Kyoto", "sky": "rain", "celsius": 20.0}
    assert not a.is_error
    assert b.is_error and "invalid arguments for tool 'weather': city:" in b.content
    assert c.is_error and "when: not a parameter of this tool" in c.content
    assert d.is_error and d.content == "no forecast for Atlantis"
    runs = loop.runs
    assert isinstance(runs[0].value, Forecast) and runs[0].output == a.content
    assert [r.is_error for r in runs] == [False, True, True, True]


@given(
    st.lists(
        st.tuples(st.sampled_from(["weather", "nope"]), tool_arguments), min_size=1, max_size=4
    )
)
def test_whatever_the_model_sends_the_loop_answers_every_call(
    sent: list[tuple[str, dict[str, Any]]],
) -> None:
    loop = ToolLoopArea([weather])
    reply = calls(*((f"c{n}", name, args) for n, (name, args) in enumerate(sent)))
    loop.route(reply)  # never raises: bad calls become error results
    answered = results(loop)
    assert [r.call_id for r in answered] == [f"c{n}" for n in range(len(sent))]
    for (name, args), result in zip(sent, answered, strict=True):
        valid = (
            name == "weather"
            and set(args) <= {"city", "days"}
            and isinstance(args.get("city"), str)
            and (
                "days" not in args
                or (isinstance(args["days"], int) and not isinstance(args["days"], bool))
            )
            and args.get("city") != "Atlantis"
        )
        assert result.is_error is (not valid), (name, args, result.content)


@given(json_values)
def test_raw_tools_may_return_any_json_value(value: Any) -> None:
    loop = ToolLoopArea({"echo": lambda arguments: value})
    loop.route(calls(("x", "echo", {})))
    (result,) = results(loop)
    assert (result.content if isinstance(value, str) else json.loads(result.content)) == value


def test_async_tools_run_through_aroute_concurrently_in_call_order() -> None:
    started: list[str] = []
    release = asyncio.Event()

    @tool
    async def slow(name: str) -> str:
        """Waits until every call of the round has started."""
        started.append(name)
        if len(started) == 2:
            release.set()
        await release.wait()
        return name.upper()

    loop = ToolLoopArea([slow, weather])

    async def main() -> None:
        reply = calls(
            ("1", "slow", {"name": "a"}),
            ("2", "weather", {"city": "Osaka"}),
            ("3", "slow", {"name": "b"}),
            ("4", "slow", {}),
        )
        await asyncio.wait_for(loop.aroute(reply), timeout=5)

    asyncio.run(main())
    one, two, three, four = results(loop)
    assert (one.content, three.content) == ("A", "B")  # both waited for each other
    assert json.loads(two.content)["city"] == "Osaka"
    assert four.is_error and "name: Field required" in four.content
    assert loop.flow_state is AreaFlowState.exclusive and loop.rounds == 1


def test_sync_route_refuses_async_tools_before_running_anything() -> None:
    ran: list[str] = []

    @tool
    def counted(city: str) -> str:
        """Counts its calls."""
        ran.append(city)
        return city

    loop = ToolLoopArea([counted, population])
    with pytest.raises(AreaUsageError, match="aroute"):
        loop.route(
            calls(("1", "counted", {"city": "Kyoto"}), ("2", "population", {"city": "Kyoto"}))
        )
    assert ran == [] and loop.rounds == 0 and loop.render() == []

    async def raw(arguments: Mapping[str, Any]) -> str:
        return "raw"

    with pytest.raises(AreaUsageError, match="aroute"):
        ToolLoopArea({"raw": raw}).route(calls(("1", "raw", {})))


def test_a_tool_that_breaks_leaves_the_loop_as_it_was() -> None:
    @tool
    async def broken(city: str) -> str:
        """Has a bug."""
        await asyncio.sleep(0)
        raise KeyError(city)

    loop = ToolLoopArea([weather, broken])
    with pytest.raises(KeyError):
        asyncio.run(
            loop.aroute(calls(("1", "weather", {"city": "Kyoto"}), ("2", "broken", {"city": "x"})))
        )
    assert loop.rounds == 0 and loop.runs == () and loop.render() == []
    asyncio.run(loop.aroute(calls(("3", "weather", {"city": "Kyoto"}))))
    assert [r.call_id for r in results(loop)] == ["3"]


def test_declaring_the_loop_tools_and_refusing_what_cannot_be_declared() -> None:
    loop = ToolLoopArea([weather, population])
    assert loop.definitions(GatewayType.anthropic) == tool_definitions(
        GatewayType.anthropic, [weather, population]
    )
    kwargs = loop.with_tools({"messages": []}, GatewayType.anthropic)
    assert [t["name"] for t in kwargs["tools"]] == ["weather", "population"]
    mixed: dict[str, RawTool | FunctionTool[..., Any]] = {
        "weather": weather,
        "echo": lambda arguments: "x",
    }
    raw = ToolLoopArea(mixed)
    with pytest.raises(ToolDefinitionError, match="echo"):
        raw.with_tools({}, GatewayType.openai)
    with pytest.raises(AreaUsageError, match="declared to the model as 'weather'"):
        ToolLoopArea({"forecast": weather})
    with pytest.raises(DuplicateToolError):
        ToolLoopArea([weather, weather])
    with pytest.raises(AreaUsageError, match="FunctionTools"):
        ToolLoopArea([lambda arguments: "x"])  # type: ignore[list-item]



def test_an_async_agent_turn_with_lifecycle_arender() -> None:
    context = Context(GatewayType.anthropic)
    coop = CoopContext(context)
    lifecycle = Lifecycle(coop)
    lifecycle.add(Component("Answer in one line.", ttl=1, cadence=1))
    loop = ToolLoopArea([weather, population])
    coop.register(loop)
    context.emplace_message(Message(role=Role.user, content="Weather and size of Kyoto?"))

    async def main() -> list[dict[str, Any]]:
        sent: list[dict[str, Any]] = []
        replies = iter(
            [
                calls(
                    ("t1", "weather", {"city": "Kyoto"}), ("t2", "population", {"city": "Kyoto"})
                ),
                Message(role=Role.assistant, content="Rain, 19°C; a city of 1.46 million."),
            ]
        )
        while not loop.answered:
            request = await lifecycle.arender()
            sent.append(loop.with_tools(request.kwargs, GatewayType.anthropic))
            reply = next(replies)
            context.emplace_message(reply)
            await loop.aroute(reply)
        return sent

    sent = asyncio.run(main())
    assert len(sent) == 2 and lifecycle.episode == 1
    last = sent[-1]["messages"]
    # what was sent is history: the first request (question, reminder) begins the second
    assert unmarked(last[:2]) == unmarked(sent[0]["messages"])  # cache markers aside
    assert [b["type"] for b in last[2]["content"]] == ["tool_use", "tool_use"]
    answered = last[3]["content"]
    assert [(b["type"], b["tool_use_id"]) for b in answered] == [
        ("tool_result", "t1"),
        ("tool_result", "t2"),
    ]
    assert json.loads(unfence_tool_output(answered[0]["content"])) == {
        "city": "Kyoto", "sky": "rain", "celsius": 19.0}
    assert json.loads(unfence_tool_output(answered[1]["content"])) == {"Kyoto": 1_460_000}
    assert "Answer in one line." in json.dumps(last[-1])  # sent again, at the end
    assert {t["name"] for t in sent[0]["tools"]} == {"weather", "population"}
