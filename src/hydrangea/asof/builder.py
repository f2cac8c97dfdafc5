"""The :class:`ContextBuilder`: admit items as of a moment, then build messages within a budget.

Admission (:meth:`ContextBuilder.add`) checks, in this order: the item is dated if untrusted
(:class:`UndatedItemError`), not published after ``as_of`` (:class:`AsOfViolationError`; equal
is admitted), and its id is new (:class:`DuplicateItemError`). Every refusal is recorded as a
:class:`Rejection` first.

Building counts the trusted messages; if they alone exceed the budget it raises
:class:`ContextBudgetError`. Otherwise each untrusted block is counted once, the split between
dropped, summarized and fully shown items is chosen from prefix sums (see
:mod:`hydrangea.asof.compaction`), and the exact rendered messages are counted. Should the
estimate prove short (an exact tokenizer merging across joins, a wordy model summary), the
available room shrinks by the overshoot and the split is chosen again; after
``MAX_ATTEMPTS`` tries every untrusted item is dropped. ``BuiltContext.tokens`` is always the
counter over the returned messages and never exceeds the budget.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Generator, Sequence
from datetime import UTC, datetime
from typing import Final

from hydrangea.asof.compaction import COMPACTION_ORIGIN, importance_key, make_summary_item, plan
from hydrangea.asof.counting import ApproxTokenCounter, TokenCounter
from hydrangea.asof.errors import (
    AsOfViolationError,
    ContextBudgetError,
    ContextError,
    DuplicateItemError,
    NaiveDatetimeError,
    SummarizerMismatchError,
    UndatedItemError,
)
from hydrangea.asof.fence import NONCE_LENGTH, fence, notice
from hydrangea.asof.items import ContextItem, ItemKind, Trust
from hydrangea.asof.layout import SEPARATOR, published_label, render_block, render_messages
from hydrangea.asof.records import InMemoryRecordStore, RecordStore
from hydrangea.asof.result import (
    BuiltContext,
    Compaction,
    Rejection,
    RejectionReason,
    content_sha256,
)
from hydrangea.asof.summary import (
    AsyncSummarizer,
    ExtractiveSummarizer,
    StructuredSummary,
    Summarizer,
)

__all__ = [
    "MAX_ATTEMPTS",
    "BuiltContext",
    "Compaction",
    "ContextBuilder",
    "Rejection",
    "RejectionReason",
]

logger = logging.getLogger(__name__)

MAX_ATTEMPTS: Final = 8
"""How many times a build re-plans after its estimate overshot the budget."""

_PLACEHOLDER_NONCE = "0" * NONCE_LENGTH
_Assembly = Generator[list[ContextItem], StructuredSummary, BuiltContext]


class ContextBuilder:
    """Assembles a prompt for a given ``as_of``.

    Rejects anything published after it, labels outside text untrusted and fences it, and
    compacts over-budget context into summaries that point to the full records. ``as_of`` must be
    timezone-aware. Not thread-safe; build from one thread (or task) at a time.
    """

    __slots__ = ("_as_of", "_budget", "_counter", "_ids", "_items", "_records", "_rejections",
                 "_summarizer")

    def __init__(
        self,
        *,
        as_of: datetime,
        token_budget: int,
        counter: TokenCounter | None = None,
        summarizer: Summarizer | AsyncSummarizer | None = None,
        records: RecordStore | None = None,
    ) -> None:
        if as_of.utcoffset() is None:
            raise NaiveDatetimeError(
                f"as_of {as_of.isoformat()} has no timezone; give an aware datetime"
            )
        if isinstance(token_budget, bool) or not isinstance(token_budget, int) or token_budget < 1:
            raise ContextBudgetError(f"token_budget must be a positive int, got {token_budget!r}")
        self._as_of = as_of
        self._budget = token_budget
        self._counter: TokenCounter = counter if counter is not None else ApproxTokenCounter()
        self._summarizer: Summarizer | AsyncSummarizer = (
            summarizer if summarizer is not None else ExtractiveSummarizer()
        )
        self._records: RecordStore = records if records is not None else InMemoryRecordStore()
        self._items: list[ContextItem] = []
        self._ids: set[str] = set()
        self._rejections: list[Rejection] = []

    @property
    def as_of(self) -> datetime:
        """Nothing published after this moment is admitted."""
        return self._as_of

    @property
    def token_budget(self) -> int:
        """The most tokens a build may use."""
        return self._budget

    @property
    def records(self) -> RecordStore:
        """Where compacted and dropped items are kept."""
        return self._records

    @property
    def items(self) -> tuple[ContextItem, ...]:
        """The admitted items, in the order they were added."""
        return tuple(self._items)

    @property
    def rejections(self) -> tuple[Rejection, ...]:
        """Every refusal so far, in order."""
        return tuple(self._rejections)

    def _refusal(self, item: ContextItem) -> tuple[RejectionReason, ContextError] | None:
        if item.published_at is None:
            if item.trust is Trust.UNTRUSTED:
                return RejectionReason.undated, UndatedItemError(
                    f"untrusted item {item.item_id!r} has no published_at, so it cannot be "
                    f"shown to predate as_of {self._as_of.isoformat()}"
                )
        elif item.published_at > self._as_of:
            return RejectionReason.published_after_as_of, AsOfViolationError(
                f"item {item.item_id!r} was published at {item.published_at.isoformat()}, "
                f"after as_of {self._as_of.isoformat()}"
            )
        if item.item_id in self._ids:
            return RejectionReason.duplicate_id, DuplicateItemError(
                f"an item with id {item.item_id!r} was already added"
            )
        return None

    def try_add(self, item: ContextItem) -> bool:
        """Like :meth:`add`, but returns False instead of raising on a refusal."""
        refusal = self._refusal(item)
        if refusal is not None:
            self._reject(item, refusal[0])
            return False
        self._items.append(item)
        self._ids.add(item.item_id)
        return True

    def add(self, item: ContextItem) -> None:
        """Admit ``item`` or raise. Every refusal is recorded first."""
        refusal = self._refusal(item)
        if refusal is not None:
            self._reject(item, refusal[0])
            raise refusal[1]
        self._items.append(item)
        self._ids.add(item.item_id)

    def _reject(self, item: ContextItem, reason: RejectionReason) -> None:
        logger.info("refused item %r: %s", item.item_id, reason.value)
        self._rejections.append(
            Rejection(
                item_id=item.item_id,
                reason=reason,
                origin=item.provenance.origin,
                published_at=item.published_at,
                as_of=self._as_of,
                content_sha256=content_sha256(item.content),
            )
        )

    def build(self) -> BuiltContext:
        """Messages within the budget, compacting with the (synchronous) summarizer."""
        summarizer = self._summarizer
        if not isinstance(summarizer, Summarizer):
            raise SummarizerMismatchError(
                f"{type(summarizer).__name__} has no summarize(); use abuild() instead"
            )
        assembly = self._assemble()
        try:
            request = next(assembly)
            while True:
                request = assembly.send(_checked(summarizer.summarize(request)))
        except StopIteration as finished:
            return _result(finished.value)

    async def abuild(self) -> BuiltContext:
        """Like :meth:`build`, awaiting ``asummarize`` when the summarizer has it."""
        summarizer = self._summarizer
        assembly = self._assemble()
        try:
            request = next(assembly)
            while True:
                if isinstance(summarizer, AsyncSummarizer):
                    summary = await summarizer.asummarize(request)
                else:
                    summary = summarizer.summarize(request)
                request = assembly.send(_checked(summary))
        except StopIteration as finished:
            return _result(finished.value)

    def _assemble(self) -> _Assembly:
        count = self._counter.count
        budget = self._budget
        trusted = [i for i in self._items if i.trust is Trust.TRUSTED]
        untrusted = [i for i in self._items if i.trust is Trust.UNTRUSTED]
        messages, shown = render_messages(trusted, ())
        fixed = sum(count(m.text) for m in messages)
        if fixed > budget:
            raise ContextBudgetError(
                f"the trusted content alone takes {fixed} tokens; the budget is {budget}"
            )
        order = sorted(untrusted, key=importance_key)
        costs, fact_costs, overhead = self._estimates(order)
        available = budget - fixed - count(notice(_PLACEHOLDER_NONCE))
        taken = set(self._ids)
        dropped: list[ContextItem] = order
        compacted: list[ContextItem] = []
        compactions: tuple[Compaction, ...] = ()
        tokens = fixed
        for attempt in range(MAX_ATTEMPTS):
            split = plan(costs, fact_costs, overhead, available)
            candidate_dropped = order[: split.drop]
            candidate_compacted = order[split.drop : split.compact]
            blocks = order[split.compact :]
            candidate_compactions: tuple[Compaction, ...] = ()
            if candidate_compacted:
                sources = sorted(candidate_compacted, key=_chronological)
                plain = [s for s in sources if s.summary is None]
                extracted = (yield plain) if plain else StructuredSummary()
                summary_item = make_summary_item(sources, extracted, taken)
                blocks = [*blocks, summary_item]
                candidate_compactions = (
                    Compaction(summary_item.item_id, tuple(s.item_id for s in sources)),
                )
            candidate_messages, candidate_shown = render_messages(trusted, blocks)
            candidate_tokens = sum(count(m.text) for m in candidate_messages)
            if candidate_tokens <= budget:
                messages, shown, tokens = candidate_messages, candidate_shown, candidate_tokens
                dropped, compacted = candidate_dropped, candidate_compacted
                compactions = candidate_compactions
                break
            logger.debug(
                "attempt %d rendered %d tokens over a budget of %d; re-planning",
                attempt, candidate_tokens, budget,
            )
            available -= candidate_tokens - budget
        else:
            logger.warning("no split fitted after %d attempts; dropping untrusted", MAX_ATTEMPTS)
        kept = (*dropped, *compacted)
        for item in kept:  # refuse a conflict before storing anything
            if item.item_id in self._records and self._records.get(item.item_id) != item:
                raise DuplicateItemError(
                    f"the record store holds a different record under {item.item_id!r}"
                )
        for item in kept:
            self._records.put(item)
        return BuiltContext(
            messages=messages,
            items=shown,
            tokens=tokens,
            token_budget=budget,
            compactions=compactions,
            dropped=tuple(i.item_id for i in dropped),
            rejections=tuple(self._rejections),
        )

    def _estimates(self, order: Sequence[ContextItem]) -> tuple[list[int], list[int], int]:
        """Per item: its block cost and its cost as a summary entry; plus the summary overhead.

        Each is counted once. For subadditive counters (such as the default) the sums bound the
        rendered cost from above.
        """
        count = self._counter.count
        separator = count(SEPARATOR)
        extractor = (
            self._summarizer
            if isinstance(self._summarizer, ExtractiveSummarizer)
            else ExtractiveSummarizer()
        )
        costs: list[int] = []
        fact_costs: list[int] = []
        for item in order:
            costs.append(count(render_block(item, _PLACEHOLDER_NONCE)) + separator)
            pointer = count(json.dumps(item.item_id, ensure_ascii=False) + ", ")
            if item.summary is not None:
                entry = count(item.summary.render())  # its pointers line becomes the merged one
            else:
                entry = count("- " + extractor.fact(item).replace("\n", "\n  ") + "\n")
            fact_costs.append(entry + pointer)
        latest = max(order, key=lambda i: len(published_label(i)), default=None)
        published = "none" if latest is None else published_label(latest)
        frame = fence(
            "",
            nonce=_PLACEHOLDER_NONCE,
            item_id="summary-" + "0" * 19,
            origin=COMPACTION_ORIGIN,
            kind=ItemKind.summary.value,
            published=published,
        )
        heading = f"summary of {len(order)} records\nfacts:\ndecisions:\nopen questions:\n"
        overhead = count(frame) + separator + count(heading) + count("pointers: []") + 2
        return costs, fact_costs, overhead


_MIN = datetime.min.replace(tzinfo=UTC)


def _chronological(item: ContextItem) -> tuple[datetime, str]:
    return (item.published_at or _MIN, item.item_id)


def _checked(summary: object) -> StructuredSummary:
    if not isinstance(summary, StructuredSummary):
        raise SummarizerMismatchError(
            f"a summarizer returned {type(summary).__name__}, not a StructuredSummary"
        )
    return summary


def _result(value: object) -> BuiltContext:
    if not isinstance(value, BuiltContext):  # pragma: no cover - the assembly returns one
        raise TypeError(f"assembly returned {type(value).__name__}")
    return value
