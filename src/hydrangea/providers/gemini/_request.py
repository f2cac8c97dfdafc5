"""Building the ``client.models.generate_content`` keyword arguments from stored Gemini items.

The rules, all deterministic (same items, same request) and none of them touching stored items:

* The leading run of system pseudo-items becomes ``config={"system_instruction": {"parts":
  [...]}}``, merged into the caller's own ``config`` when one is passed (:func:`merge_config`).
  A system item later in the conversation stays where it is, as a user text part reading
  ``"[system] <text>"``: moving it to the top would change the cached prefix.
* Every ``function_call`` of a model turn is answered by a ``function_response`` in the user turn
  right after it, responses first and in call order (the API wants one response per call there).
  Which response answers which call is the pairing engine's decision
  (:mod:`hydrangea.providers.pairing`: by id, else by function name in call order, and by the
  stable id ``"<name>#<n>"`` of an id-less call); the response is moved there if it sits further
  down, and carries its call's ``name`` and ``id`` (no ``id`` for an id-less call). A call with
  no response gets ``{"error": ORPHAN_CALL_NOTICE}``.
* A ``function_response`` that answers no earlier call becomes text, ``"[tool result <id>] ..."``.
* Consecutive turns of one role are merged into one turn (Gemini wants user and model turns to
  alternate); parts keep their order, so thought signatures stay on their own parts.
* A conversation that would open with a model turn gets a fixed user turn reading
  :data:`LEADING_USER_PLACEHOLDER` before it (the head of a Context never changes).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import TypeAdapter

from hydrangea.errors import RequestOptionError
from hydrangea.providers._turns import (
    LEADING_USER_PLACEHOLDER,
    SYSTEM_NOTICE_PREFIX,
    Turn,
    emit_turns,
    split_leading_system,
)
from hydrangea.providers.adapter import ORPHAN_CALL_NOTICE
from hydrangea.providers.native import NativeContent
from hydrangea.providers.pairing import Pairing

__all__ = [
    "LEADING_USER_PLACEHOLDER",
    "SYSTEM_NOTICE_PREFIX",
    "build_gemini_request",
    "merge_config",
    "response_text",
]


def build_gemini_request(
    items: Sequence[NativeContent],
    pairing_of: Callable[[Sequence[NativeContent]], Pairing],
    *,
    config: object = None,
) -> dict[str, Any]:
    """The keyword arguments (``contents`` and, if any, ``config``) for ``items``.

    ``pairing_of`` is the adapter's pairing; ``config`` the caller's own config to merge into.
    """
    if _without_tools(items):
        system, contents = _plain_contents(items)
    else:
        system, rest = split_leading_system(items, _system_parts)
        turns = [_turn_of(item) for item in rest]
        answers = _pair_calls(turns, pairing_of)
        emitted = emit_turns(
            turns, answers, key="parts", orphan=lambda part: [_orphan_response_text(part)]
        )
        contents = _merge(emitted)
    if contents and contents[0]["role"] == "model":
        contents.insert(0, {"role": "user", "parts": [{"text": LEADING_USER_PLACEHOLDER}]})
    request: dict[str, Any] = {"contents": contents}
    merged = merge_config(config, system)
    if merged is not None:
        request["config"] = merged
    return request


def merge_config(config: object, system: list[dict[str, Any]]) -> object:
    """The caller's ``config`` with the Context's system parts in its ``system_instruction``.

    ``config`` is ``None``, a dict, or a ``GenerateContentConfig`` (any pydantic model with
    ``model_copy``); it is never changed in place. The Context's system parts come after the
    caller's own instruction (a string, a Content or a list of parts). A config object stays
    an object of its type, a dict stays a dict.
    """
    if not system:
        return config
    if config is None:
        return {"system_instruction": {"parts": system}}
    if isinstance(config, dict):
        own = config.get("system_instruction", config.get("systemInstruction"))
        names = ("system_instruction", "systemInstruction")
        merged = {k: v for k, v in config.items() if k not in names}
        merged["system_instruction"] = {"parts": [*_instruction_parts(own), *system]}
        return merged
    copy = getattr(config, "model_copy", None)
    if copy is None:
        raise RequestOptionError(
            f"config must be a dict or a GenerateContentConfig, got {type(config).__name__}"
        )
    own = getattr(config, "system_instruction", None)
    dump = getattr(own, "model_dump", None)
    own_json = dump(mode="json", exclude_none=True) if dump is not None else own
    instruction: object = {"parts": [*_instruction_parts(own_json), *system]}
    fields = getattr(type(config), "model_fields", {})
    if "system_instruction" in fields:  # validate into the config's own field type (Content)
        genai_types = sys.modules.get(type(config).__module__)
        content = getattr(genai_types, "Content", None)
        if isinstance(content, type) and hasattr(content, "model_validate"):
            # (the field's whole annotation is a union holding PIL's Image when Pillow is
            # installed, which pydantic cannot build a schema for: validate the Content alone)
            instruction = content.model_validate(instruction)
        else:
            annotation: Any = fields["system_instruction"].annotation
            instruction = TypeAdapter(annotation).validate_python(instruction)
    return copy(update={"system_instruction": instruction})


def _instruction_parts(own: object) -> list[dict[str, Any]]:
    if own is None:
        return []
    if isinstance(own, str):
        return [{"text": own}]
    if isinstance(own, dict) and isinstance(own.get("parts"), list):
        return list(own["parts"])
    if isinstance(own, list):
        return [{"text": p} if isinstance(p, str) else p for p in own]
    raise RequestOptionError(f"cannot merge a system_instruction of type {type(own).__name__}")


def response_text(response: object) -> str:
    """A function response payload as text: its ``output``/``error`` string, else JSON."""
    if isinstance(response, dict) and len(response) == 1:
        value = next(iter(response.values()))
        if isinstance(value, str) and ("output" in response or "error" in response):
            return value
    return json.dumps(response, sort_keys=True, ensure_ascii=False)


def _without_tools(items: Sequence[NativeContent]) -> bool:
    """True if no part of any item holds a ``function_call`` or a ``function_response`` (of
    any role) and every item's parts are a list: then nothing is paired, moved or repaired."""
    for item in items:
        parts = item.get("parts")
        if type(parts) is not list:
            return False
        for part in parts:
            if type(part) is not dict or "function_call" in part or "function_response" in part:
                return False
    return True


