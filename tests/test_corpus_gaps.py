"""The three recordings that were once "known gaps" of the real-traffic corpus, as scenarios.

* A Chat Completions tool call with ``"id": ""`` (Gemini's OpenAI-compatible endpoint): kept
  byte-identical, paired as an id-less call (by name in order, stable id ``"<name>#<n>"``), sent
  with that stable id as the call's id and its tool message's ``tool_call_id``.
* A ``/responses/compact`` result (``"object": "response.compaction"``): its window starts a
  Context; after a conversation it is refused with ``CompactionPlacementError``.
* ``file_search_call`` results carrying ``vector_store_id``: kept in the stored item, left out
  of the request (the Responses input type of a result does not declare it).

Every request built here is also checked against the SDK's request types (tests/conftest.py).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.errors import CompactionPlacementError, InvalidItemError
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, ToolCallPart, ToolResultPart
from hydrangea.providers.adapter import ORPHAN_CALL_NOTICE
from tests.support import real_corpus as corpus

_BY_NAME = {f.name: f for f in corpus.ALL}
IDLESS = _BY_NAME["openai_tool_call_without_id"]
COMPACTED = _BY_NAME["responses_compaction"]
FILE_SEARCH = _BY_NAME["responses_file_search_results"]


def _user(text: str) -> Message:
    return Message(role=Role.user, content=text)


def _results(*pairs: tuple[str, str]) -> Message:
    return Message(
        role=Role.user,
        content=tuple(ToolResultPart(call_id=call_id, content=text) for call_id, text in pairs),
    )


def _idless_turn(*names: str) -> dict[str, Any]:
    """An assistant message shaped like Gemini's OpenAI-compatible output: every id empty."""
    return {
        "role": "assistant",
        "tool_calls": [
            {"function": {"arguments": "{}", "name": name}, "id": "", "type": "function"}
            for name in names
        ],
    }


def _tool_runs(messages: list[dict[str, Any]]) -> list[tuple[list[str], list[str]]]:
    """(call ids of each assistant message with calls, ids of the tool messages right after)."""
    runs = []
    for position, message in enumerate(messages):
        if message["role"] == "assistant" and message.get("tool_calls"):
            after = []
            for following in messages[position + 1 :]:
                if following["role"] != "tool":
                    break
                after.append(following["tool_call_id"])
            runs.append(([c["id"] for c in message["tool_calls"]], after))
    return runs


# -- Chat Completions: "id": "" ------------------------------------------------------------------


def test_empty_id_is_kept_and_the_name_answers_it() -> None:
    context = Context(GatewayType.openai)
    context.emplace_message(_user("What is the current time?"))
    context.push_back(IDLESS.response)
    stored = context[1]
    assert stored["tool_calls"][0]["id"] == ""  # byte-identical in the Context
    assert '"id":""' in context.to_json()
    context.emplace_message(_results(("get_current_time", "Noon")))  # answered by name
    messages = context.request()["messages"]
    assert _tool_runs(messages) == [(["get_current_time#1"], ["get_current_time#1"])]
    tool = next(m for m in messages if m["role"] == "tool")
    assert tool["content"] == "Noon"
    assert ORPHAN_CALL_NOTICE not in json.dumps(messages)
    assert context[1]["tool_calls"][0]["id"] == ""  # building the request changed nothing


def test_the_read_back_id_answers_the_call_and_goes_on_the_wire() -> None:
    context = Context(GatewayType.openai)
    context.emplace_message(_user("What is the current time?"))
    context.push_back(IDLESS.response)
    (reply,) = context.messages(1)
    (call,) = [p for p in reply.parts if isinstance(p, ToolCallPart)]
    assert call.id == "get_current_time#1" and call.name == "get_current_time"
    context.emplace_message(_results((call.id, "Noon")))
    messages = context.request()["messages"]
    assert _tool_runs(messages) == [([call.id], [call.id])]


def test_parallel_idless_calls_pair_by_name_in_order() -> None:
    context = Context(GatewayType.openai)
    context.emplace_message(_user("Weather in two cities and the time?"))
    context.push_back(_idless_turn("get_weather", "get_time", "get_weather"))
    # answered out of order, by name: the first "get_weather" answers the first such call
    context.emplace_message(
        _results(("get_time", "noon"), ("get_weather", "sunny"), ("get_weather", "rain"))
    )
    messages = context.request()["messages"]
    ids = ["get_weather#1", "get_time#1", "get_weather#2"]
    assert _tool_runs(messages) == [(ids, ["get_time#1", "get_weather#1", "get_weather#2"])]
    contents = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    assert contents == {"get_time#1": "noon", "get_weather#1": "sunny", "get_weather#2": "rain"}


