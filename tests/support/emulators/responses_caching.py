"""OpenAI Responses with GPT-5.6 explicit prompt caching, as the provider documents it.

:class:`CachingResponsesEmulator` is a :class:`ResponsesEmulator` (reasoning bound to its
prefix, unchanged) that also keeps a prompt cache by the rules of the SDK's
``PromptCacheOptions`` / ``PromptCacheBreakpoint`` documentation (openai-python, late 2026):

- ``prompt_cache_options`` (``mode`` ``"implicit"`` | ``"explicit"``, ``ttl`` ``"30m"`` |
  ``"12h"``) and ``prompt_cache_breakpoint`` (``{"mode": "explicit", "ttl"?}``, on an
  ``input_text`` / ``input_image`` / ``input_file`` part only) are "supported for gpt-5.6 and
  later models": on an older model either is a 400 (``Unsupported parameter``), as is an unknown
  mode or ttl, or a mark anywhere else.
- A breakpoint "marks the exact end of a reusable prompt prefix": the prefix is the tools, the
  text format and the instructions, then every input item up to and including the marked part
  (compared by meaning, as the reasoning rule compares: a string content is one text part; the
  marks themselves are not content, for the cache and for the reasoning rule alike: an item
  sent marked once and unmarked next time is the same prefix).
- One request writes at most four breakpoints: in ``explicit`` mode the latest four marked parts;
  in ``implicit`` mode (the default) one the emulator places at the end of the newest input
  message plus the latest three marked parts. Marks beyond that are not written (listed in
  ``ignored``). Written prefixes live for their ttl (the mark's, else the request's, else 30m)
  on :attr:`clock`.
- A request reads the longest live prefix written earlier (among the latest 80 written) that it
  starts with, at any position: no lookback limit. ``usage.input_tokens_details`` reports it as
  ``cached_tokens``, and as ``cache_write_tokens`` what the longest prefix it wrote adds beyond
  what it read (4 characters a token, the emulator's estimate, for every count).

Without either option, an older model's usage is the base emulator's (no cache). Streams get
the cache kept, but their usage is the base emulator's.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from tests.support.emulators._server import Answer, Reply, RequestRefused, canonical
from tests.support.emulators.openai_responses import ResponsesEmulator

__all__ = ["CacheReport", "CachingResponsesEmulator"]

_MARK = "prompt_cache_breakpoint"
_TTL_SECONDS = {"30m": 30 * 60, "12h": 12 * 3600}
_MODES = ("implicit", "explicit")
_PART_TYPES = ("input_text", "input_image", "input_file")
_LATEST = 80
_WRITES = 4
_DROP = frozenset({"id", "status", "annotations", "logprobs", _MARK})


@dataclass(frozen=True, slots=True)
class CacheReport:
    """What one accepted request did to the cache; positions are ``(input index, part)``."""

    request: int
    read_tokens: int
    write_tokens: int
    input_tokens: int
    written: tuple[tuple[int, int], ...]
    """The breakpoints written (the implicit one included), in request order."""
    written_tokens: tuple[int, ...]
    """The tokens of the prefix each written breakpoint ends."""
    ignored: tuple[tuple[int, int], ...]
    """Marked parts not written (more than the request may write)."""


@dataclass(slots=True)
class _Entry:
    tokens: int
    expires: float


@dataclass(frozen=True, slots=True)
class _Plan:
    digests: tuple[str, ...]
    tokens: tuple[int, ...]
    writes: tuple[tuple[tuple[int, int], int, float], ...]  # position, unit, ttl seconds
    ignored: tuple[tuple[int, int], ...]


def _new_enough(model: str) -> bool:
    """gpt-5.6 and later, by the name's version numbers (an independent reading)."""
    name = model.lower().split("/")[-1]
    found = re.match(r"gpt-(\d+)(?:\.(\d+))?", name)
    if not found:
        return False
    major, minor = int(found.group(1)), int(found.group(2) or "0")
    return major > 5 or (major == 5 and minor >= 6)


