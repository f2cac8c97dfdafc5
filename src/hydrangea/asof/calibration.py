"""A token counter calibrated on what a provider reported, so budgets err on the safe side.

:class:`~hydrangea.asof.counting.ApproxTokenCounter` assumes four characters a token. That
over-counts English for OpenAI's encodings but under-counts Claude's tokenizer and Japanese
text, so a budget counted with it can overflow. :class:`CalibratedCounter` scales a base
counter by the largest ratio of reported to estimated tokens seen (never below 1), per gateway:
feed it the text of each request and the input tokens the provider reported for it (for example
``context.usage.last.usage.input_tokens``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from hydrangea.asof.counting import ApproxTokenCounter, TokenCounter

__all__ = ["CalibratedCounter"]


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
