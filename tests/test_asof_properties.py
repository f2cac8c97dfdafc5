"""Property tests for ContextBuilder against independent oracles, over adversarial inputs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, timedelta

from hypothesis import example, given, settings
from hypothesis import strategies as st

from hydrangea.asof import (
    ApproxTokenCounter,
    BuiltContext,
    ContextBudgetError,
    ContextBuilder,
    ContextItem,
    InMemoryRecordStore,
    ItemKind,
    OpenAITokenCounter,
    StructuredSummary,
    Summarizer,
    TokenCounter,
    Trust,
    unfence,
)
from hydrangea.asof.fence import (
    PLACEHOLDER_NONCE,
    data_pieces,
    data_text,
    end_line,
    fence_body,
    nonces_of_bodies,
    published_label,
)
from tests.support.asof_oracle import (
    AS_OF,
    adversarial_label,
    adversarial_text,
    approx_tokens,
    data_message,
    plain_words,
    pointers_in,
)


class LumpyCounter:
    """Not subadditive: a join can cost more than its parts, and marks are expensive."""

    def count(self, text: str) -> int:
        brackets = sum(text.count(c) for c in "¤␛")
        return len(text.encode("utf-8", "surrogatepass")) // 3 + text.count("\n") + 5 * brackets


class OracleApprox:
    """ApproxTokenCounter's rule, written independently."""

    def count(self, text: str) -> int:
        return approx_tokens(text)


@dataclass
class Spec:
    trusted: list[ContextItem]
    on_time: list[ContextItem]
    late: list[ContextItem]
    budget: int


