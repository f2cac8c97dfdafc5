"""The pure Collector (planning and cursor repair) and EffectRange, against the naive oracle."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.coop import (
    EffectRange,
    InvalidEffectRangeError,
    RangedArea,
    plan_collection,
    repair_cursor,
)
from hydrangea.errors import HydrangeaError
from tests.support.coop_oracle import naive_cursor, naive_tail


def plan(spans: list[tuple[int, int]], retired: list[bool]) -> tuple[int | None, list[int]]:
    entries = [RangedArea(i, EffectRange(*s), order=i) for i, s in enumerate(spans)]
    entries.sort(key=lambda r: (r.effect_range.latest, r.order), reverse=True)
    result = plan_collection(entries, lambda i: retired[i])
    return result.start, list(result.areas)


def test_effect_range_is_a_closed_interval() -> None:
    r = EffectRange(2, 4)
    assert 2 in r and 4 in r and 5 not in r and 1 not in r
    assert len(r) == 3
    assert r.overlaps(EffectRange(4, 9)) and EffectRange(0, 2).overlaps(r)
    assert not r.overlaps(EffectRange(5, 6))
    assert EffectRange(3, 3).overlaps(r)
    assert r.extended_to(7) == EffectRange(2, 7)


@pytest.mark.parametrize("bounds", [(-1, 0), (3, 2)])
def test_effect_range_rejects_bad_bounds(bounds: tuple[int, int]) -> None:
    with pytest.raises(InvalidEffectRangeError) as info:
        EffectRange(*bounds)
    assert isinstance(info.value, HydrangeaError)


def test_effect_range_is_frozen() -> None:
    with pytest.raises(AttributeError):
        EffectRange(0, 1).latest = 3  # type: ignore[misc]


def test_ranges_sharing_one_index_form_one_component() -> None:
    # [0, 2] retained touches [2, 4] retired at index 2: they are one component, so it blocks.
    assert plan([(0, 2), (2, 4)], [False, True]) == (None, [])
    assert plan([(0, 2), (3, 4)], [False, True]) == (3, [1])


def test_retained_area_blocks_its_whole_component() -> None:
    assert plan([(0, 9), (3, 4), (6, 6)], [False, True, True]) == (None, [])
    assert plan([(0, 9), (3, 4), (6, 6)], [True, True, True]) == (0, [1, 2, 0])


def test_walk_continues_through_retired_components_and_stops_at_retained() -> None:
    spans = [(0, 1), (2, 3), (4, 5), (6, 7)]
    assert plan(spans, [True, False, True, True]) == (4, [2, 3])
    assert plan(spans, [True, True, True, True]) == (0, [0, 1, 2, 3])
    assert plan(spans, [True, True, True, False]) == (None, [])


def test_ties_in_latest_go_by_ring_order() -> None:
    assert plan([(1, 5), (0, 5)], [True, True]) == (0, [0, 1])


def test_plan_stops_reading_at_the_first_retained_area() -> None:
    read: list[int] = []
    entries = [RangedArea(i, EffectRange(2 * i, 2 * i), i) for i in range(5)][::-1]

    def retired(i: int) -> bool:
        read.append(i)
        return i != 3

    assert plan_collection(entries, retired).start == 8
    assert read == [4, 3]


spans_st = st.lists(
    st.tuples(st.integers(0, 30), st.integers(0, 8)).map(lambda t: (t[0], t[0] + t[1])),
    max_size=9,
)


@given(spans=spans_st, data=st.data())
def test_plan_matches_naive_oracle(spans: list[tuple[int, int]], data: st.DataObject) -> None:
    retired = data.draw(st.lists(st.booleans(), min_size=len(spans), max_size=len(spans)))
    assert plan(spans, retired) == naive_tail(spans, retired)


@given(removed=st.lists(st.booleans(), max_size=12), cursor=st.integers(0, 20))
def test_repair_cursor_matches_naive_oracle(removed: list[bool], cursor: int) -> None:
    if removed:
        cursor %= len(removed)
    assert repair_cursor(cursor, removed) == naive_cursor(cursor, removed)


def test_repair_cursor_examples() -> None:
    assert repair_cursor(1, [False, True, False]) == 1  # next survivor, now at index 1
    assert repair_cursor(2, [True, False, False]) == 1  # its own area, shifted left
    assert repair_cursor(2, [False, False, True]) == 0  # wraps round
    assert repair_cursor(0, [True, True]) == 0
