"""An independent model of lifecycle visibility, for the lifecycle property tests.

It simulates each lifecycle step by step (an age counter, a rehydration counter, an explicit
walk through the stages), without the library's arithmetic.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from hypothesis import strategies as st

from hydrangea.lifecycle import Component, Placement, Stage
from hydrangea.message import Message, Role

EPISODES = 200


@dataclass(frozen=True)
class Spec:
    """A component description the oracle understands without the library's help."""

    kind: str  # "temporary", "cyclic" or "staged"
    ttl: int
    cadence: int
    placement: str
    stages: tuple[tuple[str, int | None], ...]
    cycle: bool | int
    added_before: int  # added just before the render of this episode


def oracle_phases(spec: Spec) -> Iterator[tuple[str, int | None] | None]:
    """Yield (placement, stage) or None for the component's episodes 0, 1, 2, ... forever."""
    if spec.kind == "temporary":
        age = 0
        while True:
            yield (spec.placement, None) if age < spec.ttl else None
            age += 1
    elif spec.kind == "cyclic":
        since_rehydration = 0
        while True:
            if since_rehydration == spec.cadence:
                since_rehydration = 0  # rehydrated: a fresh copy, age 0
            yield (spec.placement, None) if since_rehydration < spec.ttl else None
            since_rehydration += 1
    else:
        rounds = 0
        while spec.cycle is True or rounds < (1 if spec.cycle is False else spec.cycle):
            for index, (placement, ttl) in enumerate(spec.stages):
                if ttl is None:
                    while True:
                        yield (placement, index)
                for _ in range(ttl):
                    yield (placement, index)
            rounds += 1
        while True:
            yield None


def build(spec: Spec, key: str) -> Component:
    content = Message(role=Role.user, content=f"<{key}>")
    if spec.kind == "temporary":
        return Component(content, key=key, ttl=spec.ttl, placement=spec.placement)
    if spec.kind == "cyclic":
        return Component(
            content, key=key, ttl=spec.ttl, cadence=spec.cadence, placement=spec.placement
        )
    stages = [Stage(Placement(p), ttl) for p, ttl in spec.stages]
    return Component(content, key=key, stages=stages, cycle=spec.cycle)


placements = st.sampled_from(["before", "after"])


@st.composite
def specs(draw: st.DrawFn) -> Spec:
    kind = draw(st.sampled_from(["temporary", "cyclic", "staged"]))
    added = draw(st.integers(0, EPISODES - 1))
    if kind != "staged":
        return Spec(
            kind,
            draw(st.integers(1, 6)),
            draw(st.integers(1, 8)),
            draw(placements),
            (),
            False,
            added,
        )
    cycle = draw(st.one_of(st.booleans(), st.integers(1, 4)))
    stages: list[tuple[str, int | None]] = list(
        draw(st.lists(st.tuples(placements, st.integers(1, 4)), min_size=1, max_size=4))
    )
    if cycle is False and draw(st.booleans()):
        stages[-1] = (stages[-1][0], None)
    return Spec(kind, 0, 0, "after", tuple(stages), cycle, added)
