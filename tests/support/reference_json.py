"""Reference oracles for the fast paths of ``push_back``: the walks as they were written
before they were tuned, one value at a time, kept here so the tuned ones can be compared.

:func:`reference_copy` is the checked JSON copy (value by value, every string through the
surrogate check); :func:`reference_stored` is the whole general ``push_back`` pipeline, built on
public adapter methods only: ``from_output`` (with its ``json.dumps`` trial), ``canonical`` once
more, a checked key-sorted copy and ``check_output``.
"""

from __future__ import annotations

import math
from typing import Any

from hydrangea.errors import InputTooDeepError, InvalidItemError, UnencodableTextError
from hydrangea.providers.adapter import Adapter

MAX_DEPTH = 512


class _Refused(Exception):
    def __init__(self, kind: type[Exception], what: str) -> None:
        super().__init__(what)
        self.kind = kind
        self.what = what
        self.path: list[str] = []


def _lone_surrogate(text: str) -> int | None:
    for index, char in enumerate(text):
        if 0xD800 <= ord(char) <= 0xDFFF:
            return index
    return None


def _text(value: str) -> str:
    index = _lone_surrogate(value)
    if index is not None:
        raise _Refused(
            UnencodableTextError,
            f"holds a lone surrogate U+{ord(value[index]):04X} at index {index}",
        )
    return value if type(value) is str else str.__str__(value)


def _walk(value: object, depth: int, sort_keys: bool) -> Any:
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, dict):
        if depth >= MAX_DEPTH:
            raise _Refused(InputTooDeepError, f"nests deeper than {MAX_DEPTH} levels")
        pairs = list(value.items())
        if sort_keys:
            for key, _ in pairs:
                if not isinstance(key, str):
                    raise _Refused(
                        InvalidItemError, f"has the key {key!r}; JSON object keys are strings"
                    )
            pairs.sort(key=lambda pair: pair[0])
        out: dict[str, Any] = {}
        for key, inner in pairs:
            if not isinstance(key, str):
                what = f"has the key {key!r}; JSON object keys are strings"
                raise _Refused(InvalidItemError, what)
            try:
                copied = _walk(inner, depth + 1, sort_keys)
                out[_text(key)] = copied
            except _Refused as refused:
                refused.path.append(f"[{key!r}]")
                raise
        return out
    if isinstance(value, list | tuple):
        if depth >= MAX_DEPTH:
            raise _Refused(InputTooDeepError, f"nests deeper than {MAX_DEPTH} levels")
        items = []
        for index, inner in enumerate(value):
            try:
                items.append(_walk(inner, depth + 1, sort_keys))
            except _Refused as refused:
                refused.path.append(f"[{index}]")
                raise
        return items
    if value is None:
        return None
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _Refused(InvalidItemError, f"is {value!r}, which is not a JSON number")
        return float(value)
    raise _Refused(InvalidItemError, f"holds a {type(value).__name__}, which is not a JSON value")


def reference_copy(value: object, where: str, *, sort_keys: bool = False) -> Any:
    """What ``copy_json_value(value, where, sort_keys=...)`` returns or raises."""
    try:
        return _walk(value, 0, sort_keys)
    except _Refused as refused:
        path = "".join(reversed(refused.path))
        raise refused.kind(f"{where}{' at ' + path if path else ''} {refused.what}") from None


def reference_stored(adapter: Adapter, output: object) -> list[dict[str, Any]]:
    """The items the general pipeline stores for ``push_back(output)`` of a dict or list."""
    body = reference_copy(output, "the pushed output")
    staged = []
    for index, item in enumerate(adapter.from_output(body)):
        if not isinstance(item, dict):
            raise InvalidItemError(
                f"native item {index} must be a JSON object (dict), got {type(item).__name__}"
            )
        own = reference_copy(item, f"native item {index}")
        copied = reference_copy(adapter.canonical(own), "a native item", sort_keys=True)
        adapter.check_output(copied)
        staged.append(copied)
    return staged
