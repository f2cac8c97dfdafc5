"""Gemini ``GenerateContentResponse`` chunks assembled into the response they stand for."""

from __future__ import annotations

import re
from typing import Any

from hydrangea.errors import IncompleteStreamError
from hydrangea.providers._streaming import Json, fail, kind

NAME = "gemini"
_SIGNATURE_KEYS = ("thoughtSignature", "thought_signature")


def assemble_gemini(chunks: list[Json]) -> Json:
    """The response of one candidate's chunks: text runs joined, calls whole."""
    body: Json = {}
    candidate: Json = {}
    parts = _Parts()
    finished = False
    response_id = chunks[0].get("responseId", chunks[0].get("response_id"))
    for position, chunk in enumerate(chunks):
        if "candidates" not in chunk and "usageMetadata" not in chunk:
            raise fail(NAME, position, f"not a GenerateContentResponse chunk ({kind(chunk)})")
        if chunk.get("responseId", chunk.get("response_id")) != response_id:
            raise fail(NAME, position, "a chunk of another response (its responseId differs)")
        if finished:
            raise fail(NAME, position, "a chunk after the one that carried the finishReason")
        for key, value in chunk.items():
            if key != "candidates":
                body[key] = value
        candidates = chunk.get("candidates") or []
        if len(candidates) > 1:
            raise fail(NAME, position, "more than one candidate: push one candidate's stream")
        for piece in candidates:
            for key, value in piece.items():
                if key != "content":
                    candidate[key] = value
            content = piece.get("content") or {}
            if "role" in content:
                candidate.setdefault("content", {})["role"] = content["role"]
            for part in content.get("parts") or []:
                parts.add(dict(part), position)
            finished = "finishReason" in piece or "finish_reason" in piece
    if not finished:
        raise fail(NAME, len(chunks), "no chunk carried a finishReason: the stream was cut short")
    if parts.call is not None:
        raise fail(NAME, len(chunks), "the stream ended inside a streamed function call")
    if parts.parts:
        candidate.setdefault("content", {})["parts"] = parts.parts
    body["candidates"] = [candidate]
    return body


def _get(value: Json, camel: str) -> Any:
    """``value[camel]``, or its snake_case spelling (the genai SDK's field name)."""
    if camel in value:
        return value[camel]
    return value.get(re.sub(r"[A-Z]", lambda m: "_" + m.group().lower(), camel))


