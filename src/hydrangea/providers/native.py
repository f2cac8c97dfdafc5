"""NativeContent: one context item in its provider's own JSON shape."""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from operator import itemgetter
from typing import Any, NoReturn, TypeAlias, TypeVar, cast

from hydrangea.errors import InputTooDeepError, InvalidItemError, UnencodableTextError
from hydrangea.text import first_unencodable

__all__ = [
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "NativeContent",
    "check_json",
    "clone_json",
    "clone_sorted",
    "copy_json",
    "copy_json_value",
    "share_items",
    "without_key",
]

NativeContent: TypeAlias = dict[str, Any]
"""A provider-native item: the JSON object the provider's API takes or returns.

Each adapter module documents its own shapes with TypedDicts; at the Context level an item is a
plain JSON object, so a Context serializes without any SDK installed.
"""

MAX_DEPTH = 512
"""How deeply objects and arrays may nest in an item (the item itself is depth 1).

Far beyond any provider's shapes; the bound keeps every recursive reader of an accepted item
(request builders, serializers, the explorer) clear of Python's recursion limit.
"""


MAX_INT_DIGITS = 4300
"""The most decimal digits an integer in an item may have: what Python's ``json`` writes and
reads by default (``sys.get_int_max_str_digits``), so every accepted item can be saved."""

_INT_BOUND = 10**MAX_INT_DIGITS
_INT_FLOOR = -_INT_BOUND

_first = itemgetter(0)


class _Refused(Exception):
    """Raised inside the walk; carries the path back up so the message can say where."""

    def __init__(self, kind: type[InvalidItemError | UnencodableTextError], what: str) -> None:
        super().__init__(what)
        self.kind = kind
        self.what = what
        self.path: list[str] = []


def _refuse(kind: type[InvalidItemError | UnencodableTextError], what: str) -> NoReturn:
    raise _Refused(kind, what)


def _text(value: str) -> str:
    index = first_unencodable(value)
    if index is not None:
        _refuse(
            UnencodableTextError,
            f"holds a lone surrogate U+{ord(value[index]):04X} at index {index}",
        )
    return value if type(value) is str else str.__str__(value)


def _copy(
    value: object, depth: int, sort_keys: bool = False,
    floor: int = _INT_FLOOR, bound: int = _INT_BOUND,
) -> Any:
    # Plain ASCII strings, ints, booleans and None are taken inline (no call per value): they
    # are most of an item. Errors and their order are those of one value-by-value walk.
    kind = type(value)
    if kind is str:
        return value if value.isascii() else _text(value)  # type: ignore[attr-defined,arg-type]
    if kind is dict or isinstance(value, dict):
        if depth >= MAX_DEPTH:
            _refuse(InputTooDeepError, f"nests deeper than {MAX_DEPTH} levels")
        depth += 1
        out: dict[str, Any] = {}
        pairs = value.items()  # type: ignore[attr-defined]
        for key, inner in _sorted(pairs) if sort_keys else pairs:
            plain_key = type(key) is str
            if not plain_key and not isinstance(key, str):
                _refuse(InvalidItemError, f"has the key {key!r}; JSON object keys are strings")
            held = type(inner)
            if ((held is str and inner.isascii()) or inner is None or held is bool
                    or (held is int and floor < inner < bound)):
                copied = inner
            else:
                try:
                    copied = _copy(inner, depth, sort_keys)
                except _Refused as refused:
                    refused.path.append(f"[{key!r}]")
                    raise
            if plain_key and key.isascii():
                out[key] = copied
                continue
            try:
                out[_text(key)] = copied
            except _Refused as refused:
                refused.path.append(f"[{key!r}]")
                raise
        return out
    if kind is list or isinstance(value, list | tuple):
        if depth >= MAX_DEPTH:
            _refuse(InputTooDeepError, f"nests deeper than {MAX_DEPTH} levels")
        depth += 1
        items: list[Any] = []
        append = items.append
        for index, inner in enumerate(value):  # type: ignore[arg-type]
            held = type(inner)
            if ((held is str and inner.isascii()) or inner is None or held is bool
                    or (held is int and floor < inner < bound)):
                append(inner)
                continue
            try:
                append(_copy(inner, depth, sort_keys))
            except _Refused as refused:
                refused.path.append(f"[{index}]")
                raise
        return items
    if value is None or kind is bool:
        return value
    if kind is int or (isinstance(value, int) and not isinstance(value, bool)):
        return _int(value)  # type: ignore[arg-type]
    if kind is float or isinstance(value, float):
        if not math.isfinite(value):  # type: ignore[arg-type]
            _refuse(InvalidItemError, f"is {value!r}, which is not a JSON number")
        return float(value)  # type: ignore[arg-type]
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return _text(value)
    _refuse(InvalidItemError, f"holds a {kind.__name__}, which is not a JSON value")


