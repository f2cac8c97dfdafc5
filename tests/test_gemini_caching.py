"""Gemini explicit cached content through the real google-genai client against 127.0.0.1."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from hydrangea.context import Context
from hydrangea.errors import CachingError
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role
from hydrangea.providers.gemini.caching import GeminiContextCache, gemini_minimum_tokens
from tests.support.capture_server import capture_server

MODEL = "gemini-2.5-flash"
SYSTEM = "You answer questions about the attached handbook. " * 120  # ~1,500 tokens
START = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def _cache_reply(name: str, expires: datetime) -> dict[str, Any]:
    return {
        "name": name,
        "model": f"models/{MODEL}",
        "createTime": START.isoformat(),
        "expireTime": expires.isoformat(),
        "usageMetadata": {"totalTokenCount": 1_600},
    }


def _answer(text: str, cached: int) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 1_700, "candidatesTokenCount": 5,
                          "cachedContentTokenCount": cached, "totalTokenCount": 1_705},
        "modelVersion": MODEL,
    }


def _context() -> Context:
    context = Context(GatewayType.gemini)
    context.emplace_message(Message(role=Role.system, content=SYSTEM))
    context.emplace_message(Message(role=Role.user, content="What does chapter 1 say?"))
    return context


def test_create_send_the_suffix_refresh_and_recreate() -> None:
    from google import genai
    from google.genai import types

    now = [START]
    replies = [
        (200, _cache_reply("cachedContents/c1", START + timedelta(hours=1))),
        (200, _answer("Chapter 1 is about onboarding.", 1_600)),
        (200, _cache_reply("cachedContents/c1", START + timedelta(hours=2))),  # refreshed
        (200, _answer("Chapter 2 is about travel.", 1_600)),
        (200, _cache_reply("cachedContents/c2", START + timedelta(hours=2))),  # new prefix
        (200, {}),  # the old cache is deleted
    ]
    context = _context()
    with capture_server(replies) as server:
        options = types.HttpOptions(
            base_url=server.base_url, retry_options=types.HttpRetryOptions(attempts=1)
        )
        client = genai.Client(api_key="test", http_options=options)
        cache = GeminiContextCache(client, MODEL, clock=lambda: now[0])
        first = cache.request(context.request())
        response = client.models.generate_content(model=MODEL, **first)
        context.push_back(response)
        context.emplace_message(Message(role=Role.user, content="And chapter 2?"))
        now[0] = START + timedelta(minutes=56)  # within five minutes of expiry: refresh
        second = cache.request(context.request())
        client.models.generate_content(model=MODEL, **second)
        other = Context(GatewayType.gemini)  # another system prompt: the cache is re-created
        other.emplace_message(Message(role=Role.system, content=SYSTEM + " Be formal."))
        other.emplace_message(Message(role=Role.user, content="Hello."))
        third = cache.request(other.request())
    created, generated, refreshed, generated2, recreated, deleted = server.captured
    assert created.method == "POST" and created.path.endswith("/cachedContents")
    assert created.body["systemInstruction"]["parts"][0]["text"] == SYSTEM
    assert created.body["ttl"] == "3600s" and created.body["model"] == f"models/{MODEL}"
    assert generated.path.endswith(f"/models/{MODEL}:generateContent")
    assert generated.body["cachedContent"] == "cachedContents/c1"
    assert "systemInstruction" not in generated.body
    assert generated.body["contents"] == [
        {"role": "user", "parts": [{"text": "What does chapter 1 say?"}]}
    ]
    assert refreshed.method == "PATCH" and "/cachedContents/c1" in refreshed.path
    assert refreshed.body == {"ttl": "3600s"}
    assert generated2.body["cachedContent"] == "cachedContents/c1"
    assert len(generated2.body["contents"]) == 3  # the whole conversation after the cache
    assert recreated.body["systemInstruction"]["parts"][0]["text"].endswith("Be formal.")
    assert deleted.method == "DELETE" and deleted.path.endswith("/cachedContents/c1")
    assert third["config"]["cached_content"] == "cachedContents/c2" == cache.name
    record = context.usage.last
    assert record is not None and record.usage.cache_read_tokens == 1_600


def test_a_short_prefix_is_sent_without_a_cache_and_bad_settings_are_refused() -> None:
    class NoClient:
        caches = None

    context = Context(GatewayType.gemini)
    context.emplace_message(Message(role=Role.system, content="Be brief."))
    context.emplace_message(Message(role=Role.user, content="hi"))
    kwargs = context.request()
    assert GeminiContextCache(NoClient(), MODEL).request(kwargs) == kwargs
    with pytest.raises(CachingError, match="nothing to send"):
        GeminiContextCache(NoClient(), MODEL, prefix=1).request(kwargs)
    with pytest.raises(CachingError):
        GeminiContextCache(NoClient(), MODEL, ttl_seconds=60, refresh_margin_seconds=300)
    with pytest.raises(CachingError):
        GeminiContextCache(NoClient(), MODEL, prefix=-1)
    # the Gemini API's documented minimums
    assert gemini_minimum_tokens("gemini-2.5-pro") == 4_096
    assert gemini_minimum_tokens("models/gemini-2.5-flash-lite") == 1_024
    assert gemini_minimum_tokens("gemini-3-pro-preview") == 4_096
