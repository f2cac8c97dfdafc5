"""What the library's spans cost an agent turn when nobody records them.

One agent turn = ``Lifecycle.render()`` + ``request.kwargs`` + ``push_back(reply, route=area)``
(the route reads the reply back). One session per variant, all in one process; at every turn
number each session takes its turn, in a rotating order, so the shared machine's noise hits
them alike. The figure is the median over the turns of (variant's turn / stubbed turn of the
same number):

* ``stubbed``: the traced methods' undecorated functions (``__wrapped__``, in subclasses, so no
  class is patched while the variants take turns): the code as it would be without tracing;
* ``unavailable``: the state the library is in when OpenTelemetry is not installed (its
  tracer resolved to ``None``; the import is not retried);
* ``disabled``: OpenTelemetry installed, ``tracing.configure(enabled=False)``;
* ``api-no-sdk`` (for information): OpenTelemetry's API with no SDK (its no-op provider):
  every traced call starts OpenTelemetry's invalid span and attaches nothing;
* ``recording`` (for information): an SDK provider with an in-memory exporter; attributes
  computed on every span.

The target: ``unavailable`` and ``disabled`` within 1.03x of ``stubbed``.

Run: ``.venv/bin/python bench/tracing_overhead.py [anthropic|openai|...]``
(writes bench/results/tracing_overhead_<gateway>.json).
"""

from __future__ import annotations

import gc
import json
import os
import platform
import statistics
import sys
import time
import timeit
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hydrangea import tracing
from hydrangea.context import Context, NativeContent
from hydrangea.context.area import AreaFlowState, AreaLifeState
from hydrangea.coop import CoopContext
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle
from hydrangea.lifecycle.history import LifecycleRequest
from hydrangea.message import Message, Role

TURNS = 1_000
INFO_TURNS = 300
ROUNDS = 2
TARGET = 1.03

REPLIES: dict[GatewayType, Callable[[str], dict[str, Any]]] = {
    GatewayType.openai: lambda text: {"role": "assistant", "content": text},
    GatewayType.openai_responses: lambda text: {
        "type": "message", "id": f"msg_{len(text)}", "status": "completed", "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    },
    GatewayType.anthropic: lambda text: {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 50, "output_tokens": 9, "cache_read_input_tokens": 2000},
    },
    GatewayType.gemini: lambda text: {"role": "model", "parts": [{"text": text}]},
}


class ChatArea:
    """Asks one question per turn and takes the routed reply."""

    def __init__(self) -> None:
        self.life_state = AreaLifeState.retain
        self.flow_state = AreaFlowState.yielded
        self.turn = 0
        self.replies: list[Message] = []

    def observe(self, context: Sequence[NativeContent]) -> None:
        _ = context

    def render(self) -> list[Message]:
        self.turn += 1
        return [Message(role=Role.user, content=f"question {self.turn}: what changed?")]

    def promote(self) -> tuple[Message, ...]:
        return ()

    def gc_prologue(self) -> None:
        pass

    def route(self, reply: Message) -> None:
        self.replies.append(reply)


class _Session:
    """One agent session; ``turn()`` runs one agent turn and returns its nanoseconds."""

    def __init__(self, gateway: GatewayType, stubbed: bool) -> None:
        self.context = Context(gateway)
        self.context.emplace_message(
            Message(role=Role.system, content="You are a careful agent. " * 40)
        )
        coop = (_StubCoop if stubbed else CoopContext)(self.context)
        self.area = ChatArea()
        coop.register(self.area)
        self.lifecycle = (_StubLifecycle if stubbed else Lifecycle)(coop)
        self.lifecycle.add(Component("Answer in one line.", ttl=None, key="style"))
        self.lifecycle.add(Component("Reminder: cite the turn.", ttl=1, cadence=1, key="rem"))
        self.stubbed = stubbed
        self.reply = REPLIES[gateway]
        self.turns = 0

    def turn(self) -> int:
        self.turns += 1
        reply = self.reply(f"answer {self.turns}")
        started = time.perf_counter_ns()
        request = self.lifecycle.render()
        kwargs = _kwargs(request) if self.stubbed else request.kwargs
        self.context.push_back(reply, route=self.area)
        elapsed = time.perf_counter_ns() - started
        assert kwargs
        return elapsed


# The code without tracing: the undecorated functions (``__wrapped__``), in subclasses so that
# no class is patched while the variants take turns.
class _StubCoop(CoopContext):
    __slots__ = ()
    render = CoopContext.render.__wrapped__  # type: ignore[attr-defined]


class _StubLifecycle(Lifecycle):
    __slots__ = ()
    render = Lifecycle.render.__wrapped__  # type: ignore[attr-defined]


_kwargs = LifecycleRequest.__dict__["kwargs"].fget.__wrapped__


_STATES: dict[str, tuple[Any, ...]] = {}
_FIELDS = ("settings", "tracer", "provider", "use_span")


