"""Scenario tests for each lifecycle type, keys and tags, and permanent components."""

from __future__ import annotations

import pytest

from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import (
    Component,
    ComponentNotFoundError,
    DuplicateKeyError,
    InvalidComponentError,
    InvalidTargetError,
    Lifecycle,
    LifecycleKind,
    PermanentComponentError,
    Placement,
    Stage,
)
from hydrangea.message import Message, Role


def turn(lc: Lifecycle, n: int) -> list[list[str]]:
    """Run ``n`` episodes (user prompt, render, reply); return the texts each request sent
    anew (what was sent before is history: every request starts with the previous one)."""
    seen: list[list[str]] = []
    for _ in range(n):
        sent = lc.context.sent
        previous = [item["content"] for item in lc.context[:sent]]
        lc.context.emplace_message(Message(role=Role.user, content="prompt"))
        request = lc.render()
        texts = [m["content"] for m in request.kwargs["messages"]]
        assert texts[:sent] == previous
        seen.append(texts[sent:])
        lc.context.push_back({"role": "assistant", "content": "reply"})
    return seen


def shown(seen: list[list[str]], text: str) -> list[int]:
    return [i for i, texts in enumerate(seen) if text in texts]


def fresh() -> Lifecycle:
    return Lifecycle(Context(GatewayType.openai))


def test_cyclic_ttl2_cadence5_follows_the_spec_schedule() -> None:
    lc = fresh()
    turn(lc, 3)  # created later than episode 0: counting starts at its own first episode
    lc.add(Component("Check in with user", ttl=2, cadence=5))
    seen = turn(lc, 13)
    assert shown(seen, "Check in with user") == [0, 1, 5, 6, 10, 11]
    assert LifecycleKind.cyclic is Component("x", ttl=2, cadence=5).kind


def test_temporary_ttl_reaches_the_model_exactly_n_times() -> None:
    lc = fresh()
    lc.add(Component("Ask about preferences", ttl=3))
    seen = turn(lc, 10)
    assert shown(seen, "Ask about preferences") == [0, 1, 2]
    assert sum(texts.count("Ask about preferences") for texts in seen) == 3


def test_sticky_is_in_every_request_exactly_once_at_the_tail() -> None:
    lc = fresh()
    lc.add(Component("Current task: Research", ttl=1, cadence=1, key="mode"))
    seen = turn(lc, 25)
    for texts in seen:
        assert texts.count("Current task: Research") == 1
        assert texts[-1] == "Current task: Research"
    # what was sent is history: one sending per episode, each where it was sent
    history = [m["content"] for m in lc.context]
    assert history.count("Current task: Research") == 25
    assert history[:3] == ["prompt", "Current task: Research", "reply"]


def test_permanent_is_appended_once_and_stays() -> None:
    lc = fresh()
    lc.add(Component("User's name is Alice", key="name"))
    seen = turn(lc, 5)
    history = [m["content"] for m in lc.context]
    assert history.count("User's name is Alice") == 1
    assert history[:2] == ["prompt", "User's name is Alice"]
    assert [texts.count("User's name is Alice") for texts in seen] == [1, 0, 0, 0, 0]
    assert lc.get("name").kind is LifecycleKind.permanent


def test_staged_lifecycle_moves_then_stays_in_its_last_stage() -> None:
    lc = fresh()
    lc.add(
        Component(
            "alert",
            key="alert",
            stages=[Stage(Placement.after, 2), Stage(Placement.before, 3), Stage(Placement.after)],
        )
    )
    positions = []
    for _ in range(9):
        lc.context.emplace_message(Message(role=Role.user, content="prompt"))
        request = lc.render()
        (item,) = request.overlay
        positions.append((item.phase.stage, item.phase.placement.value))
        texts = [m["content"] for m in request.items]
        expected_index = (
            len(texts) - 1 if item.phase.placement is Placement.after else len(texts) - 2
        )
        assert len(texts) - 1 - texts[::-1].index("alert") == expected_index  # the newest one
        lc.context.push_back({"role": "assistant", "content": "reply"})
    assert positions == [(0, "after")] * 2 + [(1, "before")] * 3 + [(2, "after")] * 4


