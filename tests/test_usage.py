"""Usage read back from real recorded responses of all four gateways, as dicts and SDK objects.

The fixtures in tests/fixtures/usage/ are response bodies from pydantic/pydantic-ai's VCR
cassettes (each file names its source); the expected figures below are read off the recorded
usage blocks by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.providers.usage import Usage, UsageLog, usage_of

FIXTURES = Path(__file__).parent / "fixtures" / "usage"

# (file, interaction order) -> (input incl. cache, output, cache read, cache write)
EXPECTED: dict[tuple[str, int], tuple[int, int, int, int | None]] = {
    # input_tokens 3 + cache_read 1111 + cache_creation 0; then 3 + 1111 + 418
    ("anthropic_cache_write_then_read", 0): (1_114, 406, 1_111, 0),
    ("anthropic_cache_write_then_read", 1): (1_532, 33, 1_111, 418),
    # prompt_tokens 4020 with prompt_tokens_details.cache_write_tokens 4012, then cached 4012
    ("openai_chat_prompt_cache", 0): (4_020, 4, 0, 4_012),
    ("openai_chat_prompt_cache", 1): (4_020, 4, 4_012, 0),
    ("openai_responses_prompt_cache", 0): (4_020, 5, 0, 4_012),
    ("openai_responses_prompt_cache", 1): (4_020, 5, 4_012, 0),
    # promptTokenCount; candidates + thoughts; cachedContentTokenCount (absent, then 204)
    ("gemini_cached_content", 0): (38, 12 + 30, 0, None),
    ("gemini_cached_content", 1): (373, 89 + 167, 204, None),
    ("gemini_thinking", 0): (29, 736 + 1_001, 0, None),
    ("gemini_thinking", 1): (1_280, 958 + 1_115, 0, None),
}


def _fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return data


def _sdk_object(gateway: GatewayType, body: dict[str, Any]) -> object:
    match gateway:
        case GatewayType.anthropic:
            from anthropic.types import Message

            return Message.model_validate(body)
        case GatewayType.openai:
            from openai.types.chat import ChatCompletion

            return ChatCompletion.model_validate(body)
        case GatewayType.openai_responses:
            from openai.types.responses import Response

            return Response.model_validate(body)
        case GatewayType.gemini:
            from google.genai.types import GenerateContentResponse

            return GenerateContentResponse.model_validate(body)


def test_every_fixture_names_its_source_and_every_gateway_is_covered() -> None:
    gateways = set()
    for path in FIXTURES.glob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["source"]["repository"] and data["source"]["path"] and data["source"]["commit"]
        gateways.add(GatewayType(data["gateway"]))
    assert gateways == set(GatewayType)


@pytest.mark.parametrize(("name", "order"), sorted(EXPECTED))
@pytest.mark.parametrize("form", ["dict", "sdk"])
def test_usage_is_recorded_from_real_responses(name: str, order: int, form: str) -> None:
    data = _fixture(name)
    gateway = GatewayType(data["gateway"])
    body = data["responses"][order]["response"]
    context = Context(gateway)
    context.push_back(body if form == "dict" else _sdk_object(gateway, body))
    record = context.usage.last
    assert record is not None and len(context.usage) == 1 and record.index == 0
    got = record.usage
    assert (got.input_tokens, got.output_tokens, got.cache_read_tokens,
            got.cache_write_tokens) == EXPECTED[(name, order)]
    assert got.gateway is gateway


def test_a_session_records_one_entry_per_response_with_its_position() -> None:
    data = _fixture("anthropic_cache_write_then_read")
    context = Context(GatewayType.anthropic)
    first, second = (r["response"] for r in data["responses"])
    context.push_back(first)
    context.push_back({"role": "user", "content": [{"type": "text", "text": "more"}]})
    context.push_back(second)
    records = list(context.usage)
    assert [(r.turn, r.index) for r in records] == [(0, 0), (1, 2)]  # the plain item has none
    assert context.usage.totals() == {
        "input_tokens": 1_114 + 1_532,
        "output_tokens": 406 + 33,
        "cache_read_tokens": 2_222,
        "cache_write_tokens": 418,
    }
    assert context.usage.cache_reuse() == pytest.approx(2_222 / 2_646)


def test_output_without_usage_records_nothing_and_a_refused_push_records_nothing() -> None:
    context = Context(GatewayType.openai)
    context.push_back({"role": "assistant", "content": "hi"})
    assert len(context.usage) == 0
    assert usage_of(GatewayType.gemini, ["not", "a", "response"]) is None
    assert usage_of(GatewayType.anthropic, {"usage": "odd"}) is None
    bad = {"usage": {"input_tokens": 5, "output_tokens": 1}, "role": "user", "content": 3}
    with pytest.raises(ValueError):
        context = Context(GatewayType.anthropic)
        context.push_back(bad)
    assert len(context.usage) == 0


def test_usage_shares() -> None:
    usage = Usage(GatewayType.gemini, 400, 10, 100, None)
    assert usage.uncached_input_tokens == 300
    assert usage.cache_reuse == 0.25
    assert Usage(GatewayType.gemini, 0, 0, 0, None).cache_reuse == 0.0
    assert UsageLog().cache_reuse() == 0.0 and UsageLog().last is None
