"""Recorded streams (tests/fixtures/real/ with a ``stream``): assembled, pushed, refused.

A complete stream pushed with Context.push_stream stores what the SDK's own stream helper
accumulates (anthropic ``get_final_message()``, openai ``get_final_completion()`` and
``get_final_response()``), as raw dicts and as the SDK's event objects alike. Every proper prefix,
and streams with the final event moved or the order reversed, are refused with
IncompleteStreamError and nothing appended.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from hydrangea.context import Context
from hydrangea.errors import IncompleteStreamError, StreamEventError
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role
from hydrangea.providers.sdk import looks_like_gemini_chunk, stream_event_gateway
from hydrangea.providers.streams import assemble
from tests.support import real_corpus as corpus
from tests.support.capture_server import capture_server
from tests.support.real_corpus import Fixture

STREAMS = corpus.STREAMS


def _ids(fixtures: list[Fixture]) -> list[str]:
    return [f.name for f in fixtures]


def _sdk_events(fixture: Fixture) -> list[Any]:
    """The event objects the SDK yields for the recorded stream."""
    with capture_server([(200, corpus.sse(fixture))]) as server:
        kwargs = corpus.minimal_request(fixture.gateway)
        base = server.base_url
        match fixture.gateway:
            case GatewayType.openai:
                client = corpus._openai(base)
                return list(client.chat.completions.create(model="m", stream=True, **kwargs))
            case GatewayType.openai_responses:
                client = corpus._openai(base)
                return list(client.responses.create(model="m", stream=True, **kwargs))
            case GatewayType.anthropic:
                client = corpus._anthropic(base)
                messages = client.beta.messages if fixture.beta else client.messages
                stream = messages.create(model="m", max_tokens=1, stream=True, **kwargs)
                return list(stream)
            case GatewayType.gemini:
                client = corpus._genai(base)  # held: a collected client closes its connection
                return list(client.models.generate_content_stream(model="m", **kwargs))


def _helper_final(fixture: Fixture) -> Any:
    """The SDK stream helper's accumulated final object, or None where the SDK has no helper."""
    with capture_server([(200, corpus.sse(fixture))]) as server:
        kwargs = corpus.minimal_request(fixture.gateway)
        base = server.base_url
        match fixture.gateway:
            case GatewayType.openai:
                with corpus._openai(base).chat.completions.stream(model="m", **kwargs) as s:
                    return s.get_final_completion()
            case GatewayType.openai_responses:
                with corpus._openai(base).responses.stream(model="m", **kwargs) as s:
                    return s.get_final_response()
            case GatewayType.anthropic:
                client = corpus._anthropic(base)
                messages = client.beta.messages if fixture.beta else client.messages
                with messages.stream(model="m", max_tokens=1, **kwargs) as s:
                    return s.get_final_message()
            case GatewayType.gemini:
                return None


def _pushed(gateway: GatewayType, push: Any) -> str:
    context = Context(gateway)
    push(context)
    return context.to_json()


def test_the_corpus_has_streams_of_every_gateway() -> None:
    assert {f.gateway for f in STREAMS} == set(GatewayType)
    assert min(sum(f.gateway is g for f in STREAMS) for g in GatewayType) >= 3


@pytest.mark.parametrize("fixture", STREAMS, ids=_ids(STREAMS))
def test_stream_gives_what_the_sdk_helper_accumulates(fixture: Fixture) -> None:
    raw = _pushed(fixture.gateway, lambda c: c.push_stream(fixture.stream))
    objects = _pushed(fixture.gateway, lambda c: c.push_stream(_sdk_events(fixture)))
    assert objects == raw
    final = _helper_final(fixture)
    if final is not None:
        assert _pushed(fixture.gateway, lambda c: c.push_back(final)) == raw


@pytest.mark.parametrize(
    "fixture",
    [f for f in STREAMS if f.gateway is GatewayType.gemini],
    ids=_ids([f for f in STREAMS if f.gateway is GatewayType.gemini]),
)
def test_gemini_stream_keeps_every_text_signature_and_call(fixture: Fixture) -> None:
    parts = [
        p
        for chunk in fixture.stream
        for c in chunk.get("candidates") or []
        for p in (c.get("content") or {}).get("parts") or []
    ]
    body = assemble(fixture.gateway, fixture.stream)
    joined = body["candidates"][0]["content"]["parts"]
    for kind in (True, False):
        expected = "".join(
            p["text"] for p in parts if "text" in p and bool(p.get("thought")) is kind
        )
        got = "".join(p["text"] for p in joined if "text" in p and bool(p.get("thought")) is kind)
        assert got == expected
    for key in ("thoughtSignature", "functionCall"):
        assert [p[key] for p in joined if key in p] == [p[key] for p in parts if key in p]


