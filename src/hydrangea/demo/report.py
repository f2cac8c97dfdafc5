"""The facts a demo run establishes, as plain frozen records with a JSON form.

The same report feeds the rich display and ``--json``; tests read the JSON.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, assert_never

from hydrangea.asof.counting import TokenCounter
from hydrangea.gateway import GatewayType

__all__ = [
    "CompactionFacts",
    "DemoReport",
    "Event",
    "FencedFacts",
    "ReasoningFacts",
    "RejectionFacts",
    "RequestFacts",
    "RetrievalFacts",
    "TurnFacts",
    "cache_order_text",
    "common_prefix_length",
]


def cache_order_text(gateway: GatewayType, kwargs: dict[str, Any]) -> str:
    """The request as one string, its parts in the order a provider's prefix cache reads them
    (system or instructions first, then the conversation), compact JSON."""
    match gateway:
        case GatewayType.openai:
            order = ["messages"]
        case GatewayType.openai_responses:
            order = ["instructions", "input"]
        case GatewayType.anthropic:
            order = ["system", "messages"]
        case GatewayType.gemini:
            order = ["config", "contents"]
        case _:
            assert_never(gateway)
    keys = [k for k in order if k in kwargs] + sorted(k for k in kwargs if k not in order)
    return json.dumps([[k, kwargs[k]] for k in keys], ensure_ascii=False, separators=(",", ":"))


def common_prefix_length(a: str, b: str) -> int:
    """Length of the longest common prefix of ``a`` and ``b``."""
    limit = min(len(a), len(b))
    low, high = 0, limit
    while low < high:  # binary search on slice equality: fast C comparisons
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def reuse(previous: str | None, current: str, counter: TokenCounter) -> tuple[int, int]:
    """``(tokens of current, tokens of its longest common prefix with previous)``."""
    total = counter.count(current)
    if previous is None:
        return total, 0
    return total, counter.count(current[: common_prefix_length(previous, current)])


@dataclass(frozen=True, slots=True)
class RequestFacts:
    """One request sent to the model."""

    index: int
    turn: int
    call: int
    tokens: int
    reused_tokens: int
    reuse_share: float
    items: int
    overlay: tuple[str, ...]
    body: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened to an area, a reminder or a document."""

    turn: int
    request: int | None
    kind: str
    subject: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class FencedFacts:
    """A fenced, untrusted block as found in the request (unfenced back to its text)."""

    item_id: str
    origin: str
    content: str
    raw: str
    """The block exactly as it stands in the request: header line, escaped text, end line."""


@dataclass(frozen=True, slots=True)
class RejectionFacts:
    """A document the as-of builder refused (a hash, never the content)."""

    item_id: str
    reason: str
    published_at: str | None
    as_of: str
    content_sha256: str


@dataclass(frozen=True, slots=True)
class RetrievalFacts:
    """One as-of build and where it went."""

    turn: int
    as_of: str
    token_budget: int
    tokens: int
    request: int
    fenced: tuple[FencedFacts, ...]
    rejections: tuple[RejectionFacts, ...]


@dataclass(frozen=True, slots=True)
class CompactionFacts:
    """One checkpoint: the summary, its pointers' records, and what the collector did."""

    checkpoint_turn: int
    segment: int
    tokens_at_checkpoint: int
    threshold: int
    summary: dict[str, list[str]]
    summary_text: str
    records: dict[str, str]
    collected_at_request: int | None = None
    detached: int = 0
    promoted: int = 0
    reclaimed_areas: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ReasoningFacts:
    """Reasoning state a model output carried, and whether the next request sent it back."""

    request: int
    field: str
    value: str
    next_request: int | None
    sent_back_identical: bool | None
    reclaimed_by_checkpoint: bool


@dataclass(frozen=True, slots=True)
class TurnFacts:
    """One user turn: what was asked, what was answered, which requests it took."""

    turn: int
    user: str
    reply: str
    requests: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class DemoReport:
    """Everything a demo run shows."""

    gateway: str
    model: str
    live: bool
    as_of: str
    threshold_tokens: int
    system_prompt: str
    turns: tuple[TurnFacts, ...]
    requests: tuple[RequestFacts, ...]
    events: tuple[Event, ...]
    retrievals: tuple[RetrievalFacts, ...]
    compactions: tuple[CompactionFacts, ...]
    reasoning: tuple[ReasoningFacts, ...]
    outputs: tuple[Any, ...] = field(default=())
    final_context_items: int = 0
    reported_usage: dict[str, int] = field(default_factory=dict)
    """Token totals the provider reported for the session's responses (empty if none did):
    ``input_tokens``, ``output_tokens``, ``cache_read_tokens``, ``cache_write_tokens``."""
    loops: tuple[Any, ...] = field(default=())
    """Offline runs: this session and the naive loops side by side
    (:class:`~hydrangea.demo.naive.LoopCost`, the session first)."""

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        return asdict(self)

    def to_json(self) -> str:
        """The report as a JSON document."""
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=1)
