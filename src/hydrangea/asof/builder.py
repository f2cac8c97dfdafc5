"""The :class:`ContextBuilder`: admit items as of a moment, then build messages within a budget.

Admission (:meth:`ContextBuilder.add`) checks, in this order: the item is dated if untrusted
(:class:`UndatedItemError`), not published after ``as_of`` (:class:`AsOfViolationError`; equal
is admitted; compared in UTC, so a time in a DST fold is compared by the instant it names), and
its id is new (:class:`DuplicateItemError`). Every refusal is recorded as a :class:`Rejection`
first, and handed to ``on_rejection`` when one is given.

Building counts the trusted messages; if they alone exceed the budget it raises
:class:`ContextBudgetError`. The untrusted items are read once, in the order they were added
(:mod:`hydrangea.asof.columns`), each block rendered then (without its nonce); once the
trusted content is counted, each block is measured once. If everything fits, that is the
result, and nothing is compacted. If not, the
planner (:mod:`hydrangea.asof.planning`) walks one sequence of states from "everything in full"
to "everything counted by the index line", lower priorities first, and picks the first that
fits. Since the last state must fit, a budget that cannot hold the trusted content and the
index line together raises :class:`ContextBudgetError` too: the model always learns that
records exist. The items a build summarizes or leaves to the index line are stored in the record
store in the order they were added, then the summary. ``BuiltContext.tokens`` is always the
counter over the returned messages and never exceeds the budget.

A summary item given to a build (one an earlier build made, or one the caller wrote) may be
compacted again; the new summary then carries only those of its pointers that lead to a record
in the record store published no later than ``as_of``
(:func:`~hydrangea.asof.compaction.valid_pointers`) and name no admitted item (an admitted item
stands for itself). The others are left out with a warning on this module's logger; the summary
item itself is stored and pointed to by its own id.

A build reads the record store only for what the builder did not write: its refusals, the
pointers it carries and the plan depend on the items, the budget, the counter, the summarizer's
answers and the records stored before the first build, so building again (``build()`` or
``abuild()``, in any order) plans the same as a fresh builder over the same store.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Generator, Sequence
from datetime import datetime

from hydrangea.asof.columns import Columns, block_costs, moment
from hydrangea.asof.compaction import check_summary_pointers, valid_pointers
from hydrangea.asof.counting import ApproxTokenCounter, TokenCounter, chars_per_token
from hydrangea.asof.errors import (
    AsOfTypeError,
    AsOfViolationError,
    ContextBudgetError,
    ContextError,
    DuplicateItemError,
    NaiveDatetimeError,
    SummarizerMismatchError,
    UndatedItemError,
)
from hydrangea.asof.fence import (
    END_LENGTH,
    PLACEHOLDER_NONCE,
    SEPARATOR,
    end_line,
    notice,
)
from hydrangea.asof.items import ContextItem, Trust
from hydrangea.asof.layout import assemble, data_message, index_line, split_trusted, utc
from hydrangea.asof.planning import MAX_ATTEMPTS, Candidate, Planner, adds_up
from hydrangea.asof.records import InMemoryRecordStore, RecordStore
from hydrangea.asof.result import (
    BuiltContext,
    Compaction,
    Rejection,
    RejectionReason,
    content_sha256,
)
from hydrangea.asof.summarizers import AsyncSummarizer, ExtractiveSummarizer, Summarizer
from hydrangea.asof.summary import StructuredSummary
from hydrangea.message import Message
from hydrangea.tracing import AttributeValue, traced

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
_PLACEHOLDER_END = "0" * END_LENGTH


class ContextBuilder:
    """Assembles a prompt for a given ``as_of``.

    Rejects anything published after it, labels outside text untrusted and fences it, and
    compacts over-budget context into summaries that point to the full records. ``as_of`` must be
    a timezone-aware ``datetime``: a naive one raises :class:`NaiveDatetimeError`, anything else
    (an ISO string, a ``date``) :class:`~hydrangea.errors.AsOfTypeError`. Not thread-safe;
    build from one thread (or task) at a time.
    """

    __slots__ = ("_as_of", "_budget", "_counter", "_ids", "_items", "_on_rejection", "_records",
                 "_rejections", "_summarizer")

    def __init__(
        self,
        *,
        as_of: datetime,
        token_budget: int,
        counter: TokenCounter | None = None,
        summarizer: Summarizer | AsyncSummarizer | None = None,
        records: RecordStore | None = None,
        on_rejection: Callable[[Rejection], None] | None = None,
    ) -> None:
        """``on_rejection`` (keelgate.context's argument) is called with every refusal, right
        after it is recorded."""
        if not isinstance(as_of, datetime):
            raise AsOfTypeError(
                f"as_of must be a timezone-aware datetime, got {type(as_of).__name__} "
                f"{as_of!r}; write datetime(2026, 3, 1, tzinfo=UTC) or "
                "datetime.fromisoformat('2026-03-01T00:00:00+00:00')"
            )
        if as_of.utcoffset() is None:
            raise NaiveDatetimeError(
                f"as_of {as_of.isoformat()} has no timezone; give it one, such as "
                "as_of.replace(tzinfo=UTC) or datetime(..., tzinfo=UTC) (from datetime import UTC)"
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
        self._on_rejection = on_rejection

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
                return RejectionReason.UNDATED, UndatedItemError(
                    f"untrusted item {item.item_id!r} has no published_at, so it cannot be "
                    f"shown to predate as_of {self._as_of.isoformat()}"
                )
        elif utc(item.published_at) > utc(self._as_of):
            return RejectionReason.AS_OF_VIOLATION, AsOfViolationError(
                f"item {item.item_id!r} was published at {item.published_at.isoformat()}, "
                f"after as_of {self._as_of.isoformat()}"
            )
        if item.item_id in self._ids:
            return RejectionReason.DUPLICATE, DuplicateItemError(
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
        rejection = Rejection(
            item_id=item.item_id,
            reason=reason,
            origin=item.provenance.origin,
            published_at=item.published_at,
            as_of=self._as_of,
            content_sha256=content_sha256(item.content),
        )
        self._rejections.append(rejection)
        if self._on_rejection is not None:
            self._on_rejection(rejection)

    @traced("hydrangea.asof.build", after=lambda result, self: _build_attributes(result))
    def build(self) -> BuiltContext:
        """Messages within the budget, compacting with the (synchronous) summarizer."""
        summarizer = self._summarizer
        if not isinstance(summarizer, Summarizer) or inspect.iscoroutinefunction(
            summarizer.summarize
        ):
            raise SummarizerMismatchError(
                f"{type(summarizer).__name__} has no synchronous summarize(); build with "
                "`await builder.abuild()` instead"
            )
        assembly = self._assemble()
        try:
            request = next(assembly)
            while True:
                request = assembly.send(_checked(summarizer.summarize(request)))
        except StopIteration as finished:
            return _result(finished.value)

    @traced("hydrangea.asof.build", after=lambda result, self: _build_attributes(result))
    async def abuild(self) -> BuiltContext:
        """Like :meth:`build`, awaiting ``asummarize`` when the summarizer has it."""
        summarizer = self._summarizer
        assembly = self._assemble()
        try:
            request = next(assembly)
            while True:
                if isinstance(summarizer, AsyncSummarizer):
                    summary: object = await summarizer.asummarize(request)
                else:
                    summary = summarizer.summarize(request)
                    if inspect.isawaitable(summary):  # keelgate's protocol: async summarize
                        summary = await summary
                request = assembly.send(_checked(summary))
        except StopIteration as finished:
            return _result(finished.value)

    def _assemble(self) -> _Assembly:
        count = self._counter.count
        budget = self._budget
        trusted = [i for i in self._items if i.trust is Trust.TRUSTED]
        per = chars_per_token(self._counter)
        measure: Callable[[str], int] = count if per is None else len
        # Each item read once, in admission order, and rendered (see columns.py).
        columns = Columns.gather([i for i in self._items if i.trust is Trust.UNTRUSTED])
        carried = [columns.items[a] for a in columns.carried]
        check_summary_pointers(carried, self._records, self._as_of, self._ids)
        head, tail = split_trusted(trusted)
        fixed = sum(count(m.text) for m in assemble(head, None, tail))
        if fixed > budget:
            raise ContextBudgetError(
                f"the trusted content alone takes {fixed} tokens; the budget is {budget}"
            )
        if not columns.ids:
            return self._result(assemble(head, None, tail), fixed, (*head, *tail), None, ())
        costs = block_costs(columns.bodies, measure)  # once each
        fence_cost = measure(notice(PLACEHOLDER_NONCE, _PLACEHOLDER_END) + SEPARATOR)
        fence_cost += measure(end_line(_PLACEHOLDER_END))
        estimate = sum(costs) + fence_cost
        room = budget - fixed
        if estimate <= (room if per is None else room * per):
            text = data_message([columns.bodies[a] for a in columns.blocks], None)
            assert text is not None  # there are bodies
            # o200k counts the pieces as measured: no second pass over the whole text
            tokens = fixed + (estimate if adds_up(self._counter) else count(text))
            if tokens <= budget:  # everything fits: nothing to plan or compact
                shown = (*head, *[columns.items[a] for a in columns.blocks], *tail)
                return self._result(assemble(head, text, tail), tokens, shown, None, ())
        least = index_line(
            len(columns.ids), moment(min(columns.stamps)), moment(max(columns.stamps))
        )
        least_tokens = fixed + count(least)
        if least_tokens > budget:
            raise ContextBudgetError(
                f"the trusted content and the line saying that {len(columns.ids)} records exist "
                f"take {least_tokens} tokens together; the budget is {budget}"
            )
        valid = valid_pointers(carried, self._records, self._as_of, self._ids)
        planner = Planner(
            counter=self._counter, summarizer=self._summarizer, columns=columns, costs=costs,
            fixed=fixed, budget=budget, taken=set(self._ids), records=self._records, valid=valid,
        )
        best = yield from planner.run(room)
        _warn_invalid(carried, valid, self._ids)
        summary = best.summary
        self._store(columns, planner.rank, best)
        compactions = () if summary is None else (Compaction(summary.item_id, best.source_ids),)
        return self._result(
            assemble(head, best.text, tail), best.tokens, (*head, *best.shown, *tail),
            compactions, tuple(map(columns.ids.__getitem__, best.indexed)),
        )

    def _store(self, columns: Columns, rank: Sequence[int], best: Candidate) -> None:
        """Put the items ``best`` summarized or indexed in the record store, in admission order
        (read along memory), then its summary; store nothing if any conflicts with a stored
        record (:class:`DuplicateItemError` names the first conflicting summarized item in
        importance order, else the first indexed one, else the summary). ``rank``: each
        position's importance place."""
        kept_at = [a for a, place in enumerate(rank) if place < best.full_from]
        kept = list(map(columns.items.__getitem__, kept_at))
        records = self._records
        conflicts = []
        for a, item in zip(kept_at, kept, strict=True):
            held = records.get(columns.ids[a])
            if held is not None and held != item:
                conflicts.append(a)
        if conflicts:
            indexed = len(best.indexed)
            first = min(conflicts, key=lambda a: (rank[a] < indexed, rank[a]))
            raise DuplicateItemError(
                f"the record store holds a different record under {columns.ids[first]!r}"
            )
        summary = best.summary
        if summary is not None:
            held = records.get(summary.item_id)
            if held is not None and held != summary:
                raise DuplicateItemError(
                    f"the record store holds a different record under {summary.item_id!r}"
                )
            kept.append(summary)
        for item in kept:
            records.put(item)

    def _result(
        self, messages: tuple[Message, ...], tokens: int, shown: Sequence[ContextItem],
        compactions: tuple[Compaction, ...] | None, dropped: tuple[str, ...],
    ) -> BuiltContext:
        return BuiltContext(
            messages=messages,
            items=tuple(shown),
            tokens=tokens,
            token_budget=self._budget,
            compactions=compactions or (),
            dropped=dropped,
            rejections=tuple(self._rejections),
        )


def _build_attributes(result: BuiltContext) -> dict[str, AttributeValue | None]:
    return {
        "hydrangea.tokens": result.tokens,
        "hydrangea.token_budget": result.token_budget,
        "hydrangea.items": len(result.items),
        "hydrangea.compactions": len(result.compactions),
        "hydrangea.items.dropped": len(result.dropped),
        "hydrangea.rejections": len(result.rejections),
    }


def _warn_invalid(items: Sequence[ContextItem], valid: frozenset[str], admitted: set[str]) -> None:
    """Log the carried pointers a new summary left out (see the module documentation); a
    pointer to an admitted item is not one (the item stands for itself)."""
    holders = [i.item_id for i in items if i.summary is not None
               and not all(p in valid or p in admitted for p in i.summary.pointers)]
    if holders:
        logger.warning(
            "summary item(s) %s carry pointers to no stored record, or to records published "
            "after as_of; those pointers are not carried (the items themselves are stored and "
            "pointed to)", ", ".join(repr(h) for h in holders[:5])
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
