"""Chat Completions chunks assembled into the ``chat.completion`` they stand for."""

from __future__ import annotations

from hydrangea.providers._streaming import Json, fail, kind, merge_delta
from hydrangea.providers.sdk import is_azure_filter_chunk

NAME = "openai"


def assemble_chat(chunks: list[Json]) -> Json:
    """The completion of ``chunks`` (Azure's prompt-filter chunks first, then one completion's
    ``chat.completion.chunk`` objects)."""
    filters = 0
    while filters < len(chunks) and is_azure_filter_chunk(chunks[filters]):
        filters += 1
    if filters == len(chunks):
        raise fail(NAME, len(chunks), "the stream holds no chat.completion.chunk: cut short")
    first = chunks[filters]
    completion: Json = {
        key: value for key, value in first.items() if key not in {"choices", "object", "usage"}
    }
    completion["object"] = "chat.completion"
    prompt_filters = [r for c in chunks[:filters] for r in c["prompt_filter_results"]]
    if prompt_filters:
        completion["prompt_filter_results"] = prompt_filters
    choices: dict[int, Json] = {}
    calls: dict[int, dict[int, Json]] = {}
    wants_usage = any("usage" in chunk for chunk in chunks[filters:])
    usage_seen = False
    for position, chunk in enumerate(chunks[filters:], start=filters):
        if chunk.get("object") != "chat.completion.chunk":
            raise fail(NAME, position, f"not a chat.completion.chunk ({kind(chunk)})")
        if chunk.get("id") != first.get("id"):
            raise fail(NAME, position, "a chunk of another completion (its id differs)")
        if usage_seen:
            raise fail(NAME, position, "a chunk after the usage-only final chunk")
        if chunk.get("usage") is not None:
            completion["usage"] = chunk["usage"]
            usage_seen = not chunk.get("choices")
        for choice in chunk.get("choices") or []:
            index = choice.get("index", 0)
            held = choices.get(index)
            if held is None:
                if index != len(choices):
                    raise fail(NAME, position, f"choice {index} before choice {len(choices)}")
                held = choices[index] = {"index": index, "message": {}, "finish_reason": None}
                calls[index] = {}
            if held["finish_reason"] is not None:
                raise fail(NAME, position, f"a delta for choice {index} after its finish_reason")
            delta = choice.get("delta") or {}
            merge_delta(held["message"], delta, frozenset({"tool_calls"}))
            for call in delta.get("tool_calls") or []:
                _call_delta(calls[index], call, position)
            if "logprobs" in choice:
                held["logprobs"] = _merge_logprobs(held.get("logprobs"), choice["logprobs"])
            if choice.get("finish_reason") is not None:
                held["finish_reason"] = choice["finish_reason"]
    if not choices:
        raise fail(NAME, len(chunks), "the stream holds no choice")
    for index, held in choices.items():
        if held["finish_reason"] is None:
            raise fail(NAME, len(chunks), f"choice {index} has no finish_reason: cut short")
        message = held["message"]
        message.setdefault("role", "assistant")
        message.setdefault("content", None)
        if calls[index]:
            message["tool_calls"] = [calls[index][i] for i in sorted(calls[index])]
    if wants_usage and not usage_seen:
        raise fail(NAME, len(chunks), "the usage-only final chunk is missing: cut short")
    completion["choices"] = [choices[i] for i in sorted(choices)]
    return completion


def _call_delta(calls: dict[int, Json], delta: Json, position: int) -> None:
    index = delta.get("index")
    if not isinstance(index, int):
        raise fail(NAME, position, "a tool_calls delta without an index")
    function = delta.get("function") or {}
    held = calls.get(index)
    if held is None:
        if index != len(calls):
            raise fail(NAME, position, f"tool call {index} before tool call {len(calls)}")
        if not function.get("name"):
            raise fail(NAME, position, f"tool call {index} starts without its name")
        held = calls[index] = {"function": {"arguments": ""}}
        for key in ("id", "type"):
            if key in delta:
                held[key] = delta[key]
        held.setdefault("type", "function")
    elif index != len(calls) - 1:
        raise fail(NAME, position, f"a delta for tool call {index} after a later call began")
    merge_delta(held, delta, frozenset({"index", "function", "id", "type"}))
    merge_delta(held["function"], function)


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
