"""The library's spans, captured with the OpenTelemetry SDK's in-memory exporter.

Renders (CoopContext and Lifecycle, sync and async), collections and request building on all
four gateways: names, nesting and attributes, checked against what each test counts itself
(items it appended, the JSON of the request it got back, the usage it pushed).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from hydrangea import tracing
from hydrangea.context import Context, NativeContent
from hydrangea.context.area import AreaFlowState, AreaLifeState
from hydrangea.coop import CoopContext
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle
from hydrangea.message import Message, Role
from tests.support.coop_areas import Probe
from tests.support.otel import spans

__all__ = ["spans"]

SYSTEMS = {
    GatewayType.openai: "openai",
    GatewayType.openai_responses: "openai",
    GatewayType.anthropic: "anthropic",
    GatewayType.gemini: "gcp.gemini",
}

REPLIES: dict[GatewayType, Any] = {
    GatewayType.openai: lambda text: {"role": "assistant", "content": text},
    GatewayType.openai_responses: lambda text: {
        "type": "message", "id": f"msg_{abs(hash(text))}", "status": "completed",
        "role": "assistant", "content": [{"type": "output_text", "text": text, "annotations": []}],
    },
    GatewayType.anthropic: lambda text: {
        "role": "assistant", "content": [{"type": "text", "text": text}],
    },
    GatewayType.gemini: lambda text: {"role": "model", "parts": [{"text": text}]},
}


def named(finished: Sequence[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [s for s in finished if s.name == name]


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def estimate(value: object) -> int:
    """Four characters of JSON a token, rounded up: the documented estimate."""
    return -(-len(json.dumps(value, ensure_ascii=False, separators=(",", ":"))) // 4)


class AsyncArea:
    """An area whose callbacks are coroutines that really suspend."""

    def __init__(self, outputs: Sequence[Sequence[str]], promoted: Sequence[str] = ()) -> None:
        self.outputs = [list(o) for o in outputs]
        self.promoted = tuple(promoted)
        self.life_state = AreaLifeState.retain
        self.flow_state = AreaFlowState.yielded

    async def observe(self, context: Sequence[NativeContent]) -> None:
        await asyncio.sleep(0)

    async def render(self) -> list[Message]:
        await asyncio.sleep(0)
        texts = self.outputs.pop(0) if self.outputs else []
        return [Message(role=Role.user, content=t) for t in texts]

    async def promote(self) -> tuple[Message, ...]:
        await asyncio.sleep(0)
        return tuple(Message(role=Role.user, content=t) for t in self.promoted)

    async def gc_prologue(self) -> None:
        await asyncio.sleep(0)


# -- renders and collections -------------------------------------------------------------------


def test_a_coop_render_reports_what_it_appended(spans: InMemorySpanExporter) -> None:
    context = Context(GatewayType.openai)
    context.emplace_message(Message(role=Role.user, content="hello"))
    coop = CoopContext(context)
    coop.register(Probe("a", [], [["one", "two"]]))
    coop.register(Probe("b", [], [["three"]]))
    coop.render()
    (render,) = named(spans.get_finished_spans(), "hydrangea.coop.render")
    got = attrs(render)
    assert got["hydrangea.items.appended"] == 3
    assert got["hydrangea.items.detached"] == 0
    assert got["hydrangea.context.items"] == 4
    assert got["gen_ai.system"] == got["gen_ai.provider.name"] == "openai"
    assert got["hydrangea.coop.collected"] is False
    assert named(spans.get_finished_spans(), "hydrangea.coop.collection") == []


def test_a_collection_is_a_child_span_of_its_render(spans: InMemorySpanExporter) -> None:
    context = Context(GatewayType.openai)
    coop = CoopContext(context)
    keeper = Probe("keeper", [], [["kept"]])
    doomed = Probe("doomed", [], [["x1", "x2", "x3"]], promoted=["summary"])
    coop.register(keeper)
    coop.register(doomed)
    coop.render()  # kept, x1, x2, x3
    doomed.retire()
    spans.clear()
    coop.render()
    finished = spans.get_finished_spans()
    (render,) = named(finished, "hydrangea.coop.render")
    (collection,) = named(finished, "hydrangea.coop.collection")
    assert collection.parent is not None
    assert collection.parent.span_id == render.context.span_id
    assert render.start_time is not None and collection.start_time is not None
    assert render.start_time <= collection.start_time
    assert attrs(collection) == {
        "hydrangea.items.detached": 3,
        "hydrangea.items.promoted": 1,
        "hydrangea.coop.areas_removed": 1,
        "hydrangea.coop.detach_start": 1,
        "hydrangea.coop.gc_prologue_errors": 0,
    }
    got = attrs(render)
    assert (got["hydrangea.items.detached"], got["hydrangea.items.appended"]) == (3, 1)
    assert got["hydrangea.context.items"] == len(context) == 2
    assert got["hydrangea.coop.collected"] is True


def test_an_async_render_and_its_collection_are_spans(spans: InMemorySpanExporter) -> None:
    context = Context(GatewayType.anthropic)
    coop = CoopContext(context)
    area = AsyncArea([["a1", "a2"]], promoted=["kept in short"])
    coop.register(area)

    async def run() -> None:
        await coop.arender()
        area.life_state = AreaLifeState.retired
        await coop.arender()

    asyncio.run(run())
    finished = spans.get_finished_spans()
    first, second = named(finished, "hydrangea.coop.render")
    assert attrs(first)["hydrangea.items.appended"] == 2
    (collection,) = named(finished, "hydrangea.coop.collection")
    assert collection.parent is not None
    assert collection.parent.span_id == second.context.span_id
    assert attrs(collection)["hydrangea.items.detached"] == 2
    assert attrs(second)["gen_ai.system"] == "anthropic"


def test_lifecycle_renders_hold_the_coop_render(spans: InMemorySpanExporter) -> None:
    context = Context(GatewayType.openai)
    coop = CoopContext(context)
    coop.register(Probe("a", [], [["from the area"]]))
    lifecycle = Lifecycle(coop)
    lifecycle.add(Component("a permanent note"))
    lifecycle.add(Component("a reminder", ttl=2))
    request = lifecycle.render()
    finished = spans.get_finished_spans()
    (outer,) = named(finished, "hydrangea.lifecycle.render")
    (inner,) = named(finished, "hydrangea.coop.render")
    assert inner.parent is not None and inner.parent.span_id == outer.context.span_id
    got = attrs(outer)
    assert got["hydrangea.items.appended"] == 3  # the area's message, the note, the reminder
    assert got["hydrangea.lifecycle.episode"] == request.episode == 0
    assert got["hydrangea.lifecycle.overlay_components"] == 1
    assert got["hydrangea.request.stable_items"] == request.stable


def test_an_async_lifecycle_render_is_one_span(spans: InMemorySpanExporter) -> None:
    context = Context(GatewayType.gemini)
    coop = CoopContext(context)
    coop.register(AsyncArea([["one"], ["two", "three"]]))
    lifecycle = Lifecycle(coop)

    async def run() -> None:
        await lifecycle.arender()
        await lifecycle.arender()

    asyncio.run(run())
    finished = spans.get_finished_spans()
    outers = named(finished, "hydrangea.lifecycle.render")
    assert [attrs(s)["hydrangea.items.appended"] for s in outers] == [1, 2]
    assert [attrs(s)["hydrangea.lifecycle.episode"] for s in outers] == [0, 1]
    inners = named(finished, "hydrangea.coop.render")
    assert [s.parent.span_id for s in inners if s.parent] == [s.context.span_id for s in outers]


def test_a_failed_render_is_recorded_and_re_raised(spans: InMemorySpanExporter) -> None:
    coop = CoopContext(Context(GatewayType.openai))
    probe = Probe("boom", [])

    def fail(_: Probe) -> None:
        raise RuntimeError("area failed")

    probe.on_render = fail
    coop.register(probe)
    with pytest.raises(RuntimeError, match="area failed"):
        coop.render()
    (render,) = named(spans.get_finished_spans(), "hydrangea.coop.render")
    assert not render.status.is_ok
    assert "hydrangea.items.appended" not in attrs(render)


# -- requests ----------------------------------------------------------------------------------


def conversation(gateway: GatewayType, turns: int) -> Context:
    context = Context(gateway)
    context.emplace_message(Message(role=Role.system, content="You answer briefly."))
    for n in range(turns):
        context.emplace_message(Message(role=Role.user, content=f"question {n} " * 20))
        context.push_back(REPLIES[gateway](f"answer {n} " * 20))
    return context


@pytest.mark.parametrize("gateway", list(GatewayType))
def test_a_request_span_follows_the_gen_ai_conventions(
    spans: InMemorySpanExporter, gateway: GatewayType
) -> None:
    context = conversation(gateway, 3)
    kwargs = context.request(model="some-model")
    (request,) = named(spans.get_finished_spans(), "hydrangea.request")
    got = attrs(request)
    assert got["gen_ai.operation.name"] == "chat"
    assert got["gen_ai.system"] == got["gen_ai.provider.name"] == SYSTEMS[gateway]
    assert got["gen_ai.request.model"] == "some-model"
    assert got["hydrangea.request.items"] == len(context)
    whole = estimate(kwargs)
    assert abs(got["hydrangea.tokens.estimated"] - whole) <= whole // 20 + len(context) + 2
    assert got["hydrangea.cache.predicted_reuse_tokens"] == 0  # nothing sent before
    if gateway is GatewayType.anthropic:
        assert got["hydrangea.cache.breakpoints"] == json.dumps(kwargs).count('"cache_control"')
    else:
        assert "hydrangea.cache.breakpoints" not in got


@pytest.mark.parametrize("gateway", list(GatewayType))
def test_predicted_reuse_is_the_prefix_the_previous_request_sent(
    spans: InMemorySpanExporter, gateway: GatewayType
) -> None:
    context = conversation(gateway, 2)
    first = context.request()
    context.emplace_message(Message(role=Role.user, content="one more question"))
    second = context.request()
    key = {"anthropic": "messages", "openai": "messages", "openai_responses": "input",
           "gemini": "contents"}[gateway.value]
    shared = 0
    for before, now in zip(first[key], second[key], strict=False):
        if json.dumps(before).replace(', "cache_control": {"type": "ephemeral"}', "") != (
            json.dumps(now).replace(', "cache_control": {"type": "ephemeral"}', "")
        ):
            break
        shared += 1
    assert shared >= len(first[key]) - 1  # only a merged last turn can differ
    head = {k: v for k, v in second.items() if k != key}
    oracle = estimate(head) + sum(estimate(m) for m in second[key][:shared])
    _, later = named(spans.get_finished_spans(), "hydrangea.request")
    got = attrs(later)
    assert abs(got["hydrangea.cache.predicted_reuse_tokens"] - oracle) <= shared * 4 + 2
    assert 0 < got["hydrangea.cache.predicted_reuse"] < 1


def test_a_changed_system_prompt_predicts_no_reuse(spans: InMemorySpanExporter) -> None:
    context = conversation(GatewayType.anthropic, 2)
    context.request(system="one prompt")
    context.request(system="another prompt")
    _, later = named(spans.get_finished_spans(), "hydrangea.request")
    assert attrs(later)["hydrangea.cache.predicted_reuse_tokens"] == 0


def test_reported_reuse_comes_from_the_pushed_usage(spans: InMemorySpanExporter) -> None:
    context = conversation(GatewayType.anthropic, 1)
    context.emplace_message(Message(role=Role.user, content="next"))
    context.push_back({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 40, "output_tokens": 5, "cache_read_input_tokens": 1200,
                  "cache_creation_input_tokens": 60},
    })
    context.request()
    (request,) = named(spans.get_finished_spans(), "hydrangea.request")
    got = attrs(request)
    assert got["hydrangea.cache.reported_read_tokens"] == 1200
    assert got["hydrangea.cache.reported_write_tokens"] == 60
    assert got["hydrangea.cache.reported_input_tokens"] == 40 + 1200 + 60
    assert got["hydrangea.cache.reported_reuse"] == pytest.approx(1200 / 1300)


def test_no_usage_pushed_means_no_reported_attributes(spans: InMemorySpanExporter) -> None:
    conversation(GatewayType.openai, 1).request()
    (request,) = named(spans.get_finished_spans(), "hydrangea.request")
    assert not [k for k in attrs(request) if k.startswith("hydrangea.cache.reported")]


@pytest.mark.parametrize("gateway", list(GatewayType))
def test_a_lifecycle_request_is_a_request_span(
    spans: InMemorySpanExporter, gateway: GatewayType
) -> None:
    context = conversation(gateway, 2)
    lifecycle = Lifecycle(context)
    lifecycle.add(Component("remember the units", ttl=5))
    first = lifecycle.render()
    _ = first.kwargs
    context.emplace_message(Message(role=Role.user, content="and then?"))
    second = lifecycle.render()
    kwargs = second.kwargs
    requests = named(spans.get_finished_spans(), "hydrangea.request")
    assert len(requests) == 2
    got = attrs(requests[1])
    assert got["gen_ai.system"] == SYSTEMS[gateway]
    assert got["hydrangea.lifecycle.episode"] == 1
    assert got["hydrangea.lifecycle.overlay_components"] == 1
    assert got["hydrangea.request.stable_items"] == second.stable
    assert got["hydrangea.request.items"] == len(second.items)
    assert got["hydrangea.cache.predicted_reuse_tokens"] > 0
    assert got["hydrangea.tokens.estimated"] >= got["hydrangea.cache.predicted_reuse_tokens"]
    if gateway is GatewayType.anthropic:
        assert got["hydrangea.cache.breakpoints"] == json.dumps(kwargs).count('"cache_control"')
        assert got["hydrangea.cache.breakpoints"] >= 1


def test_the_caching_model_names_the_request_model(spans: InMemorySpanExporter) -> None:
    from hydrangea.providers.anthropic.caching import AnthropicCaching

    context = conversation(GatewayType.anthropic, 1)
    _ = Lifecycle(context, caching=AnthropicCaching(model="claude-opus-4-1")).render().kwargs
    (request,) = named(spans.get_finished_spans(), "hydrangea.request")
    assert attrs(request)["gen_ai.request.model"] == "claude-opus-4-1"


# -- content -----------------------------------------------------------------------------------

CANARY = "CANARY-7f3a untrusted text"


def untrusted_session(gateway: GatewayType) -> tuple[Lifecycle, Context]:
    context = Context(gateway)
    coop = CoopContext(context)
    coop.register(Probe("docs", [], [[f"retrieved: {CANARY}"]]))
    lifecycle = Lifecycle(coop)
    lifecycle.add(Component(f"overlay quoting {CANARY}", ttl=3))
    return lifecycle, context


@pytest.mark.parametrize("gateway", list(GatewayType))
def test_content_stays_off_spans_by_default(
    spans: InMemorySpanExporter, gateway: GatewayType
) -> None:
    lifecycle, context = untrusted_session(gateway)
    _ = lifecycle.render().kwargs
    context.push_back(REPLIES[gateway](f"the model repeats {CANARY}"))
    context.request(model="m")
    finished = spans.get_finished_spans()
    assert {s.name for s in finished} >= {
        "hydrangea.lifecycle.render", "hydrangea.coop.render", "hydrangea.request"
    }
    for span in finished:
        for value in attrs(span).values():
            assert "CANARY" not in str(value), span.name


def test_content_is_on_the_request_span_when_asked(spans: InMemorySpanExporter) -> None:
    tracing.configure(capture_content=True)
    lifecycle, _ = untrusted_session(GatewayType.anthropic)
    kwargs = lifecycle.render().kwargs
    finished = spans.get_finished_spans()
    (request,) = named(finished, "hydrangea.request")
    content = attrs(request)["hydrangea.request.content"]
    assert CANARY in content
    assert json.loads(content) == json.loads(json.dumps(kwargs))
    for span in finished:
        if span is not request:
            assert not any("CANARY" in str(v) for v in attrs(span).values())


# -- off ---------------------------------------------------------------------------------------


def test_disabled_tracing_records_nothing_and_changes_nothing(
    spans: InMemorySpanExporter,
) -> None:
    traced_kwargs = conversation(GatewayType.anthropic, 3).request()
    tracing.configure(enabled=False)
    spans.clear()
    lifecycle, _ = untrusted_session(GatewayType.anthropic)
    _ = lifecycle.render().kwargs
    quiet_kwargs = conversation(GatewayType.anthropic, 3).request()
    assert spans.get_finished_spans() == ()
    assert quiet_kwargs == traced_kwargs
