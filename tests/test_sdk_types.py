"""hydrangea.providers.sdk: SDK objects recognised by type (subclasses included), lazily."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from pydantic import BaseModel

from hydrangea.context import Context
from hydrangea.errors import GatewayMismatchError, StreamEventError
from hydrangea.gateway import GatewayType
from hydrangea.providers.sdk import native_output, read_sdk_response, stream_event_gateway
from tests.support import real_corpus as corpus
from tests.support.capture_server import capture_server


class City(BaseModel):
    city: str
    country: str


def _fixture(name: str) -> corpus.Fixture:
    (found,) = [f for f in corpus.ALL if f.name == name]
    return found


def test_nothing_is_imported_until_an_sdk_is() -> None:
    code = (
        "import sys\n"
        "from hydrangea.providers.sdk import read_sdk_response, stream_event_gateway\n"
        "from hydrangea.context import Context\n"
        "assert read_sdk_response(object()) is None and stream_event_gateway(object()) is None\n"
        "assert stream_event_gateway({'type': 'message_stop'}) is not None\n"
        "loaded = [m for m in ('openai', 'anthropic', 'google.genai') if m in sys.modules]\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_subclass_is_recognised_and_a_look_alike_is_not() -> None:
    from openai.types.responses import Response

    class MyResponse(Response):
        pass

    body = _fixture("responses_two_function_calls").response
    mine = MyResponse.construct(**body)
    found = read_sdk_response(mine)
    assert found is not None and found.gateway is GatewayType.openai_responses

    class Response2:  # same name, not the SDK's class
        __module__ = "openai.types.responses.response"

    assert read_sdk_response(Response2()) is None


def test_parse_objects_push_like_their_raw_body() -> None:
    for name, gateway in (
        ("openai_native_output_json", GatewayType.openai),
        ("responses_refusal", GatewayType.openai_responses),
        ("responses_two_function_calls", GatewayType.openai_responses),
    ):
        fixture = _fixture(name)
        with capture_server([(200, fixture.response)]) as server:
            client = corpus._openai(server.base_url)
            if gateway is GatewayType.openai:
                parsed = client.chat.completions.parse(
                    model="m", messages=[{"role": "user", "content": "x"}], response_format=City
                )
            else:
                parsed = client.responses.parse(model="m", input="x", text_format=City)
        assert type(parsed).__name__.startswith("Parsed")
        found = read_sdk_response(parsed)
        assert found is not None and found.gateway is gateway
        assert json.loads(json.dumps(found.body)) == fixture.response
        from_sdk, from_dict = Context(gateway), Context(gateway)
        from_sdk.push_back(parsed)
        from_dict.push_back(fixture.response)
        assert from_sdk.to_json() == from_dict.to_json()


def test_an_sdk_object_of_another_gateway_names_both() -> None:
    response = corpus.sdk_object(_fixture("anthropic_thinking_signature"))
    with pytest.raises(GatewayMismatchError, match=r"anthropic.*openai_responses"):
        native_output(response, GatewayType.openai_responses)
    context = Context(GatewayType.gemini)
    with pytest.raises(GatewayMismatchError):
        context.push_back(response)
    assert len(context) == 0


def test_the_stream_helpers_events_are_events() -> None:
    fixture = _fixture("anthropic_stream_parallel_tools")
    with capture_server([(200, corpus.sse(fixture))]) as server:
        client = corpus._anthropic(server.base_url)
        with client.messages.stream(model="m", max_tokens=1, messages=[]) as stream:
            events = list(stream)
    kinds = {type(e).__name__ for e in events}
    assert {"TextEvent", "InputJsonEvent"} & kinds
    for event in events:
        assert stream_event_gateway(event) is GatewayType.anthropic
        with pytest.raises(StreamEventError, match="push_stream"):
            native_output(event, GatewayType.anthropic)
