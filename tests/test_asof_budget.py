"""Tight budgets: facts kept, priority honoured, and keelgate.context's names and defaults."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hydrangea.asof import (
    ApproxTokenCounter,
    ContextBuilder,
    ContextItem,
    InMemoryRecordStore,
    ItemKind,
    OpenAITokenCounter,
    Provenance,
    Rejection,
    RejectionReason,
    TokenCounter,
    Trust,
)
from tests.support.asof_oracle import AS_OF, approx_tokens, pointers_in

FACT = "Plant {i} in city {i} ships {n} units a day."


def twelve(budget: int, counter: TokenCounter | None = None) -> ContextBuilder:
    """The 12-document case: each document's first sentence is its fact, then background."""
    builder = ContextBuilder(as_of=AS_OF, token_budget=budget, counter=counter)
    builder.add(ContextItem.harness(ItemKind.SYSTEM, "Answer from the documents.", item_id="s"))
    for i in range(12):
        builder.add(ContextItem.outside(
            ItemKind.DOCUMENT,
            FACT.format(i=i, n=100 + i) + " " + "Background on the plant and its history. " * 8,
            item_id=f"doc-{i}", published_at=AS_OF - timedelta(days=12 - i), origin="web"))
    return builder


def facts_kept(text: str) -> int:
    return sum(FACT.format(i=i, n=100 + i) in text for i in range(12))


def test_twelve_documents_keep_at_least_six_facts_at_a_sixth_of_their_size() -> None:
    full = twelve(10**6).build().tokens
    built = twelve(full // 6).build()
    text = "\n".join(m.text for m in built.messages)
    assert built.tokens <= full // 6
    assert facts_kept(text) >= 6
    assert all(f"doc-{i}" in text for i in range(12))  # and every document is named


def _mixed(budget: int, counter: TokenCounter | None) -> ContextBuilder:
    builder = ContextBuilder(as_of=AS_OF, token_budget=budget, counter=counter)
    builder.add(ContextItem.outside(
        ItemKind.DOCUMENT, "Critical constraint: never trade on Fridays. " + "x " * 60,
        item_id="important", published_at=AS_OF - timedelta(days=30), origin="policy",
        priority=100))
    for i in range(20):
        builder.add(ContextItem.outside(
            ItemKind.OBSERVATION, f"Chatter {i}. " + "y " * 40, item_id=f"minor-{i}",
            published_at=AS_OF - timedelta(hours=i), origin="chat"))
    return builder


@settings(max_examples=30, deadline=None)
@given(st.floats(0.05, 1.0), st.booleans())
def test_a_high_priority_item_is_shown_in_full_whenever_it_fits_beside_the_rest(
    fraction: float, exact: bool
) -> None:
    counter: TokenCounter = OpenAITokenCounter() if exact else ApproxTokenCounter()
    full = _mixed(10**6, counter).build()
    budget = max(1, int(full.tokens * fraction))
    try:
        built = _mixed(budget, counter).build()
    except Exception:  # noqa: BLE001 - too small even for the index line: nothing to check
        return
    shown = {i.item_id for i in built.items}
    # the oracle: the important block beside the other 20 named by their ids alone
    beside = _mixed(10**6, counter)
    important = next(i for i in beside.items if i.item_id == "important")
    alone = ContextBuilder(as_of=AS_OF, token_budget=10**6, counter=counter)
    alone.add(important)
    alone.add(ContextItem.outside(
        ItemKind.SUMMARY,
        "summary of 20 records (full text in the record store)\nrecords: "
        + " ".join(f"minor-{i}" for i in range(20)),
        item_id="summary-000000000000", published_at=AS_OF - timedelta(hours=19),
        origin="compaction"))
    if alone.build().tokens <= budget:
        assert "important" in shown
    if "important" not in shown and built.summary_items:  # compacted last: the others bare
        (summary,) = built.summary_items
        assert summary.summary is not None
        noted = [p for p in summary.pointers if summary.summary.note_of(p)]
        assert set(noted) <= {"important"}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 50)), min_size=1, max_size=25),
       st.floats(0.02, 1.0))
def test_lower_priorities_reach_their_pointer_before_higher_ones_are_compacted(
    rows: list[tuple[int, int]], fraction: float
) -> None:
    def make(budget: int) -> ContextBuilder:
        builder = ContextBuilder(as_of=AS_OF, token_budget=budget)
        for n, (priority, words) in enumerate(rows):
            builder.add(ContextItem.outside(
                ItemKind.DOCUMENT, f"Item {n} says something. " + "word " * words,
                item_id=f"i{n}", published_at=AS_OF - timedelta(minutes=n), origin="o",
                priority=priority))
        return builder

    full = make(10**6).build().tokens
    try:
        built = make(max(1, int(full * fraction))).build()
    except Exception:  # noqa: BLE001 - too small even for the index line
        return
    priority = {f"i{n}": p for n, (p, _) in enumerate(rows)}
    shown = {i.item_id for i in built.items} & set(priority)
    summary = built.summary_items[0].summary if built.summary_items else None
    named = set(summary.pointers) if summary is not None else set()
    noted = {p for p in named if summary is not None and summary.note_of(p)}
    bare = named - noted
    dropped = set(built.dropped)
    assert shown | named | dropped == set(priority)
    if dropped:  # only once everything else is a bare pointer
        assert not shown and not noted
    for compacted in named | dropped:
        # an item is compacted only once every item of lower priority is a bare pointer
        lower_not_bare = [o for o in noted | shown if priority[o] < priority[compacted]]
        assert not lower_not_bare, (compacted, lower_not_bare)
    if named:
        assert set(pointers_in(built.summary_items[0].content)) == named
        assert bare == {p for p in named if summary is not None and not summary.note_of(p)}


