"""Token counting: the :class:`TokenCounter` protocol and the dependency-free default."""

from __future__ import annotations

from fractions import Fraction
from typing import Protocol, runtime_checkable

__all__ = ["ApproxTokenCounter", "TokenCounter", "chars_per_token"]


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens in a piece of text, so the builder can honour a budget."""

    def count(self, text: str) -> int:
        """The number of tokens ``text`` takes."""
        ...


class ApproxTokenCounter:
    """Roughly four characters a token, rounded up.

    Deterministic and dependency-free. It over-counts slightly for English and under-counts for
    some scripts, so keep a safety margin in the budget, or supply a provider-exact counter that
    implements :class:`TokenCounter`. ``chars_per_token`` (keelgate.context's argument) sets
    the ratio; it must be positive.

    >>> ApproxTokenCounter().count("hello")
    2
    >>> ApproxTokenCounter(chars_per_token=2).count("hello")
    3
    """

    __slots__ = ("_den", "_num", "_ratio")

    CHARS_PER_TOKEN = 4
    """The default number of characters a token stands for."""

    def __init__(self, chars_per_token: float = CHARS_PER_TOKEN) -> None:
        if isinstance(chars_per_token, bool) or not isinstance(chars_per_token, int | float):
            raise TypeError(f"chars_per_token must be a number, got {chars_per_token!r}")
        if not chars_per_token > 0 or chars_per_token == float("inf"):
            raise ValueError(f"chars_per_token must be positive and finite, got {chars_per_token}")
        ratio = Fraction(chars_per_token)
        self._ratio = ratio
        self._num, self._den = ratio.numerator, ratio.denominator

    @property
    def chars_per_token(self) -> Fraction:
        """The characters a token stands for, exactly."""
        return self._ratio

    def count(self, text: str) -> int:
        """``ceil(len(text) / chars_per_token)``: zero for the empty string."""
        return -(-len(text) * self._den // self._num)

    def __repr__(self) -> str:
        if self._den == 1:
            return f"ApproxTokenCounter(chars_per_token={self._num})"
        return f"ApproxTokenCounter(chars_per_token={float(self._ratio)!r})"


def chars_per_token(counter: TokenCounter) -> Fraction | None:
    """``k`` when ``counter.count(text)`` is exactly ``ceil(len(text) / k)`` for every text, so
    that a builder may add up costs in characters and round once; ``None`` for other counters.

    Only the built-in :class:`ApproxTokenCounter` itself qualifies (a subclass may count
    differently).
    """
    if type(counter) is ApproxTokenCounter:
        return counter.chars_per_token
    return None
