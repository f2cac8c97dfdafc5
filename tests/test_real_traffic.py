"""Real provider responses (tests/fixtures/real/) through the whole library and the real SDKs.

For every recorded response: the SDK object and the raw dict give the same Context; the turn is
answered with ToolResultParts for every client-side call; the request (checked against the SDK's
request types by the suite-wide hook in conftest.py) is sent through the real SDK client to a
127.0.0.1 server, and every block the model returned (reasoning state included) stands on the
wire unchanged; JSON save and load give the same bytes. Blocked or empty outputs are refused in
both forms, with nothing appended.
"""

from __future__ import annotations

import pytest

from hydrangea.context import Context
from hydrangea.errors import InvalidItemError
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, ToolResultPart
from tests.support import real_corpus as corpus
from tests.support.real_corpus import Fixture

SENDABLE = [f for f in corpus.RESPONSES if not f.nothing_to_send_back]
REFUSED = [f for f in corpus.RESPONSES if f.nothing_to_send_back]


def _ids(fixtures: list[Fixture]) -> list[str]:
    return [f.name for f in fixtures]


def _answered(fixture: Fixture, pushed: object) -> Context:
    context = Context(fixture.gateway)
    if not fixture.replaces_window:  # a compacted window starts a Context (it holds the prompt)
        context.emplace_message(Message(role=Role.user, content=corpus.PROMPT))
    context.push_back(pushed)
    answers = corpus.answers(fixture)
    if answers:
        parts = tuple(ToolResultPart(call_id=c.answer_id, content=text) for c, text in answers)
        context.emplace_message(Message(role=Role.user, content=parts))
    else:
        context.emplace_message(Message(role=Role.user, content=corpus.FOLLOW_UP))
    return context


def test_the_corpus_is_what_the_issue_asks_for() -> None:
    counts = {g: sum(f.gateway is g for f in corpus.ALL) for g in {f.gateway for f in corpus.ALL}}
    assert len(corpus.ALL) >= 60 and len(counts) == 4 and min(counts.values()) >= 10
    categories = {c for f in corpus.ALL for c in f.categories}
    assert {
        "reasoning",
        "redacted",
        "parallel",
        "idless",
        "server_tools",
        "mcp",
        "citations",
        "refusal",
        "blocked",
        "empty",
        "beta",
        "stream",
        "compaction",
    } <= categories
    for fixture in corpus.ALL:
        assert "@" in fixture.data["source"] and fixture.data["status"] == 200


@pytest.mark.parametrize("fixture", SENDABLE, ids=_ids(SENDABLE))
def test_sdk_object_and_raw_dict_give_the_same_context(fixture: Fixture) -> None:
    from_dict = Context(fixture.gateway)
    from_dict.push_back(fixture.response)
    from_sdk = Context(fixture.gateway)
    from_sdk.push_back(corpus.sdk_object(fixture))
    assert from_sdk.to_json() == from_dict.to_json()
    assert from_sdk.request() == from_dict.request()


@pytest.mark.parametrize("fixture", REFUSED, ids=_ids(REFUSED))
def test_blocked_and_empty_outputs_are_refused_in_both_forms(fixture: Fixture) -> None:
    context = Context(fixture.gateway)
    context.emplace_message(Message(role=Role.user, content=corpus.PROMPT))
    before = context.to_json()
    for form in (fixture.response, corpus.sdk_object(fixture)):
        with pytest.raises(InvalidItemError):
            context.push_back(form)
        assert context.to_json() == before


@pytest.mark.parametrize("fixture", SENDABLE, ids=_ids(SENDABLE))
def test_answered_turn_reaches_the_wire_unchanged(fixture: Fixture) -> None:
    context = _answered(fixture, fixture.response)
    request = context.request()
    captured = corpus.send(fixture, request)
    wire = corpus.wire_items(fixture.gateway, captured.body)
    returned = [corpus.comparable(fixture.gateway, b) for b in corpus.returned_blocks(fixture)]
    sent = [corpus.comparable(fixture.gateway, b) for b in corpus.sent_blocks(fixture, wire)]
    assert sent == returned
    results = list(corpus.iter_results(fixture.gateway, wire))
    for call, text in corpus.answers(fixture):
        expected = {(call.answer_id, text), (call.name, text), (call.wire_id, text)}
        if fixture.gateway is GatewayType.openai:
            expected = {(call.wire_id, text)}  # Chat pairs by id: the call's id on the wire
        assert expected & set(results), call
    assert len({cid for cid, _ in results}) >= len(
        {c.answer_id for c in corpus.client_calls(fixture)}
    )


@pytest.mark.parametrize("fixture", SENDABLE, ids=_ids(SENDABLE))
def test_json_save_and_load_give_the_same_bytes(fixture: Fixture) -> None:
    context = _answered(fixture, corpus.sdk_object(fixture))
    text = context.to_json()
    loaded = Context.from_json(text)
    assert loaded.to_json() == text
    assert loaded.request() == context.request()