@st.composite
def specs(draw: st.DrawFn) -> Spec:
    trusted = [
        ContextItem.harness(kind, text, item_id=f"h{n}", priority=draw(st.integers(0, 3)))
        for n, (kind, text) in enumerate(
            draw(st.lists(st.tuples(st.sampled_from(
                [ItemKind.SYSTEM, ItemKind.INSTRUCTION, ItemKind.TASK]), plain_words),
                max_size=3))
        )
    ]
    ids = draw(st.lists(adversarial_label, max_size=18, unique=True))
    on_time: list[ContextItem] = []
    late: list[ContextItem] = []
    for n, item_id in enumerate(ids):
        seconds = draw(st.integers(-10**7, 10**6))
        is_late = seconds > 0
        padding = "Sentence. " * draw(st.integers(0, 40))
        content = f"LATE-SECRET-{n}-ZZZZZZ" if is_late else draw(adversarial_text) + padding
        item = ContextItem.outside(
            draw(st.sampled_from(list(ItemKind))),
            content,
            item_id=f"u{n}:{item_id}",
            published_at=AS_OF + timedelta(seconds=seconds),
            origin=draw(adversarial_label),
            priority=draw(st.integers(0, 3)),
        )
        (late if is_late else on_time).append(item)
    rough = sum(len(i.content) // 4 + 80 for i in [*trusted, *on_time]) + 150
    budget = draw(st.integers(1, rough))
    return Spec(trusted, on_time, late, budget)


def run(
    spec: Spec, counter: TokenCounter, summarizer: Summarizer | None = None
) -> tuple[BuiltContext | None, InMemoryRecordStore]:
    store = InMemoryRecordStore()
    builder = ContextBuilder(as_of=AS_OF, token_budget=spec.budget, counter=counter,
                             records=store, summarizer=summarizer)
    for item in [*spec.trusted, *spec.late, *spec.on_time]:
        builder.try_add(item)
    try:
        return builder.build(), store
    except ContextBudgetError:
        return None, store


def check(
    spec: Spec, counter: TokenCounter, oracle: TokenCounter, summarizer: Summarizer | None = None
) -> None:
    built, store = run(spec, counter, summarizer)
    roomy = Spec(spec.trusted, [], [], 10**9)
    trusted_only, _ = run(roomy, counter, summarizer)
    assert trusted_only is not None
    least = trusted_only.tokens + (oracle.count(index_text(spec.on_time)) if spec.on_time else 0)
    if built is None:
        # Only when the trusted content and the line saying that records exist do not fit.
        assert least > spec.budget
        assert store.ids() == []
        return
    assert least <= spec.budget
    # Budget: the counter over exactly the rendered messages, never above the budget.
    assert built.tokens == sum(oracle.count(m.text) for m in built.messages)
    assert built.tokens <= spec.budget
    # As-of: nothing late anywhere.
    late_ids = {i.item_id for i in spec.late}
    rendered = "\n".join(m.text for m in built.messages)
    assert all(i.content not in rendered for i in spec.late)
    assert not late_ids & {i.item_id for i in built.items}
    assert not late_ids & set(built.dropped)
    assert {r.item_id for r in built.rejections} == late_ids
    # Trusted text is never fenced and always present.
    for item in spec.trusted:
        assert any(m.text == item.content or item.content in m.text.split("\n\n")
                   for m in built.messages if "\n\n¤" not in m.text)
    # Accounting: each admitted untrusted item is shown, compacted or dropped, exactly once.
    shown = [i.item_id for i in built.items
             if i.trust is Trust.UNTRUSTED and i.item_id not in
             {c.summary_id for c in built.compactions}]
    compacted = [s for c in built.compactions for s in c.source_ids]
    assert sorted(shown + compacted + list(built.dropped)) == sorted(
        i.item_id for i in spec.on_time)
    # Blocks decode to their items; summaries point to retrievable records.
    data = data_message(built)
    blocks = unfence(data.text) if data is not None else []
    by_id = {i.item_id: i for i in spec.on_time}
    pointed: set[str] = set()
    for block in blocks:
        if block.item_id in by_id:
            assert block.content == by_id[block.item_id].content
            assert block.origin == by_id[block.item_id].provenance.origin
        else:
            assert block.kind == ItemKind.SUMMARY.value and block.origin == "compaction"
            pointed.update(pointers_in(block.content))
    # Rendered order: kind rank, time, id; summaries (new or carried) first.
    fenced = [i for i in built.items if i.trust is Trust.UNTRUSTED]
    assert fenced == sorted(fenced, key=lambda i: (
        [ItemKind.SUMMARY, ItemKind.MEMORY, ItemKind.DOCUMENT, ItemKind.OBSERVATION,
         ItemKind.TASK, ItemKind.INSTRUCTION, ItemKind.SYSTEM].index(i.kind),
        i.published_at, i.item_id))
    assert [b.item_id for b in blocks] == [i.item_id for i in fenced]
    assert all(item_id in store for item_id in pointed)  # every pointer leads to a record
    for item_id in compacted:
        assert item_id in pointed
        assert store.get(item_id) == by_id[item_id]
    for item_id in built.dropped:
        assert store.get(item_id) == by_id[item_id]
    # Nothing vanishes: what is neither shown nor named is covered by the index line.
    index = [line for m in built.messages for line in m.text.split("\n")
             if line.startswith("Not shown: ")]
    if built.dropped:
        assert index == [index_text([by_id[i] for i in built.dropped])]
        # ... and only when pointer-only entries for every admitted item would not fit.
        assert pointer_only_size(spec, trusted_only.tokens, oracle) > spec.budget
    else:
        assert index == []
    # Determinism.
    again, _ = run(spec, counter, summarizer)
    assert again == built


def index_text(items: Sequence[ContextItem]) -> str:
    """The index line for ``items``, written from its documented form."""
    days = sorted(i.published_at.astimezone(UTC).date() for i in items if i.published_at)
    plural = "" if len(items) == 1 else "s"
    return (f"Not shown: {len(items)} more record{plural}, published {days[0]} to "
            f"{days[-1]} (UTC), kept in full in the record store.")


def pointer_only_size(spec: Spec, trusted: int, counter: TokenCounter) -> int:
    """The tokens of a request naming every admitted item by its id alone, in one summary
    block (rendered from the public summary and fence functions, not by the planner)."""
    ids = [i.item_id for i in sorted(
        spec.on_time, key=lambda i: (i.published_at.astimezone(UTC), i.item_id)
        if i.published_at else (AS_OF, i.item_id))]
    latest = max(i.published_at for i in spec.on_time if i.published_at)
    body = fence_body(StructuredSummary(pointers=tuple(ids)).render(),
                      item_id="summary-" + PLACEHOLDER_NONCE, origin="compaction",
                      kind="summary", published=published_label(latest))
    return trusted + counter.count(data_text([body]))


@given(specs())
def test_builds_hold_every_invariant_with_the_default_counter(spec: Spec) -> None:
    check(spec, ApproxTokenCounter(), OracleApprox())


@settings(max_examples=20, deadline=None)
@given(specs())
def test_builds_hold_every_invariant_with_the_exact_counter(spec: Spec) -> None:
    counter = OpenAITokenCounter("o200k_base")
    check(spec, counter, counter)


# Found by hypothesis: the search halved its bracket past the all-pointer state (252 of 256)
# and left two items to the index line without rendering it.
_HALVED_PAST_POINTERS = Spec([], [
    ContextItem.outside(ItemKind.SYSTEM, "", item_id=item_id, origin="¤", published_at=AS_OF)
    for item_id in ("u0:¤", "u3:¤¤¤¤", "u5:¤¤¤␛", "u7:¤␛", "u8:¤¤␛")
], [], 256)


@settings(max_examples=25)
@given(specs())
@example(_HALVED_PAST_POINTERS)
def test_builds_hold_every_invariant_with_a_lumpy_counter(spec: Spec) -> None:
    check(spec, LumpyCounter(), LumpyCounter())


class SizedSummarizer:
    """A custom summarizer writing ``words`` words per item (zero: one short line in all)."""

    def __init__(self, words: int) -> None:
        self.words = words

    def summarize(self, items: Sequence[ContextItem]) -> StructuredSummary:
        if self.words == 0:
            return StructuredSummary(facts=("short",))
        return StructuredSummary(
            facts=tuple(f"{n}: " + "wordy " * self.words for n in range(len(items))),
            decisions=("keep going",),
        )


# Found by hypothesis: a custom summarizer's section headings were priced into the bare
# pointer states, so four pointers that fit exactly (93 of 93) were all left to the index line.
_TIGHT_POINTERS = Spec([], [
    ContextItem.outside(ItemKind.SYSTEM, "", item_id=item_id, origin="¤",
                        published_at=AS_OF - timedelta(seconds=1))
    for item_id in ("u0:¤", "u1:¤¤", "u2:¤¤¤", "u3:␛")
], [], 93)


@settings(max_examples=25)
@given(specs(), st.sampled_from([0, 1, 40]), st.booleans())
@example(_TIGHT_POINTERS, 0, False)
@example(Spec(  # found by hypothesis: the search stopped at the last state without trying 3
    [ContextItem.harness(ItemKind.SYSTEM, "a" * 21, item_id="h0")],
    [ContextItem.outside(ItemKind.SYSTEM, "Sentence. " * 14, item_id="u0:¤", origin="¤¤",
                         published_at=AS_OF)], [], 182), 40, True)
def test_builds_hold_every_invariant_with_a_custom_summarizer(
    spec: Spec, words: int, lumpy: bool
) -> None:
    counter: TokenCounter = LumpyCounter() if lumpy else ApproxTokenCounter()
    oracle: TokenCounter = LumpyCounter() if lumpy else OracleApprox()
    check(spec, counter, oracle, SizedSummarizer(words))


@settings(max_examples=25)
@given(specs(), st.booleans())
def test_a_budget_holding_the_full_render_changes_nothing(spec: Spec, lumpy: bool) -> None:
    counter: TokenCounter = LumpyCounter() if lumpy else ApproxTokenCounter()
    roomy = Spec(spec.trusted, spec.on_time, spec.late, 10**9)
    full, _ = run(roomy, counter)
    assert full is not None and full.compactions == () and full.dropped == ()
    exact, _ = run(Spec(spec.trusted, spec.on_time, spec.late, max(full.tokens, 1)), counter)
    assert exact is not None
    assert exact.compactions == () and exact.dropped == ()
    assert exact.messages == full.messages and exact.items == full.items


class CallCounter:
    def __init__(self) -> None:
        self.calls = 0
        self.chars = 0

    def count(self, text: str) -> int:
        self.calls += 1
        self.chars += len(text)
        return approx_tokens(text)


def test_large_build_counts_each_block_a_bounded_number_of_times() -> None:
    n = 2000
    items = [
        ContextItem.outside(ItemKind.OBSERVATION, f"Observation {i}: value {i * 7}. " + "pad " * 20,
                            item_id=f"o{i}", published_at=AS_OF - timedelta(minutes=i),
                            origin="tool", priority=i % 5)
        for i in range(n)
    ]
    full = ContextBuilder(as_of=AS_OF, token_budget=10**9)
    for item in items:
        full.add(item)
    everything = full.build().tokens
    counter = CallCounter()
    half = ContextBuilder(as_of=AS_OF, token_budget=everything // 2, counter=counter)
    for item in items:
        half.add(item)
    built = half.build()
    assert built.tokens <= everything // 2
    assert built.compactions and not built.dropped
    # linear work: each block counted once, each entry form once (the shortened one only
    # when it differs), a few renders; the text counted a bounded number of times over
    assert counter.calls <= 4 * n + 50
    request = sum(len(m.text) for m in full.build().messages)
    assert counter.chars <= 4 * request


@settings(deadline=None)
@given(st.lists(st.tuples(adversarial_text, adversarial_label, adversarial_label,
                          st.sampled_from([k.value for k in ItemKind]),
                          st.sampled_from(["-", "20250101000000", "20250101000000.000001"])),
                min_size=1, max_size=6),
       st.sampled_from(["o200k_base", "cl100k_base"]))
def test_the_pieces_of_a_data_message_add_up_under_openai_encodings(
    rows: list[tuple[str, str, str, str, str]], encoding: str
) -> None:
    """What lets a build count each block once: o200k (and cl100k) count the whole data
    message as the sum of its pieces, and a block counts the same with the placeholder nonce."""
    counter = OpenAITokenCounter("o200k_base" if encoding == "o200k_base" else "cl100k_base")
    bodies = [fence_body(c, item_id=i, origin=o, kind=k, published=p) for c, i, o, k, p in rows]
    nonce, end = nonces_of_bodies(bodies)
    pieces = data_pieces(bodies, nonce, end)
    text = data_text(bodies)
    assert "".join(pieces) == text
    assert counter.count(text) == sum(counter.count(piece) for piece in pieces)
    placeholder = data_pieces(bodies, PLACEHOLDER_NONCE, "0" * 20)
    assert [counter.count(p) for p in placeholder] == [counter.count(p) for p in pieces]
    assert pieces[-1] == end_line(end)
    assert [b.content for b in unfence(text)] == [row[0] for row in rows]


def test_a_data_message_without_blocks_is_its_notice_and_end_line() -> None:
    nonce, end = nonces_of_bodies([])
    assert data_text([]) == "".join(data_pieces([], nonce, end))
