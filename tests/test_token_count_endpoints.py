"""The providers' token-count endpoints as counters: what each sends on the wire (real SDK
clients against a loopback server), the figure read back, and what is refused before sending."""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import types

from hydrangea import Context, GatewayType, Message, Role
from hydrangea.errors import RequestOptionError, TokenCountError, UnsupportedOptionError
from hydrangea.providers.anthropic import ClearToolUses, ContextEditing, OnDemandCompaction
from hydrangea.providers.anthropic.counting import AnthropicTokenCounter
from hydrangea.providers.gemini.counting import GeminiTokenCounter
from hydrangea.providers.openai import ResponsesCompaction
from hydrangea.providers.openai.counting import ResponsesTokenCounter
from tests.support.capture_server import capture_server

CLAUDE = "claude-sonnet-4-5"


def _context(gateway: GatewayType) -> Context:
    ctx = Context(gateway)
    ctx.emplace_message(Message(role=Role.system, content="You are terse."))
    ctx.emplace_message(Message(role=Role.user, content="How tall do hydrangeas grow?"))
    return ctx


def _anthropic(base_url: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="k", base_url=base_url, max_retries=0)


def _gemini(base_url: str, *, vertex: bool = False) -> genai.Client:
    options = types.HttpOptions(base_url=base_url, retry_options=types.HttpRetryOptions(attempts=1))
    return genai.Client(vertexai=vertex, api_key="test", http_options=options)


# -- Anthropic ---------------------------------------------------------------------------------


def test_anthropic_sends_the_request_without_generation_keywords_and_reads_input_tokens() -> None:
    request = _context(GatewayType.anthropic).request(
        model=CLAUDE, max_tokens=512, temperature=0.2, stop_sequences=["END"]
    )
    with capture_server([(200, {"input_tokens": 31})]) as server:
        figure = AnthropicTokenCounter(_anthropic(server.base_url)).count_request(request)
    assert figure == 31
    [sent] = server.captured
    assert sent.path.startswith("/v1/messages/count_tokens")
    assert "anthropic-beta" not in sent.headers
    assert sent.body == {k: request[k] for k in ("model", "system", "messages")}


@pytest.mark.parametrize(
    ("feature", "beta", "key"),
    [
        (ContextEditing((ClearToolUses(keep_tool_uses=2),)), "context-management-2025-06-27",
         "context_management"),
        (OnDemandCompaction(), "compact-2026-09-04", "compaction"),
    ],
)
def test_anthropic_context_management_goes_to_the_beta_endpoint_with_its_betas(
    feature: Any, beta: str, key: str
) -> None:
    request = _context(GatewayType.anthropic).request(
        model=CLAUDE, max_tokens=100, features=[feature]
    )
    with capture_server([(200, {"input_tokens": 40})]) as server:
        figure = AnthropicTokenCounter(_anthropic(server.base_url)).count_request(request)
    assert figure == 40
    [sent] = server.captured
    assert beta in sent.headers["anthropic-beta"].split(",")
    assert sent.body[key] == request[key]
    assert "betas" not in sent.body and "max_tokens" not in sent.body


def test_anthropic_async_client_and_the_counters_default_model() -> None:
    request = _context(GatewayType.anthropic).request()  # no model: the counter's is used
    with capture_server([(200, {"input_tokens": 12})]) as server:
        client = anthropic.AsyncAnthropic(api_key="k", base_url=server.base_url, max_retries=0)
        counter = AnthropicTokenCounter(client, model=CLAUDE)
        figure = asyncio.run(counter.acount_request(request))
        with pytest.raises(TokenCountError, match=r"an async client: call acount_request"):
            counter.count_request(request)  # an async client behind the sync method
    assert figure == 12
    assert [c.body["model"] for c in server.captured] == [CLAUDE]


def test_anthropic_refusals_send_nothing() -> None:
    ctx = _context(GatewayType.anthropic)
    with capture_server([]) as server:
        counter = AnthropicTokenCounter(_anthropic(server.base_url))
        with pytest.raises(RequestOptionError, match="needs a model"):
            counter.count_request(ctx.request())
        with pytest.raises(UnsupportedOptionError, match="'surprise'") as refused:
            counter.count_request(ctx.request(model=CLAUDE, surprise=1))
        with pytest.raises(TokenCountError, match=r"a sync client: call count_request\(\)"):
            asyncio.run(counter.acount_request(ctx.request(model=CLAUDE)))
    assert refused.value.option == "surprise" and refused.value.model == CLAUDE
    assert server.captured == []


