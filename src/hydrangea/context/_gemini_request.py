"""Building the ``client.models.generate_content`` keyword arguments from stored Gemini items.

The rules, all deterministic (same items, same request) and none of them touching stored items:

* The leading run of system pseudo-items becomes ``config={"system_instruction": {"parts":
  [...]}}``. A system item later in the conversation stays where it is, as a user text part
  reading ``"[system] <text>"``: moving it to the top would change the cached prefix.
* Every ``function_call`` of a model turn is answered by a ``function_response`` in the user turn
  right after it, responses first and in call order (the API wants one response per call there).
  The response for a call is the first later response with the same ``id`` (or, when the
  response has no id, the same ``name``); it is moved there if it sits further down, and its
  ``name`` is filled in from the call when missing (the API needs it). A call with no response
  gets ``{"error": ORPHAN_CALL_NOTICE}``.
* A ``function_response`` that answers no earlier call becomes text, ``"[tool result <id>] ..."``.
* Consecutive turns of one role are merged into one turn (Gemini wants user and model turns to
  alternate); parts keep their order, so thought signatures stay on their own parts.
* A conversation that would open with a model turn gets a fixed user turn reading
  :data:`LEADING_USER_PLACEHOLDER` before it (the head of a Context never changes).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from hydrangea.context._turns import (
    LEADING_USER_PLACEHOLDER,
    SYSTEM_NOTICE_PREFIX,
    Turn,
    emit_turns,
    split_leading_system,
)
from hydrangea.context.adapter import ORPHAN_CALL_NOTICE
from hydrangea.context.native import NativeContent

__all__ = [
    "LEADING_USER_PLACEHOLDER",
    "SYSTEM_NOTICE_PREFIX",
    "build_gemini_request",
    "response_text",
]


def build_gemini_request(items: Sequence[NativeContent]) -> dict[str, Any]:
    """The keyword arguments (``contents`` and, if any, ``config``) for ``items``."""
    system, rest = split_leading_system(items, lambda item: list(item["parts"]))
    turns = [_turn_of(item) for item in rest]
    answers = _pair_calls(turns)
    contents = _merge(
        emit_turns(turns, answers, key="parts", orphan=lambda part: [_orphan_response_text(part)])
    )
    if contents and contents[0]["role"] == "model":
        contents.insert(0, {"role": "user", "parts": [{"text": LEADING_USER_PLACEHOLDER}]})
    request: dict[str, Any] = {"contents": contents}
    if system:
        request["config"] = {"system_instruction": {"parts": system}}
    return request


def response_text(response: object) -> str:
    """A function response payload as text: its ``output``/``error`` string, else JSON."""
    if isinstance(response, dict) and len(response) == 1:
        value = next(iter(response.values()))
        if isinstance(value, str) and ("output" in response or "error" in response):
            return value
    return json.dumps(response, sort_keys=True, ensure_ascii=False)


def _turn_of(item: dict[str, Any]) -> Turn:
    if item["role"] == "system":
        text = "\n".join(part["text"] for part in item["parts"])
        return Turn("user", [{"text": SYSTEM_NOTICE_PREFIX + text}], None)
    return Turn(item["role"], item["parts"], item)


def _pair_calls(turns: list[Turn]) -> dict[int, list[dict[str, Any]]]:
    """For each model turn with calls: its response parts in call order (orphans filled)."""
    by_id: dict[str, list[tuple[int, int]]] = {}
    by_name: dict[str, list[tuple[int, int]]] = {}
    for t, turn in enumerate(turns):
        if turn.role != "user":
            continue
        for p, part in enumerate(turn.parts):
            response = part.get("function_response")
            if response is None:
                continue
            if "id" in response:
                by_id.setdefault(response["id"], []).append((t, p))
            else:
                by_name.setdefault(response["name"], []).append((t, p))
    answers: dict[int, list[dict[str, Any]]] = {}
    for t, turn in enumerate(turns):
        if turn.role != "model":
            continue
        responses: list[dict[str, Any]] = []
        for part in turn.parts:
            call = part.get("function_call")
            if call is None:
                continue
            queues = [by_name.get(call["name"], [])]
            if "id" in call:
                queues.append(by_id.get(call["id"], []))
            found = [(pos, queue) for queue in queues for pos in queue[:] if pos[0] > t]
            if not found:
                responses.append(_orphan_call_response(call))
                continue
            pos, queue = min(found, key=lambda entry: entry[0])
            queue.remove(pos)
            turns[pos[0]].moved.add(pos[1])
            responses.append(_named(turns[pos[0]].parts[pos[1]], call["name"]))
        if responses:
            answers[t] = responses
    for queue in [*by_id.values(), *by_name.values()]:
        for src, p in queue:
            turns[src].orphans.add(p)
    return answers


def _named(part: dict[str, Any], name: str) -> dict[str, Any]:
    response = part["function_response"]
    if "name" in response:
        return part
    return {**part, "function_response": {**response, "name": name}}


def _orphan_call_response(call: dict[str, Any]) -> dict[str, Any]:
    response: dict[str, Any] = {}
    if "id" in call:
        response["id"] = call["id"]
    response["name"] = call["name"]
    response["response"] = {"error": ORPHAN_CALL_NOTICE}
    return {"function_response": response}


def _orphan_response_text(part: dict[str, Any]) -> dict[str, Any]:
    response = part["function_response"]
    label = response.get("id") or response.get("name")
    payload = response.get("response", {})
    error = isinstance(payload, dict) and "error" in payload and "output" not in payload
    prefix = f"[tool result {label}, error] " if error else f"[tool result {label}] "
    return {"text": prefix + response_text(payload)}


def _merge(contents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    merged: list[dict[str, Any]] = []
    for content in contents:
        if merged and merged[-1]["role"] == content["role"]:
            previous = merged[-1]
            merged[-1] = {
                "role": previous["role"],
                "parts": [*previous["parts"], *content["parts"]],
            }
        else:
            merged.append(content)
    return merged
