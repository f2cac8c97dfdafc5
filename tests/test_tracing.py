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
        "with tracing.span('x', {'a': 1}) as s:\n"
        "    assert not s.recording\n"
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