def test_responses_stream_gives_the_completed_response() -> None:
    for fixture in (f for f in STREAMS if f.gateway is GatewayType.openai_responses):
        (completed,) = [e for e in fixture.stream if e["type"] == "response.completed"]
        assert assemble(fixture.gateway, fixture.stream) == completed["response"]
        streamed = _pushed(fixture.gateway, lambda c, f=fixture: c.push_stream(f.stream))
        whole = _pushed(fixture.gateway, lambda c, r=completed["response"]: c.push_back(r))
        assert streamed == whole


def _refused(fixture: Fixture, events: list[dict[str, Any]]) -> None:
    context = Context(fixture.gateway)
    context.emplace_message(Message(role=Role.user, content=corpus.PROMPT))
    before = context.to_json()
    with pytest.raises(IncompleteStreamError):
        context.push_stream(events)
    assert context.to_json() == before


@pytest.mark.parametrize("fixture", STREAMS, ids=_ids(STREAMS))
def test_every_cut_short_stream_is_refused(fixture: Fixture) -> None:
    events = fixture.stream
    last = len(events)
    while last > 0 and events[last - 1].get("type") == "ping":
        last -= 1
    for stop in range(last):
        _refused(fixture, events[:stop])


@pytest.mark.parametrize("fixture", STREAMS, ids=_ids(STREAMS))
def test_reordered_streams_are_refused(fixture: Fixture) -> None:
    events = fixture.stream
    _refused(fixture, [events[-1], *events[:-1]])
    _refused(fixture, events[::-1])
    _refused(fixture, [*events, events[-1]])


@pytest.mark.parametrize("fixture", STREAMS, ids=_ids(STREAMS))
def test_a_stream_of_another_gateway_is_refused(fixture: Fixture) -> None:
    for other in GatewayType:
        if other is not fixture.gateway:
            with pytest.raises(IncompleteStreamError):
                assemble(other, fixture.stream)


NOT_GEMINI = [f for f in STREAMS if f.gateway is not GatewayType.gemini]


@pytest.mark.parametrize("fixture", NOT_GEMINI, ids=_ids(NOT_GEMINI))
def test_one_event_pushed_alone_says_how_to_push_a_stream(fixture: Fixture) -> None:
    context = Context(fixture.gateway)
    events = fixture.stream
    for event in [*events[:-1], *_sdk_events(fixture)[:-1]]:
        if stream_event_gateway(event) is None:
            continue
        with pytest.raises(StreamEventError, match="push_stream"):
            context.push_back(event)
    assert len(context) == 0
    assert all(stream_event_gateway(e) is fixture.gateway for e in events[:-1])


@pytest.mark.parametrize("fixture", corpus.RESPONSES, ids=_ids(corpus.RESPONSES))
def test_no_whole_response_is_taken_for_a_stream_event(fixture: Fixture) -> None:
    assert stream_event_gateway(fixture.response) is None
    assert stream_event_gateway(corpus.sdk_object(fixture)) is None
    assert not looks_like_gemini_chunk(fixture.response)
    assert not looks_like_gemini_chunk(corpus.sdk_object(fixture))


def test_the_gemini_chunk_rule_holds_on_every_recorded_gemini_stream() -> None:
    for fixture in (f for f in STREAMS if f.gateway is GatewayType.gemini):
        chunks = fixture.stream
        assert all(looks_like_gemini_chunk(c) for c in chunks[:-1])
        assert not looks_like_gemini_chunk(chunks[-1])
        objects = _sdk_events(fixture)
        assert [looks_like_gemini_chunk(o) for o in objects] == [
            looks_like_gemini_chunk(c) for c in chunks
        ]


def test_anthropic_partial_json_and_signature_deltas_are_joined() -> None:
    (fixture,) = [f for f in STREAMS if f.name == "anthropic_stream_parallel_tools"]
    body = assemble(fixture.gateway, fixture.stream)
    pieces: dict[int, str] = {}
    for event in fixture.stream:
        delta = event.get("delta") or {}
        if delta.get("type") == "input_json_delta":
            pieces[event["index"]] = pieces.get(event["index"], "") + delta["partial_json"]
    for index, text in pieces.items():
        assert body["content"][index]["input"] == json.loads(text)
    (thinking,) = [f for f in STREAMS if f.name == "anthropic_stream_thinking"]
    signatures = [
        e["delta"]["signature"]
        for e in thinking.stream
        if (e.get("delta") or {}).get("type") == "signature_delta"
    ]
    blocks = assemble(thinking.gateway, thinking.stream)["content"]
    assert [b["signature"] for b in blocks if b["type"] == "thinking"] == signatures
