"""Requests compared without their cache markers (the providers leave them out of the prefix
check, and the library places them anew on every request)."""

from __future__ import annotations

from typing import Any


def unmarked(value: Any) -> Any:
    """``value`` (a request or part of one) without its ``cache_control`` keys."""
    if isinstance(value, dict):
        return {k: unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [unmarked(v) for v in value]
    return value
