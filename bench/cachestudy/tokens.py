"""The token counter of the study: ceil(len(text) / 4), the library's approximate counter.

When ``hydrangea.asof`` is installed its :class:`ApproxTokenCounter` is used, so the study counts
exactly as the library's budgets do; the local formula is the same one and only serves while that
package is absent (the study reports which counter it used).
"""

from __future__ import annotations

import importlib
from typing import Protocol

__all__ = ["LocalApproxCounter", "TokenCounter", "counter_name", "default_counter"]


class TokenCounter(Protocol):
    """Anything with ``count(text) -> int`` (structurally the library's TokenCounter)."""

    def count(self, text: str) -> int:
        """Tokens in ``text``."""
        ...


class LocalApproxCounter:
    """ceil(len(text) / 4), the library's approximate counting rule."""

    def count(self, text: str) -> int:
        """Tokens in ``text``: one per four characters, rounded up."""
        return -(-len(text) // 4)


def default_counter() -> TokenCounter:
    """The library's ApproxTokenCounter if ``hydrangea.asof`` provides it, else the local rule."""
    try:
        module = importlib.import_module("hydrangea.asof.counting")
    except ImportError:
        return LocalApproxCounter()
    counter: TokenCounter = module.ApproxTokenCounter()
    return counter


def counter_name(counter: TokenCounter) -> str:
    """A label for the report: the counter's module and class."""
    kind = type(counter)
    return f"{kind.__module__}.{kind.__qualname__}"
