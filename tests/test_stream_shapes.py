"""Stream shapes seen in real traffic, each written here as a small synthetic stream.

Every stream below was written for this file; the comment above it names the recorded stream
(in the evaluation corpus, ``shared/eval/real_payloads_2``) whose shape it follows. Each is
checked against a whole response written by hand (what the provider returns unstreamed), and,
where the SDK has one, against the SDK's own stream accumulator or event objects.
"""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.errors import IncompleteStreamError, StreamEventError
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role
from hydrangea.providers.streams import assemble
from tests.support.capture_server import capture_server

Json = dict[str, Any]
MESSAGES = [{"role": "user", "content": "Hello."}]


def _stored(gateway: GatewayType, push: Any) -> str:
    context = Context(gateway)
    push(context)
    return context.to_json()


def _refused(gateway: GatewayType, events: list[Json], match: str | None) -> None:
    context = Context(gateway)
    context.emplace_message(Message(role=Role.user, content="Hello."))
    before = context.to_json()
    with pytest.raises(IncompleteStreamError, match=match):
        context.push_stream(events)
    assert context.to_json() == before


def _sse(events: list[Json], *, anthropic: bool = False, done: bool = False) -> str:
    lines = []
    for event in events:
        if anthropic:
            lines.append(f"event: {event['type']}")
        lines += ["data: " + json.dumps(event), ""]
    if done:
        lines += ["data: [DONE]", ""]
    return "\n".join(lines) + "\n"


# -- Azure OpenAI: the prompt-filter chunk ---------------------------------------------------------

# Shape of openai_stream_azure_prompt_filter_chunk (traceloop/openllmetry, Azure OpenAI) and
# openai_stream_azure_model_router (vercel/ai): a first chunk with id "", object "", choices []
# and prompt_filter_results, then the completion's chunks, each choice with content_filter_results.
_SAFE = {"hate": {"filtered": False, "severity": "safe"}}
AZURE_FILTER: Json = {
    "choices": [], "created": 0, "id": "", "model": "", "object": "",
    "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": _SAFE}],
}


def _azure_chunk(delta: Json, finish: str | None = None) -> Json:
    return {
        "id": "chatcmpl-az1", "object": "chat.completion.chunk", "created": 1700000000,
        "model": "gpt-4o-mini", "system_fingerprint": None,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None,
                     "content_filter_results": _SAFE if delta else {}}],
    }


AZURE_STREAM = [
    AZURE_FILTER,
    _azure_chunk({"role": "assistant", "content": ""}),
    _azure_chunk({"content": "Copen"}),
    _azure_chunk({"content": "hagen."}),
    _azure_chunk({}, "stop"),
]
AZURE_WHOLE: Json = {  # Azure's non-streamed response to the same call
    "id": "chatcmpl-az1", "object": "chat.completion", "created": 1700000000,
    "model": "gpt-4o-mini", "system_fingerprint": None,
    "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": _SAFE}],
    "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                 "message": {"role": "assistant", "content": "Copenhagen."},
                 "content_filter_results": _SAFE}],
}


def test_an_azure_stream_stores_what_its_whole_response_does() -> None:
    body = assemble(GatewayType.openai, AZURE_STREAM)
    assert body["id"] == "chatcmpl-az1"
    assert body["prompt_filter_results"] == AZURE_WHOLE["prompt_filter_results"]
    assert body["choices"][0]["message"] == AZURE_WHOLE["choices"][0]["message"]
    streamed = _stored(GatewayType.openai, lambda c: c.push_stream(AZURE_STREAM))
    assert streamed == _stored(GatewayType.openai, lambda c: c.push_back(AZURE_WHOLE))


def test_an_azure_stream_through_the_sdk_stores_what_its_accumulator_gives() -> None:
    import openai

    def client(base: str) -> Any:
        return openai.OpenAI(api_key="test", base_url=base + "/v1", max_retries=0)

    with capture_server([(200, _sse(AZURE_STREAM, done=True))] * 2) as server:
        objects = list(client(server.base_url).chat.completions.create(
            model="m", messages=MESSAGES, stream=True))
        with client(server.base_url).chat.completions.stream(
            model="m", messages=MESSAGES
        ) as stream:
            final = stream.get_final_completion()
    streamed = _stored(GatewayType.openai, lambda c: c.push_stream(objects))
    assert streamed == _stored(GatewayType.openai, lambda c: c.push_stream(AZURE_STREAM))
    assert streamed == _stored(GatewayType.openai, lambda c: c.push_back(final))


