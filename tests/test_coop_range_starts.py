"""``CoopContext.range_starts``: the areas' range starts, read the long way from ``snapshot``."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.coop import CoopContext
from tests.support.coop_areas import GATEWAY, Probe, reply


@given(
    plan=st.lists(
        st.tuples(st.integers(0, 3), st.lists(st.sampled_from("ab"), max_size=2)),
        min_size=1,
        max_size=12,
    )
)
def test_range_starts_are_the_snapshot_ranges_starts_newest_first(
    plan: list[tuple[int, list[str]]],
) -> None:
    coop = CoopContext(Context(GATEWAY))
    log: list[tuple[object, ...]] = []
    probes: list[Probe] = []
    for step, (action, texts) in enumerate(plan):
        if action == 0 or not probes:
            probes.append(Probe(f"p{step}", log, [texts, texts]))
            coop.register(probes[-1])
        elif action == 1:
            probes[-1].retire()
        elif action == 2:
            coop.context.push_back(reply(f"r{step}"))
        coop.render()
        expected = sorted(
            {r.effect_range.earliest for r in coop.snapshot().areas if r.effect_range is not None},
            reverse=True,
        )
        assert list(coop.range_starts()) == expected
