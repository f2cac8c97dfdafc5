"""Scripted areas for the stateful CoopContext test: behaviour fixed in advance, as plain data.

The same :class:`Script` drives the real :class:`ScriptedArea` (registered with a CoopContext)
and the oracle's model of that area, so both sides can be compared event by event.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from hydrangea.context import NativeContent
from hydrangea.context.area import AreaFlowState, AreaLifeState
from hydrangea.message import Message, Role

Fault = Literal["none", "observe", "render"]


class Boom(Exception):
    """The exception a scripted callback raises."""


@dataclass(frozen=True)
class Step:
    """What one scripted render (and the observe before it) does."""

    size: int
    """How many messages render() returns."""
    flow: AreaFlowState
    """flow_state set by render()."""
    retire: bool = False
    """render() retires the area."""
    observe_retires: bool = False
    """observe() before this render retires the area."""
    fault: Fault = "none"
    """Which callback raises Boom for this step."""


@dataclass(frozen=True)
class Script:
    """An area's whole behaviour. After the last step, render() returns [] and retires."""

    name: str
    steps: tuple[Step, ...]
    start_retired: bool = False
    promoted: int = 0
    promote_fails_once: bool = False
    gc_fails: bool = False


def text(name: str, render_index: int, k: int) -> str:
    """The unique text of the k-th message of an area's render."""
    return f"{name}.{render_index}.{k}"


def promoted_text(name: str, k: int) -> str:
    return f"{name}.p{k}"


class ScriptedArea:
    """A real area following a Script and logging every callback into a shared list."""

    def __init__(self, script: Script, log: list[tuple[Any, ...]]) -> None:
        self.script = script
        self.log = log
        self.done = 0
        self.promote_failed = False
        self.life_state = AreaLifeState.retired if script.start_retired else AreaLifeState.retain
        self.flow_state = AreaFlowState.yielded

    def __repr__(self) -> str:
        return f"ScriptedArea({self.script.name!r})"

    def _step(self) -> Step | None:
        steps = self.script.steps
        return steps[self.done] if self.done < len(steps) else None

    def observe(self, context: Sequence[NativeContent]) -> None:
        self.log.append(("observe", self.script.name, tuple(context)))
        step = self._step()
        if step is None:
            return
        if step.fault == "observe":
            raise Boom(f"{self.script.name} observe")
        if step.observe_retires:
            self.life_state = AreaLifeState.retired

    def render(self) -> list[Message]:
        self.log.append(("render", self.script.name))
        step = self._step()
        index = self.done
        self.done += 1
        if step is None:
            self.flow_state = AreaFlowState.yielded
            self.life_state = AreaLifeState.retired
            return []
        if step.fault == "render":
            raise Boom(f"{self.script.name} render")
        self.flow_state = step.flow
        if step.retire:
            self.life_state = AreaLifeState.retired
        return [
            Message(role=Role.user, content=text(self.script.name, index, k))
            for k in range(step.size)
        ]

    def promote(self) -> tuple[Message, ...]:
        self.log.append(("promote", self.script.name))
        if self.script.promote_fails_once and not self.promote_failed:
            self.promote_failed = True
            raise Boom(f"{self.script.name} promote")
        return tuple(
            Message(role=Role.user, content=promoted_text(self.script.name, k))
            for k in range(self.script.promoted)
        )

    def gc_prologue(self) -> None:
        self.log.append(("gc_prologue", self.script.name))
        if self.script.gc_fails:
            raise Boom(f"{self.script.name} gc_prologue")
