"""Lifecycle per-turn cost: 1,000 turns with 50 live components.

The lifecycle's own work per turn (``Lifecycle.render()``: the CoopContext render, permanent
appends and the overlay) must not grow with the history. Building the provider kwargs walks the
whole history (the SDK serializes all of it anyway), so its cost grows linearly; it is timed and
reported separately.

Run: ``.venv/bin/python bench/lifecycle.py`` (writes bench/results/lifecycle.json).
"""

from __future__ import annotations

import gc
import json
import os
import platform
import time
from collections.abc import Sequence
from pathlib import Path

from hydrangea.context import Context, NativeContent
from hydrangea.context.area import AreaFlowState, AreaLifeState
from hydrangea.coop import CoopContext
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle, Placement, Stage
from hydrangea.message import Message, Role

TURNS = 1_000
LIVE = 50
RUNS = 7
WINDOW = 10  # turns before each measuring point; the fastest one counts (best-of)
POINTS = (10, 100, 250, 500, TURNS)


class StatusArea:
    """A yielded area that renders a short status line every fifth turn."""

    def __init__(self) -> None:
        self.life_state = AreaLifeState.retain
        self.flow_state = AreaFlowState.yielded
        self.calls = 0

    def observe(self, context: Sequence[NativeContent]) -> None:
        _ = context

    def render(self) -> list[Message]:
        self.calls += 1
        if self.calls % 5:
            return []
        return [Message(role=Role.user, content=f"status {self.calls}")]

    def promote(self) -> tuple[Message, ...]:
        return ()

    def gc_prologue(self) -> None:
        pass


def live_components(lc: Lifecycle) -> None:
    """Keep 50 ephemeral components of every kind live."""
    assert LIVE == 50
    two = [Stage(Placement.before, 2), Stage(Placement.after, 3)]
    for i in range(10):
        lc.add(Component(f"sticky {i}", ttl=1, cadence=1, key=f"sticky{i}"))
    for i in range(15):
        lc.add(Component(f"cyclic {i}", ttl=2, cadence=3 + i % 5, key=f"cyclic{i}"))
    for i in range(15):
        lc.add(Component(f"staged {i}", stages=two, cycle=True, key=f"staged{i}"))
    for i in range(10):
        lc.add(Component(f"temp {i}", ttl=1_000_000, key=f"temp{i}", placement="before"))


def run() -> tuple[list[int], list[int]]:
    coop = CoopContext(Context(GatewayType.openai))
    coop.register(StatusArea())
    lc = Lifecycle(coop)
    live_components(lc)
    render_ns: list[int] = []
    kwargs_ns: list[int] = []
    for turn in range(1, TURNS + 1):
        coop.context.emplace_message(Message(role=Role.user, content=f"question {turn}"))
        if turn % 10 == 0:
            lc.add(Component(f"fact learned at turn {turn}"))  # a permanent component
        if turn % 7 == 0:  # replace one temporary component now and then
            lc.add(Component(f"temp v{turn}", ttl=1_000_000, key="temp0"), replace=True)
        t0 = time.perf_counter_ns()
        request = lc.render()
        t1 = time.perf_counter_ns()
        render_ns.append(t1 - t0)
        if any(point - WINDOW < turn <= point for point in POINTS):  # kwargs only where measured
            t1 = time.perf_counter_ns()
            kwargs = request.kwargs
            kwargs_ns.append(time.perf_counter_ns() - t1)
            assert kwargs["messages"]
        else:
            kwargs_ns.append(0)
        assert len(request.overlay) <= LIVE
        coop.context.push_back({"role": "assistant", "content": f"answer {turn}"})
    return render_ns, kwargs_ns


def at(samples: list[int], turn: int) -> float:
    """The fastest of the WINDOW turns ending at ``turn`` (1-based), in microseconds.

    The machine is shared; the minimum is the least disturbed measurement of the same work.
    """
    return min(samples[turn - WINDOW : turn]) / 1_000


def main() -> None:
    best: dict[str, dict[int, float]] = {"render": {}, "kwargs": {}}
    gc.disable()
    try:
        for _ in range(RUNS):
            render_ns, kwargs_ns = run()
            for name, samples in (("render", render_ns), ("kwargs", kwargs_ns)):
                for point in POINTS:
                    value = at(samples, point)
                    best[name][point] = min(best[name].get(point, value), value)
            gc.collect()
    finally:
        gc.enable()
    ratio = {name: best[name][TURNS] / best[name][10] for name in best}
    print(f"lifecycle: {TURNS} turns, {LIVE} live components, best of {RUNS} runs")
    print(
        f"  render (lifecycle work): turn 10 {best['render'][10]:.1f} us, "
        f"turn {TURNS} {best['render'][TURNS]:.1f} us, ratio {ratio['render']:.2f} "
        f"({'OK' if ratio['render'] <= 1.5 else 'OVER'} 1.5x)"
    )
    print(
        f"  kwargs (walks the whole history): turn 10 {best['kwargs'][10]:.1f} us, "
        f"turn {TURNS} {best['kwargs'][TURNS]:.1f} us, ratio {ratio['kwargs']:.2f} "
        "(linear in history length, not bounded)"
    )
    result = {
        "benchmark": "lifecycle",
        "turns": TURNS,
        "live_components": LIVE,
        "runs": RUNS,
        "window": WINDOW,
        "render_us": {str(k): round(v, 2) for k, v in best["render"].items()},
        "kwargs_us": {str(k): round(v, 2) for k, v in best["kwargs"].items()},
        "render_ratio": round(ratio["render"], 3),
        "kwargs_ratio": round(ratio["kwargs"], 3),
        "render_within_1_5x": ratio["render"] <= 1.5,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
    }
    out = Path(__file__).parent / "results" / "lifecycle.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
