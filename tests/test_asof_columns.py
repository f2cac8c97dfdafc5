"""The one pass a build makes over its untrusted items, against orders written out here."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.asof import (
    ContextBudgetError,
    ContextBuilder,
    ContextItem,
    DuplicateItemError,
    InMemoryRecordStore,
    ItemKind,
    Provenance,
    StructuredSummary,
    SummaryPointerError,
    Trust,
)
from hydrangea.asof.columns import Columns, block_costs, moment, ordered, stamp
from hydrangea.asof.fence import MARK, PLACEHOLDER_NONCE, SEPARATOR, fence_body, published_label

AS_OF = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
# The documented block order of the kinds, written out (summaries first, harness kinds last).
BLOCK_KINDS = [ItemKind.SUMMARY, ItemKind.MEMORY, ItemKind.DOCUMENT, ItemKind.OBSERVATION,
               ItemKind.TASK, ItemKind.INSTRUCTION, ItemKind.SYSTEM]
OUTSIDE_KINDS = [kind for kind in BLOCK_KINDS if kind is not ItemKind.SUMMARY]

zones = st.sampled_from([UTC, timezone(timedelta(hours=9)), timezone(timedelta(hours=-5)),
                         timezone(timedelta(hours=5, minutes=30))])
moments = st.builds(
    lambda minutes, micro, zone: (
        AS_OF - timedelta(minutes=minutes, microseconds=micro)
    ).astimezone(zone),
    st.integers(0, 40), st.sampled_from([0, 0, 0, 1, 250_000]), zones,
)
rows = st.lists(
    st.tuples(st.sampled_from(OUTSIDE_KINDS), st.integers(-2, 2),
              moments | st.none(),  # undated: a builder refuses them, the columns take them
              st.text("abz0-é", min_size=1, max_size=4)),
    max_size=25,
)


def outside(rows: list[tuple[ItemKind, int, datetime | None, str]]) -> list[ContextItem]:
    """Untrusted items with ids distinct by construction (an index suffix)."""
    return [
        ContextItem.outside(kind, f"text {n}. More.", item_id=f"{name}{n}", origin="tool:x",
                            published_at=when, priority=priority)
        for n, (kind, priority, when, name) in enumerate(rows)
    ]


@given(st.lists(st.tuples(st.integers(0, 4), st.text(max_size=3)), max_size=40),
       st.randoms(use_true_random=False))
def test_ordered_sorts_by_key_then_id(pairs: list[tuple[int, str]], rng: object) -> None:
    keys = [key for key, _ in pairs]
    ids = [f"{name}/{n}" for n, (_, name) in enumerate(pairs)]  # distinct
    positions = list(range(len(pairs)))
    rng.shuffle(positions)  # type: ignore[attr-defined]
    positions = positions[: len(positions) * 2 // 3 + 1]
    expected = sorted(positions, key=lambda a: (keys[a], ids[a]))
    assert ordered(positions, keys, ids) == expected


@given(moments, moments)
def test_stamps_order_and_round_trip_as_utc_instants(first: datetime, second: datetime) -> None:
    assert moment(stamp(first)) == first
    assert moment(stamp(first)).utcoffset() == timedelta(0)
    assert (stamp(first) < stamp(second)) == (first < second)  # aware: by instant
    assert (stamp(first) == stamp(second)) == (first == second)
    assert stamp(None) == 0 and moment(0) == datetime.min.replace(tzinfo=UTC)


@given(rows)
def test_columns_order_like_the_documented_keys(
    drawn: list[tuple[ItemKind, int, datetime | None, str]]
) -> None:
    items = outside(drawn)
    columns = Columns.gather(items)
    ids = [i.item_id for i in items]

    def instant(item: ContextItem) -> datetime:  # no time: the earliest
        when = item.published_at
        return datetime.min.replace(tzinfo=UTC) if when is None else when.astimezone(UTC)

    def by(key: object) -> list[str]:
        return [i.item_id for i in sorted(items, key=key)]  # type: ignore[call-overload]

    assert [ids[a] for a in columns.blocks] == by(
        lambda i: (BLOCK_KINDS.index(i.kind), instant(i), i.item_id))
    assert [ids[a] for a in columns.chronological] == by(lambda i: (instant(i), i.item_id))
    assert [ids[a] for a in columns.importance] == by(
        lambda i: (i.priority, instant(i), i.item_id))
    assert columns.ids == ids and columns.items == items
    costs = block_costs(columns.bodies, len)
    for item, body, cost in zip(items, columns.bodies, costs, strict=True):
        assert body == fence_body(item.content, item_id=item.item_id, origin="tool:x",
                                  kind=item.kind.value, published=published_label(
                                      item.published_at))
        assert cost == len(f"{MARK}{PLACEHOLDER_NONCE}{body}{SEPARATOR}")


def test_a_measure_other_than_len_is_given_each_whole_block() -> None:
    items = outside([(ItemKind.DOCUMENT, 0, AS_OF, "d"), (ItemKind.MEMORY, 1, AS_OF, "m")])
    seen: list[str] = []

    def measure(text: str) -> int:
        seen.append(text)
        return 7

    columns = Columns.gather(items)
    assert block_costs(columns.bodies, measure) == [7, 7]
    assert seen == [f"{MARK}{PLACEHOLDER_NONCE}{body}{SEPARATOR}" for body in columns.bodies]


def test_a_build_stores_what_it_compacts_in_the_order_the_items_were_added() -> None:
    # Added most important first, so admission order is the reverse of importance order.
    items = [
        ContextItem.outside(ItemKind.DOCUMENT, f"Record {n} says something. " + "word " * 40,
                            item_id=f"doc-{n}", origin="tool:search",
                            published_at=AS_OF - timedelta(hours=n), priority=-n)
        for n in range(30)
    ]
    store = InMemoryRecordStore()
    builder = ContextBuilder(as_of=AS_OF, token_budget=900, records=store)
    for item in items:
        builder.add(item)
    built = builder.build()
    assert len(built.compactions) == 1
    summary_id = built.compactions[0].summary_id
    stored = set(built.compactions[0].source_ids) | set(built.dropped)
    assert len(stored) > 2  # enough records for an order to show
    assert store.ids() == [i.item_id for i in items if i.item_id in stored] + [summary_id]


def test_a_conflict_names_the_least_important_summarized_item_and_stores_nothing() -> None:
    store = InMemoryRecordStore()

    def build(suffix: str) -> None:
        builder = ContextBuilder(as_of=AS_OF, token_budget=60, records=store)
        for item_id, days in (("b", 1), ("a", 2)):  # "a" is older: less important
            builder.add(ContextItem.outside(
                ItemKind.DOCUMENT, f"{item_id} text. " * 20 + suffix, item_id=item_id,
                origin="web", published_at=AS_OF - timedelta(days=days)))
        builder.build()

    build("")
    assert sorted(store.ids()) == ["a", "b"]
    before = {i: store.get(i) for i in store.ids()}
    with pytest.raises(DuplicateItemError, match="under 'a'"):
        build(" changed")  # both records now conflict
    assert {i: store.get(i) for i in store.ids()} == before


class Picky:
    """A caller's counter that refuses to count one word."""

    def count(self, text: str) -> int:
        if "BOOM" in text:
            raise ValueError("cannot count BOOM")
        return len(text)