def _text_part(part: Any) -> Any:
    if isinstance(part, dict) and part.get("type") in ("input_text", "output_text"):
        return {"type": "text", "text": part.get("text")}
    return canonical(part, _DROP)


class CachingResponsesEmulator(ResponsesEmulator):
    """``POST /v1/responses`` with reasoning binding and the explicit prompt cache (module
    docstring). ``clock`` (seconds) decides ttl; ``reports`` holds one :class:`CacheReport` per
    accepted request that used the cache."""

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        default: Reply | None = None,
        clock: Callable[[], float] = time.monotonic,
        **options: Any,
    ) -> None:
        super().__init__(replies, default=default, **options)
        self.clock = clock
        self.reports: list[CacheReport] = []
        self._entries: dict[str, _Entry] = {}
        self._written: list[str] = []  # latest last

    def handle(self, method: str, path: str, headers: dict[str, str], body: Any) -> Answer:
        plan = None
        if method == "POST" and isinstance(body, dict) and "input" in body:
            plan = self._plan(body)
        answer = super().handle(method, path, headers, body)
        if plan is None:
            return answer
        report = self._apply(len(self.requests), plan)
        if isinstance(answer.body, dict) and answer.stream is None:
            answer.body["usage"]["input_tokens"] = report.input_tokens
            answer.body["usage"]["input_tokens_details"] = {
                "cached_tokens": report.read_tokens,
                "cache_write_tokens": report.write_tokens,
            }
        return answer

    def _elements(self, body: Mapping[str, Any], items: list[Any]) -> Iterator[tuple[str, Any]]:
        # the reasoning rule's prefix: marks are where a prefix ends, not content, on every
        # part (the base comparison already reads an input_text part by its text alone)
        yield from super()._elements(body, [canonical(item, frozenset({_MARK})) for item in items])

    # -- rules ---------------------------------------------------------------------------------

    def _plan(self, body: Mapping[str, Any]) -> _Plan | None:
        options = body.get("prompt_cache_options")
        given = body.get("input")
        items = (
            [{"role": "user", "content": given}] if isinstance(given, str) else list(given or ())
        )
        marks = list(self._marks(items))
        model = str(body.get("model", ""))
        if not _new_enough(model):
            if options is not None or marks:
                what = "prompt_cache_options" if options is not None else _MARK
                raise RequestRefused(
                    400, what, "unsupported_parameter",
                    f"Unsupported parameter: '{what}' is not supported with this model.",
                )
            return None
        if options is None:
            options = {}
        if not isinstance(options, dict):
            raise RequestRefused(400, "prompt_cache_options", "shape", "Invalid type.")
        mode = options.get("mode", "implicit")
        ttl = options.get("ttl", "30m")
        if mode not in _MODES:
            raise RequestRefused(
                400, "prompt_cache_options.mode", "mode", f"Invalid value: {mode!r}."
            )
        if ttl not in _TTL_SECONDS:
            raise RequestRefused(400, "prompt_cache_options.ttl", "ttl", f"Invalid value: {ttl!r}.")
        units, where = self._units(body, items)
        digests, tokens = [], []
        running = hashlib.sha256()
        total = 0
        for unit in units:
            text = json.dumps(unit, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
            running.update(text.encode())
            total += max(1, len(text) // 4)
            digests.append(running.copy().hexdigest())
            tokens.append(total)
        candidates: list[tuple[tuple[int, int], int, float]] = []
        for position, mark in marks:
            seconds = _TTL_SECONDS.get(mark.get("ttl", ttl))
            if mark.get("mode") != "explicit" or seconds is None:
                raise RequestRefused(400, f"input.{position[0]}", "mark", "Invalid breakpoint.")
            candidates.append((position, where[position], seconds))
        limit = _WRITES if mode == "explicit" else _WRITES - 1
        writes = candidates[-limit:] if candidates else []
        ignored = tuple(p for p, _, _ in candidates[: max(0, len(candidates) - limit)])
        if mode == "implicit":
            last = self._newest_message_end(items, where)
            if last is not None:
                writes = [*writes, (last, where[last], _TTL_SECONDS[ttl])]
        return _Plan(tuple(digests), tuple(tokens), tuple(writes), ignored)

    @staticmethod
    def _marks(items: list[Any]) -> Iterator[tuple[tuple[int, int], dict[str, Any]]]:
        for k, item in enumerate(items):
            if not isinstance(item, dict):
                continue
            if _MARK in item:
                raise RequestRefused(400, f"input.{k}", "mark", f"Unknown parameter: '{_MARK}'.")
            content = item.get("content") if "content" in item else item.get("output")
            if not isinstance(content, list):
                continue
            for j, part in enumerate(content):
                if not isinstance(part, dict) or _MARK not in part:
                    continue
                allowed = part.get("type") in _PART_TYPES and (
                    "content" not in item or item.get("role") in ("user", "system", "developer")
                )
                if not allowed:
                    raise RequestRefused(
                        400, f"input.{k}.{j}", "mark",
                        f"Unknown parameter: '{_MARK}' on a {part.get('type')} part.",
                    )
                yield (k, j), part[_MARK]

    @staticmethod
    def _units(
        body: Mapping[str, Any], items: list[Any]
    ) -> tuple[list[Any], dict[tuple[int, int], int]]:
        """The prompt as units in reading order, and the unit index of each content part."""
        text = body.get("text") or {}
        units: list[Any] = [
            canonical(body.get("tools") or [], _DROP),
            canonical(text.get("format") if isinstance(text, dict) else None),
            body.get("instructions"),
        ]
        where: dict[tuple[int, int], int] = {}
        for k, item in enumerate(items):
            if not isinstance(item, dict):
                units.append(item)
                continue
            key = "content" if "content" in item else "output"
            parts = item.get(key)
            if isinstance(parts, str) and key == "content":
                parts = [{"type": "input_text", "text": parts}]
            if not isinstance(parts, list):
                units.append(canonical(item, _DROP))
                continue
            head = {k2: v for k2, v in item.items() if k2 != key}
            units.append(canonical({"type": item.get("type", "message"), **head}, _DROP))
            for j, part in enumerate(parts):
                where[(k, j)] = len(units)
                units.append(_text_part(part))
        return units, where

    @staticmethod
    def _newest_message_end(
        items: list[Any], where: Mapping[tuple[int, int], int]
    ) -> tuple[int, int] | None:
        for k in range(len(items) - 1, -1, -1):
            item = items[k]
            if (
                isinstance(item, dict)
                and item.get("type", "message") == "message"
                and item.get("role") in ("user", "system", "developer")
            ):
                last = [p for p in where if p[0] == k]
                return max(last) if last else None
        return None

    def _apply(self, request: int, plan: _Plan) -> CacheReport:
        now = self.clock()
        for key in [d for d, entry in self._entries.items() if entry.expires <= now]:
            del self._entries[key]
            self._written.remove(key)
        considered = set(self._written[-_LATEST:])
        read = 0
        for digest, tokens in zip(plan.digests, plan.tokens, strict=True):
            if digest in considered:
                read = max(read, tokens)
        longest = 0
        for _, unit, seconds in plan.writes:
            digest = plan.digests[unit]
            entry = self._entries.get(digest)
            if entry is None:
                self._entries[digest] = _Entry(plan.tokens[unit], now + seconds)
            else:
                entry.expires = max(entry.expires, now + seconds)
                self._written.remove(digest)
            self._written.append(digest)
            longest = max(longest, plan.tokens[unit])
        report = CacheReport(
            request, read, max(0, longest - read), plan.tokens[-1] if plan.tokens else 0,
            tuple(p for p, _, _ in plan.writes), tuple(plan.tokens[u] for _, u, _ in plan.writes),
            plan.ignored,
        )
        self.reports.append(report)
        return report
