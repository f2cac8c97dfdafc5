"""NativeContent: one context item in its provider's own JSON shape."""

from __future__ import annotations

import json
from typing import Any, TypeAlias

from hydrangea.errors import InvalidItemError

__all__ = ["NativeContent", "copy_json"]

NativeContent: TypeAlias = dict[str, Any]
"""A provider-native item: the JSON object the provider's API takes or returns.

Each adapter module documents its own shapes with TypedDicts; at the Context level an item is a
plain JSON object, so a Context serializes without any SDK installed.
"""


def copy_json(item: object, *, sort_keys: bool = False) -> NativeContent:
    """Return an independent deep copy of ``item``, checking that it is a JSON object.

    With ``sort_keys`` the copy's object keys are sorted at every depth (the canonical key order
    of stored provider output).

    Raises :class:`~hydrangea.errors.InvalidItemError` for anything that is not a dict of
    JSON-serializable values (bytes, sets, NaN and the like).
    """
    if not isinstance(item, dict):
        raise InvalidItemError(
            f"a native item must be a JSON object (dict), got {type(item).__name__}"
        )
    try:
        copied = json.loads(json.dumps(item, allow_nan=False, sort_keys=sort_keys))
    except (TypeError, ValueError) as exc:
        raise InvalidItemError(f"a native item must be JSON-serializable: {exc}") from exc
    assert isinstance(copied, dict)
    return copied
