"""Helpers every adapter uses to read model output (lists of dicts)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hydrangea.errors import InvalidItemError

__all__ = ["dict_entries"]


def dict_entries(entries: list[Any], expected: str) -> Iterator[dict[str, Any]]:
    """Yield the entries of a model output list, one by one, checking that each is a dict.

    The check is lazy, so an entry is reported only once the entries before it were read.
    A non-dict entry raises InvalidItemError reading ``"<expected>, got <type>"``.
    """
    for entry in entries:
        if not isinstance(entry, dict):
            raise InvalidItemError(f"{expected}, got {type(entry).__name__}")
        yield entry
