"""Keys under random adds, replacements, updates and deletions, against a simple model.

The model keeps, per key, the oracle timeline of its current component, the episode its
schedule started and its place in the overlay order; a component is forgotten (its key free)
right after the render of its last visible episode.
"""

from __future__ import annotations

from itertools import islice

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import ComponentNotFoundError, DuplicateKeyError, Lifecycle
from hydrangea.message import Message, Role
from tests.support.lifecycle_oracle import Spec, build, oracle_phases, specs

EPISODES = 40
HORIZON = 160
KEYS = [f"k{i}" for i in range(5)]

Phase = tuple[str, int | None] | None

operations = st.lists(
    st.tuples(
        st.sampled_from(["add", "replace", "delete", "update", "restart"]),
        st.sampled_from(KEYS),
        specs(),
    ),
    max_size=3,
)


class Model:
    def __init__(self) -> None:
        self.timeline: dict[str, list[Phase]] = {}
        self.start: dict[str, int] = {}
        self.order: dict[str, int] = {}
        self.text: dict[str, str] = {}
        self.next_order = 0
        self.finishing: set[str] = set()  # sent for the last time: readable until the next render

    def put(self, key: str, spec: Spec, episode: int, text: str) -> None:
        self.timeline[key] = list(islice(oracle_phases(spec), HORIZON))
        self.start[key] = episode
        self.text[key] = text
        self.finishing.discard(key)
        if key not in self.order:
            self.order[key] = self.next_order
            self.next_order += 1

    def forget(self, key: str) -> None:
        for table in (self.timeline, self.start, self.order, self.text):
            del table[key]
        self.finishing.discard(key)

    def expected(self, episode: int) -> list[tuple[str, str, Phase]]:
        for key in list(self.finishing):  # forgotten as the render began
            self.forget(key)
        shown: list[tuple[int, int, str, str, Phase]] = []
        for key in list(self.timeline):
            k = episode - self.start[key]
            phase = self.timeline[key][k]
            if phase is not None:
                rank = 0 if phase[0] == "before" else 1
                shown.append((rank, self.order[key], key, self.text[key], phase))
            if all(p is None for p in self.timeline[key][k + 1 :]):
                if phase is None:
                    self.forget(key)  # ended unseen: the key is free from now on
                else:
                    self.finishing.add(key)  # the latest request shows it: free at the next
        return [(key, text, phase) for _, _, key, text, phase in sorted(shown)]


@given(st.lists(operations, min_size=EPISODES, max_size=EPISODES))
def test_keys_replace_update_delete_follow_the_model(
    plan: list[list[tuple[str, str, Spec]]],
) -> None:
    lc = Lifecycle(Context(GatewayType.openai))
    model = Model()
    for episode, ops in enumerate(plan):
        for number, (op, key, spec) in enumerate(ops):
            text = f"{key}@{episode}.{number}"
            present = key in model.timeline
            assert (key in lc) == present
            if op == "add":
                if present and key not in model.finishing:
                    with pytest.raises(DuplicateKeyError):
                        lc.add(build(spec, key))
                else:
                    lc.add(build(spec, key).with_content(text))
                    if key in model.finishing:  # taken over: a new component, added last
                        model.forget(key)
                    model.put(key, spec, episode, text)
            elif op == "replace":
                lc.add(build(spec, key).with_content(text), replace=True)
                model.put(key, spec, episode, text)
            elif not present:
                with pytest.raises(ComponentNotFoundError):
                    lc.delete(key) if op == "delete" else lc.update(key, content=text)
            elif op == "delete":
                lc.delete(key)
                model.forget(key)
            else:
                restart = op == "restart"
                lc.update(key, content=text, restart=restart)
                model.text[key] = text
                if restart:
                    model.start[key] = episode
                    model.finishing.discard(key)
        lc.context.emplace_message(Message(role=Role.user, content=f"user {episode}"))
        request = lc.render()
        got = [
            (o.key, o.items[0]["content"], (o.phase.placement.value, o.phase.stage))
            for o in request.overlay
        ]
        assert got == model.expected(episode)