def _int(value: int) -> int:
    if not -_INT_BOUND < value < _INT_BOUND:
        _refuse(InvalidItemError, f"is an integer of more than {MAX_INT_DIGITS} digits, which "
                "JSON readers refuse; send it as a string")
    return int(value)


def _sorted(pairs: Any) -> list[tuple[Any, Any]]:
    for key, _ in pairs:
        if not isinstance(key, str):
            _refuse(InvalidItemError, f"has the key {key!r}; JSON object keys are strings")
    return sorted(pairs, key=_first)


def copy_json_value(value: object, where: str, *, sort_keys: bool = False) -> Any:
    """:func:`copy_json` for any JSON value (an array at the top, for instance)."""
    try:
        return _copy(value, 0, sort_keys)
    except _Refused as refused:
        path = "".join(reversed(refused.path))
        raise refused.kind(f"{where}{' at ' + path if path else ''} {refused.what}") from None


def copy_json(
    item: object, where: str = "a native item", *, sort_keys: bool = False
) -> NativeContent:
    """Return an independent deep copy of ``item``, checking that it is a JSON object.

    One walk checks the whole shape: a ``dict`` with string keys whose values are strings,
    finite numbers, booleans, ``None``, lists (tuples are taken as lists) and dicts, nested at
    most :data:`MAX_DEPTH` deep. ``str``/``int``/``float``/``dict``/``list`` subclasses are copied
    as their plain base types, as ``json`` would write them.

    Raises :class:`~hydrangea.errors.InvalidItemError` for anything else (bytes, sets, NaN,
    a non-string key ...), :class:`~hydrangea.errors.InputTooDeepError` past the depth bound and
    :class:`~hydrangea.errors.UnencodableTextError` for text holding a lone surrogate; each
    message names where in the item, prefixed with ``where``. With ``sort_keys`` the copy's
    object keys are sorted at every depth (as ``json.dumps(sort_keys=True)`` orders them).
    """
    if not isinstance(item, dict):
        raise InvalidItemError(f"{where} must be a JSON object (dict), got {type(item).__name__}")
    copied = copy_json_value(item, where, sort_keys=sort_keys)
    assert isinstance(copied, dict)
    return copied


def _check(value: object, depth: int) -> None:
    kind = type(value)
    if kind is str:
        _text(value)  # type: ignore[arg-type]
    elif kind is dict:
        if depth >= MAX_DEPTH:
            _refuse(InputTooDeepError, f"nests deeper than {MAX_DEPTH} levels")
        for key, inner in value.items():  # type: ignore[attr-defined]
            try:
                if type(key) is not str:
                    _refuse(InvalidItemError, f"has the key {key!r}; JSON object keys are strings")
                _text(key)
                _check(inner, depth + 1)
            except _Refused as refused:
                refused.path.append(f"[{key!r}]")
                raise
    elif kind is list:
        if depth >= MAX_DEPTH:
            _refuse(InputTooDeepError, f"nests deeper than {MAX_DEPTH} levels")
        for index, inner in enumerate(value):  # type: ignore[arg-type]
            try:
                _check(inner, depth + 1)
            except _Refused as refused:
                refused.path.append(f"[{index}]")
                raise
    elif kind is float:
        if not math.isfinite(value):  # type: ignore[arg-type]
            _refuse(InvalidItemError, f"is {value!r}, which is not a JSON number")
    elif kind is int:
        _int(value)  # type: ignore[arg-type]
    elif not (value is None or kind is bool):
        _refuse(InvalidItemError, f"holds a {kind.__name__}, which is not a plain JSON value")


def check_json(item: object, where: str = "a native item") -> NativeContent:
    """Check, without copying, that ``item`` is a plain JSON object as :func:`copy_json` accepts.

    For values that are already independent and of the plain types (as ``json.loads`` returns
    them): same checks and errors as :func:`copy_json`, but subclasses and tuples are refused
    rather than converted. Returns ``item`` itself.
    """
    if not isinstance(item, dict):
        raise InvalidItemError(f"{where} must be a JSON object (dict), got {type(item).__name__}")
    try:
        _check(item, 0)
    except _Refused as refused:
        path = "".join(reversed(refused.path))
        raise refused.kind(f"{where}{' at ' + path if path else ''} {refused.what}") from None
    return item


_ATOMS = frozenset({str, int, float, bool, type(None)})


_T = TypeVar("_T")


def clone_json(value: _T) -> _T:
    """An independent copy of a JSON value, for request builders (no checks: see copy_json).

    Plain dicts and lists are copied, plain scalars shared (they are immutable); anything else
    (a caller's own mapping type, say) goes to :func:`copy.deepcopy`. Equal to
    ``copy.deepcopy(value)`` for the acyclic JSON values items are, several times faster.
    """
    return cast(_T, _clone(value))


