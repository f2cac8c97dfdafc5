"""Prefix-cache accounting: reused tokens, cache-priced billing and the per-strategy totals.

Model of a provider prefix cache, applied to consecutive requests of one session:

* A request is a sequence of messages, each with its rendered text and token count.
* The reused prefix of a request is the longest run of leading messages identical (same rendered
  text) to the previous request's, counted in tokens. Granularity is the message: a message that
  differs anywhere is not reused at all, nor is anything after it. This is conservative for
  providers that cache at finer blocks, and identical for every strategy.
* Providers cache nothing shorter than :data:`MIN_CACHEABLE_TOKENS`: a shorter common prefix
  counts as zero reuse.
* Billing, in units of the base input price per token: reused tokens are cache reads
  (:data:`CACHE_READ_PRICE`), every other input token is written to the cache
  (:data:`CACHE_WRITE_PRICE`), as a request that marks its whole input as cacheable does.
* The physical limit: the tokens of a request that are new this turn (session content seen for the
  first time) can never be read from a cache, so no strategy can reuse more than
  ``1 - new / input``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "CACHE_READ_PRICE",
    "CACHE_WRITE_PRICE",
    "MIN_CACHEABLE_TOKENS",
    "REMINDER_MARK",
    "Request",
    "RequestMessage",
    "StrategyTotals",
    "TurnCost",
    "billed_cost",
    "cost_turns",
    "is_reminder",
    "reused_tokens",
    "shared_prefix_tokens",
    "totals",
]

MIN_CACHEABLE_TOKENS = 1_024
"""The shortest prefix a provider caches."""
CACHE_READ_PRICE = 0.1
"""Price of a cache-read token, as a multiple of the base input price."""
CACHE_WRITE_PRICE = 1.25
"""Price of a cache-written token (every input token that is not read), same unit."""


@dataclass(frozen=True, slots=True)
class RequestMessage:
    """One unit of a request (a message, or an Anthropic content block): its rendered text,
    its token count, and whether it carries a cache breakpoint (Anthropic only)."""

    text: str
    tokens: int
    breakpoint: bool = False


Request = tuple[RequestMessage, ...]
"""The messages of one request, in order."""


@dataclass(frozen=True, slots=True)
class TurnCost:
    """What one request costs."""

    input_tokens: int
    reused_tokens: int
    new_tokens: int
    billed: float
    reminder_tokens: int = 0
    """Tokens of the request's reminder units (see :func:`is_reminder`)."""
    reminder_billed: float = 0.0
    """The reminder units' share of :attr:`billed` (provider rules only)."""


REMINDER_MARK = "<reminder key="
"""How every strategy's reminder message begins (:func:`.strategy.reminder_message`)."""


def is_reminder(unit: RequestMessage) -> bool:
    """Whether ``unit`` is (part of) a reminder message."""
    return REMINDER_MARK in unit.text


@dataclass(frozen=True, slots=True)
class StrategyTotals:
    """Sums over a session, and the shares the report prints."""

    input_tokens: int
    reused_tokens: int
    new_tokens: int
    billed: float
    peak_tokens: int
    mean_tokens: float
    reminder_tokens: int = 0
    reminder_billed: float = 0.0

    @property
    def reuse_share(self) -> float:
        """Reused tokens over input tokens."""
        return self.reused_tokens / self.input_tokens if self.input_tokens else 0.0

    @property
    def new_share(self) -> float:
        """New tokens over input tokens: the part no cache can serve."""
        return self.new_tokens / self.input_tokens if self.input_tokens else 0.0

    @property
    def reuse_limit(self) -> float:
        """The physical limit of reuse: ``1 - new_share``."""
        return 1.0 - self.new_share


def shared_prefix_tokens(previous: Request, current: Request) -> int:
    """Tokens of the longest run of leading messages that ``current`` shares with ``previous``."""
    shared = 0
    for before, now in zip(previous, current, strict=False):
        if before.text != now.text:
            break
        shared += now.tokens
    return shared


def reused_tokens(previous: Request | None, current: Request) -> int:
    """The cache-read tokens of ``current``: its shared prefix, or 0 below the minimum."""
    if previous is None:
        return 0
    shared = shared_prefix_tokens(previous, current)
    return shared if shared >= MIN_CACHEABLE_TOKENS else 0


def billed_cost(input_tokens: int, reused: int) -> float:
    """Cache reads at the read price, everything else at the write price."""
    if not 0 <= reused <= input_tokens:
        raise ValueError(f"reused tokens {reused} outside 0..{input_tokens}")
    return reused * CACHE_READ_PRICE + (input_tokens - reused) * CACHE_WRITE_PRICE


def cost_turns(requests: Sequence[Request], new_tokens: Sequence[int]) -> list[TurnCost]:
    """The cost of each request of a session, given the new tokens each turn brings."""
    if len(requests) != len(new_tokens):
        raise ValueError(f"{len(requests)} requests but {len(new_tokens)} new-token counts")
    out: list[TurnCost] = []
    previous: Request | None = None
    for request, new in zip(requests, new_tokens, strict=True):
        size = sum(message.tokens for message in request)
        if new > size:
            raise ValueError(f"{new} new tokens in a request of {size}")
        reused = reused_tokens(previous, request)
        out.append(TurnCost(size, reused, new, billed_cost(size, reused)))
        previous = request
    return out


def totals(turns: Sequence[TurnCost]) -> StrategyTotals:
    """Session totals of :func:`cost_turns`' output."""
    sizes = [turn.input_tokens for turn in turns]
    return StrategyTotals(
        input_tokens=sum(sizes),
        reused_tokens=sum(turn.reused_tokens for turn in turns),
        new_tokens=sum(turn.new_tokens for turn in turns),
        billed=sum(turn.billed for turn in turns),
        peak_tokens=max(sizes, default=0),
        mean_tokens=sum(sizes) / len(sizes) if sizes else 0.0,
        reminder_tokens=sum(turn.reminder_tokens for turn in turns),
        reminder_billed=sum(turn.reminder_billed for turn in turns),
    )
