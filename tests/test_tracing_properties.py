"""Span attributes against independent models, over random sessions.

* Items appended and detached by a render: the test diffs the Context's items before and after
  (by identity), knowing nothing of the collector.
* Predicted reuse: the test keeps the previous request's kwargs itself and counts the leading
  messages both requests send (cache markers aside), estimating each from its own JSON.
* Breakpoints: counted in the request's JSON text.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from hydrangea.context import Context
from hydrangea.context.area import AreaLifeState
from hydrangea.coop import CoopContext
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role
from tests.support.coop_areas import Probe
from tests.support.otel import spans

__all__ = ["spans"]

def attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


FIXTURE = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])

# -- renders -----------------------------------------------------------------------------------

area_steps = st.lists(
    st.tuples(
        st.lists(st.integers(0, 3), min_size=3, max_size=3),  # messages each area renders
        st.lists(st.booleans(), min_size=3, max_size=3),  # retire the area after this render
    ),
    min_size=1,
    max_size=6,
)


@FIXTURE
@given(steps=area_steps, promoted=st.lists(st.integers(0, 2), min_size=3, max_size=3))
def test_appended_and_detached_match_a_diff_of_the_items(
    spans: InMemorySpanExporter, steps: list[tuple[list[int], list[bool]]], promoted: list[int]
) -> None:
    spans.clear()
    context = Context(GatewayType.openai)
    coop = CoopContext(context)
    probes = []
    for n in range(3):
        outputs = [[f"area {n} render {r} message {m}" for m in range(step[0][n])]
                   for r, step in enumerate(steps)]
        probe = Probe(f"p{n}", [], outputs, promoted=[f"kept {n}.{k}" for k in range(promoted[n])])
        coop.register(probe)
        probes.append(probe)
    expected = []
    for _, retire in steps:
        before = list(context)
        coop.render()
        after = list(context)
        common = 0
        for old, new in zip(before, after, strict=False):
            if old is not new:
                break
            common += 1
        expected.append((len(after) - common, len(before) - common, len(after)))
        for probe, flag in zip(probes, retire, strict=True):
            if flag and probe.life_state is AreaLifeState.retain:
                probe.retire()
    renders = [s for s in spans.get_finished_spans() if s.name == "hydrangea.coop.render"]
    got = [
        (a["hydrangea.items.appended"], a["hydrangea.items.detached"],
         a["hydrangea.context.items"])
        for a in (attributes(s) for s in renders)
    ]
    assert got == expected
    collections = [s for s in spans.get_finished_spans() if s.name == "hydrangea.coop.collection"]
    assert sum(attributes(s)["hydrangea.items.detached"] for s in collections) == sum(
        detached for _, detached, _ in expected
    )


# -- requests ----------------------------------------------------------------------------------

KEYS = {GatewayType.openai: "messages", GatewayType.anthropic: "messages"}


def estimate(value: object) -> int:
    return -(-len(json.dumps(value, ensure_ascii=False, separators=(",", ":"))) // 4)


def unmarked(value: object) -> object:
    """``value`` without its cache markers."""
    if isinstance(value, dict):
        return {k: unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [unmarked(v) for v in value]
    return value


def reply(gateway: GatewayType, text: str) -> dict[str, Any]:
    if gateway is GatewayType.anthropic:
        return {"role": "assistant", "content": [{"type": "text", "text": text}]}
    return {"role": "assistant", "content": text}


operations = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.integers(1, 400)),
        st.tuples(st.just("reply"), st.integers(1, 400)),
        st.tuples(st.just("request"), st.sampled_from(["one", "two"])),
    ),
    min_size=1,
    max_size=25,
)


@FIXTURE
@given(
    gateway=st.sampled_from([GatewayType.openai, GatewayType.anthropic]),
    ops=operations,
)
def test_predicted_reuse_matches_the_previous_request(
    spans: InMemorySpanExporter, gateway: GatewayType, ops: list[tuple[str, Any]]
) -> None:
    spans.clear()
    context = Context(gateway)
    key = KEYS[gateway]
    expected: list[tuple[int, int, int]] = []
    previous: dict[str, Any] | None = None
    for n, (op, arg) in enumerate(ops):
        if op == "user":
            context.emplace_message(Message(role=Role.user, content=f"user {n} " + "x" * arg))
        elif op == "reply":
            context.push_back(reply(gateway, f"reply {n} " + "y" * arg))
        else:
            kwargs = context.request(system=f"system prompt {arg}")
            head = {k: v for k, v in kwargs.items() if k != key}
            messages = kwargs[key]
            shared = 0
            if previous is not None and unmarked(
                {k: v for k, v in previous.items() if k != key}
            ) == unmarked(head):
                for before, now in zip(previous[key], messages, strict=False):
                    if unmarked(before) != unmarked(now):
                        break
                    shared += 1
                reuse = estimate(head) + sum(estimate(m) for m in messages[:shared])
            else:
                reuse = 0
            total = estimate(head) + sum(estimate(m) for m in messages)
            expected.append((reuse, total, json.dumps(kwargs).count('"cache_control"')))
            previous = kwargs
    requests: list[dict[str, Any]] = [
        dict(s.attributes or {}) for s in spans.get_finished_spans()
        if s.name == "hydrangea.request"
    ]
    assert len(requests) == len(expected)
    for got, (reuse, total, markers) in zip(requests, expected, strict=True):
        # the span keeps its earlier estimate of a shared message whose marker moved: at most
        # four markers of 38 characters (~10 tokens) each
        slack = 40
        assert abs(got["hydrangea.cache.predicted_reuse_tokens"] - reuse) <= slack
        assert abs(got["hydrangea.tokens.estimated"] - total) <= slack
        assert got["hydrangea.cache.predicted_reuse_tokens"] <= got["hydrangea.tokens.estimated"]
        if gateway is GatewayType.anthropic:
            assert got["hydrangea.cache.breakpoints"] == markers
