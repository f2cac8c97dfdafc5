"""A token counter calibrated on what a provider reported, so budgets err on the safe side.

:class:`~hydrangea.asof.counting.ApproxTokenCounter` assumes four characters a token. That
over-counts English for OpenAI's encodings but under-counts Claude's tokenizer and Japanese
text, so a budget counted with it can overflow. :class:`CalibratedCounter` scales a base
counter by the largest ratio of reported to estimated tokens seen (never below 1), per gateway:
feed it the text of each request and the input tokens the provider reported for it (for example
``context.usage.last.usage.input_tokens``).

The providers' token-count endpoints give that figure before anything is sent:
:class:`Calibration` keeps one calibrated counter per gateway and model and fits it to what a
:class:`RequestCounter` (``AnthropicTokenCounter``, ``ResponsesTokenCounter``,
``GeminiTokenCounter`` in the provider folders' ``counting`` modules) reports for a request,
against the local count of :func:`request_text` of that request. Ask the endpoint now and then
(the first request of a session, a new model, a much longer request) and count every budget
locally with :meth:`Calibration.counter` in between: the ratio only grows, so each budget
covers every figure the provider reported.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Protocol

from hydrangea.asof.counting import ApproxTokenCounter, TokenCounter

__all__ = [
    "AsyncRequestCounter",
    "CalibratedCounter",
    "Calibration",
    "RequestCounter",
    "request_text",
]


class RequestCounter(Protocol):
    """Asks a provider how many input tokens a request holds (its token-count endpoint)."""

    def count_request(self, request: Mapping[str, Any]) -> int:
        """The input tokens of ``request``: the keyword arguments ``Context.request()`` gave."""
        ...


class AsyncRequestCounter(Protocol):
    """:class:`RequestCounter` for an async client."""

    async def acount_request(self, request: Mapping[str, Any]) -> int:
        """The input tokens of ``request``: the keyword arguments ``Context.request()`` gave."""
        ...


_SKIPPED = frozenset({"model", "betas", "type", "role"})
"""Keys whose string values are names of things, not text the model reads."""


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, inner in value.items():
            if key not in _SKIPPED:
                yield from _strings(inner)
    elif isinstance(value, list | tuple):
        for inner in value:
            yield from _strings(inner)


def request_text(request: Mapping[str, Any]) -> str:
    """The text a local counter is applied to for a request: every string value in it, in
    order, joined with newlines, except the values of ``model``, ``betas``, ``type`` and
    ``role`` keys. Numbers, booleans and SDK objects other than dicts and lists are left out.

    >>> request_text({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    'hi'
    """
    return "\n".join(_strings(request))


class CalibratedCounter:
    """``ceil(base.count(text) * ratio)``, with ``ratio >= 1`` learned from reports."""

    __slots__ = ("_base", "_ratio")

    def __init__(self, base: TokenCounter | None = None, ratio: float = 1.0) -> None:
        if not math.isfinite(ratio) or ratio < 1.0:
            raise ValueError(f"ratio must be a finite number of at least 1, got {ratio!r}")
        self._base: TokenCounter = base if base is not None else ApproxTokenCounter()
        self._ratio = ratio

    @property
    def ratio(self) -> float:
        """The factor applied to the base counter's estimates."""
        return self._ratio

    @classmethod
    def from_reports(
        cls, reports: Iterable[tuple[str, int]], base: TokenCounter | None = None
    ) -> CalibratedCounter:
        """A counter calibrated on ``(text, reported tokens)`` pairs."""
        counter = cls(base)
        for text, reported in reports:
            counter = counter.updated(text, reported)
        return counter

    def updated(self, text: str, reported: int) -> CalibratedCounter:
        """A counter that also covers this report (the ratio only ever grows)."""
        if reported < 0:
            raise ValueError(f"reported tokens must not be negative, got {reported}")
        estimated = self._base.count(text)
        if estimated <= 0:
            return self
        return CalibratedCounter(self._base, max(self._ratio, reported / estimated))

    def count(self, text: str) -> int:
        """The calibrated estimate for ``text``."""
        return math.ceil(self._base.count(text) * self._ratio)

    def __repr__(self) -> str:
        return f"CalibratedCounter({self._base!r}, ratio={self._ratio:.3f})"


class Calibration:
    """One :class:`CalibratedCounter` per gateway and model, fitted to the figures of a
    provider's token-count endpoint (or any reported input tokens).

    ``gateway`` is a gateway's name (a ``GatewayType`` member is one); ``model`` may be
    ``None``. A pair never observed counts with ratio 1, the base counter itself. Safe to share
    between threads.
    """

    __slots__ = ("_base", "_counters", "_lock")

    def __init__(self, base: TokenCounter | None = None) -> None:
        self._base: TokenCounter = base if base is not None else ApproxTokenCounter()
        self._counters: dict[tuple[str, str | None], CalibratedCounter] = {}
        self._lock = threading.Lock()

    def counter(self, gateway: str, model: str | None = None) -> CalibratedCounter:
        """The calibrated counter for ``gateway`` and ``model``: count budgets with it."""
        with self._lock:
            return self._counters.get((str(gateway), model)) or CalibratedCounter(self._base)

    def observe(
        self, gateway: str, model: str | None, text: str, reported: int
    ) -> CalibratedCounter:
        """Fit the pair's counter to ``reported`` tokens for ``text``; the fitted counter."""
        key = (str(gateway), model)
        with self._lock:
            current = self._counters.get(key) or CalibratedCounter(self._base)
            fitted = self._counters[key] = current.updated(text, reported)
        return fitted

    def calibrate(
        self,
        endpoint: RequestCounter,
        gateway: str,
        request: Mapping[str, Any],
        *,
        counted: Mapping[str, Any] | None = None,
    ) -> int:
        """Ask ``endpoint`` for the input tokens of ``request``, fit the counter of
        ``gateway`` and the request's ``model`` to them, and return the figure.

        ``counted`` is the part of the request the endpoint counts when it is not all of it
        (``GeminiTokenCounter(contents_only=True)``: ``{"contents": request["contents"]}``).
        A refused count changes nothing.
        """
        reported = endpoint.count_request(request)
        self._fit(gateway, request, counted, reported)
        return reported

    async def acalibrate(
        self,
        endpoint: AsyncRequestCounter,
        gateway: str,
        request: Mapping[str, Any],
        *,
        counted: Mapping[str, Any] | None = None,
    ) -> int:
        """:meth:`calibrate` with an async endpoint counter."""
        reported = await endpoint.acount_request(request)
        self._fit(gateway, request, counted, reported)
        return reported

    def _fit(
        self,
        gateway: str,
        request: Mapping[str, Any],
        counted: Mapping[str, Any] | None,
        reported: int,
    ) -> None:
        model = request.get("model")
        text = request_text(request if counted is None else counted)
        self.observe(gateway, model if isinstance(model, str) else None, text, reported)

    def __repr__(self) -> str:
        with self._lock:
            fitted = ", ".join(f"{g}/{m}: {c.ratio:.3f}" for (g, m), c in self._counters.items())
        return f"Calibration({self._base!r}, {{{fitted}}})"