def test_anthropic_a_reply_without_a_count_and_an_http_error() -> None:
    request = _context(GatewayType.anthropic).request(model=CLAUDE)
    error = {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}
    with capture_server([(200, {"tokens": 3}), (400, error)]) as server:
        counter = AnthropicTokenCounter(_anthropic(server.base_url))
        with pytest.raises(TokenCountError, match="input_tokens=None"):
            counter.count_request(request)
        with pytest.raises(anthropic.BadRequestError):  # the SDK's own error, unchanged
            counter.count_request(request)


# -- OpenAI Responses --------------------------------------------------------------------------


def test_responses_sends_the_input_without_what_does_not_count() -> None:
    request = _context(GatewayType.openai_responses).request(
        model="gpt-5", max_output_tokens=64, store=False, features=[ResponsesCompaction(9000)]
    )
    assert "context_management" in request
    reply = {"object": "response.input_tokens", "input_tokens": 17}
    with capture_server([(200, reply), (200, reply)]) as server:
        client = openai.OpenAI(api_key="k", base_url=server.base_url + "/v1", max_retries=0)
        figure = ResponsesTokenCounter(client).count_request(request)
        aclient = openai.AsyncOpenAI(api_key="k", base_url=server.base_url + "/v1",
                                     max_retries=0)
        again = asyncio.run(ResponsesTokenCounter(aclient).acount_request(request))
    assert figure == again == 17
    for sent in server.captured:
        assert sent.path == "/v1/responses/input_tokens"
        assert sent.body == {"model": "gpt-5", "input": request["input"]}


def test_responses_refuses_a_stored_prompt_before_sending() -> None:
    request = _context(GatewayType.openai_responses).request(
        model="gpt-5", prompt={"id": "pmpt_1"}
    )
    with capture_server([]) as server:
        client = openai.OpenAI(api_key="k", base_url=server.base_url + "/v1", max_retries=0)
        with pytest.raises(UnsupportedOptionError, match="'prompt'"):
            ResponsesTokenCounter(client).count_request(request)
    assert server.captured == []


# -- Gemini ------------------------------------------------------------------------------------


def test_gemini_vertex_counts_the_system_instruction_and_tools() -> None:
    tools = [{"function_declarations": [{"name": "look_up", "description": "Look a plant up"}]}]
    request = _context(GatewayType.gemini).request(
        model="gemini-2.5-flash", config={"tools": tools, "temperature": 0.1}
    )
    with capture_server([(200, {"totalTokens": 23})]) as server:
        figure = GeminiTokenCounter(_gemini(server.base_url, vertex=True)).count_request(request)
    assert figure == 23
    [sent] = server.captured
    assert sent.path.endswith("/models/gemini-2.5-flash:countTokens")
    assert sent.body["systemInstruction"] == {"parts": [{"text": "You are terse."}]}
    assert sent.body["tools"] == [
        {"functionDeclarations": [{"name": "look_up", "description": "Look a plant up"}]}
    ]
    assert sent.body["contents"] == [
        {"role": "user", "parts": [{"text": "How tall do hydrangeas grow?"}]}
    ]
    assert "generationConfig" not in sent.body and "temperature" not in str(sent.body)


def test_gemini_developer_api_refuses_a_system_instruction_unless_contents_only() -> None:
    request = _context(GatewayType.gemini).request(model="gemini-2.5-flash")
    with capture_server([(200, {"totalTokens": 9})]) as server:
        client = _gemini(server.base_url)
        with pytest.raises(UnsupportedOptionError, match="contents_only=True") as refused:
            GeminiTokenCounter(client).count_request(request)
        assert server.captured == []
        figure = asyncio.run(GeminiTokenCounter(client, contents_only=True).acount_request(request))
    assert refused.value.option == "system_instruction"
    assert figure == 9
    [sent] = server.captured
    assert sent.path.endswith("/models/gemini-2.5-flash:countTokens")
    assert sent.body == {"contents": [
        {"role": "user", "parts": [{"text": "How tall do hydrangeas grow?"}]}
    ]}


def test_gemini_refusals_and_a_reply_without_a_count() -> None:
    ctx = Context(GatewayType.gemini)
    ctx.emplace_message(Message(role=Role.user, content="hi"))
    with capture_server([(200, {"cachedContentTokenCount": 1})]) as server:
        counter = GeminiTokenCounter(_gemini(server.base_url))
        with pytest.raises(RequestOptionError, match="needs a model"):
            counter.count_request(ctx.request())
        with pytest.raises(UnsupportedOptionError, match="'labels'"):
            counter.count_request({**ctx.request(model="gemini-2.5-flash"), "labels": {}})
        assert server.captured == []
        with pytest.raises(TokenCountError, match="total_tokens=None"):
            counter.count_request(ctx.request(model="gemini-2.5-flash"))
