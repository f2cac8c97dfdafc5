"""The pydantic-ai history processor with the real framework (FunctionModel).

Each request is recorded as pydantic-ai dumps it; the oracle for the prefix is that request
n+1's messages start with request n's messages followed by the model's answer.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    UserPromptPart,
)

from hydrangea import Component
from hydrangea.errors import DuplicateKeyError, SessionNotFoundError
from hydrangea.integrations.pydantic_ai import HistoryProcessor
from hydrangea.lifecycle import Placement
from tests._pydantic_ai_harness import (
    PAGE,
    Recorder,
    assert_prefix_kept,
    count_everywhere,
    make_agent,
    texts_of_newest,
)
from tests._tool_fence_oracle import read_fence

REMINDER = "Cite the ticket number."
STICKY = "Answer in English."
NAME = "The user's name is Aki."


def _returns(request: list[object]) -> list[object]:
    return [p["content"] for m in request if isinstance(m, dict) and m["kind"] == "request"
            for p in m["parts"] if p["part_kind"] == "tool-return"]


def _one(recorder: Recorder) -> tuple[list[list[object]], list[list[object]]]:
    (key,) = recorder.requests
    return recorder.requests[key], recorder.replies[key]


def test_every_request_of_a_multi_turn_tool_conversation_extends_the_one_before() -> None:
    history = HistoryProcessor([
        Component(REMINDER, ttl=1, cadence=2),
        Component(STICKY, ttl=2, placement=Placement.before),
        Component(NAME, ttl=None),
    ])
    recorder = Recorder(calls_per_turn=2)
    agent = make_agent(history, recorder)
    result = agent.run_sync("Is ticket HW-1 closed?")
    for turn in ("And HW-2?", "And HW-3?"):
        result = agent.run_sync(turn, message_history=result.all_messages())
    requests, replies = _one(recorder)
    assert len(requests) == 9  # three turns of two tool calls and an answer
    assert_prefix_kept(requests, replies)
    for episode, request in enumerate(requests):
        # sent in the episodes its schedule names, at the end of the request then sent ...
        assert texts_of_newest(request, REMINDER) == (1 if episode % 2 == 0 else 0), episode
        assert texts_of_newest(request, STICKY) == (1 if episode < 2 else 0), episode
        # ... and kept where it was once the model answered after it
        assert count_everywhere(request, REMINDER) == episode // 2 + 1, episode
        assert count_everywhere(request, STICKY) == min(episode + 1, 2), episode
        assert count_everywhere(request, NAME) == 1, episode
    for content in _returns(requests[-1]):
        assert read_fence(content) == PAGE


def test_concurrent_runs_on_one_agent_keep_their_own_schedules() -> None:
    history = HistoryProcessor([Component(REMINDER, ttl=1, cadence=2),
                                Component(NAME, ttl=None)])
    recorder = Recorder()
    agent = make_agent(history, recorder, asynchronous=True)

    async def conversation(n: int) -> None:
        # n tool calls a turn, after n earlier exchanges: the runs are out of step
        earlier: list[ModelMessage] = []
        for k in range(n):
            earlier.append(ModelRequest(parts=[UserPromptPart(f"{n}: hello {k}")]))
            earlier.append(ModelResponse(parts=[TextPart(f"hi {k}")]))
        result = await agent.run(f"{n}: Is ticket HW-{n} closed?",
                                 message_history=earlier or None)
        await agent.run("And the next one?", message_history=result.all_messages())

    async def main() -> None:
        await asyncio.gather(*(conversation(n) for n in range(4)))

    asyncio.run(main())
    assert len(recorder.requests) == 4
    for key, requests in recorder.requests.items():
        calls = int(requests[0][0]["parts"][0]["content"][0])
        assert len(requests) == 2 * (calls + 1)
        assert_prefix_kept(requests, recorder.replies[key])
        for episode, request in enumerate(requests):
            assert texts_of_newest(request, REMINDER) == (1 if episode % 2 == 0 else 0)
            assert count_everywhere(request, NAME) == 1
        (first_prompt, *_) = requests[0][0]["parts"]
        assert all(r[0]["parts"][0] == first_prompt for r in requests)  # no other's messages


def test_a_reloaded_history_continues_its_schedule_and_is_not_fenced_again() -> None:
    history = HistoryProcessor([Component(REMINDER, ttl=1, cadence=2),
                                Component(NAME, ttl=None)])
    recorder = Recorder(calls_per_turn=1)
    agent = make_agent(history, recorder)
    result = agent.run_sync("Is HW-1 closed?")
    for turn in ("And HW-2?", "And HW-3?"):
        stored = ModelMessagesTypeAdapter.dump_json(result.all_messages())
        reloaded = ModelMessagesTypeAdapter.validate_json(stored)
        result = agent.run_sync(turn, message_history=reloaded)
    requests, replies = _one(recorder)
    assert len(requests) == 6
    assert_prefix_kept(requests, replies)
    for episode, request in enumerate(requests):
        assert texts_of_newest(request, REMINDER) == (1 if episode % 2 == 0 else 0)
        assert count_everywhere(request, NAME) == 1
    for content in _returns(requests[-1]):
        assert read_fence(content) == PAGE


def test_a_history_fenced_by_another_processor_is_not_fenced_again() -> None:
    recorder = Recorder(calls_per_turn=1)
    first = make_agent(HistoryProcessor(), recorder)
    result = first.run_sync("one")
    fenced_before = _returns(next(iter(recorder.requests.values()))[-1])
    reloaded = ModelMessagesTypeAdapter.validate_json(
        ModelMessagesTypeAdapter.dump_json(result.all_messages()))
    second = make_agent(HistoryProcessor(), recorder)  # a new process, a new processor
    second.run_sync("two", message_history=reloaded)
    requests, replies = _one(recorder)
    assert_prefix_kept(requests, replies)
    returns = _returns(requests[-1])
    assert len(returns) == 2 and returns[0] == fenced_before[0]
    for content in returns:
        assert read_fence(content) == PAGE


def test_a_trusted_tool_is_sent_as_it_is() -> None:
    recorder = Recorder(calls_per_turn=1)
    agent = make_agent(HistoryProcessor(trusted_tools={"fetch_page"}), recorder)
    agent.run_sync("one")
    requests, _ = _one(recorder)
    assert _returns(requests[-1]) == [PAGE]


def test_add_reaches_running_conversations_and_lifecycle_names_the_unknown() -> None:
    history = HistoryProcessor()
    recorder = Recorder(calls_per_turn=0)
    agent = make_agent(history, recorder)
    result = agent.run_sync("one")
    history.add(Component(NAME, ttl=None))
    result = agent.run_sync("two", message_history=result.all_messages())
    requests, replies = _one(recorder)
    assert_prefix_kept(requests, replies)
    assert [count_everywhere(r, NAME) for r in requests] == [0, 1]
    key = result.all_messages()[-1].conversation_id
    assert key is not None
    (state,) = history.lifecycle(key).states()
    assert state.component.ttl is None and state.committed
    with pytest.raises(SessionNotFoundError, match="first model request"):
        history.lifecycle("no-such-conversation")


def test_a_taken_key_is_refused_everywhere_and_nothing_is_added() -> None:
    history = HistoryProcessor()
    agent = make_agent(history, Recorder(calls_per_turn=0))
    first, second = (agent.run_sync(p).all_messages()[-1].conversation_id for p in "ab")
    assert first is not None and second is not None
    history.lifecycle(second).add(Component(REMINDER, ttl=3, key="cite"))
    with pytest.raises(DuplicateKeyError, match="'cite' is taken in conversation"):
        history.add(Component(NAME, ttl=None, key="cite"))
    assert history.components == ()
    assert list(history.lifecycle(first).states()) == []
    (state,) = history.lifecycle(second).states()
    assert state.key == "cite" and state.component.ttl == 3
    with pytest.raises(DuplicateKeyError):
        HistoryProcessor([Component(NAME, key="k"), Component(REMINDER, key="k")])


def test_without_pydantic_ai_the_error_names_the_extra() -> None:
    code = ("import sys\nsys.modules['pydantic_ai'] = None\n"
            "try:\n    import hydrangea.integrations.pydantic_ai\n"
            "except ImportError as exc:\n    print(type(exc).__name__, exc)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert run.stdout.startswith("MissingExtraError")
    assert "hydrangea-context[pydantic-ai]" in run.stdout
