"""Choosing the split of one build that does not fit in full: estimate, plan, render, re-plan.

Each untrusted item's block cost, its cost as a summary entry and its pointer cost are measured
once per build (the extractive facts are kept for the summary itself). For a counter that only
divides the length (:func:`hydrangea.asof.counting.chars_per_token`) they are measured in
characters, which add up exactly; for any other counter in its tokens, scaled by how a sample
counts when joined as rendered, since rounding each piece up over-counts the pieces.
:func:`plan` turns the costs into a split; the split is rendered and the exact messages counted.
The room handed to :func:`plan` is then corrected by what the render showed, in both directions:
an overshoot shrinks it, unused room grows it (short of the whole difference), so an estimate
that erred either way does not cost shown or compacted items. The search keeps the best split
that fitted (fewest drops, then fewest compacted), brackets the room between what fitted and
what did not, stops once a fitting render leaves less than 1/256 of the budget unused, and
renders at most :data:`MAX_ATTEMPTS` splits.

A summarizer other than the built-in :class:`ExtractiveSummarizer` is priced at first as
extraction would be; after each of its summaries the plain items' entry estimates are rescaled by
the ratio it was seen to write at (:func:`hydrangea.asof.compaction.scaled_fact_costs`), so a
short summary leaves room to show or compact more rather than drop.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Generator, Sequence, Set
from dataclasses import dataclass
from datetime import UTC, datetime
from fractions import Fraction
from typing import Final, TypeVar

from hydrangea.asof.compaction import (
    COMPACTION_ORIGIN,
    Plan,
    carried_summary,
    make_summary_item,
    plan,
    scaled_fact_costs,
    summary_item,
)
from hydrangea.asof.counting import TokenCounter, chars_per_token
from hydrangea.asof.fence import CLOSE, NONCE_LENGTH, OPEN, fence, notice
from hydrangea.asof.items import ContextItem, ItemKind
from hydrangea.asof.layout import (
    SEPARATOR,
    block_body,
    block_key,
    data_text,
    with_nonce,
)
from hydrangea.asof.summary import (
    POINTERS_PREFIX,
    AsyncSummarizer,
    ExtractiveSummarizer,
    StructuredSummary,
    Summarizer,
    quoted,
)

__all__ = ["MAX_ATTEMPTS", "Candidate", "SplitSearch"]

MAX_ATTEMPTS: Final = 8
"""The most splits one build renders before it settles for the best that fitted."""

PLACEHOLDER_NONCE: Final = "0" * NONCE_LENGTH
"""Stands in for the nonce when a block is counted before the build's nonce is known."""

_RESCALE_TOLERANCE: Final = Fraction(1, 8)
_CLOSE_ENOUGH: Final = 256
_PROBE: Final = 256
_MIN = datetime.min.replace(tzinfo=UTC)
_T = TypeVar("_T")

