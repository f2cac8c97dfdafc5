"""OpenTelemetry spans for what the library does, and nothing at all without OpenTelemetry.

Install the ``otel`` extra (``opentelemetry-api``) and configure a tracer provider as usual; the
library then opens a span for each render, collection, as-of build, compaction and request
build, under the tracer named ``"hydrangea"`` (the spans and their attributes are listed in the
"Tracing" page of the docs). Without the extra, or after ``configure(enabled=False)``, a traced
call costs one attribute check before it runs the function it wraps: no span, context manager,
closure or attribute is made.

Attributes follow the OpenTelemetry GenAI semantic conventions where one applies
(``gen_ai.system`` and its newer name ``gen_ai.provider.name``, ``gen_ai.operation.name``,
``gen_ai.request.model``); the library's own figures use the ``hydrangea.`` prefix
(``hydrangea.items.appended``, ``hydrangea.items.detached``, ``hydrangea.tokens.estimated``,
``hydrangea.cache.predicted_reuse_tokens``, ``hydrangea.cache.reported_read_tokens`` ...).
Attributes are computed only while a span records.

The content of items (and the untrusted text in them) is never put on a span unless the caller
opts in with :func:`configure` (``capture_content=True``); even then only through
:func:`content_attribute`.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import wraps
from typing import Any, ParamSpec, TypeVar, cast

from hydrangea.gateway import GatewayType

__all__ = [
    "AttributeValue",
    "TracingSettings",
    "configure",
    "content_attribute",
    "gen_ai_system",
    "now",
    "record",
    "settings",
    "span",
    "traced",
]

_log = logging.getLogger(__name__)

AttributeValue = str | bool | int | float
"""A value OpenTelemetry accepts as a span attribute (sequences are not used by the library)."""

Attributes = Mapping[str, AttributeValue | None]

_P = ParamSpec("_P")
_R = TypeVar("_R")

_UNLOADED: Any = object()
_NOTHING: Any = object()


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
    """The process-wide settings, and the tracer: ``None`` when spans are off (no
    OpenTelemetry, or disabled), a sentinel until the first traced call loads it."""

    __slots__ = ("provider", "settings", "tracer", "use_span")

    def __init__(self) -> None:
        self.settings = TracingSettings()
        self.tracer: Any = _UNLOADED
        self.provider: Any = None
        self.use_span: Any = None  # opentelemetry.trace.use_span, once loaded


_STATE = _State()


def configure(
    *, enabled: bool = True, capture_content: bool = False, tracer_provider: Any = None
) -> TracingSettings:
    """Set what the library's spans record, for the whole process; returns the new settings.

    ``tracer_provider`` (an OpenTelemetry ``TracerProvider``) is the one the library's tracer
    comes from; ``None`` (the default) uses OpenTelemetry's global provider.
    """
    from hydrangea.errors import InvalidMessageError

    if not isinstance(enabled, bool) or not isinstance(capture_content, bool):
        raise InvalidMessageError("configure() takes booleans for enabled and capture_content")
    if tracer_provider is not None and not callable(getattr(tracer_provider, "get_tracer", None)):
        raise InvalidMessageError(
            f"tracer_provider must be an OpenTelemetry TracerProvider (with get_tracer()), got "
            f"{type(tracer_provider).__name__}"
        )
    _STATE.settings = TracingSettings(enabled=enabled, capture_content=capture_content)
    _STATE.provider = tracer_provider
    _STATE.tracer = _UNLOADED if enabled else None
    return _STATE.settings


def settings() -> TracingSettings:
    """The settings in force."""
    return _STATE.settings


def _tracer() -> Any:
    """The tracer, or ``None`` when spans are off; loads it on first use."""
    tracer = _STATE.tracer
    if tracer is _UNLOADED:
        tracer = _STATE.tracer = _load() if _STATE.settings.enabled else None
    return tracer


def _load() -> Any:
    from hydrangea._version import __version__

    try:
        trace = importlib.import_module("opentelemetry.trace")
    except ImportError:
        _log.debug("opentelemetry is not installed: hydrangea spans are no-ops")
        return None
    _STATE.use_span = trace.use_span
    provider = _STATE.provider
    if provider is not None:
        return provider.get_tracer("hydrangea", __version__)
    return trace.get_tracer("hydrangea", __version__)


def _start(name: str, started: int | None = None) -> Any:
    """A started span, child of the current one; ``None`` when nothing can record it: spans
    off, or OpenTelemetry's no-op tracer (the API without an SDK), whose spans carry no valid
    context. Then nothing more is made: no context is attached, no attribute computed."""
    tracer = _tracer()
    if tracer is None:
        return None
    live = tracer.start_span(name, start_time=started)
    if live.get_span_context().is_valid:
        return live
    live.end()
    return None


def _reset_for_tests() -> None:
    """Forget the loaded tracer (tests install a fresh tracer provider)."""
    _STATE.tracer = _UNLOADED if _STATE.settings.enabled else None


def _set(live: Any, attributes: Attributes) -> None:
    for key, value in attributes.items():
        if value is not None:
            live.set_attribute(key, value)


class _Span:
    """The handle :func:`span` yields: set attributes on the live span, or on nothing."""

    __slots__ = ("_span",)

    def __init__(self, live: Any) -> None:
        self._span = live

    @property
    def recording(self) -> bool:
        """True when a real span records what is set (OpenTelemetry installed and sampling)."""
        return self._span is not None and bool(self._span.is_recording())

    def set(self, attributes: Attributes) -> None:
        """Set each attribute whose value is not ``None``."""
        if self._span is not None:
            _set(self._span, attributes)


@contextmanager
def span(name: str, attributes: Attributes | None = None) -> Iterator[_Span]:
    """Open a span called ``name`` (a no-op without OpenTelemetry or when disabled).

    An exception leaving the block is recorded on the span (OpenTelemetry's default) and
    re-raised unchanged. For code that runs every turn, prefer :func:`traced`, which costs
    less when spans are off.
    """
    live = _start(name)
    if live is None:
        yield _Span(None)
        return
    with _STATE.use_span(live, end_on_exit=True):
        handle = _Span(live)
        if attributes:
            handle.set(attributes)
        yield handle


def now() -> int:
    """The time :func:`record` takes as a span's start (nanoseconds since the epoch)."""
    return time.time_ns()


def record(name: str, started: int, attributes: Attributes) -> None:
    """End a span called ``name`` now that began at ``started`` (from :func:`now`).

    For work that cannot sit inside a ``with`` block (a step of a generator that an async
    driver resumes); the span's parent is the span current at this call.
    """
    live = _start(name, started)
    if live is None:
        return
    if live.is_recording():
        _set(live, attributes)
    live.end()


@dataclass(frozen=True, slots=True)
class _Traced:
    """How one decorated function computes its span's attributes."""

    before: Callable[..., object] | None
    after: Callable[..., Attributes] | None

    @contextmanager
    def call(
        self, live: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Iterator[Callable[[Any], Any]]:
        """Make ``live`` (from :func:`_start`) current while the call runs and end it after;
        yields what the caller passes the call's result to (it sets the attributes and returns
        the result)."""
        with _STATE.use_span(live, end_on_exit=True):
            after = self.after
            if after is None or not live.is_recording():
                yield _same
                return
            noted = _NOTHING if self.before is None else self.before(*args, **kwargs)

            def done(result: Any) -> Any:
                if noted is _NOTHING:
                    _set(live, after(result, *args, **kwargs))
                else:
                    _set(live, after(result, noted, *args, **kwargs))
                return result

            yield done


def _off() -> bool:
    """True when no span can be made now: spans off."""
    return _STATE.tracer is None


def _same(result: _R) -> _R:
    return result


def traced(
    name: str,
    after: Callable[..., Attributes] | None = None,
    *,
    before: Callable[..., object] | None = None,
) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Decorate a function so each call runs inside a span called ``name``.

    ``after(result, *args, **kwargs)`` computes attributes from the call's result once it
    returned; with ``before``, ``before(*args, **kwargs)`` runs first and its value is passed on:
    ``after(result, noted, *args, **kwargs)`` (to report what the call changed). Both run only
    while a span records. When spans are off, a call costs one check before the function runs.
    A coroutine function gets a coroutine wrapper: the span covers the awaited call. An
    exception is recorded on the span and re-raised unchanged.
    """
    spec = _Traced(before, after)

    def decorate(function: Callable[_P, _R]) -> Callable[_P, _R]:
        if inspect.iscoroutinefunction(function):
            coroutine_function: Callable[_P, Any] = function

            @wraps(function)
            async def awrapper(*args: _P.args, **kwargs: _P.kwargs) -> Any:
                if _off() or (live := _start(name)) is None:
                    return await coroutine_function(*args, **kwargs)
                with spec.call(live, args, kwargs) as done:
                    return done(await coroutine_function(*args, **kwargs))

            return cast("Callable[_P, _R]", awrapper)

        @wraps(function)
        def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            if _STATE.tracer is None or (live := _start(name)) is None:  # (_off(), inlined)
                return function(*args, **kwargs)
            with spec.call(live, args, kwargs) as done:
                return cast("_R", done(function(*args, **kwargs)))

        return wrapper

    return decorate


def content_attribute(text: str) -> str | None:
    """``text`` if the caller opted in to content capture, else ``None`` (so nothing is set)."""
    return text if _STATE.settings.capture_content else None


def gen_ai_system(gateway: GatewayType) -> str:
    """The GenAI semantic conventions' ``gen_ai.system`` (``gen_ai.provider.name``) value
    (each adapter's :attr:`~hydrangea.providers.adapter.Adapter.gen_ai_system`)."""
    from hydrangea.providers.registry import adapter_for

    return adapter_for(gateway).gen_ai_system
