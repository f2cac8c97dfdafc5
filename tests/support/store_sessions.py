"""Sessions for the store tests: a scriptable area, turns, and an independent view of a session.

The view (:func:`observed`) uses only the public, file-based persistence and read APIs
(``Context.to_json``, ``Lifecycle.to_json``, ``CoopContext.snapshot``), not the stores' own
code, so a test that compares a loaded session with the original checks the store against an
oracle it does not share code with.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hydrangea.context import Context
from hydrangea.context.area import AreaFlowState, AreaLifeState
from hydrangea.coop import CoopContext
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle
from hydrangea.message import Message, Role

GATEWAY = GatewayType.openai


class Say:
    """An area that renders what it was told to say, once; it retires when told to."""

    def __init__(self, name: str, *, retired: bool = False) -> None:
        self.name = name
        self.queue: list[str] = []
        self.life_state = AreaLifeState.retired if retired else AreaLifeState.retain
        self.flow_state = AreaFlowState.yielded

    def __repr__(self) -> str:
        return f"Say({self.name!r})"

    def say(self, text: str) -> None:
        self.queue.append(text)

    def retire(self) -> None:
        self.life_state = AreaLifeState.retired

    def observe(self, items: object) -> None:
        del items

    def render(self) -> list[Message]:
        out = [Message(role=Role.user, content=f"[{self.name}] {t}") for t in self.queue]
        self.queue = []
        return out

    def promote(self) -> tuple[Message, ...]:
        return (Message(role=Role.user, content=f"[{self.name}] summary"),)

    def gc_prologue(self) -> None:
        return None


def areas_attach(names: list[str], retired: set[str] | None = None) -> Callable[[Context],
                                                                             CoopContext]:
    """An ``attach`` that registers ``Say`` areas of these names again, in order."""

    def attach(context: Context) -> CoopContext:
        coop = CoopContext(context)
        for name in names:
            coop.register(Say(name, retired=name in (retired or set())))
        return coop

    return attach


def turn(context: Context, label: str) -> None:
    """One exchange appended straight to the Context: a user message and the model's reply."""
    context.emplace_message(Message(role=Role.user, content=f"user {label}"))
    context.push_back({"role": "assistant", "content": f"reply {label}"})


def new_lifecycle(areas: list[str] = ["a", "b"]) -> Lifecycle:  # noqa: B006 - read only
    """A Lifecycle over a CoopContext with ``Say`` areas and a few components."""
    context = Context(GATEWAY)
    context.emplace_message(Message(role=Role.system, content="You are a test."))
    coop = CoopContext(context)
    for name in areas:
        coop.register(Say(name))
    lc = Lifecycle(coop)
    lc.add(Component("stay short", key="style", ttl=None))
    lc.add(Component("check the ticket", key="nudge", ttl=2, cadence=3, tags=["ops"]))
    return lc


def observed(value: Context | CoopContext | Lifecycle) -> Any:
    """A JSON-comparable view of a session through the public APIs only."""
    if isinstance(value, Context):
        return json.loads(value.to_json())
    if isinstance(value, CoopContext):
        snap = value.snapshot()
        return {
            "context": json.loads(value.context.to_json()),
            "cursor": snap.cursor,
            "renders": snap.renders,
            "ranges": [None if a.effect_range is None else
                       (a.effect_range.earliest, a.effect_range.latest) for a in snap.areas],
        }
    from hydrangea.lifecycle.persist import component_to_json

    last = value.last_request
    view = {
        "context": json.loads(value.context.to_json()),
        "episode": value.episode,
        "components": [(s.key, s.start, s.committed, component_to_json(s.component))
                       for s in value.states()],
        "snapshots": [
            (sid, snap.trigger, snap.episode, snap.items, snap.request.overlay_keys,
             snap.request.anchor)
            for sid in value.history.ids()
            for snap in [value.at_snapshot(sid)]
        ],
        "last": None if last is None else (last.episode, last.items, last.overlay_keys,
                                           last.anchor),
    }
    if isinstance(value.renderer, CoopContext):
        view["coop"] = observed(value.renderer)
    return view


def areas_of(coop: CoopContext) -> list[Say]:
    """The ``Say`` areas in the ring and pending, in registration order."""
    snap = coop.snapshot()
    found: list[object] = [a.area for a in snap.areas]
    found.extend(snap.pending)
    return [a for a in found if isinstance(a, Say)]
