"""Errors raised by as-of context assembly. Every one is a :class:`ContextError`."""

from __future__ import annotations

from hydrangea.errors import HydrangeaError

__all__ = [
    "AsOfViolationError",
    "ContextBudgetError",
    "ContextError",
    "DuplicateItemError",
    "FenceFormatError",
    "InvalidContextItemError",
    "NaiveDatetimeError",
    "RecordNotFoundError",
    "SummarizerMismatchError",
    "UndatedItemError",
]


class ContextError(HydrangeaError):
    """Base class for context assembly failures."""


class AsOfViolationError(ContextError):
    """An item was published after ``as_of``."""


class UndatedItemError(ContextError):
    """An outside item carries no publication time, so it cannot be shown to be earlier."""


class DuplicateItemError(ContextError):
    """Two items share an id (or a record store already holds a different record under it)."""


class ContextBudgetError(ContextError, ValueError):
    """Trusted content alone does not fit the token budget (or the budget is not positive)."""


class RecordNotFoundError(ContextError, KeyError):
    """A record store holds no record under the requested id."""


class NaiveDatetimeError(ContextError, ValueError):
    """A datetime without a timezone was given where an aware one is required."""


class InvalidContextItemError(ContextError, ValueError):
    """A context item whose fields contradict each other (for example a trusted document)."""


class FenceFormatError(ContextError, ValueError):
    """Text handed to :func:`hydrangea.asof.fence.unfence` or ``unescape`` is not well formed."""


class SummarizerMismatchError(ContextError, TypeError):
    """The summarizer cannot be used this way (an async-only summarizer in a sync build)."""
