"""The :class:`ContextBuilder`: admit items as of a moment, then build messages within a budget.

Admission (:meth:`ContextBuilder.add`) checks, in this order: the item is dated if untrusted
(:class:`UndatedItemError`), not published after ``as_of`` (:class:`AsOfViolationError`; equal
is admitted), and its id is new (:class:`DuplicateItemError`). Every refusal is recorded as a
:class:`Rejection` first.

Building counts the trusted messages; if they alone exceed the budget it raises
:class:`ContextBudgetError`. Otherwise every untrusted block is rendered once (without its nonce)
and the full context counted: if it fits, it is the result, and nothing is compacted. If not,
the split between dropped, summarized and fully shown items is searched for (see
:mod:`hydrangea.asof.planning`): estimated from prefix sums, rendered, counted exactly, and
re-planned with the room corrected by the overshoot or the unused room. Should no split fit
within ``MAX_ATTEMPTS`` renders, every untrusted item is dropped (and listed in ``dropped``).
``BuiltContext.tokens`` is always the counter over the returned messages and never exceeds the
budget.

A summary item given to a build (one an earlier build made, or one the caller wrote) may be
compacted again; the new summary then carries only those of its pointers that lead to a record
in the record store as the build starts. The others (forged, or written against another store)
are left out with a warning on this module's logger; the summary item itself is stored and
pointed to by its own id, so nothing it said is lost.
"""

from __future__ import annotations

import logging
from collections.abc import Generator, Set
from datetime import datetime

from hydrangea.asof.compaction import unresolved_pointers
from hydrangea.asof.counting import ApproxTokenCounter, TokenCounter, chars_per_token
from hydrangea.asof.errors import (
    AsOfViolationError,
    ContextBudgetError,
    ContextError,
    DuplicateItemError,
    NaiveDatetimeError,
    SummarizerMismatchError,
    UndatedItemError,
)
from hydrangea.asof.items import ContextItem, Trust
from hydrangea.asof.layout import (
    assemble,
    block_bodies,
    data_length,
    data_text,
    in_block_order,
    split_trusted,
)
from hydrangea.asof.planning import MAX_ATTEMPTS, SplitSearch
from hydrangea.asof.records import InMemoryRecordStore, RecordStore, stored_ids
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
        untrusted = in_block_order([i for i in self._items if i.trust is Trust.UNTRUSTED])
        head, tail = split_trusted(trusted)
        fixed = sum(count(m.text) for m in assemble(head, None, tail))
        if fixed > budget:
            raise ContextBudgetError(
                f"the trusted content alone takes {fixed} tokens; the budget is {budget}"
            )
        labels, bodies = block_bodies(untrusted)  # each item rendered once per build
        per = chars_per_token(self._counter)
        full_text: str | None = None
        if per is not None and bodies:  # its length says whether it fits, unrendered
            full_tokens = fixed + -(-data_length(sum(map(len, bodies)), len(bodies)) // per)
            if full_tokens <= budget:
                full_text = data_text(bodies)
                full_tokens = fixed + count(full_text)  # the same, counted on the text
        else:
            full_text = data_text(bodies) if bodies else None
            full_tokens = fixed + (count(full_text) if full_text is not None else 0)
        if full_tokens <= budget:  # everything fits: nothing to plan, estimate or compact
            return BuiltContext(
                messages=assemble(head, full_text, tail),
                items=(*head, *untrusted, *tail),
                tokens=full_tokens,
                token_budget=budget,
                compactions=(),
                dropped=(),
                rejections=tuple(self._rejections),
            )
        search = SplitSearch(
            counter=self._counter, summarizer=self._summarizer, blocks=untrusted,
            bodies=bodies, labels=labels, fixed=fixed, full_tokens=full_tokens, budget=budget,
            taken=set(self._ids),
            resolved=stored_ids(self._records, [
                p for i in untrusted if i.summary is not None for p in i.summary.pointers
            ]),
        )
        best = yield from search.run()
        if best is None:
            logger.warning(
                "no split fitted after %d renders; dropping all %d untrusted items (listed in "
                "BuiltContext.dropped)", MAX_ATTEMPTS, len(search.order),
            )
            dropped, compacted = search.order, []
            messages, tokens = assemble(head, None, tail), fixed
            shown: tuple[ContextItem, ...] = (*head, *tail)
            compactions: tuple[Compaction, ...] = ()
        else:
            dropped = search.order[: best.drop]
            compacted = search.order[best.drop : best.compact]
            messages, tokens = assemble(head, best.text, tail), best.tokens
            shown = (*head, *search.shown(best), *tail)
            compactions = (
                () if best.summary is None else (Compaction(best.summary.item_id, best.source_ids),)
            )
            _warn_unresolved(compacted, search.resolved)
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


def _warn_unresolved(compacted: list[ContextItem], resolved: Set[str]) -> None:
    """Log the carried pointers the new summary left out because no record is stored under
    them (see the module documentation)."""
    missing = unresolved_pointers(compacted, resolved)
    if missing:
        holders = [i.item_id for i in compacted if i.summary is not None
                   and not all(p in resolved for p in i.summary.pointers)]
        logger.warning(
            "%d pointer(s) of summary item(s) %s name no stored record and are not carried "
            "into the new summary (the items themselves are stored and pointed to)",
            len(missing), ", ".join(repr(h) for h in holders[:5])
            + (f" and {len(holders) - 5} more" if len(holders) > 5 else ""),
        )


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
