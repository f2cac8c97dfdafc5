"""The recorded provider traffic in tests/fixtures/real/ and what the tests do with it.

Every fixture is one real response (or one real stream) recorded by a public test suite. This
module loads them, obtains the official SDK's object for a body the way an application does (the
real SDK client, pointed at a 127.0.0.1 server that answers with the recorded body), finds the
client-side tool calls in a response and answers them, and sends a request through the SDK.

Everything here reads the provider JSON directly (its own small oracle of each wire format), never
through the library's adapters.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydrangea.gateway import GatewayType
from tests.support.capture_server import Captured, capture_server

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "real"
PROMPT = "Please answer the question."
FOLLOW_UP = "Thank you. Anything else?"


@dataclass(frozen=True)
class Fixture:
    """One recorded response or stream."""

    name: str
    gateway: GatewayType
    data: dict[str, Any]

    @property
    def response(self) -> dict[str, Any]:
        body = self.data["response"]
        assert isinstance(body, dict)
        return body

    @property
    def stream(self) -> list[dict[str, Any]]:
        events = self.data["stream"]
        assert isinstance(events, list)
        return events

    @property
    def categories(self) -> list[str]:
        return list(self.data.get("categories", []))

    @property
    def beta(self) -> bool:
        return "beta=true" in str(self.data.get("uri", ""))

    @property
    def replaces_window(self) -> bool:
        """A ``/responses/compact`` result: its output is the next request's whole window."""
        return "response" in self.data and self.response.get("object") == "response.compaction"

    @property
    def nothing_to_send_back(self) -> bool:
        """A blocked or empty output: no content the provider would take back."""
        return bool({"blocked", "empty"} & set(self.categories))


