"""ContextView: a read-only window on a run of a Context's items, made in O(1)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import overload

from hydrangea.errors import ContextStateError
from hydrangea.providers.native import NativeContent

__all__ = ["ContextView"]


class ContextView(Sequence[NativeContent]):
    """The items ``[start, stop)`` of a Context, without copying them.

    This is what an area's ``observe()`` receives: creating it costs nothing whatever the size
    of the range, so rendering stays independent of the Context's length. The view cannot resize
    the Context. It is valid while the Context has not detached anything since the view was made;
    reading a stale view raises :class:`~hydrangea.errors.ContextStateError` rather than showing
    other items. Take ``tuple(view)`` to keep a copy.
    """

    __slots__ = ("_generation", "_items", "_live", "_start", "_stop")

    def __init__(
        self,
        items: Sequence[NativeContent],
        start: int,
        stop: int,
        generation: Callable[[], int],
    ) -> None:
        if not 0 <= start <= stop <= len(items):
            raise IndexError(f"view [{start}, {stop}) is outside 0..{len(items)}")
        self._items = items
        self._start = start
        self._stop = stop
        self._live = generation
        self._generation = generation()

    def _check(self) -> None:
        if self._live() != self._generation:
            raise ContextStateError("this view is stale: the Context detached items since")

    def __len__(self) -> int:
        return self._stop - self._start

    @overload
    def __getitem__(self, index: int) -> NativeContent: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[NativeContent, ...]: ...
    def __getitem__(self, index: int | slice) -> NativeContent | tuple[NativeContent, ...]:
        self._check()
        if isinstance(index, slice):
            return tuple(self._items[i] for i in range(self._start, self._stop)[index])
        size = self._stop - self._start
        if not -size <= index < size:
            raise IndexError(f"view index {index} is outside a view of {size} items")
        return self._items[self._start + index % size]

    def __iter__(self) -> Iterator[NativeContent]:
        self._check()
        for position in range(self._start, self._stop):
            yield self._items[position]

    def __repr__(self) -> str:
        return f"ContextView([{self._start}, {self._stop}))"
