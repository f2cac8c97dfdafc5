"""Building again: ``build()`` and ``abuild()``, in any order and any number of times on one
builder, plan as a fresh builder does over the same items, summarizer and record store
(issue 25: "a build() after an abuild() differs from a fresh one")."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from hydrangea.asof import (
    BuiltContext,
    ContextBuilder,
    ContextItem,
    InMemoryRecordStore,
    ItemKind,
    Provenance,
    StructuredSummary,
    Summarizer,
    Trust,
)
from hydrangea.asof.fence import MARK
from hydrangea.asof.llm import LLMSummarizer
from hydrangea.asof.summarizers import AsyncSummarizer
from hydrangea.message import Message
from tests.support.asof_oracle import AS_OF, approx_tokens, doc

TASK = ContextItem.harness(ItemKind.TASK, "Answer from the filings.", item_id="task")


def caller_summary(item_id: str, pointers: tuple[str, ...], *, priority: int) -> ContextItem:
    """A summary the caller wrote (say, kept from another run), pointing at ``pointers``."""
    claimed = StructuredSummary(facts=(f"{item_id}: an earlier run read these.",),
                                pointers=pointers)
    return ContextItem(
        item_id=item_id, kind=ItemKind.SUMMARY, content=claimed.render(), trust=Trust.UNTRUSTED,
        published_at=AS_OF - timedelta(days=400), provenance=Provenance(origin="memory"),
        priority=priority, summary=claimed,
    )


def builder(items: Sequence[ContextItem], budget: int, store: InMemoryRecordStore,
            summarizer: Summarizer | AsyncSummarizer | None = None) -> ContextBuilder:
    b = ContextBuilder(as_of=AS_OF, token_budget=budget, records=store, summarizer=summarizer)
    b.add(TASK)
    for item in items:
        b.add(item)
    return b


def copy_of(store: InMemoryRecordStore) -> InMemoryRecordStore:
    copied = InMemoryRecordStore()
    for item_id in store.ids():
        held = store.get(item_id)
        assert held is not None
        copied.put(held)
    return copied


def test_a_second_build_of_a_caller_summary_over_its_own_items_plans_as_the_first() -> None:
    # The caller's summary points at doc-3, which is admitted too. The first build compacts
    # doc-3 and so stores it; before the fix, the second build then read that record back and
    # refused the summary (SummaryPointerError: "points at the stored record 'doc-3', which it
    # did not replace"), or carried the pointer it had left out the first time.
    docs = [doc(i, days=i + 1) for i in range(20)]
    mine = caller_summary("mine", ("doc-3", "ghost-1"), priority=5)  # kept in full
    items = [*docs, mine]
    full = builder(items, 10**9, InMemoryRecordStore()).build().tokens
    budget = full // 2
    fresh = builder(items, budget, InMemoryRecordStore()).build()
    assert fresh.compactions and "doc-3" in fresh.compactions[0].source_ids
    assert mine in fresh.items  # shown in full, so not stored by the build
    store = InMemoryRecordStore()
    again = builder(items, budget, store)
    first = asyncio.run(again.abuild())
    assert store.get("doc-3") == docs[3]  # the first build stored what it compacted
    assert again.build() == first == fresh
    assert asyncio.run(again.abuild()) == fresh
    # compacted as well (lowest priority): carried the same way in every build
    low = [*docs, caller_summary("mine", ("doc-3", "ghost-1"), priority=-1)]
    fresh_low = builder(low, budget, InMemoryRecordStore()).build()
    again_low = builder(low, budget, InMemoryRecordStore())
    assert again_low.build() == fresh_low
    assert asyncio.run(again_low.abuild()) == again_low.build() == fresh_low


# -- the property: every order of build() and abuild() against a fresh build -----------------


class Written:
    """A deterministic custom summarizer: one short fact per three items."""

    def summarize(self, items: Sequence[ContextItem]) -> StructuredSummary:
        return StructuredSummary(facts=tuple(f"{i.item_id} was read." for i in items[::3]))


class AsyncWritten:
    """The same, async only (abuild() only)."""

    async def asummarize(self, items: Sequence[ContextItem]) -> StructuredSummary:
        await asyncio.sleep(0)
        return Written().summarize(items)


class BothWritten(Written, AsyncWritten):
    """Both methods, writing the same summary."""


def fake_model(messages: Sequence[Message]) -> str:
    """A deterministic stand-in chat model: one fact counting the fenced records."""
    return json.dumps({"facts": [f"{messages[-1].text.count(MARK)} marks were read."],
                       "decisions": [], "open_questions": []})


async def async_fake_model(messages: Sequence[Message]) -> str:
    await asyncio.sleep(0)
    return fake_model(messages)


def misbehaving_model(messages: Sequence[Message]) -> str:
    """Valid JSON for a few records, a broken reply for more (so some calls fall back)."""
    return fake_model(messages) if messages[-1].text.count(MARK) < 12 else '{"facts": "all"}'


SUMMARIZERS: dict[str, Callable[[], Summarizer | AsyncSummarizer | None]] = {
    "default": lambda: None, "sync": Written, "async": AsyncWritten, "both": BothWritten,
    "llm": lambda: LLMSummarizer(fake_model), "llm-async": lambda: LLMSummarizer(async_fake_model),
    "llm-misbehaving": lambda: LLMSummarizer(misbehaving_model),
}


@dataclass(frozen=True)
class Case:
    items: tuple[ContextItem, ...]
    stored: tuple[ContextItem, ...]  # records the store holds before any build
    fraction: float
    summarizer: str


@st.composite
def cases(draw: st.DrawFn) -> Case:
    words = st.text(alphabet="abcdefgh ", min_size=0, max_size=60)
    n = draw(st.integers(20, 36))
    docs = [
        ContextItem.outside(
            draw(st.sampled_from([ItemKind.DOCUMENT, ItemKind.MEMORY, ItemKind.OBSERVATION])),
            f"Record {i} says {draw(words)}. {draw(words)}",
            item_id=f"doc-{i}", published_at=AS_OF - timedelta(hours=draw(st.integers(0, 5000))),
            origin="web", priority=draw(st.integers(0, 2)),
        )
        for i in range(n)
    ]
    ids = [d.item_id for d in docs]
    summaries = [
        caller_summary(f"mine-{k}", tuple(draw(st.lists(
            st.sampled_from([*ids, "ghost-1", "ghost-2"]), min_size=1, max_size=6, unique=True,
        ))), priority=draw(st.integers(-1, 3)))
        for k in range(draw(st.integers(0, 2)))
    ]
    # records stored earlier: some of the admitted items themselves, and outside ones
    stored = [d for d in docs if draw(st.booleans()) and draw(st.booleans())]
    stored.append(doc(900, days=3))
    return Case(tuple(docs + summaries), tuple(stored), draw(st.floats(0.25, 0.8)),
                draw(st.sampled_from(sorted(SUMMARIZERS))))


def run(b: ContextBuilder, how: str) -> BuiltContext:
    return b.build() if how == "build" else asyncio.run(b.abuild())


@given(cases())
def test_every_build_of_one_builder_equals_a_fresh_build(case: Case) -> None:
    make = SUMMARIZERS[case.summarizer]
    store = InMemoryRecordStore()
    for item in case.stored:
        store.put(item)
    full = sum(approx_tokens(i.content) for i in case.items)
    budget = max(200, int(full * case.fraction))
    hows = ["abuild"] if case.summarizer == "async" else ["build", "abuild"]
    # the oracle: one build on a fresh builder over a copy of the store as it was
    expected = run(builder(case.items, budget, copy_of(store), make()), hows[0])
    assert expected.tokens <= budget
    for first in hows:
        for second in hows:
            b = builder(case.items, budget, copy_of(store), make())
            assert run(b, first) == expected, (first, case.summarizer)
            assert run(b, second) == expected, (first, second, case.summarizer)
    # another builder over the store the first builds wrote plans the same too
    shared = copy_of(store)
    run(builder(case.items, budget, shared, make()), hows[-1])
    assert run(builder(case.items, budget, shared, make()), hows[0]) == expected