def load_all() -> list[Fixture]:
    """Every fixture, sorted by name."""
    fixtures = []
    for path in sorted(FIXTURES.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        fixtures.append(Fixture(path.stem, GatewayType(data["gateway"]), data))
    return fixtures


ALL = load_all()
RESPONSES = [f for f in ALL if "response" in f.data]
STREAMS = [f for f in ALL if "stream" in f.data]


# -- SDK clients against 127.0.0.1 ------------------------------------------------------------


def _openai(base_url: str) -> Any:
    import openai

    return openai.OpenAI(api_key="test", base_url=base_url + "/v1", max_retries=0)


def _anthropic(base_url: str) -> Any:
    import anthropic

    return anthropic.Anthropic(api_key="test", base_url=base_url, max_retries=0)


def _genai(base_url: str) -> Any:
    from google import genai
    from google.genai import types

    options = types.HttpOptions(base_url=base_url, retry_options=types.HttpRetryOptions(attempts=1))
    return genai.Client(api_key="test", http_options=options)


def call(fixture: Fixture, base_url: str, kwargs: dict[str, Any]) -> Any:
    """The SDK call an application makes for ``fixture``'s gateway, with ``kwargs``."""
    match fixture.gateway:
        case GatewayType.openai:
            return _openai(base_url).chat.completions.create(model="gpt-test", **kwargs)
        case GatewayType.openai_responses:
            return _openai(base_url).responses.create(model="gpt-test", **kwargs)
        case GatewayType.anthropic:
            client = _anthropic(base_url)
            messages = client.beta.messages if fixture.beta else client.messages
            return messages.create(model="claude-test", max_tokens=64, **kwargs)
        case GatewayType.gemini:
            client = _genai(base_url)  # held: a collected genai client closes its connection
            return client.models.generate_content(model="gemini-test", **kwargs)


def minimal_request(gateway: GatewayType) -> dict[str, Any]:
    """The smallest valid request kwargs for ``gateway`` (used to fetch an SDK object)."""
    match gateway:
        case GatewayType.openai | GatewayType.anthropic:
            return {"messages": [{"role": "user", "content": PROMPT}]}
        case GatewayType.openai_responses:
            return {"input": PROMPT}
        case GatewayType.gemini:
            return {"contents": PROMPT}


def sdk_object(fixture: Fixture) -> Any:
    """The SDK's own response object for the recorded body (built by the SDK's client)."""
    with capture_server([(200, fixture.response)]) as server:
        if fixture.replaces_window:
            return _openai(server.base_url).responses.compact(model="gpt-test", input=PROMPT)
        return call(fixture, server.base_url, minimal_request(fixture.gateway))


def send(fixture: Fixture, kwargs: dict[str, Any]) -> Captured:
    """Send ``kwargs`` through the real SDK client; the request body as the SDK wrote it."""
    with capture_server([(200, fixture.response)]) as server:
        call(fixture, server.base_url, kwargs)
    (captured,) = server.captured
    return captured


def sse(fixture: Fixture) -> str:
    """The recorded stream as a server-sent event body again."""
    lines = []
    for event in fixture.stream:
        if fixture.gateway is GatewayType.anthropic:
            lines.append(f"event: {event['type']}")
        lines.append("data: " + json.dumps(event))
        lines.append("")
    if fixture.gateway is GatewayType.openai:
        lines += ["data: [DONE]", ""]
    return "\n".join(lines) + "\n"


# -- tool calls and their results ---------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """A client-side tool call in a response: the id to answer it with, its name, and the id it
    must carry on the wire (its own; for a Chat call with ``"id": ""``, the documented stable
    id ``"<name>#<n>"``, n counting the id-less calls of that name)."""

    answer_id: str
    name: str
    wire_id: str = ""


def client_calls(fixture: Fixture) -> list[Call]:
    """The calls the client must answer, in order (server-side tools are not among them)."""
    body = fixture.response
    match fixture.gateway:
        case GatewayType.anthropic:
            return [
                Call(b["id"], b["name"])
                for b in body.get("content") or []
                if b.get("type") == "tool_use"
            ]
        case GatewayType.openai:
            message = body["choices"][0]["message"]
            calls = message.get("tool_calls") or []
            wire = _chat_wire_ids(calls)
            return [
                Call(c.get("id") or c["function"]["name"], c["function"]["name"], ident)
                for c, ident in zip(calls, wire, strict=True)
            ]
        case GatewayType.openai_responses:
            return [
                Call(i["call_id"], i["name"])
                for i in body.get("output") or []
                if i.get("type") == "function_call"
            ]
        case GatewayType.gemini:
            candidates = body.get("candidates") or [{}]
            parts = (candidates[0].get("content") or {}).get("parts") or []
            calls = []
            for part in parts:
                function = part.get("functionCall")
                if function is not None:
                    calls.append(Call(function.get("id") or function["name"], function["name"]))
            return calls


def _chat_wire_ids(calls: list[dict[str, Any]]) -> list[str]:
    """The ids Chat tool calls carry on the wire: an empty id becomes ``"<name>#<n>"``."""
    counts: dict[str, int] = {}
    out = []
    for call in calls:
        name = call["function"]["name"]
        if call.get("id"):
            out.append(call["id"])
        else:
            counts[name] = counts.get(name, 0) + 1
            out.append(f"{name}#{counts[name]}")
    return out


def answers(fixture: Fixture) -> list[tuple[Call, str]]:
    """Each call with the result the recording client sent (matched by id, else in order), or
    a synthetic one when the cassette holds none."""
    recorded = list(fixture.data.get("tool_results") or [])
    by_id = {r["call_id"]: r["content"] for r in recorded}
    out = []
    for position, item in enumerate(client_calls(fixture)):
        content = by_id.get(item.answer_id)
        if (
            content is None
            and position < len(recorded)
            and not by_id.keys() & {c.answer_id for c in client_calls(fixture)}
        ):
            content = recorded[position]["content"]
        out.append((item, content if content is not None else f"result {position} of {item.name}"))
    return out


# -- reading the wire -------------------------------------------------------------------------


def wire_items(gateway: GatewayType, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The conversation list of a request body (messages, input or contents)."""
    key = {
        GatewayType.openai: "messages",
        GatewayType.anthropic: "messages",
        GatewayType.openai_responses: "input",
        GatewayType.gemini: "contents",
    }[gateway]
    items = body[key]
    assert isinstance(items, list)
    return items


_BYTES_KEYS = frozenset({"thoughtSignature", "thought_signature", "data"})
"""Gemini keys that hold bytes as base64 (``data`` of ``inlineData``)."""


def comparable(gateway: GatewayType, value: Any) -> Any:
    """``value`` as the wire comparison sees it: :func:`without_nulls`, and for Gemini keys in
    camelCase (the genai SDK writes some nested keys in snake_case, ``inlineData.mime_type``;
    the API reads both spellings)."""
    value = without_nulls(value)
    return _camel_keys(value) if gateway is GatewayType.gemini else value


def _camel_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {_camel(k): _camel_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel_keys(v) for v in value]
    return value


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def without_nulls(value: Any, key: str | None = None) -> Any:
    """``value`` with every ``null`` member removed, at every depth (the comparison allows a
    library to leave nulls out, and nothing else). Gemini bytes fields are compared as the bytes
    they encode: the genai SDK writes them in URL-safe base64, the API returns standard base64,
    and the API reads both."""
    if isinstance(value, str) and key in _BYTES_KEYS:
        try:
            return base64.b64decode(value.replace("-", "+").replace("_", "/"), validate=True)
        except ValueError:
            return value
    if isinstance(value, dict):
        return {k: without_nulls(v, k) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def returned_blocks(fixture: Fixture) -> list[dict[str, Any]]:
    """The blocks, items or parts of the response that must reach the wire unchanged."""
    body = fixture.response
    match fixture.gateway:
        case GatewayType.anthropic:
            return list(body["content"])
        case GatewayType.openai_responses:
            return [_as_input(item) for item in body["output"]]
        case GatewayType.gemini:
            return list(body["candidates"][0]["content"]["parts"])
        case GatewayType.openai:
            message = body["choices"][0]["message"]
            kept = {k: message[k] for k in ("content", "tool_calls", "refusal") if k in message}
            if kept.get("tool_calls"):
                wire = _chat_wire_ids(kept["tool_calls"])
                kept["tool_calls"] = [
                    {**c, "id": ident} for c, ident in zip(kept["tool_calls"], wire, strict=True)
                ]
            return [kept]


def _as_input(item: dict[str, Any]) -> dict[str, Any]:
    """A Responses output item as the request must carry it: a ``file_search_call``'s results
    and a user (system, developer) message with only the fields the SDK's input types declare
    for them (the API returns more, ``vector_store_id``, the ``id`` of a compacted window's user
    messages, and refuses input fields outside its schema)."""
    if item.get("type", "message") == "message" and item.get("role") != "assistant":
        from openai.types.responses.response_input_item_param import Message

        return {k: v for k, v in item.items() if k in Message.__annotations__}
    if item.get("type") != "file_search_call" or not isinstance(item.get("results"), list):
        return item
    from openai.types.responses.response_file_search_tool_call_param import Result

    allowed = set(Result.__annotations__)
    results = [{k: v for k, v in r.items() if k in allowed} for r in item["results"]]
    return {**item, "results": results}


def sent_blocks(fixture: Fixture, wire: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The blocks of the model's turn as they stand in the request body ``wire``."""
    match fixture.gateway:
        case GatewayType.anthropic:
            turns = [m for m in wire if m["role"] == "assistant"]
            return [b for m in turns for b in m["content"]]
        case GatewayType.openai_responses:
            if fixture.replaces_window:  # the window opens the request
                return wire[: len(fixture.response["output"])]
            ids = {i.get("id") for i in fixture.response["output"]}
            return [i for i in wire if i.get("id") in ids or i.get("role") == "assistant"]
        case GatewayType.gemini:
            return [p for c in wire if c.get("role") == "model" for p in c["parts"]]
        case GatewayType.openai:
            turns = [m for m in wire if m["role"] == "assistant"]
            return [
                {k: m[k] for k in ("content", "tool_calls", "refusal") if k in m} for m in turns
            ]


def iter_results(gateway: GatewayType, wire: list[dict[str, Any]]) -> Iterator[tuple[str, str]]:
    """(call id or function name, result text) of every tool result in ``wire``, in order."""
    for item in wire:
        if gateway is GatewayType.openai and item.get("role") == "tool":
            yield item["tool_call_id"], _text(item["content"])
        elif gateway is GatewayType.openai_responses and item.get("type") == "function_call_output":
            yield item["call_id"], _text(item["output"])
        elif gateway is GatewayType.anthropic and isinstance(item.get("content"), list):
            for block in item["content"]:
                if block.get("type") == "tool_result":
                    yield block["tool_use_id"], _text(block.get("content", ""))
        elif gateway is GatewayType.gemini:
            for part in item.get("parts") or []:
                response = part.get("functionResponse")
                if response is not None:
                    for text in _strings(response.get("response")):
                        yield response.get("id") or response["name"], text


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for inner in value.values():
            yield from _strings(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _strings(inner)


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content)
