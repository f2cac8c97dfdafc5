"""Anthropic message stream events assembled into the message they stand for."""

from __future__ import annotations

import json

from hydrangea.errors import InvalidItemError
from hydrangea.providers._streaming import Json, fail, kind, merge_delta
from hydrangea.providers.sdk import ANTHROPIC_STREAM_EVENT_TYPES

NAME = "anthropic"


def assemble_anthropic(events: list[Json]) -> Json:
    """The message of ``message_start``, its blocks' start / delta / stop events, the
    ``message_delta`` and ``message_stop``."""
    message: Json | None = None
    partial_json: dict[int, str] = {}
    open_blocks: set[int] = set()
    stopped = False
    for position, event in enumerate(events):
        named = event.get("type")
        if named not in ANTHROPIC_STREAM_EVENT_TYPES:
            if named == "error":
                raise InvalidItemError(f"the {NAME} stream ended with an error event")
            raise fail(NAME, position, f"not an Anthropic stream event ({kind(event)})")
        if named == "ping":
            continue
        if stopped:
            raise fail(NAME, position, f"{named} after message_stop")
        if named == "message_start":
            if message is not None:
                raise fail(NAME, position, "a second message_start")
            started = event.get("message")
            if not isinstance(started, dict):
                raise fail(NAME, position, "message_start carries no message")
            message = {**started, "content": list(started.get("content") or [])}
            continue
        if message is None:
            raise fail(NAME, position, f"{named} before message_start")
        content: list[Json] = message["content"]
        index = event.get("index")
        if named == "content_block_start":
            if index != len(content):
                raise fail(NAME, position, f"block {index} starts, expected {len(content)}")
            block = event.get("content_block")
            if not isinstance(block, dict):
                raise fail(NAME, position, "content_block_start carries no block")
            content.append(dict(block))
            open_blocks.add(index)
            _fallback_model(message, block)
        elif named == "content_block_delta":
            if index not in open_blocks:
                raise fail(NAME, position, f"a delta for block {index}, which is not open")
            assert isinstance(index, int)
            _delta(content[index], event.get("delta") or {}, partial_json, index)
        elif named == "content_block_stop":
            if index not in open_blocks:
                raise fail(NAME, position, f"block {index} stops but is not open")
            assert isinstance(index, int)
            open_blocks.discard(index)
            text = partial_json.pop(index, "")
            if text:
                try:
                    content[index]["input"] = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise fail(NAME, position, f"block {index} input is not JSON: {exc}") from exc
        elif named == "message_delta":
            _message_delta(message, event)
        else:  # message_stop
            if open_blocks:
                raise fail(NAME, position, f"message_stop with blocks {sorted(open_blocks)} open")
            stopped = True
    if not stopped:
        raise fail(NAME, len(events), "no message_stop event: the stream was cut short")
    assert message is not None
    return message


def _fallback_model(message: Json, block: Json) -> None:
    """A server-side ``fallback`` block names the model that produces what follows it; the
    non-streamed message carries the last such model as its ``model``."""
    target = block.get("to")
    if block.get("type") == "fallback" and isinstance(target, dict):
        model = target.get("model")
        if isinstance(model, str) and model:
            message["model"] = model


def _message_delta(message: Json, event: Json) -> None:
    """``delta`` (stop reason, container ...) sets the message's keys; the event's own keys
    (``context_management``, ``input_transformations``) are the message's too, when not null;
    ``usage`` holds cumulative totals, each replacing the ``message_start`` count it names (a
    null or absent count leaves that one as it was)."""
    for key, value in (event.get("delta") or {}).items():
        message[key] = value
    for key, value in event.items():
        if key not in {"type", "delta", "usage"} and value is not None:
            message[key] = value
    usage = event.get("usage")
    if isinstance(usage, dict):
        held = message.get("usage")
        counts = {key: value for key, value in usage.items() if value is not None}
        message["usage"] = {**(held if isinstance(held, dict) else {}), **counts}


def _delta(block: Json, delta: Json, partial_json: dict[int, str], index: int) -> None:
    named = delta.get("type")
    if named == "text_delta":
        block["text"] = str(block.get("text", "")) + str(delta.get("text", ""))
    elif named == "thinking_delta":
        block["thinking"] = str(block.get("thinking", "")) + str(delta.get("thinking", ""))
    elif named == "signature_delta":
        block["signature"] = delta.get("signature", "")
    elif named == "input_json_delta":
        partial_json[index] = partial_json.get(index, "") + str(delta.get("partial_json", ""))
    elif named == "citations_delta":
        citations = block.get("citations")
        block["citations"] = [*(citations if isinstance(citations, list) else []),
                              delta.get("citation")]
    else:
        merge_delta(block, delta, frozenset({"type"}))
