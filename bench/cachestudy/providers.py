"""Each provider's documented prompt-cache rules, applied to the requests of one session.

A request is a sequence of units (messages; for Anthropic, content blocks) with their token
counts. Every rule reads the longest prefix of whole units that an earlier request of the
session left in the cache (turns are assumed to come within the cache's lifetime), so the
granularity is the unit for every strategy alike.

* :class:`AnthropicRules` -- only what a ``cache_control`` breakpoint marks is cached; a request
  carries at most 4; each breakpoint finds an entry written by an earlier request at one of its
  breakpoints only among the 20 blocks ending at it; nothing under the model's minimum (1,024
  tokens for Sonnet 4.5) is cached. Tokens read cost 0.1x, tokens written (from the read point
  to the last breakpoint) 1.25x (5-minute TTL; 2x for 1 hour), the rest 1x.
  (platform.claude.com/docs/en/build-with-claude/prompt-caching)
* :class:`OpenAIRules` -- automatic: every prompt of 1,024 tokens or more is cached; a hit covers
  the longest cached prefix, counted in steps of 128 tokens from 1,024. Reads cost 0.1x (the
  discount of current models), writes 1x. (developers.openai.com/api/docs/guides/prompt-caching)
* :class:`GeminiRules` -- implicit caching of Gemini 2.5 and newer: automatic above the model's
  minimum (1,024 for 2.5 Flash, 4,096 for 2.5 Pro), 90% off cached tokens, no write premium.
  (ai.google.dev/gemini-api/docs/caching; Vertex AI context-cache overview)

Each rules object also says what the provider does with reasoning whose prefix changed
(``binding``, see :mod:`.binding`): Anthropic rejects the request, OpenAI drops the reasoning,
Gemini checks no prefix. :func:`unit_costs` splits a request's bill over its units, so that the
reminders' own share of it can be reported.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from .accounting import Request, TurnCost, is_reminder
from .binding import Binding

__all__ = [
    "AnthropicRules",
    "GeminiRules",
    "OpenAIRules",
    "ProviderRules",
    "cost_turns_with",
    "prefix_hashes",
    "unit_costs",
]


def prefix_hashes(request: Request) -> tuple[list[bytes], list[int]]:
    """For each unit: a hash of the request up to and including it, and the tokens so far."""
    hashes: list[bytes] = []
    totals: list[int] = []
    running = hashlib.sha256()
    count = 0
    for unit in request:
        running.update(len(unit.text).to_bytes(8, "big") + unit.text.encode())
        hashes.append(running.copy().digest())
        count += unit.tokens
        totals.append(count)
    return hashes, totals


class ProviderRules(Protocol):
    """One provider's cache: feed it the session's requests in order."""

    name: str
    binding: Binding
    read_price: float
    write_price: float

    def reset(self) -> None:
        """Forget everything cached (a new session)."""
        ...

    def cost(self, request: Request) -> tuple[int, int, float]:
        """Tokens read from the cache, tokens written to it, and the billed cost (base-price
        input tokens) of ``request``; remembers what it caches."""
        ...


@dataclass(slots=True)
class AnthropicRules:
    """Explicit breakpoints, 4 at most, 20-block lookback, per-model minimum, 1.25x/0.1x."""

    name: str = "anthropic"
    min_tokens: int = 1_024
    lookback: int = 20
    max_breakpoints: int = 4
    read_price: float = 0.1
    write_price: float = 1.25
    binding: Binding = Binding.reject
    _store: set[bytes] | None = None

    def reset(self) -> None:
        self._store = set()

    def cost(self, request: Request) -> tuple[int, int, float]:
        store = self._store if self._store is not None else set()
        self._store = store
        hashes, totals = prefix_hashes(request)
        points = [n for n, unit in enumerate(request) if unit.breakpoint]
        if len(points) > self.max_breakpoints:
            raise ValueError(f"{len(points)} breakpoints in one request")
        read = 0
        for point in points:
            for back in range(point, max(point - self.lookback, -1), -1):
                if hashes[back] in store:
                    read = max(read, totals[back])
                    break
        written = 0
        if points and totals[points[-1]] >= self.min_tokens:
            written = max(totals[points[-1]] - read, 0)
            store.update(hashes[p] for p in points if totals[p] >= self.min_tokens)
        size = totals[-1] if totals else 0
        billed = read * self.read_price + written * self.write_price + (size - read - written)
        return read, written, billed


@dataclass(slots=True)
class OpenAIRules:
    """Automatic prefix cache from 1,024 tokens in 128-token steps; 0.1x reads, 1x writes."""

    name: str = "openai"
    min_tokens: int = 1_024
    step: int = 128
    read_price: float = 0.1
    write_price: float = 1.0
    binding: Binding = Binding.drop
    _store: set[bytes] | None = None

    def reset(self) -> None:
        self._store = set()

    def cost(self, request: Request) -> tuple[int, int, float]:
        store = self._store if self._store is not None else set()
        self._store = store
        hashes, totals = prefix_hashes(request)
        shared = 0
        for digest, total in zip(hashes, totals, strict=True):
            if digest not in store:
                break
            shared = total
        read = 0
        if shared >= self.min_tokens:
            read = self.min_tokens + (shared - self.min_tokens) // self.step * self.step
        size = totals[-1] if totals else 0
        if size >= self.min_tokens:
            store.update(hashes)
        return read, size - read, read * self.read_price + (size - read) * self.write_price


@dataclass(slots=True)
class GeminiRules:
    """Implicit prefix cache above the model's minimum; 90% off reads, no write premium."""

    name: str = "gemini"
    min_tokens: int = 1_024
    read_price: float = 0.1
    write_price: float = 1.0
    binding: Binding = Binding.none
    _store: set[bytes] | None = None

    def reset(self) -> None:
        self._store = set()

    def cost(self, request: Request) -> tuple[int, int, float]:
        store = self._store if self._store is not None else set()
        self._store = store
        hashes, totals = prefix_hashes(request)
        shared = 0
        for digest, total in zip(hashes, totals, strict=True):
            if digest not in store:
                break
            shared = total
        read = shared if shared >= self.min_tokens else 0
        size = totals[-1] if totals else 0
        if size >= self.min_tokens:
            store.update(hashes)
        return read, size - read, read * self.read_price + (size - read) * self.write_price


