"""The cached prefix: lifecycles on a CoopContext only ever append to the history.

Areas render and retire at random, the collector reclaims tails, components of every kind come
and go. Between two renders the history part of the request only grows, unless the collector
reclaimed a tail in between; permanent components are never lost; ephemeral ones never enter
the history.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.context.area import AreaFlowState
from hydrangea.coop import CoopContext
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle, Placement, Stage
from hydrangea.message import Message, Role
from tests.support.coop_areas import Probe

EPISODES = 40


@dataclass(frozen=True)
class AreaPlan:
    at: int
    renders: tuple[int, ...]
    promoted: int
    retire_after: int
    exclusive: bool


@dataclass(frozen=True)
class ComponentPlan:
    at: int
    kind: str
    ttl: int
    cadence: int


area_plans = st.builds(
    AreaPlan,
    st.integers(0, EPISODES - 1),
    st.lists(st.integers(0, 2), min_size=1, max_size=4).map(tuple),
    st.integers(0, 2),
    st.integers(0, 6),
    st.booleans(),
)
component_plans = st.builds(
    ComponentPlan,
    st.integers(0, EPISODES - 1),
    st.sampled_from(["permanent", "temporary", "cyclic", "staged"]),
    st.integers(1, 4),
    st.integers(1, 6),
)


def make(plan: ComponentPlan, text: str) -> Component:
    match plan.kind:
        case "permanent":
            return Component(text)
        case "temporary":
            return Component(text, ttl=plan.ttl, placement=Placement.before)
        case "cyclic":
            return Component(text, ttl=plan.ttl, cadence=plan.cadence)
        case _:
            stages = [Stage(Placement.before, plan.ttl), Stage(Placement.after, plan.cadence)]
            return Component(text, stages=stages, cycle=True)


def texts(items: tuple[dict[str, object], ...]) -> list[object]:
    return [item["content"] for item in items]


@given(st.lists(area_plans, max_size=6), st.lists(component_plans, max_size=10))
def test_history_only_grows_between_collections(
    areas: list[AreaPlan], components: list[ComponentPlan]
) -> None:
    coop = CoopContext(Context(GatewayType.openai))
    lc = Lifecycle(coop)
    log: list[tuple[object, ...]] = []
    live: list[tuple[Probe, int]] = []
    permanents: list[str] = []
    ephemerals: set[str] = set()
    previous: list[object] | None = None
    for episode in range(EPISODES):
        for index, plan in enumerate(areas):
            if plan.at == episode:
                outputs = [
                    [f"area{index}.{r}.{k}" for k in range(n)] for r, n in enumerate(plan.renders)
                ]
                flow = AreaFlowState.exclusive if plan.exclusive else AreaFlowState.yielded
                probe = Probe(
                    f"area{index}",
                    log,
                    outputs,
                    promoted=[f"area{index}.promoted{k}" for k in range(plan.promoted)],
                    flow=flow,
                )
                coop.register(probe)
                live.append((probe, episode + plan.retire_after))
        for probe, retire_at in live:
            if retire_at <= episode:
                probe.flow_state = AreaFlowState.yielded
                probe.retire()
        for index, cplan in enumerate(components):
            if cplan.at == episode:
                text = f"component{index}"
                lc.add(make(cplan, text))
                if cplan.kind == "permanent":
                    permanents.append(text)
                else:
                    ephemerals.add(text)
        coop.context.emplace_message(Message(role=Role.user, content=f"user{episode}"))
        collections_before = coop.collections
        request = lc.render()
        history = texts(request.history)
        collected = coop.collections != collections_before
        if previous is not None and not collected:
            assert history[: len(previous)] == previous
        for text in permanents:
            assert history.count(text) == 1
        items = texts(request.items)
        assert items == history  # what was sent is history
        if previous is not None and not collected:
            new = items[len(previous) :]
            for item in request.overlay:  # each component this episode sends is sent once
                assert new.count(item.items[0]["content"]) == 1
        assert {t for t in history if str(t).startswith("component")} <= {*ephemerals, *permanents}
        coop.context.push_back({"role": "assistant", "content": f"reply{episode}"})
        previous = texts(coop.context[:])


def test_a_permanent_component_detached_by_a_collection_is_appended_again() -> None:
    coop = CoopContext(Context(GatewayType.openai))
    lc = Lifecycle(coop)
    tool = Probe("tool", [], [["tool step"]], promoted=["tool summary"])
    coop.register(tool)
    coop.context.emplace_message(Message(role=Role.user, content="q0"))
    lc.render()
    lc.add(Component("User's name is Alice", key="name"))
    coop.context.push_back({"role": "assistant", "content": "a0"})
    coop.context.emplace_message(Message(role=Role.user, content="q1"))
    lc.render()
    assert texts(coop.context[:]) == ["q0", "tool step", "a0", "q1", "User's name is Alice"]
    before = lc.seal("before the collection")
    tool.retire()
    lc.render()  # the collector detaches everything from "tool step" on
    assert texts(coop.context[:]) == ["q0", "tool summary", "User's name is Alice"]
    assert lc.get("name").content.text == "User's name is Alice"
    after = lc.seal("after")
    # the snapshot taken before the collection is still exact, also after save and load
    old = ["q0", "tool step", "a0", "q1", "User's name is Alice"]
    assert texts(lc.at_snapshot(before).items) == old
    restored = Lifecycle.from_json(lc.to_json())
    assert texts(restored.at_snapshot(before).items) == old
    assert texts(restored.at_snapshot(after).items) == texts(coop.context[:])
