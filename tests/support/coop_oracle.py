"""An independent, deliberately naive model of CoopContext's collector and scheduler.

It follows the rules in spec/context-areas.en.md and DESIGN.md ("CoopContext: decisions beyond
the spec page") literally, with no attempt at speed: components are found by pairwise overlap
checks, the cursor is an area object rather than an index, and the Context is a list of labels.
It shares no code with ``hydrangea.coop``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from hydrangea.context.area import AreaFlowState, AreaLifeState
from tests.support.coop_script import Script, Step, promoted_text, text

Label = tuple[Literal["msg", "reply"], str]
Outcome = Literal["ok", "boom", "gc-error"]


@dataclass(eq=False)
class ModelArea:
    script: Script
    done: int = 0
    promote_failed: bool = False
    life: AreaLifeState = AreaLifeState.retain
    flow: AreaFlowState = AreaFlowState.yielded
    span: tuple[int, int] | None = None

    @property
    def name(self) -> str:
        return self.script.name

    def step(self) -> Step | None:
        if self.done < len(self.script.steps):
            return self.script.steps[self.done]
        return None


def touching(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Closed intervals overlap when some index lies in both."""
    return any(a[0] <= i <= a[1] for i in range(b[0], b[1] + 1))


@dataclass
class CoopOracle:
    items: list[Label] = field(default_factory=list)
    ring: list[ModelArea] = field(default_factory=list)
    waiting: list[ModelArea] = field(default_factory=list)
    cursor: ModelArea | None = None
    log: list[tuple[Any, ...]] = field(default_factory=list)

    def register(self, script: Script) -> None:
        area = ModelArea(script)
        if script.start_retired:
            area.life = AreaLifeState.retired
        self.waiting.append(area)

    def reply(self, label: str) -> None:
        self.items.append(("reply", label))

    def cursor_index(self) -> int | None:
        if not self.ring:
            return None
        return self.ring.index(self.cursor) if self.cursor is not None else 0

    # -- render ------------------------------------------------------------------------------

    def render(self) -> Outcome:
        self.ring.extend(self.waiting)
        self.waiting = []
        if self.cursor is None and self.ring:
            self.cursor = self.ring[0]
        outcome = self.collect()
        if outcome != "ok":
            return outcome
        return self.unfold()

    def components(self) -> list[list[ModelArea]]:
        ranged = [a for a in self.ring if a.span is not None]
        groups: list[list[ModelArea]] = []
        seen: list[ModelArea] = []
        for first in ranged:
            if first in seen:
                continue
            group = [first]
            seen.append(first)
            grew = True
            while grew:
                grew = False
                for other in ranged:
                    if other in seen:
                        continue
                    if any(touching(m.span, other.span) for m in group):  # type: ignore[arg-type]
                        group.append(other)
                        seen.append(other)
                        grew = True
            groups.append(group)
        groups.sort(key=lambda g: max(a.span[1] for a in g), reverse=True)  # type: ignore[index]
        return groups

    def collect(self) -> Outcome:
        tail: list[ModelArea] = []
        for group in self.components():
            if any(a.life is AreaLifeState.retain for a in group):
                break
            tail.extend(group)
        tail.sort(key=lambda a: (a.span[1], self.ring.index(a)))  # type: ignore[index]
        idle = [a for a in self.ring if a.span is None and a.life is AreaLifeState.retired]
        doomed = tail + idle
        if not doomed:
            return "ok"
        new_items: list[Label] = []
        for area in tail:
            self.log.append(("promote", area.name))
            if area.script.promote_fails_once and not area.promote_failed:
                area.promote_failed = True
                return "boom"
            for k in range(area.script.promoted):
                new_items.append(("msg", promoted_text(area.name, k)))
        failures = 0
        for area in doomed:
            self.log.append(("gc_prologue", area.name))
            if area.script.gc_fails:
                failures += 1
        if tail:
            cut = min(a.span[0] for a in tail)  # type: ignore[index]
            self.items = self.items[:cut]
        self.items.extend(new_items)
        if self.cursor in doomed:
            position = self.ring.index(self.cursor)
            survivors = [
                self.ring[(position + k) % len(self.ring)]
                for k in range(len(self.ring))
                if self.ring[(position + k) % len(self.ring)] not in doomed
            ]
            self.cursor = survivors[0] if survivors else None
        self.ring = [a for a in self.ring if a not in doomed]
        return "gc-error" if failures else "ok"

    def unfold(self) -> Outcome:
        if not self.ring:
            return "ok"
        assert self.cursor is not None
        first = self.ring.index(self.cursor)
        order = self.ring[first:] + self.ring[:first]
        for area in order:
            self.cursor = area
            if area.life is AreaLifeState.retired:
                continue
            step = area.step()
            if area.span is not None:
                lo, hi = area.span
                self.log.append(("observe", area.name, tuple(self.items[lo : hi + 1])))
                if step is not None and step.fault == "observe":
                    return "boom"
                if step is not None and step.observe_retires:
                    area.life = AreaLifeState.retired
                    continue
            self.log.append(("render", area.name))
            index = area.done
            area.done += 1
            if step is None:
                area.life = AreaLifeState.retired
                area.flow = AreaFlowState.yielded
                produced = 0
            elif step.fault == "render":
                return "boom"
            else:
                area.flow = step.flow
                if step.retire:
                    area.life = AreaLifeState.retired
                produced = step.size
                for k in range(step.size):
                    self.items.append(("msg", text(area.name, index, k)))
            if produced:
                last = len(self.items) - 1
                area.span = (last - produced + 1, last) if area.span is None else (
                    area.span[0], last
                )
            if area.flow is AreaFlowState.exclusive:
                return "ok"
        self.cursor = order[0]
        return "ok"


def naive_tail(
    spans: list[tuple[int, int]], retired: list[bool]
) -> tuple[int | None, list[int]]:
    """The reclaimable tail of arbitrary spans: (detach index, indices in promote order).

    Components are grown by pairwise closed-interval overlap, ordered by their largest latest,
    and taken from the newest while every member is retired. Ties in latest go by list index.
    """
    left = list(range(len(spans)))
    groups: list[list[int]] = []
    while left:
        group = [left.pop(0)]
        changed = True
        while changed:
            changed = False
            for j in list(left):
                if any(touching(spans[i], spans[j]) for i in group):
                    group.append(j)
                    left.remove(j)
                    changed = True
        groups.append(group)
    groups.sort(key=lambda g: max(spans[i][1] for i in g), reverse=True)
    taken: list[int] = []
    for group in groups:
        if not all(retired[i] for i in group):
            break
        taken.extend(group)
    taken.sort(key=lambda i: (spans[i][1], i))
    start = min((spans[i][0] for i in taken), default=None)
    return start, taken


def naive_cursor(cursor: int, removed: list[bool]) -> int:
    """Index after removal of the first survivor at or after ``cursor``, wrapping; 0 if none."""
    survivors = [i for i, gone in enumerate(removed) if not gone]
    if not survivors:
        return 0
    size = len(removed)
    for k in range(size):
        i = (cursor + k) % size
        if not removed[i]:
            return survivors.index(i)
    raise AssertionError("unreachable")