# ------------------------------------------------------------ keelgate.context compatibility


def test_keelgate_member_names_are_the_members_and_the_old_names_are_aliases() -> None:
    assert [k.name for k in ItemKind] == [
        "SYSTEM", "INSTRUCTION", "TASK", "OBSERVATION", "MEMORY", "DOCUMENT", "SUMMARY"]
    assert Trust.TRUSTED.value == "trusted" and Trust.UNTRUSTED.value == "untrusted"
    assert [r.name for r in RejectionReason] == ["AS_OF_VIOLATION", "UNDATED", "DUPLICATE"]
    assert [r.value for r in RejectionReason] == ["as_of_violation", "undated", "duplicate"]
    old: Any = ItemKind
    assert old.system is ItemKind.SYSTEM and old.summary is ItemKind.SUMMARY
    reasons: Any = RejectionReason
    assert reasons.published_after_as_of is RejectionReason.AS_OF_VIOLATION
    assert reasons.duplicate_id is RejectionReason.DUPLICATE
    assert RejectionReason("published_after_as_of") is RejectionReason.AS_OF_VIOLATION
    assert ItemKind("document") is ItemKind.DOCUMENT


def test_context_item_defaults_follow_keelgate() -> None:
    item = ContextItem(item_id="x", kind=ItemKind.OBSERVATION, content="c",
                       provenance=Provenance(origin="tool"))
    assert item.priority == 0 and item.trust is Trust.UNTRUSTED and item.published_at is None
    assert not item.is_trusted
    assert ContextItem.harness(ItemKind.TASK, "t", item_id="t").priority == 1000
    assert item.content_sha256 == "2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6"


def test_on_rejection_sees_every_refusal_right_after_it_is_recorded() -> None:
    seen: list[Rejection] = []
    builder = ContextBuilder(as_of=AS_OF, token_budget=100, on_rejection=seen.append)
    hidden = "CONFIDENTIAL-FUTURE-FACT"
    assert not builder.try_add(ContextItem.outside(
        ItemKind.DOCUMENT, hidden, item_id="leak", published_at=AS_OF + timedelta(hours=1),
        origin="web"))
    assert not builder.try_add(ContextItem.outside(
        ItemKind.DOCUMENT, "x", item_id="undated", published_at=None, origin="web"))
    assert [r.reason for r in seen] == [RejectionReason.AS_OF_VIOLATION,
                                        RejectionReason.UNDATED]
    assert seen == list(builder.rejections) and hidden not in repr(seen)


@pytest.mark.parametrize(("ratio", "text", "tokens"), [
    (4, "abcde", 2), (2, "abcde", 3), (1, "abc", 3), (2.5, "abcdef", 3), (0.5, "ab", 4),
    (4, "", 0),
])
def test_the_approximate_counter_takes_a_ratio(ratio: float, text: str, tokens: int) -> None:
    assert ApproxTokenCounter(chars_per_token=ratio).count(text) == tokens
    assert ApproxTokenCounter(ratio).count(text) == tokens


@pytest.mark.parametrize("ratio", [0, -1, float("inf"), float("nan")])
def test_the_approximate_counter_refuses_a_ratio_that_is_not_positive(ratio: float) -> None:
    with pytest.raises(ValueError, match="positive"):
        ApproxTokenCounter(ratio)


def test_a_builder_with_a_custom_ratio_plans_in_characters_exactly() -> None:
    counter = ApproxTokenCounter(chars_per_token=3)
    builder = ContextBuilder(as_of=AS_OF, token_budget=200, counter=counter)
    for i in range(30):
        builder.add(ContextItem.outside(ItemKind.MEMORY, f"Memory {i}. " + "w " * 30,
                                        item_id=f"m{i}", published_at=AS_OF, origin="mem"))
    built = builder.build()
    assert built.tokens == sum(-(-len(m.text) // 3) for m in built.messages) <= 200
    assert approx_tokens("abcd") == ApproxTokenCounter().count("abcd")


def test_records_get_returns_none_for_an_unknown_id() -> None:
    store = InMemoryRecordStore()
    assert store.get("missing") is None and len(store) == 0
