"""The errors of ``hydrangea.asof``, re-exported from :mod:`hydrangea.errors`."""

from __future__ import annotations

from hydrangea.errors import (
    AsOfTypeError,
    AsOfViolationError,
    ContextBudgetError,
    ContextError,
    DuplicateItemError,
    FenceFormatError,
    InvalidContextItemError,
    NaiveDatetimeError,
    RecordNotFoundError,
    SummarizerMismatchError,
    SummaryPointerError,
    UndatedItemError,
)

__all__ = [
    "AsOfTypeError",
    "AsOfViolationError",
    "ContextBudgetError",
    "ContextError",
    "DuplicateItemError",
    "FenceFormatError",
    "InvalidContextItemError",
    "NaiveDatetimeError",
    "RecordNotFoundError",
    "SummarizerMismatchError",
    "SummaryPointerError",
    "UndatedItemError",
]