def test_cycling_forever_and_a_fixed_number_of_times() -> None:
    lc = fresh()
    two = [Stage(Placement.after, 1), Stage(Placement.before, 1)]
    lc.add(Component("forever", key="f", stages=two, cycle=True))
    lc.add(Component("thrice", key="t", stages=two, cycle=3))
    lc.add(Component("once", key="o", stages=two))
    counts = {"f": 0, "t": 0, "o": 0}
    stages_f = []
    for _ in range(12):
        request = lc.render()
        for item in request.overlay:
            counts[item.key] += 1
            if item.key == "f":
                stages_f.append(item.phase.stage)
    assert counts == {"f": 12, "t": 6, "o": 2}
    assert stages_f == [0, 1] * 6
    assert "t" not in lc and "o" not in lc and "f" in lc  # expired components are forgotten


def test_overlay_order_is_before_slot_then_after_slot_then_insertion_order() -> None:
    lc = fresh()
    lc.add(Component("a1", ttl=5, key="a1"))
    lc.add(Component("b1", ttl=5, key="b1", placement="before"))
    lc.add(Component("a2", ttl=5, key="a2"))
    lc.add(Component("b2", ttl=5, key="b2", placement=Placement.before))
    lc.context.emplace_message(Message(role=Role.user, content="newest"))
    request = lc.render()
    assert request.overlay_keys == ("b1", "b2", "a1", "a2")
    assert [m["content"] for m in request.items] == ["b1", "b2", "newest", "a1", "a2"]


def test_duplicate_key_is_an_error_and_nothing_changes() -> None:
    lc = fresh()
    lc.add(Component("one", ttl=3, key="k"))
    with pytest.raises(DuplicateKeyError, match="'k'"):
        lc.add(Component("two", ttl=3, key="k"))
    assert lc.get("k").content.text == "one"
    assert len(lc) == 1


def test_replace_by_key_keeps_the_position_and_restarts_the_schedule() -> None:
    lc = fresh()
    lc.add(Component("first", ttl=3, key="k"))
    lc.add(Component("other", ttl=9, key="z"))
    turn(lc, 2)
    lc.add(Component("Current Mode: Writing", ttl=3, key="k"), replace=True)
    assert lc.keys() == ("k", "z")
    seen = turn(lc, 4)
    assert shown(seen, "Current Mode: Writing") == [0, 1, 2]
    assert all("first" not in texts for texts in seen)
    assert seen[0][-2:] == ["Current Mode: Writing", "other"]


def test_update_keeps_key_and_schedule_unless_restarted() -> None:
    lc = fresh()
    lc.add(Component("v1", ttl=4, key="k", tags=["a"]))
    turn(lc, 2)
    lc.update("k", content="v2", tags=["b"])
    assert lc.get_by_tags(["b"])[0].content.text == "v2"
    seen = turn(lc, 3)
    assert shown(seen, "v2") == [0, 1]  # episodes 2 and 3 of its original schedule
    assert "k" not in lc  # it expired: its key is free, and an update fails
    with pytest.raises(ComponentNotFoundError):
        lc.update("k", restart=True)


def test_update_restart_begins_a_new_schedule() -> None:
    lc = fresh()
    lc.add(Component("v1", ttl=2, cadence=10, key="k"))
    turn(lc, 5)
    lc.update("k", restart=True)
    seen = turn(lc, 3)
    assert shown(seen, "v1") == [0, 1]


def test_tags_any_and_all() -> None:
    lc = fresh()
    lc.add(Component("x", key="x", tags=["user", "important"]))
    lc.add(Component("y", ttl=2, key="y", tags=["user"]))
    lc.add(Component("z", ttl=2, key="z", tags=["settings"]))
    assert [c.key for c in lc.get_by_tags(["user", "important"])] == ["x", "y"]
    assert [c.key for c in lc.get_by_tags(["user", "important"], match="all")] == ["x"]
    assert lc.get_by_tags(["nothing"]) == []
    with pytest.raises(InvalidComponentError):
        lc.get_by_tags([])


def test_delete_by_key() -> None:
    lc = fresh()
    lc.add(Component("temp", ttl=5, key="t"))
    lc.add(Component("perm", key="p"))
    assert lc.delete("p").content.text == "perm"  # not yet in the history: it can go
    turn(lc, 1)
    assert lc.delete("t").key == "t"
    seen = turn(lc, 2)
    assert all("temp" not in texts and "perm" not in texts for texts in seen)
    with pytest.raises(ComponentNotFoundError, match="'t'") as info:
        lc.get("t")
    assert isinstance(info.value, KeyError)


def test_a_permanent_component_in_the_history_cannot_be_deleted_or_replaced() -> None:
    lc = fresh()
    lc.add(Component("perm", key="p", tags=["t"]))
    turn(lc, 1)
    before = lc.context[:]
    with pytest.raises(PermanentComponentError):
        lc.delete("p")
    with pytest.raises(PermanentComponentError):
        lc.add(Component("again", key="p"), replace=True)
    with pytest.raises(PermanentComponentError):
        lc.update("p", content="changed")
    lc.update("p", tags=["u"])  # tags are metadata, not history
    assert lc.get("p").tags == frozenset({"u"})
    assert lc.context[:] == before