def test_stable_ids_count_over_the_whole_history_also_through_the_request_cache() -> None:
    context = Context(GatewayType.openai)
    for turn in range(4):
        context.emplace_message(_user(f"question {turn}"))
        context.push_back(_idless_turn("lookup"))
        context.emplace_message(_results(("lookup", f"answer {turn}")))
        context.push_back({"role": "assistant", "content": f"done {turn}"})
        cached = context.request()  # built through the Context's request cache
        assert cached == context.adapter.build_request(list(context))
    runs = _tool_runs(cached["messages"])
    assert runs == [([f"lookup#{n}"], [f"lookup#{n}"]) for n in range(1, 5)]


def test_a_call_with_an_id_is_not_answered_by_its_name() -> None:
    context = Context(GatewayType.openai)
    context.emplace_message(_user("Weather?"))
    context.push_back(
        {
            "role": "assistant",
            "tool_calls": [
                {"function": {"arguments": "{}", "name": "get_weather"}, "id": "call_1",
                 "type": "function"}
            ],
        }
    )
    context.emplace_message(_results(("get_weather", "sunny")))
    messages = context.request()["messages"]
    assert _tool_runs(messages) == [(["call_1"], ["call_1"])]
    notice = next(m for m in messages if m["role"] == "tool")
    assert notice["content"] == ORPHAN_CALL_NOTICE  # the name did not answer it
    assert any("[tool result get_weather] sunny" in str(m.get("content")) for m in messages)


def test_caller_authored_items_still_need_an_id() -> None:
    with pytest.raises(InvalidItemError, match="must not be empty"):
        Context(GatewayType.openai).adapter.validate(_idless_turn("f"))


_NAMES = st.sampled_from(["alpha", "beta", "gamma"])