def unit_costs(rules: ProviderRules, request: Request, read: int, written: int) -> list[float]:
    """The bill of ``request`` split over its units: its first ``read`` tokens at the read
    price, the next ``written`` at the write price, the rest at the base price (1x); a unit
    that straddles a boundary is split by tokens. The sum is the request's billed cost."""
    out: list[float] = []
    start = 0
    for unit in request:
        end = start + unit.tokens
        reads = max(0, min(end, read) - start)
        writes = max(0, min(end, read + written) - max(start, read))
        rest = unit.tokens - reads - writes
        out.append(reads * rules.read_price + writes * rules.write_price + rest)
        start = end
    return out


def cost_turns_with(
    rules: ProviderRules, requests: Sequence[Request], new_tokens: Sequence[int]
) -> list[TurnCost]:
    """The cost of each request of a session under ``rules``.

    A turn's new tokens (counted on its messages rendered alone) may exceed its request: a
    checkpoint inside a tool loop summarizes the exchange that just arrived before it is sent.
    They are clamped to the request's size: at most all of it is new.
    """
    if len(requests) != len(new_tokens):
        raise ValueError(f"{len(requests)} requests but {len(new_tokens)} new-token counts")
    rules.reset()
    out: list[TurnCost] = []
    for request, new in zip(requests, new_tokens, strict=True):
        size = sum(unit.tokens for unit in request)
        if new < 0:
            raise ValueError(f"{new} new tokens in a request of {size}")
        fresh = min(new, size)
        read, written, billed = rules.cost(request)
        shares = unit_costs(rules, request, read, written)
        marked = [n for n, unit in enumerate(request) if is_reminder(unit)]
        out.append(TurnCost(
            size, min(read, size - fresh), fresh, billed,
            sum(request[n].tokens for n in marked), sum(shares[n] for n in marked),
        ))
    return out
