"""Run every recorded stream of the evaluation corpora through the stream assembler.

Run from the repository root with the project's venv (the SDKs are needed)::

    PYTHONPATH=src .venv/bin/python tools/check_streams.py [DIR ...]

DIR defaults to ``shared/eval/real_payloads`` and ``shared/eval/real_payloads_2`` of the first
folder above the repository that holds ``shared/eval`` (``../shared/eval`` from the main tree).
Every JSON file there with a ``stream`` (the events of one streamed response) or a
``stream_event`` flag (one event alone) is checked; the script prints one line per recording
and the pass/fail counts, and exits non-zero when any recording fails.

A stream passes when all of these hold:

- ``final``: what ``Context.push_stream(events)`` stores equals what ``Context.push_back`` stores
  for the final response: the recorded one where the recording has it (and then the assembled
  body equals it exactly), otherwise the SDK's own stream accumulator's
  (openai ``chat.completions.stream().get_final_completion()``, anthropic
  ``beta.messages.stream().get_final_message()``, both fed the recorded events by a server on
  127.0.0.1; null members count as absent, and the assembled body's id, model, content, stop
  reason, usage, context management and container must equal the accumulator's too). Gemini
  has no accumulator in its SDK: there the oracle below (written for this
  script, from the API's documented shapes) says what the joined parts must be.
- ``objects``: the SDK's event objects (its raw stream, from the same server) push the same
  thing as the JSON dicts.
- ``prefixes``: every proper prefix of the stream is refused with ``IncompleteStreamError`` and
  the Context is left unchanged.
- ``alone``: every event but the last, pushed alone with ``push_back``, is refused with
  ``StreamEventError`` (not for Gemini, whose chunks look like responses).

A lone event passes when ``push_back`` refuses it with ``StreamEventError``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from hydrangea.context import Context  # noqa: E402
from hydrangea.errors import IncompleteStreamError, StreamEventError  # noqa: E402
from hydrangea.gateway import GatewayType  # noqa: E402
from hydrangea.message import Message, Role  # noqa: E402
from hydrangea.providers.streams import assemble  # noqa: E402
from tests.support.capture_server import capture_server  # noqa: E402

EVAL = next((p / "shared" / "eval" for p in ROOT.parents if (p / "shared" / "eval").is_dir()),
            ROOT.parent / "shared" / "eval")
DEFAULT_DIRS = [EVAL / "real_payloads", EVAL / "real_payloads_2"]
Json = dict[str, Any]


def _sse(gateway: GatewayType, events: list[Json]) -> str:
    lines = []
    for event in events:
        if gateway is GatewayType.anthropic:
            lines.append(f"event: {event['type']}")
        lines += ["data: " + json.dumps(event), ""]
    if gateway is GatewayType.openai:
        lines += ["data: [DONE]", ""]
    return "\n".join(lines) + "\n"


def _with_server(gateway: GatewayType, events: list[Json], call: Callable[[str], Any]) -> Any:
    with capture_server([(200, _sse(gateway, events))]) as server:
        return call(server.base_url)


def _openai(base: str) -> Any:
    import openai

    return openai.OpenAI(api_key="test", base_url=base + "/v1", max_retries=0)


def _anthropic(base: str) -> Any:
    import anthropic

    return anthropic.Anthropic(api_key="test", base_url=base, max_retries=0)


def _genai(base: str) -> Any:
    from google import genai
    from google.genai import types

    options = types.HttpOptions(base_url=base, retry_options=types.HttpRetryOptions(attempts=1))
    return genai.Client(api_key="test", http_options=options)


_MESSAGES = [{"role": "user", "content": "Hello."}]


def _sdk_events(gateway: GatewayType, events: list[Json]) -> list[Any]:
    def call(base: str) -> list[Any]:
        match gateway:
            case GatewayType.openai:
                return list(_openai(base).chat.completions.create(
                    model="m", messages=_MESSAGES, stream=True))
            case GatewayType.openai_responses:
                return list(_openai(base).responses.create(model="m", input="Hello.", stream=True))
            case GatewayType.anthropic:
                return list(_anthropic(base).beta.messages.create(
                    model="m", max_tokens=1, messages=_MESSAGES, stream=True))
            case GatewayType.gemini:
                client = _genai(base)  # held: a collected client closes its connection
                return list(client.models.generate_content_stream(model="m", contents="Hello."))

    result: list[Any] = _with_server(gateway, events, call)
    return result


def _sdk_final(gateway: GatewayType, events: list[Json]) -> Any:
    def call(base: str) -> Any:
        match gateway:
            case GatewayType.openai:
                with _openai(base).chat.completions.stream(model="m", messages=_MESSAGES) as s:
                    return s.get_final_completion()
            case GatewayType.anthropic:
                with _anthropic(base).beta.messages.stream(
                    model="m", max_tokens=1, messages=_MESSAGES
                ) as s:
                    return s.get_final_message()
            case _:
                raise AssertionError(gateway)

    return _with_server(gateway, events, call)


# -- the Gemini oracle ---------------------------------------------------------------------------

_SIGNATURE = ("thoughtSignature", "thought_signature")


def _path_keys(path: str) -> list[str | int]:
    """``$.a.b[0]['c']`` as ``["a", "b", 0, "c"]`` (the forms the recordings use)."""
    assert path.startswith("$"), path
    keys: list[str | int] = []
    rest = path[1:]
    while rest:
        if rest.startswith("."):
            name = rest[1:].split(".")[0].split("[")[0]
            keys.append(name)
            rest = rest[1 + len(name):]
        else:
            close = rest.index("]")
            inner = rest[1:close]
            keys.append(int(inner) if inner.isdigit() else inner.strip("'\""))
            rest = rest[close + 1:]
    return keys


def _put(args: Any, keys: list[str | int], value: Any) -> Any:
    if not keys:
        return value
    head, tail = keys[0], keys[1:]
    if isinstance(head, int):
        held = list(args) if isinstance(args, list) else []
        while len(held) <= head:
            held.append(None)
        held[head] = _put(held[head], tail, value)
        return held
    held_dict = dict(args) if isinstance(args, dict) else {}
    held_dict[head] = _put(held_dict.get(head), tail, value)
    return held_dict


def _gemini_expected(chunks: list[Json]) -> Json:
    """What the joined parts must hold: the text of each run of same-kind text, every signature
    in order, every function call whole (streamed arguments applied)."""
    texts: list[tuple[bool, str]] = []
    signatures: list[str] = []
    calls: list[Json] = []
    others: list[Json] = []
    streamed: list[Any] = []  # [name, args, id] of the call whose arguments are arriving
    path_text: dict[str, str] = {}
    for chunk in chunks:
        for candidate in chunk.get("candidates") or []:
            for part in (candidate.get("content") or {}).get("parts") or []:
                signature = next((part[k] for k in _SIGNATURE if k in part), None)
                if signature is not None:
                    signatures.append(signature)
                call = part.get("functionCall")
                if call is not None:
                    if call.get("willContinue") or call.get("partialArgs") or streamed:
                        if not streamed:
                            streamed[:] = [call.get("name"), {}, call.get("id")]
                        for piece in call.get("partialArgs") or []:
                            key = piece["jsonPath"]
                            if "stringValue" in piece:
                                path_text[key] = path_text.get(key, "") + piece["stringValue"]
                                value: Any = path_text[key]
                            else:
                                value = next(piece[k] for k in (
                                    "numberValue", "boolValue", "nullValue") if k in piece)
                                value = None if "nullValue" in piece else value
                            streamed[1] = _put(streamed[1], _path_keys(key), value)
                        if not call.get("willContinue"):
                            whole = {"name": streamed[0]}
                            if streamed[1]:
                                whole["args"] = streamed[1]
                            if streamed[2]:
                                whole["id"] = streamed[2]
                            calls.append(whole)
                            streamed.clear()
                            path_text.clear()
                    else:
                        calls.append(call)
                elif isinstance(part.get("text"), str):
                    kind = bool(part.get("thought"))
                    if texts and texts[-1][0] == kind:
                        texts[-1] = (kind, texts[-1][1] + part["text"])
                    elif part["text"]:
                        texts.append((kind, part["text"]))
                else:
                    others.append({k: v for k, v in part.items() if k not in _SIGNATURE})
    return {"texts": texts, "signatures": signatures, "calls": calls, "others": others}


def _gemini_got(body: Json) -> Json:
    parts = body["candidates"][0].get("content", {}).get("parts") or []
    texts: list[tuple[bool, str]] = []
    for part in parts:
        if isinstance(part.get("text"), str):
            kind = bool(part.get("thought"))
            if texts and texts[-1][0] == kind:
                texts[-1] = (kind, texts[-1][1] + part["text"])
            else:
                texts.append((kind, part["text"]))
    return {
        "texts": texts,
        "signatures": [p[k] for p in parts for k in _SIGNATURE if k in p],
        "calls": [p["functionCall"] for p in parts if "functionCall" in p],
        "others": [{k: v for k, v in p.items() if k not in _SIGNATURE}
                   for p in parts if "functionCall" not in p and "text" not in p],
    }


# -- the checks ----------------------------------------------------------------------------------


def _stored(gateway: GatewayType, push: Callable[[Context], None]) -> str:
    context = Context(gateway)
    push(context)
    return context.to_json()


def _check_final(gateway: GatewayType, data: Json, events: list[Json]) -> str | None:
    body = assemble(gateway, events)
    streamed = _stored(gateway, lambda c: c.push_stream(events))
    if "response" in data:
        if body != data["response"]:
            return "the assembled body differs from the recorded response"
        whole = _stored(gateway, lambda c: c.push_back(data["response"]))
    elif gateway is GatewayType.gemini:
        expected, got = _gemini_expected(events), _gemini_got(body)
        if expected != got:
            return f"joined parts differ from the oracle: {got} != {expected}"
        return None
    else:
        final = _sdk_final(gateway, events)
        whole = _without_nulls(_stored(gateway, lambda c: c.push_back(final)))
        streamed = _without_nulls(streamed)
        dumped = final.model_dump(mode="json", exclude_unset=True)
        keys = _COMPARED[gateway]
        ours = {k: _drop_nulls(body.get(k)) for k in keys}
        theirs = {k: _drop_nulls(dumped.get(k)) for k in keys}
        if gateway is GatewayType.openai:
            ours["choices"] = [c["message"] for c in ours["choices"]]
            theirs["choices"] = [
                {k: v for k, v in c["message"].items() if k != "parsed"} for c in theirs["choices"]
            ]
            for message in theirs["choices"]:
                for call in message.get("tool_calls") or []:
                    call.pop("index", None)
                    call.get("function", {}).pop("parsed_arguments", None)
        if ours != theirs:
            return f"the assembled body differs from the SDK's: {ours} != {theirs}"
    return None if streamed == whole else "stores something else than the final response"


_COMPARED = {
    GatewayType.openai: ("id", "model", "choices", "usage"),
    GatewayType.anthropic: (
        "id", "model", "content", "stop_reason", "usage", "context_management", "container"),
}
"""The body keys compared with the SDK accumulator's (the ones it fills from the stream)."""


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _without_nulls(stored: str) -> Any:
    """A stored Context without null members: the SDK accumulators set some fields the API
    leaves out (a compaction block's ``encrypted_content``), and a null means absent."""
    return _drop_nulls(json.loads(stored))


