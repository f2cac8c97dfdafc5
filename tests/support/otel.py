"""One in-memory OpenTelemetry exporter for the whole test session.

OpenTelemetry lets a process set its global tracer provider once, so the provider is installed
the first time a test asks for ``spans`` and each test starts with an empty exporter.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from hydrangea import tracing

_EXPORTER = InMemorySpanExporter()
_PROVIDER = TracerProvider()
_PROVIDER.add_span_processor(SimpleSpanProcessor(_EXPORTER))


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """The exporter that receives every span the library ends during the test."""
    if trace.get_tracer_provider() is not _PROVIDER:
        trace.set_tracer_provider(_PROVIDER)
    tracing._reset_for_tests()
    tracing.configure()
    _EXPORTER.clear()
    yield _EXPORTER
    tracing.configure()
    _EXPORTER.clear()