def test_the_azure_filter_chunk_alone_is_a_stream_event() -> None:
    context = Context(GatewayType.openai)
    with pytest.raises(StreamEventError, match="push_stream"):
        context.push_back(AZURE_FILTER)
    assert len(context) == 0
    _refused(GatewayType.openai, [AZURE_FILTER], "no chat.completion.chunk")


def test_an_azure_stream_cut_short_is_refused() -> None:
    for stop in range(1, len(AZURE_STREAM)):
        _refused(GatewayType.openai, AZURE_STREAM[:stop], None)  # any incomplete stream


# -- Responses: a program item re-encrypted in the final event -----------------------------------

# Shape of responses_stream_programmatic (vercel/ai, programmatic tool calling): reasoning, a
# program item (code, fingerprint) and a function_call called by the program; the final event
# carries the reasoning's encrypted_content and the program's fingerprint encrypted afresh.
_REASONING: Json = {
    "id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "enc-done"}
_PROGRAM: Json = {"id": "cm_1", "type": "program", "call_id": "call_p", "code": "await tools.f({})",
            "fingerprint": "fp-done"}
_CALL: Json = {"id": "fc_1", "type": "function_call", "status": "completed", "arguments": "{}",
         "call_id": "call_f", "name": "f", "caller": {"type": "program", "caller_id": "call_p"}}
_FINAL_OUTPUT: list[Json] = [{**_REASONING, "encrypted_content": "enc-final"},
                 {**_PROGRAM, "fingerprint": "fp-final"}, _CALL]
_RESPONSE: Json = {"id": "resp_1", "object": "response", "status": "completed", "model": "gpt-test",
             "output": _FINAL_OUTPUT}


def _program_stream(final_output: list[Json]) -> list[Json]:
    events: list[Json] = [{"type": "response.created",
                           "response": {**_RESPONSE, "status": "in_progress", "output": []}}]
    for index, item in enumerate([_REASONING, _PROGRAM, _CALL]):
        events.append({"type": "response.output_item.added", "output_index": index,
                       "item": {**item, "code": ""} if item is _PROGRAM else item})
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed", "response": {**_RESPONSE,
                                                              "output": final_output}})
    for number, event in enumerate(events):
        event["sequence_number"] = number
    return events


def test_the_final_events_fingerprint_and_encrypted_content_are_kept() -> None:
    events = _program_stream(_FINAL_OUTPUT)
    body = assemble(GatewayType.openai_responses, events)
    assert body == _RESPONSE
    assert [i.get("fingerprint") for i in body["output"]] == [None, "fp-final", None]
    streamed = _stored(GatewayType.openai_responses, lambda c: c.push_stream(events))
    assert streamed == _stored(GatewayType.openai_responses, lambda c: c.push_back(_RESPONSE))


def test_a_final_event_of_other_items_is_refused() -> None:
    other = [_FINAL_OUTPUT[0], {**_FINAL_OUTPUT[1], "id": "cm_2"}, _CALL]
    _refused(GatewayType.openai_responses, _program_stream(other), "cm_2")
    _refused(GatewayType.openai_responses, _program_stream(_FINAL_OUTPUT[:2]), "not the items")


# -- Anthropic: message_delta's own keys -----------------------------------------------------------

# Shape of anthropic_stream_clear_thinking and anthropic_stream_compaction (vercel/ai): the
# message_delta event carries context_management next to delta and usage.
_EDITS = {"applied_edits": [{"type": "clear_thinking_20251015", "cleared_thinking_turns": 1}]}


def _anthropic_stream(usage: Json) -> list[Json]:
    return [
        {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 40, "cache_read_input_tokens": 7, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
         "usage": usage, "context_management": _EDITS},
        {"type": "message_stop"},
    ]


def test_message_delta_keeps_context_management_and_the_start_counts_it_leaves_null() -> None:
    events = _anthropic_stream(
        {"input_tokens": None, "cache_read_input_tokens": None, "output_tokens": 12})
    body = assemble(GatewayType.anthropic, events)
    assert body["context_management"] == _EDITS
    assert body["usage"] == {"input_tokens": 40, "cache_read_input_tokens": 7, "output_tokens": 12}
    assert body["stop_reason"] == "end_turn"


