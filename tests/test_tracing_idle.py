"""The OpenTelemetry API without a provider: no span is made, and one set later still records.

OpenTelemetry lets a process set its global tracer provider once, and the test session's own
provider is set by other tests, so each scenario runs in a fresh interpreter.
"""

from __future__ import annotations

import subprocess
import sys

_SESSION = (
    "from hydrangea import tracing\n"
    "from hydrangea.areas import ConversationArea\n"
    "from hydrangea.context import Context\n"
    "from hydrangea.coop import CoopContext\n"
    "from hydrangea.lifecycle import Component, Lifecycle\n"
    "from opentelemetry import trace\n"
    "conversation = ConversationArea()\n"
    "coop = CoopContext(Context('anthropic'))\n"
    "coop.register(conversation)\n"
    "lifecycle = Lifecycle(coop)\n"
    "lifecycle.add(Component('note', ttl=2))\n"
    "def turn(text):\n"
    "    conversation.user(text)\n"
    "    return lifecycle.render().kwargs\n"
)


def _run(code: str, env: dict[str, str] | None = None) -> str:
    run = subprocess.run(
        [sys.executable, "-c", _SESSION + code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout.strip()


def test_the_proxy_without_a_provider_records_nothing() -> None:
    code = (
        "kwargs = turn('hello')\n"
        "assert isinstance(tracing._STATE.tracer, trace.ProxyTracer)\n"
        "with tracing.span('hydrangea.x') as handle:\n"
        "    assert not handle.recording\n"
        "print(kwargs['messages'][0]['content'][0]['text'])\n"
    )
    assert _run(code) == "hello"


def test_a_provider_set_after_the_first_spans_receives_the_next_ones() -> None:
    code = (
        "from opentelemetry.sdk.trace import TracerProvider\n"
        "from opentelemetry.sdk.trace.export import SimpleSpanProcessor\n"
        "from opentelemetry.sdk.trace.export.in_memory_span_exporter import "
        "InMemorySpanExporter\n"
        "turn('before any provider')\n"
        "exporter = InMemorySpanExporter()\n"
        "provider = TracerProvider()\n"
        "provider.add_span_processor(SimpleSpanProcessor(exporter))\n"
        "trace.set_tracer_provider(provider)\n"
        "turn('after the provider')\n"
        "names = sorted(s.name for s in exporter.get_finished_spans())\n"
        "print(','.join(names))\n"
    )
    expected = ["hydrangea.coop.render", "hydrangea.lifecycle.render", "hydrangea.request"]
    assert _run(code).split(",") == expected


def test_a_provider_from_the_environment_receives_the_spans() -> None:
    code = (
        "from opentelemetry.sdk.trace.export import SimpleSpanProcessor\n"
        "from opentelemetry.sdk.trace.export.in_memory_span_exporter import "
        "InMemorySpanExporter\n"
        "provider = trace.get_tracer_provider()\n"
        "exporter = InMemorySpanExporter()\n"
        "provider.add_span_processor(SimpleSpanProcessor(exporter))\n"
        "turn('hello')\n"
        "print(len(exporter.get_finished_spans()) >= 2)\n"
    )
    env = {"OTEL_PYTHON_TRACER_PROVIDER": "sdk_tracer_provider", "PATH": ""}
    assert _run(code, env) == "True"
