"""OpenAI prompt caching options, sent through the real SDK to a 127.0.0.1 server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hydrangea.context import Context
from hydrangea.errors import CachingError
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role
from hydrangea.providers.openai.caching import OpenAICaching, session_cache_key
from tests.support.capture_server import capture_server

FIXTURES = Path(__file__).parent / "fixtures" / "usage"


def _recorded(name: str, order: int) -> dict[str, Any]:
    data = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    body: dict[str, Any] = data["responses"][order]["response"]
    return body


def _context(gateway: GatewayType) -> Context:
    context = Context(gateway)
    context.emplace_message(Message(role=Role.system, content="You are terse."))
    context.emplace_message(Message(role=Role.user, content="hello"))
    return context


def test_the_key_is_stable_per_session_and_differs_between_sessions() -> None:
    context = _context(GatewayType.openai)
    key = session_cache_key(context[:], session="conversation-1")
    context.emplace_message(Message(role=Role.user, content="a later turn"))
    reloaded = Context.from_json(context.to_json())
    assert session_cache_key(reloaded[:], session="conversation-1") == key
    assert session_cache_key(context[:], session="conversation-2") != key
    other = Context(GatewayType.openai)
    other.emplace_message(Message(role=Role.system, content="Another prompt."))
    assert session_cache_key(other[:], session="conversation-1") != key
    assert len(key) <= 64 and key.startswith("hydrangea-")


@pytest.mark.parametrize("gateway", [GatewayType.openai, GatewayType.openai_responses])
def test_options_reach_the_wire_and_usage_comes_back(gateway: GatewayType) -> None:
    import openai

    context = _context(gateway)
    caching = OpenAICaching(key=session_cache_key(context[:], session="s1"), retention="24h")
    reply = _recorded(
        "openai_chat_prompt_cache" if gateway is GatewayType.openai
        else "openai_responses_prompt_cache", 1
    )
    with capture_server([(200, reply)]) as server:
        client = openai.OpenAI(api_key="test", base_url=server.base_url + "/v1", max_retries=0)
        kwargs = caching.apply(context.request())
        if gateway is GatewayType.openai:
            response: Any = client.chat.completions.create(model="gpt-test", **kwargs)
        else:
            response = client.responses.create(model="gpt-test", **kwargs)
    body = server.captured[0].body
    assert body["prompt_cache_key"] == caching.key
    assert body["prompt_cache_retention"] == "24h"
    context.push_back(response)
    record = context.usage.last
    assert record is not None and record.usage.cache_read_tokens == 4_012


def test_the_callers_own_options_win_and_bad_options_are_refused() -> None:
    kwargs = {"messages": [], "prompt_cache_key": "mine"}
    out = OpenAICaching(key="theirs", retention="in_memory").apply(kwargs)
    assert out["prompt_cache_key"] == "mine" and out["prompt_cache_retention"] == "in_memory"
    assert "prompt_cache_retention" not in kwargs
    assert OpenAICaching().apply(kwargs) == kwargs
    with pytest.raises(CachingError):
        OpenAICaching(retention="forever")  # type: ignore[arg-type]
    with pytest.raises(CachingError):
        OpenAICaching(key="x" * 65)
    with pytest.raises(CachingError):
        session_cache_key([], head=-1)
