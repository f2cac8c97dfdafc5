"""Complete streams: the events or chunks of one streamed response, assembled into that response.

:func:`assemble` takes the raw events of one stream, in the order they arrived (SDK event objects
or their JSON dicts, mixed freely), and returns the response body the same call would have
returned without streaming. ``Context.push_stream`` pushes that body, so a streamed turn stores
exactly the item a non-streamed one would. A stream
that is partial or out of order raises :class:`~hydrangea.errors.IncompleteStreamError` and
nothing is appended.

Per gateway:

- ``openai`` (Chat Completions chunks): content, refusal and every other string delta are
  concatenated per choice; ``tool_calls`` deltas are joined by their ``index`` (the first delta of
  an index carries the call's id and name). Complete means every choice has a ``finish_reason``
  and, when the chunks carry a ``usage`` key (``stream_options={"include_usage": True}``), the
  usage-only final chunk arrived.
- ``openai_responses``: the ``response.completed`` (or ``response.incomplete``) event carries the
  final response, which is returned as it is. The items of the ``response.output_item.done``
  events are checked against it (same items, same order, every field but ``encrypted_content``,
  which real streams encrypt afresh for the final event); they fill in its ``output`` when the
  final event carries none.
- ``anthropic``: ``message_start``, then ``content_block_start`` / ``_delta`` / ``_stop`` per
  block (text, ``thinking_delta`` and ``signature_delta``, ``input_json_delta`` for tool inputs,
  ``citations_delta``), ``message_delta`` (stop reason, usage) and ``message_stop``. A delta of an
  unknown type sets the block's keys it names (strings are appended), so a new delta type still
  yields its data.
- ``gemini``: each chunk is a ``GenerateContentResponse``. Parts of the first candidate are
  concatenated: adjacent text parts of the same kind (thought or not) join into one that keeps
  the ``thought_signature`` one of them carried (real streams put it on the first fragment of
  the answer, or on an empty final fragment; the non-streamed response has it on the one joined
  part); a second signature starts a new part, an empty text fragment carrying nothing else (the
  closing chunk after a function call) is no part of the response, and other parts
  (function calls, code, images) are kept whole. Complete means the last chunk carries a
  ``finishReason``. Gemini chunks have no sequence numbers, so reordering is detected only when
  it moves the final chunk or mixes two responses (``responseId``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, assert_never

from hydrangea.context.sdk import ANTHROPIC_STREAM_EVENT_TYPES
from hydrangea.errors import IncompleteStreamError, InvalidItemError
from hydrangea.gateway import GatewayType

__all__ = ["assemble", "event_dict"]

Json = dict[str, Any]


def assemble(gateway: GatewayType, events: Iterable[object]) -> Json:
    """The response body that the stream ``events`` of ``gateway`` stand for.

    Raises :class:`~hydrangea.errors.IncompleteStreamError` for a stream that is empty, cut
    short, out of order, or holds an event of another gateway.
    """
    items = [event_dict(event) for event in events]
    if not items:
        raise IncompleteStreamError(f"an empty {gateway.value} stream has no response")
    assembler: Callable[[list[Json]], Json]
    match gateway:
        case GatewayType.openai:
            assembler = _assemble_chat
        case GatewayType.openai_responses:
            assembler = _assemble_responses
        case GatewayType.anthropic:
            assembler = _assemble_anthropic
        case GatewayType.gemini:
            assembler = _assemble_gemini
        case _:
            assert_never(gateway)
    return assembler(items)


def event_dict(event: object) -> Json:
    """One stream event as its JSON dict (SDK objects are dumped as the API sent them)."""
    if isinstance(event, dict):
        return event
    from hydrangea.context.sdk import _dump_genai, _dump_pydantic

    module = type(event).__module__
    if module.startswith("google.genai"):
        return _dump_genai(event)
    if hasattr(event, "model_dump"):
        return _dump_pydantic(event)
    raise IncompleteStreamError(
        f"a stream event must be an SDK event object or a dict, got {type(event).__name__}"
    )


def _fail(gateway: str, position: int, what: str) -> IncompleteStreamError:
    return IncompleteStreamError(f"{gateway} stream, event {position}: {what}")


def _merge_delta(target: Json, delta: Json, skip: frozenset[str] = frozenset()) -> None:
    """Strings are appended to what the key holds; other values replace it."""
    for key, value in delta.items():
        if key in skip or value is None:
            continue
        held = target.get(key)
        target[key] = held + value if isinstance(value, str) and isinstance(held, str) else value


# -- Chat Completions -------------------------------------------------------------------------


def _assemble_chat(chunks: list[Json]) -> Json:
    name = "openai"
    first = chunks[0]
    completion: Json = {
        key: value for key, value in first.items() if key not in {"choices", "object", "usage"}
    }
    completion["object"] = "chat.completion"
    choices: dict[int, Json] = {}
    calls: dict[int, dict[int, Json]] = {}
    wants_usage = any("usage" in chunk for chunk in chunks)
    usage_seen = False
    for position, chunk in enumerate(chunks):
        if chunk.get("object") != "chat.completion.chunk":
            raise _fail(name, position, f"not a chat.completion.chunk ({_kind(chunk)})")
        if chunk.get("id") != first.get("id"):
            raise _fail(name, position, "a chunk of another completion (its id differs)")
        if usage_seen:
            raise _fail(name, position, "a chunk after the usage-only final chunk")
        if chunk.get("usage") is not None:
            completion["usage"] = chunk["usage"]
            usage_seen = not chunk.get("choices")
        for choice in chunk.get("choices") or []:
            index = choice.get("index", 0)
            held = choices.get(index)
            if held is None:
                if index != len(choices):
                    raise _fail(name, position, f"choice {index} before choice {len(choices)}")
                held = choices[index] = {"index": index, "message": {}, "finish_reason": None}
                calls[index] = {}
            if held["finish_reason"] is not None:
                raise _fail(name, position, f"a delta for choice {index} after its finish_reason")
            delta = choice.get("delta") or {}
            _merge_delta(held["message"], delta, frozenset({"tool_calls"}))
            for call in delta.get("tool_calls") or []:
                _chat_call_delta(calls[index], call, position)
            if "logprobs" in choice:
                held["logprobs"] = _merge_logprobs(held.get("logprobs"), choice["logprobs"])
            if choice.get("finish_reason") is not None:
                held["finish_reason"] = choice["finish_reason"]
    if not choices:
        raise _fail(name, len(chunks), "the stream holds no choice")
    for index, held in choices.items():
        if held["finish_reason"] is None:
            raise _fail(name, len(chunks), f"choice {index} has no finish_reason: cut short")
        message = held["message"]
        message.setdefault("role", "assistant")
        message.setdefault("content", None)
        if calls[index]:
            message["tool_calls"] = [calls[index][i] for i in sorted(calls[index])]
    if wants_usage and not usage_seen:
        raise _fail(name, len(chunks), "the usage-only final chunk is missing: cut short")
    completion["choices"] = [choices[i] for i in sorted(choices)]
    return completion


def _chat_call_delta(calls: dict[int, Json], delta: Json, position: int) -> None:
    index = delta.get("index")
    if not isinstance(index, int):
        raise _fail("openai", position, "a tool_calls delta without an index")
    function = delta.get("function") or {}
    held = calls.get(index)
    if held is None:
        if index != len(calls):
            raise _fail("openai", position, f"tool call {index} before tool call {len(calls)}")
        if not function.get("name"):
            raise _fail("openai", position, f"tool call {index} starts without its name")
        held = calls[index] = {"function": {"arguments": ""}}
        for key in ("id", "type"):
            if key in delta:
                held[key] = delta[key]
        held.setdefault("type", "function")
    elif index != len(calls) - 1:
        raise _fail("openai", position, f"a delta for tool call {index} after a later call began")
    _merge_delta(held, delta, frozenset({"index", "function", "id", "type"}))
    _merge_delta(held["function"], function)


def _merge_logprobs(held: object, new: object) -> object:
    if not isinstance(new, dict):
        return held if new is None else new
    merged: Json = dict(held) if isinstance(held, dict) else {}
    for key, value in new.items():
        if isinstance(value, list):
            merged[key] = [*(merged.get(key) or []), *value]
        elif value is not None or key not in merged:
            merged[key] = value
    return merged


# -- Responses --------------------------------------------------------------------------------


def _assemble_responses(events: list[Json]) -> Json:
    name = "openai_responses"
    added: dict[int, Json] = {}
    done: dict[int, Json] = {}
    final: Json | None = None
    last_sequence: int | None = None
    for position, event in enumerate(events):
        kind = event.get("type")
        if not isinstance(kind, str) or not kind.startswith("response."):
            raise _fail(name, position, f"not a Responses stream event ({_kind(event)})")
        if final is not None:
            raise _fail(name, position, f"{kind} after the stream's final event")
        sequence = event.get("sequence_number")
        if isinstance(sequence, int):
            if last_sequence is not None and sequence <= last_sequence:
                raise _fail(name, position, f"sequence_number {sequence} after {last_sequence}")
            last_sequence = sequence
        index = event.get("output_index")
        if kind == "response.output_item.added":
            if index != len(added):
                raise _fail(name, position, f"output item {index} added before {len(added)}")
            added[index] = event.get("item") or {}
        elif kind == "response.output_item.done":
            if not isinstance(index, int) or index not in added or index in done:
                raise _fail(name, position, f"output item {index} done but never added")
            done[index] = event.get("item") or {}
        elif isinstance(index, int) and (index not in added or index in done):
            raise _fail(name, position, f"{kind} for output item {index}, which is not open")
        elif kind in {"response.completed", "response.incomplete"}:
            response = event.get("response")
            if not isinstance(response, dict):
                raise _fail(name, position, f"{kind} carries no response")
            final = response
        elif kind in {"response.failed", "error"}:
            raise InvalidItemError(f"the {name} stream ended with {kind}: nothing to push")
    if final is None:
        raise _fail(name, len(events), "no response.completed event: the stream was cut short")
    if len(done) != len(added):
        missing = sorted(set(added) - set(done))
        raise _fail(name, len(events), f"output items {missing} were never done")
    items = [done[i] for i in range(len(done))]
    body = dict(final)
    output = body.get("output")
    if not output:
        body["output"] = items
    elif [_comparable(item) for item in output] != [_comparable(item) for item in items]:
        raise IncompleteStreamError(
            f"{name} stream: the final response's output differs from the items the "
            "output_item.done events carried"
        )
    return body


def _comparable(item: object) -> object:
    """An output item without ``encrypted_content``: the API encrypts the reasoning afresh for
    the final event, so that one field differs between ``output_item.done`` and the final
    response in real streams (the final response's value is the one kept)."""
    if isinstance(item, dict):
        return {key: value for key, value in item.items() if key != "encrypted_content"}
    return item


# -- Anthropic --------------------------------------------------------------------------------


def _assemble_anthropic(events: list[Json]) -> Json:
    name = "anthropic"
    message: Json | None = None
    partial_json: dict[int, str] = {}
    open_blocks: set[int] = set()
    stopped = False
    for position, event in enumerate(events):
        kind = event.get("type")
        if kind not in ANTHROPIC_STREAM_EVENT_TYPES:
            if kind == "error":
                raise InvalidItemError(f"the {name} stream ended with an error event")
            raise _fail(name, position, f"not an Anthropic stream event ({_kind(event)})")
        if kind == "ping":
            continue
        if stopped:
            raise _fail(name, position, f"{kind} after message_stop")
        if kind == "message_start":
            if message is not None:
                raise _fail(name, position, "a second message_start")
            started = event.get("message")
            if not isinstance(started, dict):
                raise _fail(name, position, "message_start carries no message")
            message = {**started, "content": list(started.get("content") or [])}
            continue
        if message is None:
            raise _fail(name, position, f"{kind} before message_start")
        content: list[Json] = message["content"]
        index = event.get("index")
        if kind == "content_block_start":
            if index != len(content):
                raise _fail(name, position, f"block {index} starts, expected {len(content)}")
            block = event.get("content_block")
            if not isinstance(block, dict):
                raise _fail(name, position, "content_block_start carries no block")
            content.append(dict(block))
            open_blocks.add(index)
        elif kind == "content_block_delta":
            if index not in open_blocks:
                raise _fail(name, position, f"a delta for block {index}, which is not open")
            assert isinstance(index, int)
            _anthropic_delta(content[index], event.get("delta") or {}, partial_json, index)
        elif kind == "content_block_stop":
            if index not in open_blocks:
                raise _fail(name, position, f"block {index} stops but is not open")
            assert isinstance(index, int)
            open_blocks.discard(index)
            text = partial_json.pop(index, "")
            if text:
                try:
                    content[index]["input"] = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise _fail(name, position, f"block {index} input is not JSON: {exc}") from exc
        elif kind == "message_delta":
            for key, value in (event.get("delta") or {}).items():
                message[key] = value
            usage = event.get("usage")
            if isinstance(usage, dict):
                held = message.get("usage")
                message["usage"] = {**(held if isinstance(held, dict) else {}), **usage}
        else:  # message_stop
            if open_blocks:
                raise _fail(name, position, f"message_stop with blocks {sorted(open_blocks)} open")
            stopped = True
    if not stopped:
        raise _fail(name, len(events), "no message_stop event: the stream was cut short")
    assert message is not None
    return message


def _anthropic_delta(block: Json, delta: Json, partial_json: dict[int, str], index: int) -> None:
    kind = delta.get("type")
    if kind == "text_delta":
        block["text"] = str(block.get("text", "")) + str(delta.get("text", ""))
    elif kind == "thinking_delta":
        block["thinking"] = str(block.get("thinking", "")) + str(delta.get("thinking", ""))
    elif kind == "signature_delta":
        block["signature"] = delta.get("signature", "")
    elif kind == "input_json_delta":
        partial_json[index] = partial_json.get(index, "") + str(delta.get("partial_json", ""))
    elif kind == "citations_delta":
        citations = block.get("citations")
        block["citations"] = [*(citations if isinstance(citations, list) else []),
                              delta.get("citation")]
    else:
        _merge_delta(block, delta, frozenset({"type"}))


# -- Gemini -----------------------------------------------------------------------------------


def _assemble_gemini(chunks: list[Json]) -> Json:
    name = "gemini"
    body: Json = {}
    candidate: Json = {}
    parts: list[Json] = []
    finished = False
    response_id = chunks[0].get("responseId", chunks[0].get("response_id"))
    for position, chunk in enumerate(chunks):
        if "candidates" not in chunk and "usageMetadata" not in chunk:
            raise _fail(name, position, f"not a GenerateContentResponse chunk ({_kind(chunk)})")
        if chunk.get("responseId", chunk.get("response_id")) != response_id:
            raise _fail(name, position, "a chunk of another response (its responseId differs)")
        if finished:
            raise _fail(name, position, "a chunk after the one that carried the finishReason")
        for key, value in chunk.items():
            if key != "candidates":
                body[key] = value
        candidates = chunk.get("candidates") or []
        if len(candidates) > 1:
            raise _fail(name, position, "more than one candidate: push one candidate's stream")
        for piece in candidates:
            for key, value in piece.items():
                if key != "content":
                    candidate[key] = value
            content = piece.get("content") or {}
            if "role" in content:
                candidate.setdefault("content", {})["role"] = content["role"]
            for part in content.get("parts") or []:
                _gemini_part(parts, dict(part))
            finished = "finishReason" in piece or "finish_reason" in piece
    if not finished:
        raise _fail(name, len(chunks), "no chunk carried a finishReason: the stream was cut short")
    if parts:
        candidate.setdefault("content", {})["parts"] = parts
    body["candidates"] = [candidate]
    return body


_SIGNATURE_KEYS = ("thoughtSignature", "thought_signature")


def _gemini_part(parts: list[Json], part: Json) -> None:
    if part == {"text": ""}:
        return  # the empty closing fragment of a stream: no part of the whole response
    previous = parts[-1] if parts else None
    if (
        previous is not None
        and isinstance(part.get("text"), str)
        and isinstance(previous.get("text"), str)
        and set(part) - {"text", *_SIGNATURE_KEYS} <= {"thought"}
        and set(previous) - {"text", *_SIGNATURE_KEYS} <= {"thought"}
        and bool(previous.get("thought")) == bool(part.get("thought"))
        and not (_signature(previous) and _signature(part))
    ):
        previous["text"] += part["text"]
        for key in _SIGNATURE_KEYS:
            if key in part:
                previous[key] = part[key]
        return
    parts.append(part)


def _signature(part: Json) -> bool:
    return any(key in part for key in _SIGNATURE_KEYS)


def _kind(event: Json) -> str:
    kind = event.get("type", event.get("object"))
    return f"type {kind!r}" if kind is not None else f"keys {sorted(event)[:4]}"
