"""The calibrated counter: never under the largest reported ratio, never below the base."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.asof.calibration import CalibratedCounter
from hydrangea.asof.counting import ApproxTokenCounter

reports = st.lists(st.tuples(st.text(min_size=1, max_size=200), st.integers(0, 500)), max_size=8)


@given(reports, st.text(max_size=300))
def test_estimates_cover_every_report_and_never_shrink(
    samples: list[tuple[str, int]], probe: str
) -> None:
    counter = CalibratedCounter.from_reports(samples)
    base = ApproxTokenCounter()
    for text, reported in samples:
        assert counter.count(text) >= reported  # what the provider reported is covered
    assert counter.count(probe) >= base.count(probe)
    worst = max([1.0, *(r / base.count(t) for t, r in samples if base.count(t))])
    assert counter.ratio == pytest.approx(worst)
    assert counter.count(probe) == math.ceil(base.count(probe) * counter.ratio)


def test_japanese_text_reported_by_a_gateway() -> None:
    text = "日本語の文章は一文字ごとにトークンが増える。" * 10  # 220 characters: 55 estimated
    counter = CalibratedCounter().updated(text, 190)
    assert counter.count(text) >= 190 and counter.ratio > 3
    assert counter.updated("short", 0).ratio == counter.ratio  # lower reports never shrink it
    with pytest.raises(ValueError):
        CalibratedCounter(ratio=0.5)
    with pytest.raises(ValueError):
        counter.updated(text, -1)
    assert "ratio=" in repr(counter)
