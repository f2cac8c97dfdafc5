"""Helpers every adapter uses to read model output (lists of dicts, other SDKs' objects)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hydrangea.errors import GatewayMismatchError, InvalidItemError
from hydrangea.gateway import GatewayType

__all__ = ["dict_entries", "reject_other_sdk"]


def dict_entries(entries: list[Any], expected: str) -> Iterator[dict[str, Any]]:
    """Yield the entries of a model output list, one by one, checking that each is a dict.

    The check is lazy, so an entry is reported only once the entries before it were read.
    A non-dict entry raises InvalidItemError reading ``"<expected>, got <type>"``.
    """
    for entry in entries:
        if not isinstance(entry, dict):
            raise InvalidItemError(f"{expected}, got {type(entry).__name__}")
        yield entry


def reject_other_sdk(output: object, gateway: GatewayType, others: tuple[str, ...]) -> None:
    """Raise GatewayMismatchError if ``output``'s class lives in a module starting with one of
    ``others`` (the packages of the other gateways' SDKs)."""
    module = type(output).__module__
    if module.startswith(others):
        raise GatewayMismatchError(
            f"a {module}.{type(output).__name__} object belongs to another gateway, "
            f"not to {gateway.value}"
        )