def picky_builder(*, task: str) -> ContextBuilder:
    builder = ContextBuilder(as_of=AS_OF, token_budget=50, counter=Picky())
    builder.add(ContextItem.harness(ItemKind.TASK, task, item_id="task"))
    builder.add(ContextItem.outside(ItemKind.DOCUMENT, "BOOM", item_id="d", origin="web",
                                    published_at=AS_OF - timedelta(days=1)))
    return builder


def test_the_budget_and_pointer_checks_come_before_any_block_is_counted() -> None:
    with pytest.raises(ContextBudgetError, match="trusted content alone"):
        picky_builder(task="t" * 100).build()
    builder = picky_builder(task="t")
    builder.records.put(ContextItem.outside(ItemKind.DOCUMENT, "record", item_id="r",
                                            origin="web", published_at=AS_OF - timedelta(days=3)))
    forged = StructuredSummary(facts=("x",), pointers=("r",))
    builder.add(ContextItem(item_id="s", kind=ItemKind.SUMMARY, content=forged.render(),
                            trust=Trust.UNTRUSTED, published_at=AS_OF - timedelta(days=2),
                            provenance=Provenance(origin="mine"), summary=forged))
    with pytest.raises(SummaryPointerError, match="'r'"):
        builder.build()
    with pytest.raises(ValueError, match="BOOM"):  # the counter's own refusal, when it comes
        picky_builder(task="t").build()
