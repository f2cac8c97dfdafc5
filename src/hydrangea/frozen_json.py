"""Deep-frozen JSON containers: read-only ``dict`` and ``list`` subclasses that hash by content.

:class:`~hydrangea.message.ToolCallPart` keeps its arguments in these, so a Message stays
immutable and hashable. They behave as ordinary dicts and lists for reading, ``json.dumps`` and
equality, and refuse every change.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NoReturn

__all__ = ["FrozenJSONArray", "FrozenJSONObject", "freeze"]


def _read_only(kind: str) -> NoReturn:
    raise TypeError(f"a {kind} is read-only: build a new ToolCallPart to change the arguments")


class FrozenJSONObject(dict[str, Any]):
    """A read-only JSON object (what :attr:`ToolCallPart.arguments` holds).

    It is a ``dict`` (``json.dumps``, ``==`` with plain dicts and key order work as usual) whose
    methods that would change it raise ``TypeError``; its values are JSON scalars,
    :class:`FrozenJSONObject` and :class:`FrozenJSONArray`. It hashes by content, consistently
    with ``==``. ``dict(obj)`` or ``obj.copy()`` give a mutable shallow copy.
    """

    __slots__ = ()

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))

    def __setitem__(self, key: str, value: Any) -> NoReturn:
        _read_only("FrozenJSONObject")

    def __delitem__(self, key: str) -> NoReturn:
        _read_only("FrozenJSONObject")

    def __ior__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        _read_only("FrozenJSONObject")

    def clear(self) -> NoReturn:
        """Refused: the object is read-only."""
        _read_only("FrozenJSONObject")

    def pop(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Refused: the object is read-only."""
        _read_only("FrozenJSONObject")

    def popitem(self) -> NoReturn:
        """Refused: the object is read-only."""
        _read_only("FrozenJSONObject")

    def setdefault(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Refused: the object is read-only."""
        _read_only("FrozenJSONObject")

    def update(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Refused: the object is read-only."""
        _read_only("FrozenJSONObject")

    def __copy__(self) -> FrozenJSONObject:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenJSONObject:
        return self

    def __reduce__(self) -> tuple[type[FrozenJSONObject], tuple[dict[str, Any]]]:
        return (FrozenJSONObject, (dict(self),))


class FrozenJSONArray(list[Any]):
    """A read-only JSON array inside a :class:`FrozenJSONObject`.

    It is a ``list`` (``==`` with plain lists works) whose changing methods raise ``TypeError``;
    it hashes by content.
    """

    __slots__ = ()

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self))

    def __setitem__(self, index: Any, value: Any) -> NoReturn:
        _read_only("FrozenJSONArray")

    def __delitem__(self, index: Any) -> NoReturn:
        _read_only("FrozenJSONArray")

    def __iadd__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        _read_only("FrozenJSONArray")

    def __imul__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        _read_only("FrozenJSONArray")

    def append(self, value: Any) -> NoReturn:
        """Refused: the array is read-only."""
        _read_only("FrozenJSONArray")

    def extend(self, values: Any) -> NoReturn:
        """Refused: the array is read-only."""
        _read_only("FrozenJSONArray")

    def insert(self, index: Any, value: Any) -> NoReturn:
        """Refused: the array is read-only."""
        _read_only("FrozenJSONArray")

    def pop(self, *args: Any) -> NoReturn:
        """Refused: the array is read-only."""
        _read_only("FrozenJSONArray")

    def remove(self, value: Any) -> NoReturn:
        """Refused: the array is read-only."""
        _read_only("FrozenJSONArray")

    def clear(self) -> NoReturn:
        """Refused: the array is read-only."""
        _read_only("FrozenJSONArray")

    def sort(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Refused: the array is read-only."""
        _read_only("FrozenJSONArray")

    def reverse(self) -> NoReturn:
        """Refused: the array is read-only."""
        _read_only("FrozenJSONArray")

    def __copy__(self) -> FrozenJSONArray:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenJSONArray:
        return self

    def __reduce__(self) -> tuple[type[FrozenJSONArray], tuple[list[Any]]]:
        return (FrozenJSONArray, (list(self),))


MAX_DEPTH = 512
"""How deeply arguments may nest (the same bound as native items)."""


def freeze(value: object, where: str, depth: int = 0) -> Any:
    """A deep, read-only copy of the JSON value ``value``; ValueError naming ``where`` if it is
    not one (tuples are taken as arrays), ``InputTooDeepError`` past :data:`MAX_DEPTH`."""
    if depth > MAX_DEPTH:
        from hydrangea.errors import InputTooDeepError

        raise InputTooDeepError(f"{where} nests deeper than {MAX_DEPTH} levels")
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where} is {value!r}, which is not a JSON number")
        return value
    if isinstance(value, Mapping):
        frozen: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"{where} has the key {key!r}; JSON object keys are strings")
            frozen[key] = freeze(item, f"{where}[{key!r}]", depth + 1)
        return FrozenJSONObject(frozen)
    if isinstance(value, list | tuple):
        return FrozenJSONArray(
            freeze(item, f"{where}[{n}]", depth + 1) for n, item in enumerate(value)
        )
    raise ValueError(f"{where} holds a {type(value).__name__}, which is not a JSON value")
