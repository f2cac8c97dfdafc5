"""Choosing what a build that does not fit in full shows: one ordered sequence of degradations.

The untrusted items are ranked least important first (priority, then age in UTC, then id),
which groups them into priority classes. The planner reads them through their
:class:`~hydrangea.asof.columns.Columns` (one pass over the items, in admission order), never
item by item in sorted order. Each item can be shown at one of five levels, from most to least
room:

``FULL``  its fenced block;   ``NOTE``  a summary entry with its note (its first sentence);
``SHORT`` an entry with the note shortened (:data:`~hydrangea.asof.summary.SHORT_NOTE`);
``POINTER`` its id alone on the summary's ``also:`` line;  ``INDEX`` counted by the index line.

A *state* says the level of every item. The states form one sequence, each a step further from
showing everything: the lowest priority class first compacts its items into notes (oldest
first), then shortens those notes, then cuts them to the pointer, and only then does the next
class up start; once every item is a pointer, the least important pointers give way to the
index line, one by one. So priority decides what is shown in full first and compacted last,
entries are shortened step by step down to the pointer before any item is left unnamed, and
what must still be left out is covered by the index line
(:func:`~hydrangea.asof.layout.index_line`).

Costs are measured once per build and per item: the block, each entry form and the pointer
(in characters for :class:`~hydrangea.asof.counting.ApproxTokenCounter`, where they add up
exactly; in the counter's tokens otherwise, where o200k's also add up at the pieces' boundaries,
see :mod:`hydrangea.asof.fence`). The text formats are never re-derived here: the fence, summary
and layout modules render the pieces that are measured. A state's estimated cost is a few prefix
sums, so the first state that fits is found by a binary search per stage. The search then
renders it and counts the exact messages, and corrects its room by what the count showed in
both directions; it keeps the earliest state known to fit, brackets the answer between a state
known to overflow and one known to fit, stops once a fitting render leaves less than 1/256 of
the budget unused, and renders at most :data:`MAX_ATTEMPTS` states. No item is left to the
index line unless the state of bare pointers was rendered and overflowed (its estimate may be
off). The last state (every item counted by the index line) is known to fit before the search
starts, so a build never comes out empty when any state fits.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Generator, Sequence, Set
from dataclasses import dataclass
from enum import IntEnum
from fractions import Fraction
from typing import Final

from hydrangea.asof.columns import Columns, moment
from hydrangea.asof.compaction import COMPACTION_ORIGIN, summary_item
from hydrangea.asof.counting import TokenCounter, chars_per_token
from hydrangea.asof.fence import (
    END_LENGTH,
    MARK,
    PLACEHOLDER_NONCE,
    SEPARATOR,
    end_line,
    escape_content,
    fence_body,
    notice,
    published_label,
)
from hydrangea.asof.items import ContextItem, ItemKind
from hydrangea.asof.layout import block_body, block_key, data_message, index_line
from hydrangea.asof.records import RecordStore
from hydrangea.asof.summarizers import AsyncSummarizer, ExtractiveSummarizer, Summarizer
from hydrangea.asof.summary import (
    SHORT_NOTE,
    StructuredSummary,
    entry_line,
    heading,
    pointer_word,
    shorten,
    summary_overhead,
)
from hydrangea.asof.tokenizers import OpenAITokenCounter
from hydrangea.tracing import span

__all__ = ["MAX_ATTEMPTS", "Candidate", "Level", "Planner", "adds_up"]

MAX_ATTEMPTS: Final = 8
"""The most states one build renders before it settles for the best that fitted."""

_CLOSE_ENOUGH: Final = 256
_PLACEHOLDER_END: Final = "0" * END_LENGTH

Request = Generator[list[ContextItem], StructuredSummary, "Candidate"]


def adds_up(counter: TokenCounter) -> bool:
    """Whether ``counter`` counts a data message exactly as the sum of its pieces
    (:func:`~hydrangea.asof.fence.data_pieces`), and a block the same with the placeholder
    nonce: true of the exact OpenAI counter (o200k and cl100k split text before a line that
    follows a newline, and every 12-digit nonce is four tokens; ``tests/test_asof_properties.py``
    checks both on adversarial text), so a build counts each block once and never the whole
    message again. Any other counter is counted on the whole text."""
    return type(counter) is OpenAITokenCounter


class Level(IntEnum):
    """How an item is shown, from the most room to the least."""

    FULL = 4
    NOTE = 3
    SHORT = 2
    POINTER = 1
    INDEX = 0


@dataclass(frozen=True, slots=True)
class Candidate:
    """One rendered state: the summary item (``None`` when nothing is summarized), the ids it
    replaced (``source_ids``, in its pointers' order), the positions of the items only the
    index line covers (``indexed``, least important first; see
    :class:`~hydrangea.asof.columns.Columns`), the importance place from which items are shown
    in full (``full_from``: those before it are summarized or indexed), the shown untrusted
    items in rendered order, the data message text and the exact token count of the whole
    request."""

    state: int
    summary: ContextItem | None
    source_ids: tuple[str, ...]
    indexed: list[int]
    full_from: int
    shown: tuple[ContextItem, ...]
    text: str | None
    tokens: int


@dataclass(frozen=True, slots=True)
class _Stage:
    start: int  # first importance position of the class
    stop: int  # one past its last
    upper: Level  # the level its degraded items leave
    lower: Level  # the level they reach


class Planner:
    """Plans and renders one build that does not fit in full (see the module documentation)."""

    __slots__ = (
        "_additive",
        "_budget",
        "_columns",
        "_costs",
        "_count",
        "_extractive",
        "_fixed",
        "_measure",
        "_notes",
        "_per",
        "_prefix",
        "_records",
        "_sections",
        "_seen",
        "_stages",
        "_taken",
        "_valid",
        "order",
        "overhead",
        "rank",
        "scale",
        "states",
    )

    def __init__(
        self,
        *,
        counter: TokenCounter,
        summarizer: Summarizer | AsyncSummarizer,
        columns: Columns,
        costs: Sequence[int],
        fixed: int,
        budget: int,
        taken: Set[str],
        records: RecordStore,
        valid: Set[str],
    ) -> None:
        self._count = counter.count
        self._additive = adds_up(counter)
        per = chars_per_token(counter)
        self._per: Fraction = Fraction(1) if per is None else per
        self._measure: Callable[[str], int] = counter.count if per is None else len
        self._budget, self._fixed = budget, fixed
        self._taken, self._records, self._valid = taken, records, valid
        self._columns = columns
        self.order = columns.importance  # the positions, least important first
        self.rank = [0] * len(self.order)  # each position's place in that order
        for place, position in enumerate(self.order):
            self.rank[position] = place
        self._extractive = summarizer if type(summarizer) is ExtractiveSummarizer else None
        extractor = self._extractive or ExtractiveSummarizer()
        self._notes = [  # by position, like every column
            extractor.note(item) if carried is None else ""
            for item, carried in zip(columns.items, columns.summaries, strict=True)
        ]
        self.scale = Fraction(1)  # a custom summarizer's writing, against extraction's
        self._seen: dict[int, Candidate] = {}
        self._measure_costs(list(map(costs.__getitem__, self.order)))  # blocks, by position
        self._stages = self._make_stages()
        # the last state: every item indexed
        self.states = sum(s.stop - s.start for s in self._stages) + len(self.order)

    # ------------------------------------------------------------------ costs

    def _entry_costs(
        self, item_id: str, carried: StructuredSummary | None, note: str
    ) -> tuple[int, int, int]:
        """NOTE, SHORT and POINTER cost of one item (``carried``: the summary it carries,
        ``note``: its extracted note)."""
        measure = self._measure
        if carried is None:
            pointer = measure(pointer_word(item_id))
            if self._extractive is None:  # a model writes for it: priced as extraction, scaled
                written = -(-measure(escape_content(entry_line(item_id, note)))
                            * self.scale.numerator // self.scale.denominator)
                return pointer + written, pointer + written, pointer
            full = measure(escape_content(entry_line(item_id, note)))
            cut = shorten(note, SHORT_NOTE)
            short = full if cut == note else measure(escape_content(entry_line(item_id, cut)))
            return full, short, pointer
        pointers = [item_id, *[p for p in carried.pointers if p in self._valid]]
        bare = sum(map(measure, map(pointer_word, pointers)))
        full = short = bare
        for carried_pointer in pointers[1:]:
            text = carried.note_of(carried_pointer)
            if text:
                full += measure(escape_content(entry_line(carried_pointer, text)))
                short += measure(escape_content(
                    entry_line(carried_pointer, shorten(text, SHORT_NOTE))
                ))
        general = sum(
            measure(escape_content("- " + entry.replace("\n", "\n  ") + "\n"))
            for entry in (*carried.facts, *carried.decisions, *carried.open_questions)
        )
        return full + general, short + general, bare

    def _measure_costs(self, full_costs: list[int]) -> None:
        measure, order, columns = self._measure, self.order, self._columns
        notes: list[int] = []
        shorts: list[int] = []
        pointers: list[int] = []
        for item_id, carried, note in zip(columns.ids, columns.summaries, self._notes,
                                          strict=True):  # in admission order, along the columns
            costs = self._entry_costs(item_id, carried, note)
            notes.append(costs[0])
            shorts.append(costs[1])
            pointers.append(costs[2])
        self._costs = {
            Level.FULL: full_costs,
            Level.NOTE: list(map(notes.__getitem__, order)),
            Level.SHORT: list(map(shorts.__getitem__, order)),
            Level.POINTER: list(map(pointers.__getitem__, order)),
        }
        self._prefix = {level: _prefix_sums(costs) for level, costs in self._costs.items()}
        # The longest label, the first of its length in importance order: one with a fraction
        # of a second when any has one (every dated label is as long as any other otherwise).
        stamps = columns.stamps
        fractional = any(s % 1_000_000 for s in stamps)
        first = next((a for a in order if not fractional or stamps[a] % 1_000_000), None)
        longest = "-" if first is None else published_label(columns.items[first].published_at)
        frame = fence_body(
            "", item_id="summary-" + "0" * 12 + "-99", origin=COMPACTION_ORIGIN,
            kind=ItemKind.SUMMARY.value, published=longest,
        )
        general = bool(columns.carried) or self._extractive is None
        # Section headings come only with notes (a model's writing, a carried summary's
        # entries): a state of bare pointers has none, so they are priced apart.
        self._sections = measure("facts:\ndecisions:\nopen questions:\n") if general else 0
        summary = (
            measure(f"{MARK}{PLACEHOLDER_NONCE}{frame}{SEPARATOR}")
            + measure(summary_overhead(noted=True, bare=True))
            + measure(heading(10 ** len(str(len(order))))) - measure(heading(10))
        )
        fence_cost = measure(notice(PLACEHOLDER_NONCE, _PLACEHOLDER_END) + SEPARATOR) + measure(
            end_line(_PLACEHOLDER_END)
        )
        index = measure("\n" + index_line(
            max(len(order), 1), moment(min(stamps, default=0)), moment(max(stamps, default=0))
        ))
        self.overhead = (fence_cost, summary, index)

    def _make_stages(self) -> list[_Stage]:
        stages: list[_Stage] = []
        # the priorities along the importance order are the priorities sorted: each class
        # is one run of them
        ranked = sorted(self._columns.priorities)
        for priority in sorted(set(ranked)):
            start, end = bisect_left(ranked, priority), bisect_right(ranked, priority)
            stages.append(_Stage(start, end, Level.FULL, Level.NOTE))
            stages.append(_Stage(start, end, Level.NOTE, Level.SHORT))
            stages.append(_Stage(start, end, Level.SHORT, Level.POINTER))
        return stages

    def _locate(self, state: int) -> tuple[int, int]:
        """``(stage, b)``: the stage and how many of its class have taken its step (stage
        ``len(stages)`` is the index stage, ``b`` the number indexed); ``(-1, 0)`` for state 0."""
        if state == 0:
            return -1, 0
        rest = state
        for number, stage in enumerate(self._stages):
            size = stage.stop - stage.start
            if rest <= size:
                return number, rest
            rest -= size
        return len(self._stages), rest

    def bounds(self, state: int) -> tuple[int, int]:
        """``(indexed, full)``: in ``state`` the items at importance positions below
        ``indexed`` are left to the index line, those at ``full`` and above shown in full, and
        those between summarized (levels only grow with importance)."""
        n = len(self.order)
        number, b = self._locate(state)
        if number == -1:
            return 0, 0
        if number == len(self._stages):
            return b, n
        stage = self._stages[number]
        return 0, stage.start + b if stage.upper is Level.FULL else stage.stop

    def levels(self, state: int) -> list[Level]:
        """The level of every item, in importance order, in ``state``."""
        n = len(self.order)
        number, b = self._locate(state)
        if number == -1:
            return [Level.FULL] * n
        if number == len(self._stages):
            return [Level.INDEX] * b + [Level.POINTER] * (n - b)
        stage = self._stages[number]
        cut = stage.start + b
        return (
            [Level.POINTER] * stage.start + [stage.lower] * b + [stage.upper] * (stage.stop - cut)
            + [Level.FULL] * (n - stage.stop)
        )

    def estimate(self, state: int) -> int:
        """The estimated cost of the data message in ``state``, in measure units."""
        prefix, n = self._prefix, len(self.order)
        fence_cost, summary, index = self.overhead
        number, b = self._locate(state)
        if number == -1:
            return prefix[Level.FULL][n] + fence_cost
        if number == len(self._stages):
            if b == n:
                return index
            pointers = prefix[Level.POINTER][n] - prefix[Level.POINTER][b]
            return pointers + fence_cost + summary + index
        stage = self._stages[number]
        cut = stage.start + b
        lower, upper = prefix[stage.lower], prefix[stage.upper]
        noted = (b > 0 and stage.lower > Level.POINTER) or (
            cut < stage.stop and stage.upper < Level.FULL
        )
        return (
            prefix[Level.POINTER][stage.start]
            + lower[cut] - lower[stage.start] + upper[stage.stop] - upper[cut]
            + prefix[Level.FULL][n] - prefix[Level.FULL][stage.stop]
            + fence_cost + summary + (self._sections if noted else 0)
        )

    def first_fit(self, available: int) -> int:
        """The first state whose estimate is at most ``available`` (the last state if none)."""
        if self.estimate(0) <= available:
            return 0
        state = 0
        # The index stage ends with its one jump: with every item indexed there is no fence,
        # no notice and no summary left, so that state is searched on its own.
        sizes = [s.stop - s.start for s in self._stages] + [len(self.order) - 1]
        for size in sizes:
            if self.estimate(state + size) <= available:
                low, high = state + 1, state + size  # the first fitting one lies in (low..high]
                while low < high:
                    middle = (low + high) // 2
                    if self.estimate(middle) <= available:
                        high = middle
                    else:
                        low = middle + 1
                return low
            state += size
        return self.states

    # ----------------------------------------------------------------- search

    def run(self, start_room: int) -> Request:
        """Yields the plain items a custom summarizer must summarize, receives its summary, and
        returns the earliest state found to fit (``start_room``: the budget left by the trusted
        messages, in tokens)."""
        budget, per = self._budget, self._per
        available = int(start_room * per)
        low, high = 0, self.states  # state 0 is known to overflow, the last one to fit
        best: Candidate | None = None
        # Every item a bare pointer: the last state naming them all. No item is left to the
        # index line before this state is rendered and known to overflow (estimates can be too
        # pessimistic, e.g. a custom summarizer's sections, which pointer-only states lack).
        pointers = self.states - len(self.order)
        state = self.first_fit(available)
        for attempt in range(MAX_ATTEMPTS):
            untried = low < pointers < high and pointers not in self._seen
            if untried and (state > pointers or (best is None and attempt == MAX_ATTEMPTS - 1)):
                state = pointers
            elif state >= high:
                break  # nothing before the earliest state known to fit is expected to fit
            elif state <= low:  # the estimate was too hopeful: halve the bracket instead
                state = (low + high) // 2
                if state == low:
                    break
                if untried and state > pointers:
                    state = pointers
            candidate = yield from self.render(state)
            if candidate.tokens <= budget:
                high, best = state, candidate
                slack = budget - candidate.tokens
                if slack * _CLOSE_ENOUGH <= budget:
                    break
                available += max(1, int(slack * per) * 7 // 8)
            else:
                low = state
                available -= max(1, int((candidate.tokens - budget) * per))
            if high - low <= 1:
                break
            state = self.first_fit(available)
        if best is None:
            best = yield from self.render(self.states)
        return best

    def render(self, state: int) -> Request:
        """Render ``state`` and count the whole request exactly (memoized)."""
        known = self._seen.get(state)
        if known is not None:
            return known
        levels = self.levels(state)
        columns, order, rank = self._columns, self.order, self.rank
        items = columns.items
        first_summarized, first_full = self.bounds(state)
        summarized = order[first_summarized:first_full]
        indexed_at = order[:first_summarized]
        summary: ContextItem | None = None
        sources: list[int] = []
        source_ids: tuple[str, ...] = ()
        if summarized:
            sources = [a for a in columns.chronological
                       if first_summarized <= rank[a] < first_full]
            with span("hydrangea.asof.compaction", {"hydrangea.items": len(sources)}):
                model: StructuredSummary | None = None
                if self._extractive is None:
                    asked = [items[a] for a in sources
                             if levels[rank[a]] >= Level.SHORT and columns.summaries[a] is None]
                    if asked:
                        model = yield asked
                        self._rescale(asked, model)
                merged, source_ids = self._merge(sources, levels, model)
                summary = summary_item(  # the latest source and the most important one
                    merged, published_at=moment(columns.stamps[sources[-1]]),
                    priority=columns.priorities[summarized[-1]],
                    taken=self._taken, records=self._records,
                )
        full = [a for a in columns.blocks if rank[a] >= first_full]
        shown_items = list(map(items.__getitem__, full))
        bodies = list(map(columns.bodies.__getitem__, full))
        if summary is not None:
            at = bisect_left(shown_items, block_key(summary), key=block_key)
            shown_items.insert(at, summary)
            bodies.insert(at, block_body(summary))
        index = None
        if indexed_at:
            when = [columns.stamps[a] for a in indexed_at]
            index = index_line(len(indexed_at), moment(min(when)), moment(max(when)))
        text = data_message(bodies, index)
        if text is None:
            tokens = self._fixed
        elif self._additive:  # the pieces add up: count only what was not counted yet
            tokens = self._fixed + self._pieces_tokens(first_full, summary, index)
        else:
            tokens = self._fixed + self._count(text)
        candidate = Candidate(state, summary, source_ids, indexed_at, first_full,
                              tuple(shown_items), text, tokens)
        self._seen[state] = candidate
        return candidate

    def _pieces_tokens(
        self, first_full: int, summary: ContextItem | None, index: str | None
    ) -> int:
        """The data message's tokens as the sum of its pieces (see :func:`adds_up`): the blocks
        shown in full were counted once already, the summary block and index line are new."""
        count, full = self._count, self._prefix[Level.FULL]
        blocks = full[-1] - full[first_full]  # the blocks shown, from ``first_full`` on
        if summary is not None:
            blocks += count(f"{MARK}{PLACEHOLDER_NONCE}{block_body(summary)}{SEPARATOR}")
        if blocks == 0:  # no fence: the index line alone
            return count(index) if index is not None else 0
        fence_cost = self.overhead[0]
        return fence_cost + blocks + (count("\n" + index) if index is not None else 0)

    def _merge(self, positions: Sequence[int], levels: Sequence[Level],
               model: StructuredSummary | None) -> tuple[StructuredSummary, tuple[str, ...]]:
        """The summary of the sources at ``positions`` (chronological), each at its level
        (``levels``: in importance order), and the sources' ids in its pointers' order.

        A source's own id is entered once, first: ids are distinct, and a carried pointer
        naming an admitted item is not carried (:func:`~hydrangea.asof.compaction.valid_pointers`);
        a carried pointer is entered where it first comes and keeps its first non-empty note."""
        pointers: list[str] = []  # every entry, in the order entered
        texts: list[str] = []  # its note ("" for a bare pointer)
        carried_at: dict[str, int] = {}  # a carried pointer's place in ``pointers``
        own_noted: list[str] = []
        own_bare: list[str] = []
        facts: list[str] = [] if model is None else list(model.facts)
        decisions: list[str] = [] if model is None else list(model.decisions)
        questions: list[str] = [] if model is None else list(model.open_questions)
        ids, summaries, rank = self._columns.ids, self._columns.summaries, self.rank
        for a in positions:
            item_id, carried, level = ids[a], summaries[a], levels[rank[a]]
            note = ""
            if carried is None and level is not Level.POINTER:
                # A custom summarizer's notes (an extractive fallback's content) are kept.
                note = (self._notes[a] if self._extractive is not None
                        else "" if model is None else model.note_of(item_id))
                if level is not Level.NOTE:
                    note = shorten(note, SHORT_NOTE)
            pointers.append(item_id)
            texts.append(note)
            (own_noted if note else own_bare).append(item_id)
            if carried is None:
                continue
            for pointer in carried.pointers:
                if pointer not in self._valid:
                    continue
                text = carried.note_of(pointer) if level > Level.POINTER else ""
                text = text if level is Level.NOTE else shorten(text, SHORT_NOTE)
                at = carried_at.get(pointer)
                if at is None:
                    carried_at[pointer] = len(pointers)
                    pointers.append(pointer)
                    texts.append(text)
                elif not texts[at]:
                    texts[at] = text
            if level > Level.POINTER:
                facts.extend(carried.facts)
                decisions.extend(carried.decisions)
                questions.extend(carried.open_questions)
        noted = [p for p, n in zip(pointers, texts, strict=True) if n]
        bare = [p for p, n in zip(pointers, texts, strict=True) if not n]
        return StructuredSummary.model_construct(
            facts=tuple(dict.fromkeys(facts)),
            decisions=tuple(dict.fromkeys(decisions)),
            open_questions=tuple(dict.fromkeys(questions)),
            pointers=(*noted, *bare),
            notes=(*filter(None, texts), *[""] * len(bare)) if noted else (),
        ), (*own_noted, *own_bare)

    def _rescale(self, asked: Sequence[ContextItem], model: StructuredSummary) -> None:
        """Re-price a custom summarizer's entries by what it wrote for ``asked``."""
        measure = self._measure
        written = sum(
            measure(escape_content("- " + e.replace("\n", "\n  ") + "\n"))
            for e in (*model.facts, *model.decisions, *model.open_questions)
        )
        extracted = sum(
            measure(escape_content(entry_line(i.item_id, ExtractiveSummarizer().note(i))))
            for i in asked
        )
        if extracted <= 0:
            return
        observed = Fraction(written, extracted)
        if abs(observed - self.scale) * 8 <= self.scale:
            return
        self.scale = observed
        self._measure_costs(self._costs[Level.FULL])


def _prefix_sums(costs: Sequence[int]) -> list[int]:
    sums = [0]
    total = 0
    for cost in costs:
        total += cost
        sums.append(total)
    return sums