@st.composite
def _chat_histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Turns of id-less (and some real-id) calls, each answered by a random mix of references:
    the real id, the stable id, the name, or nothing (left open)."""
    items: list[dict[str, Any]] = []
    serial = 0
    counts: dict[str, int] = {}
    for _ in range(draw(st.integers(1, 4))):
        items.append({"role": "user", "content": "go"})
        calls: list[tuple[dict[str, Any], str]] = []
        for name in draw(st.lists(_NAMES, min_size=1, max_size=3)):
            serial += 1
            real = draw(st.booleans()) and draw(st.booleans())
            if not real:
                counts[name] = counts.get(name, 0) + 1
            own = f"call_{serial}" if real else f"{name}#{counts[name]}"  # what names it
            calls.append(
                ({"function": {"arguments": "{}", "name": name},
                  "id": own if real else "", "type": "function"}, own)
            )
        items.append({"role": "assistant", "tool_calls": [call for call, _ in calls]})
        for call, own in draw(st.permutations(calls)):
            how = draw(st.sampled_from(["id", "name", "skip"]))
            if how == "skip":
                continue
            serial += 1
            ref = own if how == "id" else call["function"]["name"]
            items.append({"role": "tool", "tool_call_id": ref, "content": f"r{serial}"})
    return items


def _oracle(items: list[dict[str, Any]]) -> dict[str, tuple[str, int]]:
    """Naive pairing read from the dicts: result content -> (wire id of its call, call's
    assistant message index). A result names a call by its real id, else by the name of the
    earliest unanswered earlier id-less call of that name; stable ids count per name."""
    calls: list[dict[str, Any]] = []  # {"wire", "name", "real", "at", "open"}
    counts: dict[str, int] = {}
    out: dict[str, tuple[str, int]] = {}
    for index, item in enumerate(items):
        if item["role"] == "assistant":
            for call in item["tool_calls"]:
                name = call["function"]["name"]
                wire = call["id"]
                if not wire:
                    counts[name] = counts.get(name, 0) + 1
                    wire = f"{name}#{counts[name]}"
                calls.append({"wire": wire, "name": name, "real": bool(call["id"]),
                              "at": index, "open": True})
        elif item["role"] == "tool":
            ref = item["tool_call_id"]
            match = next((c for c in calls if c["open"] and c["wire"] == ref), None)
            if match is None:
                match = next(
                    (c for c in calls if c["open"] and not c["real"] and c["name"] == ref), None
                )
            if match is not None:
                match["open"] = False
                out[item["content"]] = (match["wire"], match["at"])
    return out


@given(_chat_histories())
def test_idless_pairing_matches_a_naive_oracle(items: list[dict[str, Any]]) -> None:
    context = Context(GatewayType.openai, copy.deepcopy(items))
    messages = context.request()["messages"]
    assert "" not in {c["id"] for m in messages for c in m.get("tool_calls") or []}
    expected = _oracle(items)
    # where each answered result stands: in the tool run after its call, under the call's id
    found: dict[str, tuple[str, int]] = {}
    assistant_turn = -1
    assistant_of_wire: dict[int, int] = {}
    for position, message in enumerate(messages):
        if message["role"] == "assistant":
            assistant_turn += 1
            assistant_of_wire[position] = assistant_turn
        elif message["role"] == "tool" and message["content"] != ORPHAN_CALL_NOTICE:
            owner = max(p for p in assistant_of_wire if p < position)
            found[message["content"]] = (message["tool_call_id"], assistant_of_wire[owner])
    assistant_index = {i: n for n, i in enumerate(k for k, m in enumerate(items)
                                                  if m["role"] == "assistant")}
    assert found == {text: (wire, assistant_index[at]) for text, (wire, at) in expected.items()}
    for ids, run in _tool_runs(messages):
        assert sorted(run) == sorted(ids)  # every call answered once, by its own id


# -- Responses: /responses/compact ----------------------------------------------------------------


def test_a_compacted_window_starts_a_context() -> None:
    context = Context(GatewayType.openai_responses)
    context.push_back(COMPACTED.response)
    output = COMPACTED.response["output"]
    assert [item["type"] for item in context] == [item["type"] for item in output]
    assert context[0]["id"] == output[0]["id"]  # the stored user message keeps its id
    assert context[1]["encrypted_content"] == output[1]["encrypted_content"]
    context.emplace_message(_user("What did I say?"))
    sent = context.request()["input"]
    assert sent[0] == {k: v for k, v in output[0].items() if k != "id"}
    assert sent[1] == output[1]
    assert sent[2:] == [{"type": "message", "role": "user", "content": "What did I say?"}]
    assert Context.from_json(context.to_json()).request() == context.request()


def test_system_messages_may_come_before_a_compacted_window() -> None:
    context = Context(GatewayType.openai_responses)
    context.emplace_message(Message(role=Role.system, content="Be brief."))
    context.push_back(COMPACTED.response)
    sent = context.request()["input"]
    assert sent[0] == {"type": "message", "role": "system", "content": "Be brief."}
    assert [item.get("type") for item in sent[1:]] == ["message", "compaction"]


@pytest.mark.parametrize("form", ["dict", "sdk"])
def test_a_compacted_window_after_a_conversation_is_refused(form: str) -> None:
    context = Context(GatewayType.openai_responses)
    context.emplace_message(_user("Hello!"))
    before = context.to_json()
    pushed = COMPACTED.response if form == "dict" else corpus.sdk_object(COMPACTED)
    with pytest.raises(CompactionPlacementError, match="new Context") as raised:
        context.push_back(pushed)
    assert isinstance(raised.value, InvalidItemError | ValueError)
    assert context.to_json() == before


def test_server_side_compaction_is_appended_as_output() -> None:
    context = Context(GatewayType.openai_responses)
    context.emplace_message(_user("A long story, please."))
    response = {
        "object": "response",
        "id": "resp_1",
        "output": [
            {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": "Once...", "annotations": []}]},
            copy.deepcopy(COMPACTED.response["output"][1]),
        ],
    }
    context.push_back(response)  # a compaction item in a normal response: no window rule
    # OpenAI's compaction guide: the items before the most recent compaction item may be
    # dropped (it carries what the next window needs), so later requests start at it
    assert [item.get("type") for item in context.request()["input"]] == ["compaction"]
    assert [item.get("type") for item in context] == ["message", "message", "compaction"]


# -- Responses: file_search_call results with vector_store_id ------------------------------------


def test_vector_store_id_is_stored_and_left_out_of_the_request() -> None:
    context = Context(GatewayType.openai_responses)
    context.emplace_message(_user("What is the capital of France?"))
    context.push_back(FILE_SEARCH.response)
    recorded = FILE_SEARCH.response["output"][0]
    assert context[1] == recorded  # byte-identical (no nulls in it to drop)
    assert "vector_store_id" in context.to_json()
    sent = next(i for i in context.request()["input"] if i.get("type") == "file_search_call")
    assert sent["results"] == [
        {k: v for k, v in r.items() if k != "vector_store_id"} for r in recorded["results"]
    ]
    assert {k: v for k, v in sent.items() if k != "results"} == {
        k: v for k, v in recorded.items() if k != "results"
    }
    assert context[1] == recorded