Request = Generator[list[ContextItem], StructuredSummary, "Candidate | None"]
_Rendering = Generator[list[ContextItem], StructuredSummary, "Candidate"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """One rendered split: ``order[:drop]`` dropped, ``order[drop:compact]`` summarized into
    ``summary`` (whose sources are ``source_ids``), the rest shown; ``text`` is the data message
    (``None`` when no block is shown) and ``tokens`` the count of every message."""

    drop: int
    compact: int
    summary: ContextItem | None
    source_ids: tuple[str, ...]
    text: str | None
    tokens: int


class SplitSearch:
    """The search for one build. ``blocks`` are the untrusted items in rendered order,
    ``bodies`` their :func:`~hydrangea.asof.layout.block_body` renderings and ``labels`` their
    ``published`` labels; ``fixed`` is what the trusted messages take and ``full_tokens`` what
    showing everything takes (more than ``budget``). ``resolved`` holds the pointers of summary
    blocks that are found in the record store, the only ones a new summary carries (see
    :func:`~hydrangea.asof.compaction.summary_pointers`)."""

    __slots__ = ("_bodies", "_budget", "_chronological", "_count", "_extractive", "_facts",
                 "_fixed", "_measure", "_per", "_rank", "_taken", "blocks", "costs", "entries",
                 "order", "overhead", "plain", "pointers", "resolved", "seen")

    def __init__(
        self,
        *,
        counter: TokenCounter,
        summarizer: Summarizer | AsyncSummarizer,
        blocks: Sequence[ContextItem],
        bodies: Sequence[str],
        labels: Sequence[str],
        fixed: int,
        full_tokens: int,
        budget: int,
        taken: set[str],
        resolved: Set[str],
    ) -> None:
        self._count = counter.count
        # Estimates are in characters for a counter that only divides the length (rounding
        # once, as the rendered text is counted), else in the counter's tokens.
        per = chars_per_token(counter)
        self._per = 1 if per is None else per
        self._measure: Callable[[str], int] = counter.count if per is None else len
        self._budget = budget
        self._fixed = fixed
        self._taken = taken
        self.resolved = resolved
        self.blocks = blocks
        self._bodies = bodies
        oldest = _MIN
        importance = [(i.priority, i.published_at or oldest, i.item_id) for i in blocks]
        by_importance = sorted(range(len(blocks)), key=importance.__getitem__)
        self.order = [blocks[j] for j in by_importance]  # as importance_key sorts them
        self._rank = [0] * len(blocks)  # each block's place in that order
        for place, j in enumerate(by_importance):
            self._rank[j] = place
        # The built-in extractor's facts are reused by its summary; any other summarizer is
        # asked through the assembly's requests, and priced as extraction until observed.
        self._extractive: ExtractiveSummarizer | None = None
        if type(summarizer) is ExtractiveSummarizer:  # not a subclass that overrides fact()
            self._extractive = summarizer
        self._facts: list[str] = []  # by importance rank: the extracted fact, "" for a summary
        self._chronological: list[int] = []  # importance ranks in (published_at, id) order
        self.seen: dict[tuple[int, int], int] = {(0, 0): full_tokens}
        ordered = [bodies[j] for j in by_importance]
        self._estimate(ordered, max(labels, key=len, default="none"))

    def _estimate(self, ordered_bodies: Sequence[str], longest_label: str) -> None:
        """Per item in importance order: block cost, pointer cost, entry cost and whether it is
        plain (not a summary). Each is counted once; for subadditive counters (such as the
        default) their sums bound the rendered cost from above."""
        measure = self._measure
        separator = measure(SEPARATOR)
        extractor = self._extractive if self._extractive is not None else ExtractiveSummarizer()
        opening, closing = f"{OPEN}data nonce={PLACEHOLDER_NONCE}", f"{PLACEHOLDER_NONCE}{CLOSE}"
        order = self.order
        self.plain = [i.summary is None for i in order]
        if all(self.plain):
            found = extractor.facts(order)
        else:
            found = [extractor.fact(i) if i.summary is None else "" for i in order]
        self._facts = found
        # A summary entry reads "- fact" (continuation lines indented), one line each; a carried
        # summary brings its rendered text (with the pointers it may carry), whose pointers line
        # becomes the merged one.
        carried: list[StructuredSummary | None] = (
            [None] * len(order) if all(self.plain)
            else [carried_summary(i, self.resolved) for i in order]
        )
        if measure is len:  # characters: no string needs building to be measured
            extra = len(opening) + len(closing) + separator
            self.costs = [len(b) + extra for b in ordered_bodies]
            self.pointers = [  # len(quoted(item_id) + ", "), the call saved for plain ids
                len(x) + 4 if x.isprintable() and '"' not in x and "\\" not in x
                else len(quoted(x)) + 2
                for x in [i.item_id for i in order]
            ]
            if all(self.plain):
                self.entries = [len(f) + 3 + 2 * f.count("\n") for f in found]
            else:
                self.entries = [
                    len(f) + 3 + 2 * f.count("\n") if c is None else len(c.render())
                    for c, f in zip(carried, found, strict=True)
                ]
        else:
            self.costs = [c + separator for c in map(measure, [
                f"{opening}{b}{closing}" for b in ordered_bodies  # with_nonce(b, placeholder)
            ])]
            self.pointers = list(map(measure, [quoted(i.item_id) + ", " for i in order]))
            self.entries = list(map(measure, [
                "- " + f.replace("\n", "\n  ") + "\n" if c is None else c.render()
                for c, f in zip(carried, found, strict=True)
            ]))
        frame = fence(
            "",
            nonce=PLACEHOLDER_NONCE,
            item_id="summary-" + "0" * 19,
            origin=COMPACTION_ORIGIN,
            kind=ItemKind.summary.value,
            published=longest_label,
        )
        heading = f"summary of {len(order)} records\nfacts:\ndecisions:\nopen questions:\n"
        self.overhead = (
            measure(frame) + separator + measure(heading) + measure("pointers: []") + 2
        )
        if measure is not len:
            self._calibrate(ordered_bodies)

    def _calibrate(self, ordered_bodies: Sequence[str]) -> None:
        """Scale the block and pointer costs by how a sample of them counts when joined as
        rendered, against one by one: a counter that rounds each piece up over-counts pieces
        (and one that merges across joins under-counts them). Characters need no scaling."""
        measure, n = self._measure, len(ordered_bodies)
        sample = range(max(0, n - _PROBE), n)
        blocks = [with_nonce(ordered_bodies[p], PLACEHOLDER_NONCE) for p in sample]
        joined = measure(SEPARATOR.join(blocks) + SEPARATOR)
        apart = sum([self.costs[p] for p in sample])
        if joined > 0 and apart > 0:
            self.costs = [-(-c * joined // apart) for c in self.costs]
        ids = [quoted(self.order[p].item_id) for p in sample]
        joined = measure(", ".join(ids) + ", ")
        apart = sum([self.pointers[p] for p in sample])
        if joined > 0 and apart > 0:
            self.pointers = [-(-c * joined // apart) for c in self.pointers]

    def run(self) -> Request:
        """Yields the plain items to summarize (when the summarizer is not the built-in one),
        receives their summary, and returns the best split that fitted, if any."""
        budget, per = self._budget, self._per
        start = per * (budget - self._fixed) - self._measure(notice(PLACEHOLDER_NONCE))
        scale = self._probe()
        fact_costs = scaled_fact_costs(
            self.pointers, self.entries, self.plain, (scale.numerator, scale.denominator)
        )
        available = start
        low: int | None = None  # the most room known to give a fitting split
        high: int | None = None  # the least room known to give a split over budget
        best: Candidate | None = None
        renders = 0
        for _ in range(4 * MAX_ATTEMPTS):
            split = plan(self.costs, fact_costs, self.overhead, available)
            key = (split.drop, split.compact)
            tokens = self.seen.get(key)
            if tokens is None:
                if renders == MAX_ATTEMPTS:
                    break
                renders += 1
                candidate = yield from self._render(split)
                tokens = self.seen[key] = candidate.tokens
                if tokens <= budget and (best is None or key < (best.drop, best.compact)):
                    best = candidate
                observed = self._observed_scale(candidate)
                if observed is not None and abs(observed - scale) > _RESCALE_TOLERANCE * scale:
                    scale = observed  # re-price with what this summarizer really writes
                    fact_costs = scaled_fact_costs(
                        self.pointers, self.entries, self.plain,
                        (scale.numerator, scale.denominator),
                    )
                    available, low, high = start, None, None
                    continue
            if tokens <= budget:
                if (budget - tokens) * _CLOSE_ENOUGH <= budget or key == (0, 0):
                    break  # within 1/256 of the budget: another render would gain too little
                low = available if low is None else max(low, available)
            else:
                high = available if high is None else min(high, available)
            following = available + per * (budget - tokens)
            if tokens < budget:  # grow a little short of the room: estimates err both ways
                following = available + per * (budget - tokens) * 7 // 8
            if low is not None and high is not None:
                if high - low <= 1:
                    break
                if not low < following < high:
                    following = (low + high) // 2
            if following == available:
                break  # no room left to move: the split would not change
            available = following
        return best

    def _render(self, split: Plan) -> _Rendering:
        sources: list[ContextItem] = []
        summary: ContextItem | None = None
        if split.compact > split.drop:
            order, drop, compact = self.order, split.drop, split.compact
            if not self._chronological:  # sorted once per build, on the first summary
                when = [(i.published_at or _MIN, i.item_id) for i in order]
                self._chronological = sorted(range(len(order)), key=when.__getitem__)
            ranks = [p for p in self._chronological if drop <= p < compact]
            sources = [order[p] for p in ranks]
            if self._extractive is not None and all(self.plain[drop:compact]):
                # The facts are known and unique (each names its record), and so are the ids:
                # this is the summary make_summary_item would merge, built directly.
                facts = self._facts
                merged = StructuredSummary.model_construct(
                    facts=tuple([facts[p] for p in ranks]),
                    pointers=tuple([s.item_id for s in sources]),
                )
                summary = summary_item(sources, merged, self._taken)
            else:
                plain = [s for s in sources if s.summary is None]
                if not plain:
                    extracted = StructuredSummary()
                elif self._extractive is not None:
                    known = {s.item_id: self._facts[p] for p, s in zip(ranks, sources, strict=True)
                             if s.summary is None}
                    extracted = self._extractive.summarize_known(plain, known)
                else:
                    extracted = yield plain
                summary = make_summary_item(sources, extracted, self._taken, self.resolved)
        bodies = self._shown_bodies(split.compact, summary)
        text = data_text(bodies) if bodies else None
        tokens = self._fixed + (self._count(text) if text is not None else 0)
        return Candidate(
            split.drop, split.compact, summary, tuple([s.item_id for s in sources]), text, tokens
        )

    def _probe(self) -> Fraction:
        """How the built-in extractor's entries count once rendered together, against their
        estimate one by one: a summary of the last :data:`_PROBE` plain items is rendered and
        its entries measured (a counter that rounds each piece up over-counts them). ``1`` for
        other summarizers, and when counting characters (nothing to correct)."""
        plain = [p for p, is_plain in enumerate(self.plain) if is_plain]
        if self._extractive is None or not plain or self._measure is len:
            return Fraction(1)
        sample = plain[-_PROBE:]
        probe = StructuredSummary.model_construct(
            facts=tuple([self._facts[p] for p in sample]),
            pointers=tuple([self.order[p].item_id for p in sample]),
        )
        text = probe.render()
        cut = text.rfind("\n" + POINTERS_PREFIX)  # the entries lie between the heading line
        entries = text[text.find("\n") + 1 : cut] if cut > 0 else ""  # and the pointers line
        estimated = sum([self.entries[p] for p in sample])
        written = self._measure(entries) - self._measure("facts:\n")
        if written <= 0 or estimated <= 0:
            return Fraction(1)
        return min(Fraction(1), Fraction(written, estimated))

    def _observed_scale(self, candidate: Candidate) -> Fraction | None:
        """The ratio of what a custom summarizer wrote for the plain sources to what extraction
        was estimated to write, or ``None`` (built-in extractor, or no plain source)."""
        if self._extractive is not None or candidate.summary is None:
            return None
        span = range(candidate.drop, candidate.compact)
        plain_entries = sum(self.entries[i] for i in span if self.plain[i])
        if plain_entries == 0:
            return None
        measure = self._measure
        real = measure(with_nonce(block_body(candidate.summary), PLACEHOLDER_NONCE))
        real += measure(SEPARATOR)
        fixed = self.overhead + sum(
            self.pointers[i] + (0 if self.plain[i] else self.entries[i]) for i in span
        )
        return Fraction(max(0, real - fixed), plain_entries)

    def shown(self, candidate: Candidate) -> list[ContextItem]:
        """The untrusted items ``candidate`` shows, in rendered order."""
        summary = candidate.summary
        return _select(self._rank, self.blocks, candidate.compact,
                       None if summary is None else (self._place(summary), summary))

    def _shown_bodies(self, compact: int, summary: ContextItem | None) -> list[str]:
        return _select(self._rank, self._bodies, compact,
                       None if summary is None else (self._place(summary), block_body(summary)))

    def _place(self, summary: ContextItem) -> int:
        """Where the summary goes among the blocks (its id is new, so its key is too)."""
        return bisect_left(self.blocks, block_key(summary), key=block_key)


def _select(
    rank: Sequence[int], values: Sequence[_T], compact: int, inserted: tuple[int, _T] | None
) -> list[_T]:
    """``values`` (aligned with the blocks) of the items shown in full, that is of importance
    rank ``compact`` or more, with ``inserted[1]`` placed before block ``inserted[0]``."""
    if inserted is None:
        return [v for r, v in zip(rank, values, strict=True) if r >= compact]
    at, value = inserted
    return [
        *(v for r, v in zip(rank[:at], values[:at], strict=True) if r >= compact),
        value,
        *(v for r, v in zip(rank[at:], values[at:], strict=True) if r >= compact),
    ]