def _check_objects(gateway: GatewayType, events: list[Json]) -> str | None:
    objects = _sdk_events(gateway, events)
    raw = _stored(gateway, lambda c: c.push_stream(events))
    same = _stored(gateway, lambda c: c.push_stream(objects)) == raw
    return None if same else "the SDK's event objects store something else than the dicts"


def _refused(gateway: GatewayType, push: Callable[[Context], None], error: type) -> bool:
    context = Context(gateway)
    context.emplace_message(Message(role=Role.user, content="Hello."))
    before = context.to_json()
    try:
        push(context)
    except error:
        return context.to_json() == before
    return False


def _check_prefixes(gateway: GatewayType, events: list[Json]) -> str | None:
    last = len(events)
    while last > 0 and events[last - 1].get("type") == "ping":
        last -= 1
    for stop in range(last):
        prefix = events[:stop]
        if not _refused(gateway, lambda c, p=prefix: c.push_stream(p), IncompleteStreamError):
            return f"the first {stop} events are not refused"
    return None


def _check_alone(gateway: GatewayType, events: list[Json]) -> str | None:
    if gateway is GatewayType.gemini:
        return None
    for position, event in enumerate(events[:-1]):
        if not _refused(gateway, lambda c, e=event: c.push_back(e), StreamEventError):
            return f"event {position} pushed alone is not refused with StreamEventError"
    return None