class _Parts:
    """The joined parts so far, and the function call whose arguments are still arriving."""

    __slots__ = ("call", "continuing", "parts")

    def __init__(self) -> None:
        self.parts: list[Json] = []
        self.call: Json | None = None
        """The part of a call streamed with Vertex's ``streamFunctionCallArguments``."""
        self.continuing: set[str] = set()
        """The ``jsonPath`` of each string argument whose next piece is still to come."""

    def add(self, part: Json, position: int) -> None:
        function = _get(part, "functionCall")
        if self.call is not None or (
            isinstance(function, dict)
            and (_get(function, "willContinue") or _get(function, "partialArgs"))
        ):
            self._streamed_call(part, function, position)
        elif part == {"text": ""}:
            return  # the empty closing fragment of a stream: no part of the whole response
        elif not self._joined(part):
            self.parts.append(part)

    def _joined(self, part: Json) -> bool:
        previous = self.parts[-1] if self.parts else None
        if not (
            previous is not None
            and isinstance(part.get("text"), str)
            and isinstance(previous.get("text"), str)
            and set(part) - {"text", *_SIGNATURE_KEYS} <= {"thought"}
            and set(previous) - {"text", *_SIGNATURE_KEYS} <= {"thought"}
            and bool(previous.get("thought")) == bool(part.get("thought"))
            and not (_signature(previous) and _signature(part))
        ):
            return False
        previous["text"] += part["text"]
        for key in _SIGNATURE_KEYS:
            if key in part:
                previous[key] = part[key]
        return True

    def _streamed_call(self, part: Json, function: object, position: int) -> None:
        """One fragment of a call whose arguments arrive as ``partialArgs``: the first names the
        function (with ``willContinue``), the last has no ``willContinue``."""
        if not isinstance(function, dict) or set(part) - {"functionCall", "function_call",
                                                           *_SIGNATURE_KEYS}:
            raise fail(NAME, position, "a part inside a streamed function call: the call's "
                       "fragments must come one after the other")
        if self.call is None:
            self.call = {"functionCall": {"name": _get(function, "name"), "args": {}}}
            self.parts.append(self.call)
        whole: Json = self.call["functionCall"]
        for key in ("name", "id"):
            value = _get(function, key)
            if value and whole.get(key) not in (None, value):
                raise fail(NAME, position, f"a fragment of call {whole['name']!r} names another "
                           f"{key} ({value!r})")
            if value:
                whole[key] = value
        for key in _SIGNATURE_KEYS:
            if key in part:
                held = _signature_of(self.call)
                if held is not None and held != part[key]:
                    raise fail(NAME, position, "two thought signatures on one streamed call")
                self.call[key] = part[key]
        for piece in _get(function, "partialArgs") or []:
            self._argument(whole, piece, position)
        if not _get(function, "willContinue"):
            if not whole.get("name"):
                raise fail(NAME, position, "a streamed function call ends without its name")
            self.call = None
            self.continuing.clear()

    def _argument(self, whole: Json, piece: Json, position: int) -> None:
        path = _get(piece, "jsonPath")
        if not isinstance(path, str):
            raise fail(NAME, position, "a partialArgs entry without its jsonPath")
        value: object
        if _get(piece, "stringValue") is not None:
            value = str(_get(piece, "stringValue"))
            if path in self.continuing:
                value = str(_at(whole["args"], _path(path, position))) + value
        elif _get(piece, "numberValue") is not None:
            value = _number(_get(piece, "numberValue"))
        elif _get(piece, "boolValue") is not None:
            value = _get(piece, "boolValue")
        elif "nullValue" in piece or "null_value" in piece:
            value = None
        else:
            raise fail(NAME, position, f"a partialArgs entry for {path} carries no value")
        whole["args"] = _put(whole["args"], _path(path, position), value)
        if _get(piece, "willContinue"):
            self.continuing.add(path)
        else:
            self.continuing.discard(path)


def _number(value: object) -> object:
    """A ``numberValue`` as the whole response's ``args`` hold it: a double, written without a
    fraction when it is whole (the genai SDK reads every ``numberValue`` as a float, the JSON
    of a whole response has ``3`` where the stream said ``3``)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]"
                   r'|\["((?:[^"\\]|\\.)*)"\]')


def _path(path: str, position: int) -> list[str | int]:
    """A ``jsonPath`` (RFC 9535 names and indexes: ``$.a.b[0]['c d']``) as its steps."""
    if not path.startswith("$"):
        raise fail(NAME, position, f"the jsonPath {path!r} does not start with '$'")
    steps: list[str | int] = []
    at = 1
    while at < len(path):
        match = _STEP.match(path, at)
        if match is None:
            raise IncompleteStreamError(
                f"{NAME} stream, event {position}: the jsonPath {path!r} is not made of names "
                "and indexes, the only form this library reads; push the response unstreamed"
            )
        name, index, quoted, double = match.groups()
        if index is not None:
            steps.append(int(index))
        else:
            raw = name if name is not None else quoted if quoted is not None else double
            steps.append(re.sub(r"\\(.)", r"\1", raw))
        at = match.end()
    return steps


def _at(value: object, steps: list[str | int]) -> object:
    for step in steps:
        if isinstance(step, int) and isinstance(value, list) and step < len(value):
            value = value[step]
        elif isinstance(step, str) and isinstance(value, dict):
            value = value.get(step, "")
        else:
            return ""
    return "" if value is None else value


def _put(value: object, steps: list[str | int], leaf: object) -> object:
    """``value`` with ``leaf`` at ``steps`` (objects and lists made on the way)."""
    if not steps:
        return leaf
    step, rest = steps[0], steps[1:]
    if isinstance(step, int):
        items = list(value) if isinstance(value, list) else []
        items.extend([None] * (step + 1 - len(items)))
        items[step] = _put(items[step], rest, leaf)
        return items
    fields = dict(value) if isinstance(value, dict) else {}
    fields[step] = _put(fields.get(step), rest, leaf)
    return fields


def _signature(part: Json) -> bool:
    return any(key in part for key in _SIGNATURE_KEYS)


def _signature_of(part: Json) -> object:
    return next((part[key] for key in _SIGNATURE_KEYS if key in part), None)
