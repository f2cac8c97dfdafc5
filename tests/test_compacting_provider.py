"""CompactingConversation(compaction=...): the provider's server compaction as one switch."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from hydrangea.areas import AreaUsageError, CompactingConversation
from hydrangea.asof import InMemoryRecordStore
from hydrangea.coop import CoopContext
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, TextPart
from tests.areas_support import coop_with_system

MODEL = "claude-sonnet-5-5"
_ids = itertools.count()


def _anthropic_reply(text: str, *, summary: str | None = None) -> dict[str, Any]:
    """An Anthropic reply; with ``summary`` it opens with a threshold compaction block."""
    content: list[dict[str, Any]] = []
    if summary is not None:
        content.append({"type": "compaction", "content": summary})
    content.append({"type": "text", "text": text})
    return {"id": f"msg_{next(_ids)}", "type": "message", "role": "assistant", "model": MODEL,
            "content": content, "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5}}


def _responses_reply(text: str, *, compacted: bool = False) -> dict[str, Any]:
    n = next(_ids)
    output: list[dict[str, Any]] = [
        {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": text, "annotations": []}]}]
    if compacted:
        output.append({"type": "compaction", "id": f"cmp_{n}", "encrypted_content": f"e{n}"})
    return {"object": "response", "id": f"resp_{n}", "model": "gpt-5.5", "output": output}


def _said(text: str) -> Message:
    return Message(role=Role.assistant, content=(TextPart(text=text),))


def _turn(conv: CompactingConversation, coop: CoopContext, user: str) -> dict[str, Any]:
    conv.user(user)
    coop.render()
    return coop.context.request(model=MODEL if coop.context.adapter.gateway is
                                GatewayType.anthropic else "gpt-5.5", features=conv.features)


def test_auto_on_anthropic_asks_the_server_and_continues_across_its_compactions() -> None:
    context, coop = coop_with_system(GatewayType.anthropic)
    records = InMemoryRecordStore()
    conv = CompactingConversation(coop, threshold_tokens=60_000, compaction="auto",
                                  records=records)
    assert conv.compaction == "provider"
    kwargs = _turn(conv, coop, "first question about apples")
    edits = kwargs["context_management"]["edits"]
    assert edits == [{"type": "compact_20260112",
                      "trigger": {"type": "input_tokens", "value": 60_000}}]
    conv.push_reply(_anthropic_reply("apples are red"), _said("apples are red"))
    _turn(conv, coop, "second question about pears")
    conv.push_reply(_anthropic_reply("pears are green", summary="we spoke of apples and pears"),
                    _said("pears are green"))
    sent = _turn(conv, coop, "third question about plums")["messages"]
    # the request starts at the compaction block: nothing before it is sent
    assert sent[0]["content"][0] == {"type": "compaction",
                                     "content": "we spoke of apples and pears"}
    assert "apples are red" not in json.dumps(sent)
    assert "third question about plums" in json.dumps(sent)
    (done,) = conv.provider_compactions
    assert done.boundary == context.compactions[-1]
    # every turn the server compacted away is still a record, by pointer
    texts = " ".join(records.require(p).content for p in done.pointers)
    assert "first question about apples" in texts and "second question about pears" in texts
    assert "apples are red" in texts
    assert conv.summaries == ()  # the library made none of its own
    conv.push_reply(_anthropic_reply("plums are purple", summary="apples, pears, plums"),
                    _said("plums are purple"))
    _turn(conv, coop, "fourth")
    second = conv.provider_compactions[1]
    assert set(second.pointers).isdisjoint(done.pointers)
    assert any("third question about plums" in records.require(p).content
               for p in second.pointers)


def test_provider_on_responses_sends_compact_threshold_and_starts_at_the_item() -> None:
    context, coop = coop_with_system(GatewayType.openai_responses)
    conv = CompactingConversation(coop, threshold_tokens=5_000, compaction="provider")
    kwargs = _turn(conv, coop, "hello")
    assert kwargs["context_management"] == [{"type": "compaction", "compact_threshold": 5_000}]
    conv.push_reply(_responses_reply("hi", compacted=True), _said("hi"))
    sent = _turn(conv, coop, "next")["input"]
    assert sent[0]["role"] == "system"  # the system prompt is never compacted away
    assert sent[1]["type"] == "compaction"
    assert all(item.get("content") != "hello" for item in sent)
    (done,) = conv.provider_compactions
    assert done.boundary == context.compactions[-1] and done.pointers


def test_auto_falls_back_to_the_library_where_the_provider_has_no_compaction() -> None:
    for gateway in (GatewayType.gemini, GatewayType.openai):
        _, coop = coop_with_system(gateway)
        conv = CompactingConversation(coop, threshold_tokens=100, compaction="auto")
        assert conv.compaction == "library" and conv.features == ()
        assert conv.current.threshold_tokens == 100


def test_provider_where_there_is_none_and_library_only_knobs_are_refused() -> None:
    _, coop = coop_with_system(GatewayType.gemini)
    with pytest.raises(AreaUsageError, match="gemini has no server compaction"):
        CompactingConversation(coop, threshold_tokens=100, compaction="provider")
    _, coop = coop_with_system(GatewayType.anthropic)
    with pytest.raises(AreaUsageError, match="rollup_tokens and in_loops"):
        CompactingConversation(coop, threshold_tokens=60_000, compaction="provider",
                               rollup_tokens=50)
    for mode in ("provider", "auto"):  # below the API's smallest trigger: said, not ignored
        with pytest.raises(AreaUsageError, match="threshold_tokens=100 does not suit"):
            CompactingConversation(coop, threshold_tokens=100, compaction=mode)
    with pytest.raises(AreaUsageError, match="compaction must be"):
        CompactingConversation(coop, threshold_tokens=100,
                               compaction="server")  # type: ignore[arg-type]
    assert coop.areas() == ()  # nothing registered by a refused construction


def test_library_mode_is_unchanged() -> None:
    _, coop = coop_with_system(GatewayType.anthropic)
    conv = CompactingConversation(coop, threshold_tokens=100)
    assert conv.compaction == "library" and conv.features == ()
    kwargs = _turn(conv, coop, "hello")
    assert "context_management" not in kwargs
