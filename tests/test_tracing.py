"""The tracing module: real spans with OpenTelemetry, content only on request."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from hydrangea import tracing
from hydrangea.asof import ContextBuilder, ContextItem, ItemKind
from hydrangea.errors import HydrangeaError
from hydrangea.gateway import GatewayType
from tests.support.asof_oracle import AS_OF, doc
from tests.support.otel import spans

__all__ = ["spans"]


def test_a_span_carries_its_name_and_attributes(spans: InMemorySpanExporter) -> None:
    with tracing.span("hydrangea.test", {"hydrangea.tokens": 12, "skipped": None}) as handle:
        assert handle.recording
        handle.set({"gen_ai.system": "anthropic"})
    (finished,) = spans.get_finished_spans()
    assert finished.name == "hydrangea.test"
    assert dict(finished.attributes or {}) == {"hydrangea.tokens": 12, "gen_ai.system": "anthropic"}


def test_traced_computes_attributes_from_the_result(spans: InMemorySpanExporter) -> None:
    @tracing.traced("hydrangea.double", after=lambda result, x: {"in": x, "out": result})
    def double(x: int) -> int:
        return 2 * x

    assert double(21) == 42
    (finished,) = spans.get_finished_spans()
    assert finished.name == "hydrangea.double"
    assert dict(finished.attributes or {}) == {"in": 21, "out": 42}


def test_before_notes_state_for_after(spans: InMemorySpanExporter) -> None:
    box = [1, 2]

    @tracing.traced(
        "hydrangea.grow",
        lambda result, noted, items, extra: {"before": noted, "after": len(items)},
        before=lambda items, extra: len(items),
    )
    def grow(items: list[int], extra: int) -> int:
        items.extend(range(extra))
        return len(items)

    assert grow(box, extra=3) == 5
    (finished,) = spans.get_finished_spans()
    assert dict(finished.attributes or {}) == {"before": 2, "after": 5}


def test_sync_and_async_wrappers_record_alike(spans: InMemorySpanExporter) -> None:
    def after(result: int, x: int) -> dict[str, tracing.AttributeValue | None]:
        return {"x": x, "result": result}

    @tracing.traced("hydrangea.sync", after)
    def sync(x: int) -> int:
        if x < 0:
            raise ValueError("negative")
        return x + 1

    @tracing.traced("hydrangea.async", after)
    async def asynchronous(x: int) -> int:
        await asyncio.sleep(0)
        if x < 0:
            raise ValueError("negative")
        return x + 1

    assert sync(1) == 2
    assert asyncio.run(asynchronous(1)) == 2
    with pytest.raises(ValueError, match="negative"):
        sync(-1)
    with pytest.raises(ValueError, match="negative"):
        asyncio.run(asynchronous(-1))
    finished = spans.get_finished_spans()
    assert [s.name for s in finished] == ["hydrangea.sync", "hydrangea.async"] * 2
    assert [dict(s.attributes or {}) for s in finished[:2]] == [{"x": 1, "result": 2}] * 2
    assert [s.status.is_ok for s in finished] == [True, True, False, False]
    assert [[e.name for e in s.events] for s in finished[2:]] == [["exception"]] * 2


def test_after_does_not_run_while_spans_are_off(spans: InMemorySpanExporter) -> None:
    calls: list[str] = []

    def after(result: int, noted: None) -> dict[str, tracing.AttributeValue | None]:
        calls.append("after")
        return {}

    @tracing.traced("hydrangea.counted", after, before=lambda: calls.append("before"))
    def counted() -> int:
        return 7

    tracing.configure(enabled=False)
    assert counted() == 7
    assert calls == []
    tracing.configure()
    assert counted() == 7
    assert calls == ["before", "after"]


def test_a_recorded_span_has_the_start_it_was_given(spans: InMemorySpanExporter) -> None:
    started = tracing.now()
    with tracing.span("hydrangea.parent"):
        tracing.record("hydrangea.later", started, {"n": 3, "none": None})
    later, parent = spans.get_finished_spans()
    assert later.start_time == started
    assert later.parent is not None and later.parent.span_id == parent.context.span_id
    assert dict(later.attributes or {}) == {"n": 3}


def test_an_exception_is_recorded_and_re_raised(spans: InMemorySpanExporter) -> None:
    with pytest.raises(ZeroDivisionError), tracing.span("hydrangea.fails"):
        _ = 1 / 0
    (finished,) = spans.get_finished_spans()
    assert not finished.status.is_ok
    assert [event.name for event in finished.events] == ["exception"]


def test_disabled_tracing_opens_no_span(spans: InMemorySpanExporter) -> None:
    tracing.configure(enabled=False)
    with tracing.span("hydrangea.quiet") as handle:
        assert not handle.recording
    assert spans.get_finished_spans() == ()


def test_content_is_kept_off_spans_unless_asked(spans: InMemorySpanExporter) -> None:
    assert tracing.content_attribute("secret text") is None
    tracing.configure(capture_content=True)
    assert tracing.content_attribute("secret text") == "secret text"


def test_configure_refuses_what_is_not_a_boolean() -> None:
    with pytest.raises(HydrangeaError):
        tracing.configure(enabled="yes")  # type: ignore[arg-type]


def test_gen_ai_system_names_follow_the_conventions() -> None:
    names = {gateway: tracing.gen_ai_system(gateway) for gateway in GatewayType}
    assert names == {
        GatewayType.openai: "openai",
        GatewayType.openai_responses: "openai",
        GatewayType.anthropic: "anthropic",
        GatewayType.gemini: "gcp.gemini",
    }


def test_without_opentelemetry_spans_are_no_ops() -> None:
    code = (
        "import sys\n"
        "sys.modules['opentelemetry'] = None\n"
        "sys.modules['opentelemetry.trace'] = None\n"
        "from hydrangea import tracing\n"
        "from hydrangea.context import Context\n"
        "from hydrangea.coop import CoopContext\n"
        "from hydrangea.lifecycle import Component, Lifecycle\n"
        "from hydrangea.message import Message, Role\n"
        "with tracing.span('x', {'a': 1}) as s:\n"
        "    assert not s.recording\n"
        "context = Context('anthropic')\n"
        "lifecycle = Lifecycle(CoopContext(context))\n"
        "lifecycle.add(Component('note', ttl=2))\n"
        "context.emplace_message(Message(role=Role.user, content='hi'))\n"
        "assert lifecycle.render().kwargs['messages']\n"
        "assert context.request(model='m')['model'] == 'm'\n"
        "assert tracing._STATE.tracer is None\n"
        "print('ok')\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert run.stdout.strip() == "ok"


def _builder(budget: int) -> ContextBuilder:
    built = ContextBuilder(as_of=AS_OF, token_budget=budget)
    built.add(ContextItem.harness(ItemKind.TASK, "Answer from the filings.", item_id="task"))
    for i in range(40):
        built.add(doc(i, days=i + 1))
    return built


def test_an_as_of_build_and_its_compactions_are_spans(spans: InMemorySpanExporter) -> None:
    full = _builder(10**9).build()
    spans.clear()
    result = _builder(full.tokens // 3).build()
    finished = spans.get_finished_spans()
    names = [s.name for s in finished]
    assert names.count("hydrangea.asof.build") == 1
    assert names.count("hydrangea.asof.compaction") >= 1
    (build,) = [s for s in finished if s.name == "hydrangea.asof.build"]
    attributes = dict(build.attributes or {})
    assert attributes["hydrangea.tokens"] == result.tokens <= full.tokens // 3
    assert attributes["hydrangea.compactions"] == len(result.compactions) >= 1
    for compaction in (s for s in finished if s.name == "hydrangea.asof.compaction"):
        assert compaction.parent is not None and compaction.parent.span_id == build.context.span_id
    assert not any("Fact number" in str(v) for s in finished for v in (s.attributes or {}).values())


def test_an_async_build_is_one_span_around_the_awaited_work(spans: InMemorySpanExporter) -> None:
    result = asyncio.run(_builder(10**9).abuild())
    (build,) = [s for s in spans.get_finished_spans() if s.name == "hydrangea.asof.build"]
    assert dict(build.attributes or {})["hydrangea.items"] == len(result.items)


def test_a_provider_of_ones_own_receives_the_spans(spans: InMemorySpanExporter) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    own = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(own))
    tracing.configure(tracer_provider=provider)
    with tracing.span("hydrangea.own"):
        pass
    assert [s.name for s in own.get_finished_spans()] == ["hydrangea.own"]
    assert spans.get_finished_spans() == ()
    tracing.configure()
    with tracing.span("hydrangea.global"):
        pass
    assert [s.name for s in spans.get_finished_spans()] == ["hydrangea.global"]


def test_configure_refuses_what_is_not_a_tracer_provider() -> None:
    with pytest.raises(HydrangeaError, match="TracerProvider"):
        tracing.configure(tracer_provider=object())
    assert tracing.settings() == tracing.TracingSettings()


def test_the_api_without_an_sdk_costs_no_attributes(spans: InMemorySpanExporter) -> None:
    from opentelemetry import trace

    calls: list[str] = []

    def after(result: int) -> dict[str, tracing.AttributeValue | None]:
        calls.append("after")
        return {}

    @tracing.traced("hydrangea.api_only", after)
    def work() -> int:
        calls.append("work")
        return 1

    tracing._STATE.tracer = trace.NoOpTracer()  # what opentelemetry-api alone hands out
    assert work() == 1
    with tracing.span("hydrangea.api_only") as handle:
        assert not handle.recording
    assert calls == ["work"]
    tracing._reset_for_tests()
    assert work() == 1
    assert calls == ["work", "work", "after"]
    assert [s.name for s in spans.get_finished_spans()] == ["hydrangea.api_only"]