CHECKS: dict[str, Callable[[GatewayType, Json, list[Json]], str | None]] = {
    "final": _check_final,
    "objects": lambda g, d, e: _check_objects(g, e),
    "prefixes": lambda g, d, e: _check_prefixes(g, e),
    "alone": lambda g, d, e: _check_alone(g, e),
}


def check(path: Path) -> list[str] | None:
    """The failures of one recording (empty: it passes), or None if it holds no stream."""
    data = json.loads(path.read_text(encoding="utf-8"))
    gateway = GatewayType(data["gateway"])
    if data.get("stream_event"):
        event = data["response"]
        ok = _refused(gateway, lambda c: c.push_back(event), StreamEventError)
        return [] if ok else ["alone: not refused with StreamEventError"]
    if "stream" not in data:
        return None
    failures = []
    for name, run in CHECKS.items():
        try:
            failure = run(gateway, data, data["stream"])
        except Exception as exc:  # noqa: BLE001 - every failure is reported, not raised
            failure = f"{type(exc).__name__}: {exc}"
        if failure is not None:
            failures.append(f"{name}: {failure[:300]}")
    return failures


def main(argv: list[str]) -> int:
    dirs = [Path(a) for a in argv] or DEFAULT_DIRS
    passed = failed = 0
    for directory in dirs:
        for path in sorted(directory.glob("*.json")):
            failures = check(path)
            if failures is None:
                continue
            label = f"{directory.name}/{path.name}"
            if failures:
                failed += 1
                sys.stdout.write(f"FAIL {label}\n" + "".join(f"     {f}\n" for f in failures))
            else:
                passed += 1
                sys.stdout.write(f"ok   {label}\n")
    sys.stdout.write(f"\n{passed} passed, {failed} failed, of {passed + failed} recordings\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