def _plain_contents(
    items: Sequence[NativeContent],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The system parts and the contents of items without tool parts (the general path less
    the pairing): copies of the items (a system item as a user notice, an item with no parts
    left out), consecutive turns of one role merged."""
    system, rest = split_leading_system(items, _system_parts)
    contents: list[dict[str, Any]] = []
    for item in rest:
        if item["role"] == "system":
            contents.append({"role": "user", "parts": [_notice(item)]})
        elif item["parts"]:
            contents.append(item)
    return system, _merge(contents)


def _system_parts(item: dict[str, Any]) -> list[dict[str, Any]]:
    return list(item["parts"])


def _notice(item: dict[str, Any]) -> dict[str, Any]:
    """The part a system item after the leading run is sent as (in a user turn)."""
    return {"text": SYSTEM_NOTICE_PREFIX + "\n".join(part["text"] for part in item["parts"])}


def _turn_of(item: dict[str, Any]) -> Turn:
    if item["role"] == "system":
        return Turn("user", [_notice(item)], None)
    return Turn(item["role"], item["parts"], item)


def _pair_calls(
    turns: list[Turn], pairing_of: Callable[[Sequence[NativeContent]], Pairing]
) -> dict[int, list[dict[str, Any]]]:
    """For each model turn with calls: its response parts in call order (orphans filled).

    The pairing engine decides who answers whom (ids, then function names, in call order);
    each response gets its call's ``name``, and its call's ``id`` (none for an id-less call,
    whose stable id or name the API does not know).
    """
    pairing = pairing_of([{"role": turn.role, "parts": turn.parts} for turn in turns])
    answers: dict[int, list[dict[str, Any]]] = {}
    for (t, slot), _, _ in pairing.calls:
        call = turns[t].parts[slot]["function_call"]
        result = pairing.answer.get((t, slot))
        if result is None:
            answer = _orphan_call_response(call)
        else:
            src, p = result
            turns[src].moved.add(p)
            answer = _addressed(turns[src].parts[p], call)
        answers.setdefault(t, []).append(answer)
    for t, p in pairing.orphans:
        turns[t].orphans.add(p)
    return answers


def _addressed(part: dict[str, Any], call: dict[str, Any]) -> dict[str, Any]:
    """The response ``part`` carrying its call's name and id (exactly; nothing else changes)."""
    response = part["function_response"]
    wanted = dict(response)
    wanted["name"] = call["name"]
    if isinstance(call.get("id"), str) and call["id"]:
        wanted["id"] = call["id"]
    else:
        wanted.pop("id", None)
    if wanted == response:
        return part
    ordered = {key: wanted[key] for key in ("id", "name") if key in wanted}
    ordered.update((key, value) for key, value in wanted.items() if key not in ordered)
    return {**part, "function_response": ordered}


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
    """Consecutive contents of one role as one (linear: each run's parts are joined once)."""
    merged: list[dict[str, Any]] = []
    run: list[dict[str, Any]] = []
    for content in [*contents, None]:
        if content is not None and run and run[-1]["role"] == content["role"]:
            run.append(content)
            continue
        if len(run) == 1:
            merged.append(run[0])
        elif run:
            parts = [part for entry in run for part in entry["parts"]]
            merged.append({"role": run[0]["role"], "parts": parts})
        run = [content] if content is not None else []
    return merged
