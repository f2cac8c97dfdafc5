"""The OpenAI Agents SDK Session backed by hydrangea, in a multi-turn tool-using conversation.

The model is a scripted implementation of the SDK's own ``Model`` interface (the SDK ships no
fake model), so the Runner, the tool machinery and the session handling are the SDK's.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from agents import Agent, RunConfig, Runner, function_tool, set_tracing_disabled
from agents.items import ModelResponse, TResponseInputItem, TResponseStreamEvent
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from hydrangea.context import Context
from hydrangea.integrations.openai_agents import HydrangeaSession
from hydrangea.stores import SqliteSessionStore
from tests._tool_fence_oracle import read_fence

set_tracing_disabled(True)  # the SDK would otherwise try to export traces over the network


class ScriptedModel(Model):
    """Calls the ticket tool once per user turn, then answers; records every input it gets."""

    def __init__(self) -> None:
        self.inputs: list[list[TResponseInputItem]] = []

    async def get_response(self, system_instructions: str | None,
                           input: str | list[TResponseInputItem], *args: Any,
                           **kwargs: Any) -> ModelResponse:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        self.inputs.append(items)  # type: ignore[arg-type]
        turn = len(self.inputs)
        last = items[-1]
        if isinstance(last, dict) and last.get("type") == "function_call_output":
            output: Any = ResponseOutputMessage(
                id=f"msg_{turn}", type="message", role="assistant", status="completed",
                content=[ResponseOutputText(type="output_text", text=f"answer {turn}",
                                            annotations=[])])
        else:
            output = ResponseFunctionToolCall(
                id=f"fc_{turn}", call_id=f"call_{turn}", type="function_call",
                name="ticket_status", arguments='{"ticket": "HW-1"}', status="completed")
        return ModelResponse(output=[output], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[TResponseStreamEvent]:
        raise NotImplementedError


@function_tool
def ticket_status(ticket: str) -> str:
    """The status of a ticket."""
    return f"{ticket} is closed"


async def _conversation(session: HydrangeaSession, model: ScriptedModel) -> list[str]:
    agent = Agent(name="support", instructions="Be brief.", model=model, tools=[ticket_status])
    answers = []
    config = RunConfig(call_model_input_filter=session.fence_model_input)
    for question in ("Is HW-1 closed?", "Thanks, and now?"):
        result = await Runner.run(agent, question, session=session, run_config=config)
        answers.append(str(result.final_output))
    return answers


def test_a_tool_conversation_keeps_its_prefix_and_survives_a_restart(tmp_path: Path) -> None:
    store = SqliteSessionStore(tmp_path / "sessions.db")
    model = ScriptedModel()
    answers = asyncio.run(_conversation(HydrangeaSession("user-1", store), model))
    assert answers == ["answer 2", "answer 4"]
    assert len(model.inputs) == 4
    for earlier, later in zip(model.inputs, model.inputs[1:], strict=False):
        assert later[: len(earlier)] == earlier  # every request extends the one before
    outputs = [item for item in model.inputs[-1]
               if isinstance(item, dict) and item.get("type") == "function_call_output"]
    assert len(outputs) == 2
    for output in outputs:  # the model saw each tool output fenced, once
        assert read_fence(dict(output)["output"]) == "HW-1 is closed"
    reopened = HydrangeaSession("user-1", SqliteSessionStore(tmp_path / "sessions.db"))
    stored = asyncio.run(reopened.get_items())
    kinds = [item.get("type", "message") for item in stored]
    assert kinds.count("function_call") == 2 and kinds.count("function_call_output") == 2
    assert stored[-1]["content"][0]["text"] == "answer 4"  # type: ignore[index,typeddict-item]
    assert asyncio.run(reopened.get_items(limit=1)) == stored[-1:]


def test_pop_and_clear_take_items_from_the_tail_only(tmp_path: Path) -> None:
    session = HydrangeaSession("s", SqliteSessionStore(tmp_path / "s.db"))
    items: list[TResponseInputItem] = [{"role": "user", "content": "one"},
                                       {"role": "user", "content": "two"}]
    asyncio.run(session.add_items(items))
    popped = asyncio.run(session.pop_item())
    assert popped == {"role": "user", "content": "two"}
    assert asyncio.run(session.get_items()) == [{"role": "user", "content": "one"}]
    asyncio.run(session.clear_session())
    assert asyncio.run(session.get_items()) == []
    assert asyncio.run(session.pop_item()) is None
    assert isinstance(session.context, Context) and len(session.context) == 0


def test_two_workers_on_one_session_both_land_none_lost(tmp_path: Path) -> None:
    first = HydrangeaSession("shared", SqliteSessionStore(tmp_path / "w.db"))
    second = HydrangeaSession("shared", SqliteSessionStore(tmp_path / "w.db"))
    asyncio.run(first.add_items([{"role": "user", "content": "from the first worker"}]))
    asyncio.run(second.add_items([{"role": "user", "content": "from the second"}]))
    assert asyncio.run(first.pop_item()) == {"role": "user", "content": "from the second"}
    reopened = HydrangeaSession("shared", SqliteSessionStore(tmp_path / "w.db"))
    assert asyncio.run(reopened.get_items()) == [
        {"role": "user", "content": "from the first worker"}]


def test_without_the_agents_sdk_the_error_names_the_extra() -> None:
    code = ("import sys\nsys.modules['agents'] = None\n"
            "try:\n    import hydrangea.integrations.openai_agents\n"
            "except ImportError as exc:\n    print(type(exc).__name__, exc)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert run.stdout.startswith("MissingExtraError")
    assert "hydrangea-context[openai-agents]" in run.stdout
