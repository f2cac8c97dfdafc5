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


@given(
    outputs=st.lists(st.lists(st.sampled_from("ab"), max_size=2), min_size=1, max_size=4),
    early=st.booleans(),
)
def test_range_starts_follow_a_restored_state(outputs: list[list[str]], early: bool) -> None:
    from hydrangea.coop.state import coop_state, restore_coop_state

    coop = CoopContext(Context(GATEWAY))
    log: list[tuple[object, ...]] = []
    for index, texts in enumerate(outputs):
        coop.register(Probe(f"p{index}", log, [texts]))
    coop.render()
    saved = coop_state(coop)
    again = CoopContext(Context(GATEWAY, coop.context[:]))
    for index in range(len(outputs)):
        again.register(Probe(f"p{index}", log))
    if early:
        assert again.range_starts() == ()  # asked before the state is put back
    restore_coop_state(again, saved)
    expected = sorted(
        {r.effect_range.earliest for r in again.snapshot().areas if r.effect_range is not None},
        reverse=True,
    )
    assert list(again.range_starts()) == expected == list(coop.range_starts())