def test_message_delta_as_the_sdk_accumulator_reads_it() -> None:
    import anthropic

    events = _anthropic_stream({"input_tokens": 41, "output_tokens": 12})
    with capture_server([(200, _sse(events, anthropic=True))]) as server:
        client = anthropic.Anthropic(api_key="test", base_url=server.base_url, max_retries=0)
        with client.beta.messages.stream(
            model="m", max_tokens=1, messages=MESSAGES  # type: ignore[arg-type]
        ) as stream:
            final = stream.get_final_message().model_dump(mode="json", exclude_unset=True)
    body = assemble(GatewayType.anthropic, events)
    for key in ("content", "stop_reason", "context_management"):
        assert body[key] == final[key]
    assert {k: v for k, v in body["usage"].items()} == {
        k: v for k, v in final["usage"].items() if v is not None}


# No recording of a server-side fallback exists yet; this follows the SDK's BetaFallbackBlock
# (beta server-side-fallback): a fallback block between two models' text, arriving with
# content_block_start / _stop and no delta, after which the other model writes.
_FALLBACK: Json = {"type": "fallback", "from": {"model": "claude-a"},
                   "to": {"model": "claude-b"}, "trigger": {"type": "refusal", "category": None}}


def test_a_fallback_block_makes_the_model_it_hands_over_to_the_messages() -> None:
    import anthropic

    start, *blocks, delta, stop = _anthropic_stream({"output_tokens": 12})
    start["message"]["model"] = "claude-a"
    events = [start, *blocks,
              {"type": "content_block_start", "index": 1, "content_block": _FALLBACK},
              {"type": "content_block_stop", "index": 1},
              {"type": "content_block_start", "index": 2,
               "content_block": {"type": "text", "text": "Hello"}},
              {"type": "content_block_stop", "index": 2}, delta, stop]
    with capture_server([(200, _sse(events, anthropic=True))]) as server:
        client = anthropic.Anthropic(api_key="test", base_url=server.base_url, max_retries=0)
        with client.beta.messages.stream(
            model="m", max_tokens=1, messages=MESSAGES  # type: ignore[arg-type]
        ) as stream:
            final = stream.get_final_message().model_dump(
                mode="json", by_alias=True, exclude_unset=True)
    body = assemble(GatewayType.anthropic, events)
    assert body["model"] == final["model"] == "claude-b"
    assert body["content"] == final["content"]


# -- Vertex: streamFunctionCallArguments ---------------------------------------------------------

# Shape of gemini_stream_partial_args and gemini_stream_partial_args_no_args_call (vercel/ai,
# Vertex AI): a call opens with its name, willContinue and the thought signature; partialArgs
# pieces follow (a string in pieces, each with willContinue, closed by an empty piece); an empty
# functionCall closes it; a second call follows; the last chunk carries the finishReason.
def _gemini(parts: list[Json], finish: str | None = None) -> Json:
    candidate: Json = {"content": {"role": "model", "parts": parts}}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "modelVersion": "gemini-test", "responseId": "r1"}


def _fragment(**function: Any) -> Json:
    return {"functionCall": function}


def _piece(path: str, **value: Any) -> Json:
    return {"jsonPath": path, **value}


PARTIAL_STREAM = [
    _gemini([{**_fragment(name="get_weather", willContinue=True), "thoughtSignature": "c2ln"}]),
    _gemini([_fragment(partialArgs=[_piece("$.city", stringValue="Bos", willContinue=True)],
                       willContinue=True)]),
    _gemini([_fragment(partialArgs=[_piece("$.city", stringValue="ton", willContinue=True)],
                       willContinue=True)]),
    _gemini([_fragment(partialArgs=[_piece("$.city", stringValue="")], willContinue=True)]),
    _gemini([_fragment()]),
    _gemini([_fragment(name="plan", willContinue=True)]),
    _gemini([_fragment(partialArgs=[
        _piece("$.where.days", numberValue=3), _piece("$.where.metric", boolValue=True),
        _piece("$.tags[0]", stringValue="rain"), _piece("$['note']", nullValue=None),
    ], willContinue=True)]),
    _gemini([_fragment()]),
    _gemini([{"text": ""}], "STOP"),
]
PARTIAL_WHOLE = _gemini([  # the same response unstreamed
    {"functionCall": {"name": "get_weather", "args": {"city": "Boston"}},
     "thoughtSignature": "c2ln"},
    {"functionCall": {"name": "plan", "args": {"where": {"days": 3, "metric": True},
                                               "tags": ["rain"], "note": None}}},
], "STOP")