def _prepare(provider: Any) -> None:
    """Configure each variant once through the public API (loading its tracer), and keep the
    resulting state, so taking turns costs four attribute writes and no reload."""
    from opentelemetry import trace

    setups: dict[str, Callable[[], object]] = {
        "stubbed": lambda: tracing.configure(enabled=False),
        "disabled": lambda: tracing.configure(enabled=False),
        "api-no-sdk": lambda: tracing.configure(tracer_provider=trace.NoOpTracerProvider()),
        "recording": lambda: tracing.configure(tracer_provider=provider),
        "unavailable": tracing.configure,
    }
    for name, setup in setups.items():
        setup()
        tracing._tracer()  # load it
        if name == "unavailable":
            tracing._STATE.tracer = None  # what a failed `import opentelemetry` leaves
        _STATES[name] = tuple(getattr(tracing._STATE, f) for f in _FIELDS)
    tracing.configure()


def _enter(name: str) -> None:
    """Put the process in the variant's tracing state."""
    for field, value in zip(_FIELDS, _STATES[name], strict=True):
        setattr(tracing._STATE, field, value)


CALLS_PER_TURN = 3  # Lifecycle.render, CoopContext.render, LifecycleRequest.kwargs


def _wrapper_cost() -> float:
    """Nanoseconds a traced call adds to the bare call while spans are off (best of 7)."""

    def bare(x: int) -> int:
        return x

    wrapped = tracing.traced("bench", lambda result, x: {})(bare)
    tracing.configure(enabled=False)
    number = 200_000
    bare_ns = min(timeit.repeat(lambda: bare(1), number=number, repeat=7)) / number * 1e9
    wrapped_ns = min(timeit.repeat(lambda: wrapped(1), number=number, repeat=7)) / number * 1e9
    tracing.configure()
    return wrapped_ns - bare_ns




def compare(
    gateway: GatewayType, names: list[str], turns: int, provider: Any
) -> tuple[dict[str, float], dict[str, float]]:
    """Median per-turn ratio to ``stubbed`` and best microseconds a turn, for each variant."""
    per_turn: dict[str, list[float]] = {name: [] for name in names}
    best: dict[str, int] = {}
    gc.disable()
    try:
        for _ in range(ROUNDS):
            sessions = {name: _Session(gateway, name == "stubbed") for name in names}
            spent = dict.fromkeys(names, 0)
            for turn in range(turns):  # the variants take turns, so noise hits them alike,
                k = turn % len(names)  # and each goes first as often as the others
                took = {}
                for name in names[k:] + names[:k]:
                    _enter(name)
                    took[name] = sessions[name].turn()
                    spent[name] += took[name]
                for name in names:
                    per_turn[name].append(took[name] / took["stubbed"])
            tracing.configure()
            for name in names:
                best[name] = min(best.get(name, spent[name]), spent[name])
            gc.collect()
    finally:
        gc.enable()
        tracing.configure()
    ratios = {name: statistics.median(per_turn[name]) for name in names}
    return ratios, {name: best[name] / turns / 1_000 for name in names}


def main() -> None:
    gateway = GatewayType(sys.argv[1]) if len(sys.argv) > 1 else GatewayType.anthropic
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    _prepare(provider)
    off, off_us = compare(gateway, ["stubbed", "unavailable", "disabled"], TURNS, provider)
    on, on_us = compare(gateway, ["stubbed", "api-no-sdk", "recording"], INFO_TURNS, provider)
    assert len(exporter.get_finished_spans()) >= 3 * INFO_TURNS
    wrapper_ns = _wrapper_cost()
    print(f"tracing overhead on {gateway.value}, {ROUNDS} rounds; ratio = median over turns of "
          "(variant turn / stubbed turn of the same turn number)")
    print(f"  spans off, {TURNS} turns:")
    for name, ratio in off.items():
        verdict = "" if name == "stubbed" else (" OK" if ratio <= TARGET else f" OVER {TARGET}x")
        print(f"    {name:12} {off_us[name]:8.1f} us/turn  {ratio:.3f}x{verdict}")
    print(f"  for information, {INFO_TURNS} turns:")
    for name, ratio in on.items():
        print(f"    {name:12} {on_us[name]:8.1f} us/turn  {ratio:.3f}x")
    stub_turn = off_us["stubbed"] * 1_000
    print(f"  one traced call with spans off costs {wrapper_ns:.0f} ns more than the bare call; "
          f"a turn makes {CALLS_PER_TURN}: {CALLS_PER_TURN * wrapper_ns / stub_turn:.4%} of the "
          "stubbed turn")
    result = {
        "benchmark": "tracing_overhead",
        "gateway": gateway.value,
        "turns": TURNS,
        "info_turns": INFO_TURNS,
        "rounds": ROUNDS,
        "best_us_per_turn": {n: round(v, 2) for n, v in {**on_us, **off_us}.items()},
        "median_turn_ratio_to_stubbed": {n: round(v, 4) for n, v in {**on, **off}.items()},
        "traced_call_overhead_ns_spans_off": round(wrapper_ns, 1),
        "traced_calls_per_turn": CALLS_PER_TURN,
        "within_target": all(off[n] <= TARGET for n in ("unavailable", "disabled")),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "note": "2 cores shared with other engineers"},
    }
    out = Path(__file__).parent / "results" / f"tracing_overhead_{gateway.value}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
