"""The pydantic-ai history processor's trust defaults: what is fenced, what is kept, and that
nothing is fenced twice; plus the prefix oracle over random conversations (FunctionModel)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai.messages import (
    BinaryContent,
    ImageUrl,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RunUsage

from hydrangea import Component
from hydrangea.errors import ContextStateError
from hydrangea.integrations.pydantic_ai import HistoryProcessor
from hydrangea.lifecycle import Placement
from tests._pydantic_ai_harness import (
    PAGE,
    Recorder,
    assert_prefix_kept,
    dumped,
    make_agent,
)
from tests._tool_fence_oracle import fence_inside, read_fence

PNG = BinaryContent(data=b"\x89PNG\r\n\x1a\n-not-really", media_type="image/png")
PHOTO = ImageUrl(url="https://x.test/photo.png")


def _content(text: object) -> str:
    return read_fence(text)


def _last_returns(recorder: Recorder) -> list[ToolReturnPart]:
    (requests,) = recorder.requests.values()
    messages = ModelMessagesTypeAdapter.validate_python(requests[-1])
    return [p for m in messages if isinstance(m, ModelRequest) for p in m.parts
            if isinstance(p, ToolReturnPart)]


def test_images_and_structure_of_a_return_are_kept_and_only_its_text_is_fenced() -> None:
    returned: list[object] = ["Caption: " + PAGE, PNG, PHOTO,
                              {"title": PAGE, "size": 3, "ok": True, "tags": ["a", None]}]
    recorder = Recorder(calls_per_turn=1)
    agent = make_agent(HistoryProcessor(), recorder, tool=lambda url: returned)
    agent.run_sync("Take a screenshot.")
    (part,) = _last_returns(recorder)
    content = part.content
    assert isinstance(content, list) and len(content) == 4
    caption, image, photo, data = content
    assert _content(caption) == "Caption: " + PAGE
    assert isinstance(image, BinaryContent) and (image.data, image.media_type) == (
        PNG.data, PNG.media_type)
    assert isinstance(photo, ImageUrl) and photo.url == PHOTO.url
    assert isinstance(data, dict) and set(data) == {"title", "size", "ok", "tags"}
    assert _content(data["title"]) == PAGE
    assert data["size"] == 3 and data["ok"] is True
    assert [_content(data["tags"][0]), data["tags"][1]] == ["a", None]


def test_a_lone_image_return_is_kept() -> None:
    recorder = Recorder(calls_per_turn=1)
    agent = make_agent(HistoryProcessor(), recorder, tool=lambda url: PNG)
    agent.run_sync("Take a screenshot.")
    (part,) = _last_returns(recorder)
    assert isinstance(part.content, BinaryContent) and part.content.data == PNG.data


def _scripted(script: list[ModelResponse], seen: list[list[ModelMessage]]) -> FunctionModel:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        return script[len(seen) - 1]

    return FunctionModel(model)


def test_a_tool_retry_with_outside_text_is_fenced_and_a_validation_error_is_kept() -> None:
    seen: list[list[ModelMessage]] = []
    script = [
        ModelResponse(parts=[ToolCallPart("fetch_page", {}, tool_call_id="c1")]),  # no url
        ModelResponse(parts=[ToolCallPart("fetch_page", {"url": "u"}, tool_call_id="c2")]),
        ModelResponse(parts=[ToolCallPart("fetch_page", {"url": "v"}, tool_call_id="c3")]),
        ModelResponse(parts=[TextPart("done")]),
    ]
    agent: Agent[None, str] = Agent(_scripted(script, seen),
                                    capabilities=[HistoryProcessor().capability()])

    @agent.tool_plain(retries=3)
    def fetch_page(url: str) -> str:
        """Fetch a page."""
        if url == "u":
            raise ModelRetry("The page said: " + PAGE)
        return PAGE

    assert agent.run_sync("go").output == "done"
    returns = {p.tool_call_id: p for m in seen[-1] if isinstance(m, ModelRequest)
               for p in m.parts if isinstance(p, ToolReturnPart)}
    assert returns["c1"].outcome == "retried" and isinstance(returns["c1"].content, list)
    assert returns["c2"].outcome == "retried"
    assert _content(returns["c2"].content) == "The page said: " + PAGE
    assert _content(returns["c3"].content) == PAGE


def test_retry_feedback_of_an_output_validator_is_fenced() -> None:
    seen: list[list[ModelMessage]] = []
    script = [ModelResponse(parts=[TextPart("first")]), ModelResponse(parts=[TextPart("second")])]
    agent: Agent[None, str] = Agent(_scripted(script, seen),
                                    capabilities=[HistoryProcessor().capability()])

    @agent.output_validator
    def check(output: str) -> str:
        if output == "first":
            raise ModelRetry("The page said: " + PAGE)
        return output

    result = agent.run_sync("go")
    assert result.output == "second"
    history_of = [result.all_messages()]
    # the model is shown the feedback as pydantic-ai words it, around the fenced text
    (shown,) = [p.content for p in seen[-1][-1].parts if isinstance(p, UserPromptPart)]
    assert isinstance(shown, str) and "<pyai:retry_feedback>" in shown
    assert _content(fence_inside(shown)) == "The page said: " + PAGE
    (feedback,) = [p for m in history_of[-1] if isinstance(m, ModelRequest) for p in m.parts
                   if isinstance(p, RetryFeedbackPart)]
    assert _content(feedback.content) == "The page said: " + PAGE


def _ctx(conversation_id: str | None) -> RunContext[None]:
    return RunContext(deps=None, model=TestModel(), usage=RunUsage(),
                      conversation_id=conversation_id)


def test_a_request_processed_again_unanswered_is_the_same_episode_and_fenced_once() -> None:
    history = HistoryProcessor([Component("Cite the ticket.", ttl=1, cadence=1)])
    sent: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("Is HW-1 closed?")]),
        ModelResponse(parts=[ToolCallPart("fetch_page", {"url": "u"}, tool_call_id="c1")]),
        ModelRequest(parts=[ToolReturnPart("fetch_page", PAGE, tool_call_id="c1")]),
    ]
    first = history(_ctx("c"), list(sent))
    again = history(_ctx("c"), first)  # pydantic-ai kept the first output as the history
    fresh = history(_ctx("c"), list(sent))  # or the caller retried with the input it had
    assert dumped(again) == dumped(first) == dumped(fresh)
    parts = first[-1].parts
    assert isinstance(parts[0], ToolReturnPart) and _content(parts[0].content) == PAGE
    assert isinstance(parts[1], UserPromptPart) and parts[1].content == "Cite the ticket."
    assert first[:2] == sent[:2] and all(a is b for a, b in zip(first[:2], sent, strict=False))


def test_a_prompt_added_to_an_unanswered_request_carries_its_components_once() -> None:
    history = HistoryProcessor([Component("Cite the ticket.", ttl=1, cadence=1),
                                Component("The user's name is Aki.", ttl=None)])
    first = history(_ctx("c"), [ModelRequest(parts=[UserPromptPart("Is HW-1 closed?")])])
    # the model call failed; the caller sends the history it got with one more prompt
    later = history(_ctx("c"), [*first, ModelRequest(parts=[UserPromptPart("And HW-2?")])])
    texts = [[p.content for p in m.parts
              if isinstance(p, UserPromptPart) and isinstance(p.content, str)] for m in later]
    assert texts[0] == ["Is HW-1 closed?"]  # unsent: what it carried moved to the newest
    assert texts[1][0] == "And HW-2?"
    assert sorted(texts[1][1:]) == ["Cite the ticket.", "The user's name is Aki."]


def test_a_request_already_sent_is_never_fenced_afterwards() -> None:
    history = HistoryProcessor()
    sent: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("hi")]),
        ModelResponse(parts=[ToolCallPart("fetch_page", {"url": "u"}, tool_call_id="c1")]),
        ModelRequest(parts=[ToolReturnPart("fetch_page", PAGE, tool_call_id="c1")]),
        ModelResponse(parts=[TextPart("done")]),
        ModelRequest(parts=[UserPromptPart("thanks")]),
    ]
    out = history(_ctx("c"), list(sent))
    assert dumped(out) == dumped(sent)  # an unfenced history stays as it was sent


def test_a_run_without_a_conversation_id_is_refused() -> None:
    history = HistoryProcessor()
    messages: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("hi")])]
    before = dumped(messages)
    with pytest.raises(ContextStateError, match="conversation_id"):
        history(_ctx(None), messages)
    assert dumped(messages) == before


_TEXT = st.text(max_size=40)
_VALUE: st.SearchStrategy[Any] = st.recursive(
    _TEXT | st.integers() | st.booleans() | st.none() | st.just(PNG),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


def _unfenced(value: Any) -> Any:
    if isinstance(value, str):
        return _content(value)
    if isinstance(value, list):
        return [_unfenced(v) for v in value]
    if isinstance(value, dict):
        return {k: _unfenced(v) for k, v in value.items()}
    return value


@given(_VALUE, st.text(min_size=1, max_size=12), st.text(min_size=1, max_size=12))
def test_fencing_recovers_every_return_exactly_and_is_idempotent(
    value: Any, call_id: str, tool: str
) -> None:
    history = HistoryProcessor()
    request: list[ModelMessage] = [
        ModelRequest(parts=[ToolReturnPart(tool, value, tool_call_id=call_id)])]
    once = history(_ctx("p"), request)
    twice = HistoryProcessor()(_ctx("p"), once)
    assert dumped(twice) == dumped(once)
    (part,) = once[-1].parts
    assert isinstance(part, ToolReturnPart)
    expected = list(value) if isinstance(value, tuple) else value
    assert _unfenced(part.content) == expected


@given(
    st.lists(st.integers(0, 2), min_size=1, max_size=3),  # tool calls in each turn
    st.integers(1, 3), st.integers(1, 3), st.sampled_from(list(Placement)),
    st.lists(st.booleans(), min_size=3, max_size=3),  # reload the history before turn n
)
def test_every_request_extends_the_one_before_in_random_conversations(
    turns: list[int], ttl: int, cadence: int, placement: Placement, reloads: list[bool]
) -> None:
    history = HistoryProcessor([Component("Reminder.", ttl=ttl, cadence=cadence,
                                          placement=placement),
                                Component("Permanent.", ttl=None)])
    recorder = Recorder()
    agent = make_agent(history, recorder)
    messages: list[ModelMessage] | None = None
    for calls, reload in zip(turns, reloads, strict=False):
        recorder.calls_per_turn = calls
        if reload and messages is not None:
            messages = ModelMessagesTypeAdapter.validate_json(
                ModelMessagesTypeAdapter.dump_json(messages))
        messages = agent.run_sync("next", message_history=messages).all_messages()
    ((key, requests),) = recorder.requests.items()
    assert len(requests) == sum(turns) + len(turns)
    assert_prefix_kept(requests, recorder.replies[key])
