"""Token counting: the :class:`TokenCounter` protocol and the dependency-free default."""

from __future__ import annotations

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
    implements :class:`TokenCounter`.

    >>> ApproxTokenCounter().count("hello")
    2
    """

    __slots__ = ()

    CHARS_PER_TOKEN = 4
    """The characters a token stands for."""

    def count(self, text: str) -> int:
        """``ceil(len(text) / 4)``: zero for the empty string."""
        return -(-len(text) // self.CHARS_PER_TOKEN)

    def __repr__(self) -> str:
        return "ApproxTokenCounter()"


def chars_per_token(counter: TokenCounter) -> int | None:
    """``k`` when ``counter.count(text)`` is exactly ``ceil(len(text) / k)`` for every text, so
    that a builder may add up costs in characters and round once; ``None`` for other counters.

    Only the built-in :class:`ApproxTokenCounter` itself qualifies (a subclass may count
    differently).
    """
    if type(counter) is ApproxTokenCounter:
        return ApproxTokenCounter.CHARS_PER_TOKEN
    return None