def test_partial_arguments_assemble_to_the_whole_calls() -> None:
    body = assemble(GatewayType.gemini, PARTIAL_STREAM)
    assert body["candidates"][0]["content"] == PARTIAL_WHOLE["candidates"][0]["content"]
    streamed = _stored(GatewayType.gemini, lambda c: c.push_stream(PARTIAL_STREAM))
    assert streamed == _stored(GatewayType.gemini, lambda c: c.push_back(PARTIAL_WHOLE))


def test_partial_arguments_through_the_genai_sdk() -> None:
    from google import genai
    from google.genai import types

    with capture_server([(200, _sse(PARTIAL_STREAM))]) as server:
        options = types.HttpOptions(
            base_url=server.base_url, retry_options=types.HttpRetryOptions(attempts=1))
        client = genai.Client(api_key="test", http_options=options)
        objects = list(client.models.generate_content_stream(model="m", contents="Hello."))
    streamed = _stored(GatewayType.gemini, lambda c: c.push_stream(objects))
    assert streamed == _stored(GatewayType.gemini, lambda c: c.push_back(PARTIAL_WHOLE))


def test_broken_partial_argument_streams_are_refused() -> None:
    first, closing = PARTIAL_STREAM[:4], PARTIAL_STREAM[-1]
    _refused(GatewayType.gemini, [*first, closing], "inside a streamed function call")
    _refused(GatewayType.gemini, [*first, _gemini([{"text": "Hi"}]), *PARTIAL_STREAM[4:]],
             "inside a streamed function call")
    wildcard = _gemini([_fragment(partialArgs=[_piece("$.*", stringValue="x")],
                                  willContinue=True)])
    _refused(GatewayType.gemini, [PARTIAL_STREAM[0], wildcard, *PARTIAL_STREAM[4:]], "jsonPath")
    nameless = [_gemini([_fragment(willContinue=True)]), *PARTIAL_STREAM[4:5], closing]
    _refused(GatewayType.gemini, nameless, "without its name")


_NAMES = st.text("abcxyz_", min_size=1, max_size=4)
_LEAVES = st.one_of(st.text(max_size=12), st.integers(-99, 99), st.booleans(), st.none())
_ARGS = st.dictionaries(
    _NAMES, st.one_of(_LEAVES, st.dictionaries(_NAMES, _LEAVES, min_size=1, max_size=3),
                      st.lists(_LEAVES, min_size=1, max_size=3)),
    max_size=4,
)


def _leaves(value: object, path: str) -> list[tuple[str, object]]:
    """Every leaf of ``value`` with its jsonPath (the oracle's own walk)."""
    if isinstance(value, dict) and value:
        return [leaf for k, v in value.items() for leaf in _leaves(v, f"{path}['{k}']")]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, f"{path}[{i}]")]
    return [(path, value)]


@given(args=_ARGS, cuts=st.lists(st.integers(0, 12), max_size=3))
def test_any_arguments_come_back_whole_from_their_pieces(args: Json, cuts: list[int]) -> None:
    pieces: list[Json] = []
    for path, value in _leaves(args, "$"):
        if path == "$":
            continue  # no arguments: nothing to stream
        if isinstance(value, str):
            bounds = sorted({0, len(value), *(c for c in cuts if c < len(value))})
            chunks = [value[a:b] for a, b in pairwise(bounds)] or [""]
            pieces += [_piece(path, stringValue=c, willContinue=True) for c in chunks]
            pieces.append(_piece(path, stringValue=""))
        elif isinstance(value, bool):
            pieces.append(_piece(path, boolValue=value))
        elif isinstance(value, int):
            pieces.append(_piece(path, numberValue=value))
        else:
            pieces.append(_piece(path, nullValue=None))
    stream = [
        _gemini([_fragment(name="f", willContinue=True)]),
        *(_gemini([_fragment(partialArgs=[p], willContinue=True)]) for p in pieces),
        _gemini([_fragment()], "STOP"),
    ]
    (part,) = assemble(GatewayType.gemini, stream)["candidates"][0]["content"]["parts"]
    assert part == {"functionCall": {"name": "f", "args": args}}
