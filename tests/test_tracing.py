"""The tracing module: real spans with OpenTelemetry, content only on request."""

from __future__ import annotations

import subprocess
import sys

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from hydrangea import tracing
from hydrangea.errors import HydrangeaError
from hydrangea.gateway import GatewayType
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