def _clone(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        out = {}
        for key, inner in value.items():
            out[key] = inner if type(inner) in _ATOMS else _clone(inner)
        return out
    if kind is list:
        items = []
        for inner in value:
            items.append(inner if type(inner) in _ATOMS else _clone(inner))
        return items
    if kind in _ATOMS:
        return value
    return copy.deepcopy(value)


def clone_sorted(value: _T) -> _T:
    """:func:`clone_json` with object keys sorted at every depth, for JSON already checked.

    Equal, key order included, to ``copy_json_value(value, "a native item", sort_keys=True)``
    for a value that walk accepts and that holds plain types only (what :func:`copy_json`
    returns, and what an adapter's ``canonical`` makes of it), without repeating its checks.
    A value holding anything else is handed to that checked walk whole, so nothing unchecked
    gets through and a refusal names the same place.
    """
    try:
        return cast(_T, _clone_sorted(value))
    except _NotPlain:
        return cast(_T, copy_json_value(value, "a native item", sort_keys=True))


class _NotPlain(Exception):
    """Raised by :func:`_clone_sorted` at the first value that is not plain JSON."""


def _clone_sorted(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        try:
            keys = sorted(value)
        except TypeError:  # keys of several types
            raise _NotPlain from None
        for key in keys:
            if type(key) is not str:
                raise _NotPlain
        # Loops, not comprehensions: a comprehension is a second frame per level on 3.11,
        # and MAX_DEPTH levels must stay clear of the recursion limit.
        out = {}
        for key in keys:
            inner = value[key]
            out[key] = inner if type(inner) in _ATOMS else _clone_sorted(inner)
        return out
    if kind is list:
        items = []
        for inner in value:
            items.append(inner if type(inner) in _ATOMS else _clone_sorted(inner))
        return items
    if kind in _ATOMS:
        return value
    raise _NotPlain


def without_key(value: object, key: str) -> object:
    """A copy of the JSON ``value`` with every object member named ``key`` left out, at any
    depth (lists and dicts copied, scalars shared)."""
    if isinstance(value, dict):
        return {k: without_key(v, key) for k, v in value.items() if k != key}
    if isinstance(value, list):
        return [without_key(v, key) for v in value]
    return value


def _identical(a: object, b: object) -> bool:
    """Whether ``a`` and ``b`` are the same JSON value written the same way: equal, of the same
    types, with object keys in the same order at every depth (``json.dumps`` alike)."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is dict:
        if len(a) != len(b):  # type: ignore[arg-type]
            return False
        for (key, inner), (other_key, other) in zip(
            a.items(), b.items(), strict=True  # type: ignore[attr-defined]
        ):
            if key != other_key or not _identical(inner, other):
                return False
        return True
    if kind is list:
        if len(a) != len(b):  # type: ignore[arg-type]
            return False
        return all(map(_identical, a, b))  # type: ignore[call-overload]
    return a == b


_PARTS = ("content", "parts")


def share_items(messages: list[Any], items: Sequence[NativeContent]) -> None:
    """Replace, in place, each of ``messages`` (or each block of its ``content`` / ``parts``
    list) that is :func:`_identical` to one of ``items`` (or to one of their blocks) by that
    item's own object, so a cache that keeps the messages holds no second copy of them.

    Only for messages kept read-only, like the items themselves (a request cache's): the
    shared objects are the Context's. Matching walks both in order, a few places ahead.
    """
    pool: list[object] = []
    for item in items:
        pool.append(item)
        for key in _PARTS:
            blocks = item.get(key)
            if type(blocks) is list:
                pool.extend(blocks)
    at = 0
    for n, message in enumerate(messages):
        found = _find(pool, at, message)
        if found is not None:
            messages[n], at = pool[found], found + 1
            continue
        if type(message) is not dict:
            continue
        for key in _PARTS:
            blocks = message.get(key)
            if type(blocks) is not list:
                continue
            for b, block in enumerate(blocks):
                found = _find(pool, at, block)
                if found is not None:
                    blocks[b], at = pool[found], found + 1
                elif type(block) is dict:  # (a Gemini response given its call's name)
                    _share_members(block, pool[at : at + _AHEAD])


_AHEAD = 8


def _share_members(value: dict[str, Any], near: list[object], depth: int = 2) -> None:
    """Replace the object members of the built ``value`` (not an item's) by identical ones of
    the same key in ``near`` (items' blocks), ``depth`` levels down."""
    for key, inner in value.items():
        if type(inner) is not dict and type(inner) is not list:
            continue
        others = [o for c in near if type(c) is dict and (o := c.get(key)) is not None]
        for other in others:
            if _identical(other, inner):
                value[key] = other
                break
        else:
            if depth > 1 and type(inner) is dict:
                _share_members(inner, others, depth - 1)


def _find(pool: list[object], at: int, value: object) -> int | None:
    for k in range(at, min(at + _AHEAD, len(pool))):
        if _identical(pool[k], value):
            return k
    return None