def test_keys_are_assigned_when_missing() -> None:
    lc = fresh()
    key = lc.add(Component("anonymous", ttl=1))
    assert key.startswith("#")
    assert lc.get(key).content.text == "anonymous"
    with pytest.raises(InvalidComponentError):
        lc.add(Component("x", key="#7"))


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"ttl": 0}, "ttl"),
        ({"ttl": True}, "ttl"),
        ({"cadence": 3}, "cadence needs a ttl"),
        ({"placement": "before"}, "permanent"),
        ({"ttl": 2, "placement": "middle"}, "placement"),
        ({"stages": []}, "at least one"),
        ({"stages": [Stage(Placement.after, None), Stage(Placement.after, 1)]}, "last stage"),
        ({"stages": [Stage(Placement.after, None)], "cycle": True}, "cycling"),
        ({"stages": [Stage(Placement.after, 1)], "ttl": 3}, "staged"),
        ({"stages": [Stage(Placement.after, 1)], "cycle": 0}, "cycle"),
        ({"ttl": 2, "cycle": 2}, "staged components only"),
        ({"key": ""}, "key"),
        ({"tags": "user"}, "one string"),
        ({"tags": [""]}, "tag"),
    ],
)
def test_invalid_components_are_rejected(kwargs: dict[str, object], needle: str) -> None:
    with pytest.raises(InvalidComponentError, match=needle):
        Component("x", **kwargs)  # type: ignore[arg-type]


def test_invalid_stage_ttl() -> None:
    with pytest.raises(InvalidComponentError):
        Stage(Placement.after, 0)


def test_render_is_not_reentrant_and_failures_do_not_advance() -> None:
    class Failing:
        def __init__(self, context: Context) -> None:
            self._context = context
            self.fail = True

        @property
        def context(self) -> Context:
            return self._context

        def render(self) -> Context:
            if self.fail:
                raise RuntimeError("area failed")
            return self._context

    renderer = Failing(Context(GatewayType.openai))
    lc = Lifecycle(renderer)
    lc.add(Component("once", ttl=1))
    with pytest.raises(RuntimeError):
        lc.render()
    assert lc.episode == -1
    renderer.fail = False
    assert [o.items[0]["content"] for o in lc.render().overlay] == ["once"]
    assert lc.episode == 0


def test_a_lifecycle_needs_a_coop_context_or_a_context() -> None:
    with pytest.raises(InvalidTargetError, match="list"):
        Lifecycle([])  # type: ignore[arg-type]
    with pytest.raises(InvalidComponentError):
        fresh().add("just a string")  # type: ignore[arg-type]


def test_resend_when_changed_sends_once_then_only_after_a_change() -> None:
    lc = Lifecycle(Context(GatewayType.openai), resend="when_changed")
    lc.add(Component("Mode: research", ttl=1, cadence=1, key="mode"))
    seen = turn(lc, 4)
    assert shown(seen, "Mode: research") == [0]  # still in the history: not sent again
    lc.update("mode", content="Mode: writing")
    seen = turn(lc, 3)
    assert shown(seen, "Mode: writing") == [0]
    with pytest.raises(InvalidComponentError, match="resend"):
        Lifecycle(Context(GatewayType.openai), resend="sometimes")


def test_resend_when_changed_sends_again_what_a_collection_cut_in_the_same_render() -> None:
    from hydrangea.coop import CoopContext
    from tests.support.coop_areas import Probe

    coop = CoopContext(Context(GatewayType.openai))
    lc = Lifecycle(coop, resend="when_changed")
    tool = Probe("tool", [], [["tool step"]], promoted=["tool summary"])
    coop.register(tool)
    lc.add(Component("Mode: research", ttl=1, cadence=1, key="mode"))
    coop.context.emplace_message(Message(role=Role.user, content="q0"))
    lc.render()  # tool step, then the mode line
    coop.context.push_back({"role": "assistant", "content": "a0"})
    tool.life_state = tool.life_state.__class__.retired
    request = lc.render()  # the collection cuts from "tool step": the mode line went with it
    texts = [m["content"] for m in request.items]
    assert "tool step" not in texts and "tool summary" in texts
    assert texts[-1] == "Mode: research" and request.overlay_keys == ("mode",)
