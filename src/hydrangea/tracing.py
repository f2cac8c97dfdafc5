"""OpenTelemetry spans for what the library does, and nothing at all without OpenTelemetry.

Install the ``otel`` extra (``opentelemetry-api``) and configure a tracer provider as usual; the
library then opens a span for each render, collection, as-of build, compaction and request
build, under the tracer named ``"hydrangea"``. Without the extra every call here is a no-op
costing one dictionary look-up.

Attributes follow the OpenTelemetry GenAI semantic conventions where one applies
(``gen_ai.system``, ``gen_ai.operation.name``, ``gen_ai.usage.input_tokens`` ...); the library's
own figures use the ``hydrangea.`` prefix (``hydrangea.items.appended``,
``hydrangea.items.detached``, ``hydrangea.tokens``, ``hydrangea.cache.predicted_reuse``,
``hydrangea.cache.reported_read_tokens``).

The content of untrusted items is never put on a span unless the caller opts in with
:func:`configure` (``capture_content=True``); even then only through :func:`content_attribute`,
which callers use for text they know the origin of.
"""

from __future__ import annotations

import importlib
import inspect
import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import wraps
from typing import Any, ParamSpec, TypeVar, assert_never, cast

from hydrangea.gateway import GatewayType

__all__ = [
    "AttributeValue",
    "TracingSettings",
    "configure",
    "content_attribute",
    "gen_ai_system",
    "settings",
    "span",
    "traced",
]

_log = logging.getLogger(__name__)

AttributeValue = str | bool | int | float
"""A value OpenTelemetry accepts as a span attribute (sequences are not used by the library)."""

_P = ParamSpec("_P")
_R = TypeVar("_R")

_UNLOADED: Any = object()


@dataclass(frozen=True, slots=True)
class TracingSettings:
    """What the library records on its spans.

    Attributes:
        enabled: Open spans at all (default ``True``; they are no-ops without OpenTelemetry).
        capture_content: Put item text on spans (default ``False``: untrusted text must not
            leave the process through telemetry unless the caller says so).
    """

    enabled: bool = True
    capture_content: bool = False


class _State:
    """The process-wide settings and the tracer, loaded on first use."""

    __slots__ = ("settings", "tracer")

    def __init__(self) -> None:
        self.settings = TracingSettings()
        self.tracer: Any = _UNLOADED


_STATE = _State()


def configure(*, enabled: bool = True, capture_content: bool = False) -> TracingSettings:
    """Set what the library's spans record, for the whole process; returns the new settings."""
    if not isinstance(enabled, bool) or not isinstance(capture_content, bool):
        from hydrangea.errors import InvalidMessageError

        raise InvalidMessageError("configure() takes booleans for enabled and capture_content")
    _STATE.settings = TracingSettings(enabled=enabled, capture_content=capture_content)
    return _STATE.settings


def settings() -> TracingSettings:
    """The settings in force."""
    return _STATE.settings


def _get_tracer() -> Any:
    if _STATE.tracer is _UNLOADED:
        try:
            trace = importlib.import_module("opentelemetry.trace")
        except ImportError:
            _log.debug("opentelemetry is not installed: hydrangea spans are no-ops")
            _STATE.tracer = None
        else:
            from hydrangea import __version__

            _STATE.tracer = trace.get_tracer("hydrangea", __version__)
    return _STATE.tracer


def _reset_for_tests() -> None:
    """Forget the cached tracer (tests install a fresh tracer provider)."""
    _STATE.tracer = _UNLOADED


class _Span:
    """The handle :func:`span` yields: set attributes on the live span, or on nothing."""

    __slots__ = ("_span",)

    def __init__(self, live: Any) -> None:
        self._span = live

    @property
    def recording(self) -> bool:
        """True when a real span records what is set (OpenTelemetry installed and sampling)."""
        return self._span is not None and bool(self._span.is_recording())

    def set(self, attributes: Mapping[str, AttributeValue | None]) -> None:
        """Set each attribute whose value is not ``None``."""
        if self._span is None:
            return
        for key, value in attributes.items():
            if value is not None:
                self._span.set_attribute(key, value)


@contextmanager
def span(
    name: str, attributes: Mapping[str, AttributeValue | None] | None = None
) -> Iterator[_Span]:
    """Open a span called ``name`` (a no-op without OpenTelemetry or when disabled).

    An exception leaving the block is recorded on the span (OpenTelemetry's default) and
    re-raised unchanged.
    """
    tracer = _get_tracer() if _STATE.settings.enabled else None
    if tracer is None:
        yield _Span(None)
        return
    with tracer.start_as_current_span(name) as live:
        handle = _Span(live)
        if attributes:
            handle.set(attributes)
        yield handle


def traced(
    name: str,
    after: Callable[..., Mapping[str, AttributeValue | None]] | None = None,
) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Decorate a function so each call runs inside :func:`span` ``name``.

    ``after(result, *args, **kwargs)`` computes attributes from the call's result once it
    returned; it runs only when a span is recording, so it costs nothing otherwise. A coroutine
    function gets a coroutine wrapper: the span covers the awaited call.
    """

    def decorate(function: Callable[_P, _R]) -> Callable[_P, _R]:
        if inspect.iscoroutinefunction(function):
            coroutine_function: Callable[_P, Any] = function

            @wraps(function)
            async def awrapper(*args: _P.args, **kwargs: _P.kwargs) -> Any:
                with span(name) as handle:
                    result = await coroutine_function(*args, **kwargs)
                    if after is not None and handle.recording:
                        handle.set(after(result, *args, **kwargs))
                    return result

            return cast("Callable[_P, _R]", awrapper)

        @wraps(function)
        def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            with span(name) as handle:
                result = function(*args, **kwargs)
                if after is not None and handle.recording:
                    handle.set(after(result, *args, **kwargs))
                return result

        return wrapper

    return decorate


def content_attribute(text: str) -> str | None:
    """``text`` if the caller opted in to content capture, else ``None`` (so nothing is set)."""
    return text if _STATE.settings.capture_content else None


def gen_ai_system(gateway: GatewayType) -> str:
    """The GenAI semantic conventions' ``gen_ai.system`` value for a gateway."""
    match gateway:
        case GatewayType.openai | GatewayType.openai_responses:
            return "openai"
        case GatewayType.anthropic:
            return "anthropic"
        case GatewayType.gemini:
            return "gcp.gemini"
        case _:
            assert_never(gateway)
