"""A recording test area for the CoopContext scenario tests."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hydrangea.context import Context, NativeContent
from hydrangea.context.area import AreaFlowState, AreaLifeState
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role

Event = tuple[Any, ...]
Hook = Callable[["Probe"], None]

GATEWAY = GatewayType.openai


def native(*texts: str) -> tuple[NativeContent, ...]:
    """The items a user message per text becomes, obtained through a scratch Context."""
    scratch = Context(GATEWAY)
    for text in texts:
        scratch.emplace_message(Message(role=Role.user, content=text))
    return scratch[:]


def reply(text: str) -> NativeContent:
    """A model response item pushed directly into a Context."""
    return {"role": "assistant", "content": text}


class Probe:
    """An area whose outputs are scripted and whose every callback is logged."""

    def __init__(
        self,
        name: str,
        log: list[Event],
        outputs: Sequence[Sequence[str]] = (),
        *,
        promoted: Sequence[str] = (),
        flow: AreaFlowState = AreaFlowState.yielded,
    ) -> None:
        self.name = name
        self.log = log
        self.outputs = [list(o) for o in outputs]
        self.promoted = tuple(promoted)
        self.life_state = AreaLifeState.retain
        self.flow_state = flow
        self.observed: list[tuple[NativeContent, ...]] = []
        self.on_observe: Hook | None = None
        self.on_render: Hook | None = None
        self.on_promote: Hook | None = None
        self.on_gc: Hook | None = None

    def __repr__(self) -> str:
        return f"Probe({self.name!r})"

    def retire(self) -> None:
        self.life_state = AreaLifeState.retired

    def observe(self, context: Sequence[NativeContent]) -> None:
        self.log.append(("observe", self.name))
        self.observed.append(tuple(context))
        if self.on_observe is not None:
            self.on_observe(self)

    def render(self) -> list[Message]:
        self.log.append(("render", self.name))
        texts = self.outputs.pop(0) if self.outputs else []
        if self.on_render is not None:
            self.on_render(self)
        return [Message(role=Role.user, content=t) for t in texts]

    def promote(self) -> tuple[Message, ...]:
        self.log.append(("promote", self.name))
        if self.on_promote is not None:
            self.on_promote(self)
        return tuple(Message(role=Role.user, content=t) for t in self.promoted)

    def gc_prologue(self) -> None:
        self.log.append(("gc_prologue", self.name))
        if self.on_gc is not None:
            self.on_gc(self)
