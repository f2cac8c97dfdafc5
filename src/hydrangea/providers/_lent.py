"""The top-level history list of a request, recycled once nobody holds it any more.

Each request hands out a fresh top-level list (``messages`` / ``input`` / ``contents``): the
caller may keep it, change it, send it later. Copying the cached prefix into a new list costs
one pointer copy per message, and freeing the list again costs as much: on a long session that
is the one part of a turn that grows with the history. So a :class:`Lender` keeps the lists it
handed out and, when a later request of the same Context is built, takes back one that

* nothing but the lender references any more (CPython's reference count says so: the caller
  dropped every request that held it), and
* was never changed after it was handed out (each mutating method of :class:`LentList` notes
  the change; its length is checked too),

and brings it up to date in place: the entries it holds past the still-valid prefix are cut
off, the entries a request had replaced in that prefix (Anthropic breakpoints, a Gemini turn
merged at the seam) are put back, and the prefix is extended. That costs the changes since the
list was last used, not the history. A list that is still held, or was changed, is never
touched again: the request gets a fresh copy. Callers see no difference, apart from the list
being a :class:`list` subclass (copying or pickling it gives a plain ``list``).

Only CPython with its GIL reports reference counts that can be trusted for this; elsewhere every
request gets a fresh copy. What the count of a list held by the pool alone reads is measured once
on the running interpreter (an interpreter that borrows references reads lower), never assumed.

The plain path (every request a fresh copy) is one switch away: the environment variable
``HYDRANGEA_PLAIN_LISTS=1`` at import, or :func:`set_recycling` (``make test`` runs the request
tests both ways). Measured with ``bench/agent.py``'s full stack (CPU µs per turn, recycling on /
off): t30 367 / 367, t1,000 380 / 368, t5,000 393 / 1,017 on OpenAI Chat; Anthropic 599 / 1,171
and Gemini 510 / 904 at t5,000: without it a turn grows with the history.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from typing import Any, SupportsIndex

__all__ = ["PLAIN_ENV", "Lender", "LentList", "recycling", "set_recycling"]

_POOL = 3
"""How many handed-out lists a lender keeps (two serve a loop that holds the previous request
while it builds the next one)."""


PLAIN_ENV = "HYDRANGEA_PLAIN_LISTS"
"""The environment variable that, set to ``1`` at import, switches recycling off."""


def _counter(plain: bool = False) -> Callable[[object], int] | None:
    if plain or sys.implementation.name != "cpython":
        return None
    gil = getattr(sys, "_is_gil_enabled", None)
    if gil is not None and not gil():
        return None  # free-threaded: counts are not exact
    return sys.getrefcount


_REFCOUNT = _counter(os.environ.get(PLAIN_ENV) == "1")


def recycling() -> bool:
    """Whether requests' lists are recycled (``False``: the plain path, a fresh copy each)."""
    return _REFCOUNT is not None


def set_recycling(enabled: bool) -> bool:
    """Switch recycling on (where reference counts can be trusted) or off, process-wide, for
    the lenders' next :meth:`Lender.take`; returns whether it was on before. Lists already
    pooled stay valid either way (they are only taken back while recycling is on)."""
    global _REFCOUNT  # noqa: PLW0603 (the one switch of the module)
    was = _REFCOUNT is not None
    _REFCOUNT = _counter(not enabled)
    return was


class LentList(list[Any]):
    """A request's top-level history list (a plain ``list`` in every use).

    Every mutating method notes that the list was changed once it was handed out, so its
    lender never takes it back. Before that, while its request is being built, replacing an
    entry records its position (the entry to put back when the list is recycled).
    """

    __slots__ = ("base", "changed", "length", "patched", "sealed")

    def __init__(self, values: Iterable[Any] = (), base: int = 0) -> None:
        list.__init__(self, values)  # (``LentList(iterable)`` works as ``list(iterable)``)
        self.base = base
        """How many leading entries are the lender's source entries (but for ``patched``)."""
        self.patched: list[int] = []
        self.sealed = False
        self.changed = False
        self.length = -1

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:
        return (list, (list(self),))

    def _note(self) -> None:
        if self.sealed:
            self.changed = True

    def __setitem__(self, index: Any, value: Any) -> None:
        if self.sealed or not isinstance(index, int):
            self.changed = True
        elif (position := index if index >= 0 else len(self) + index) < self.base:
            self.patched.append(position)  # (later entries are cut off when it is recycled)
        list.__setitem__(self, index, value)

    def __delitem__(self, index: Any) -> None:
        self.changed = True
        list.__delitem__(self, index)

    def __iadd__(self, values: Any) -> LentList:  # type: ignore[misc]
        self._note()
        list.extend(self, values)
        return self

    def __imul__(self, times: SupportsIndex) -> LentList:
        self.changed = True
        list.__imul__(self, times)
        return self

    def append(self, value: Any) -> None:
        """:meth:`list.append`."""
        self._note()
        list.append(self, value)

    def extend(self, values: Any) -> None:
        """:meth:`list.extend`."""
        self._note()
        list.extend(self, values)

    def insert(self, index: SupportsIndex, value: Any) -> None:
        """:meth:`list.insert`."""
        self.changed = True
        list.insert(self, index, value)

    def pop(self, index: SupportsIndex = -1) -> Any:
        """:meth:`list.pop`."""
        self.changed = True
        return list.pop(self, index)

    def remove(self, value: Any) -> None:
        """:meth:`list.remove`."""
        self.changed = True
        list.remove(self, value)

    def clear(self) -> None:
        """:meth:`list.clear`."""
        self.changed = True
        list.clear(self)

    def sort(self, *args: Any, **kwargs: Any) -> None:
        """:meth:`list.sort`."""
        self.changed = True
        list.sort(self, *args, **kwargs)

    def reverse(self) -> None:
        """:meth:`list.reverse`."""
        self.changed = True
        list.reverse(self)


class Lender:
    """The lists one Context's requests handed out, to recycle (see the module docstring)."""

    __slots__ = ("_pool", "copies")

    def __init__(self) -> None:
        self._pool: list[LentList] = []
        self.copies = 0
        """How many lists were made by copying the source (for tests and benchmarks)."""

    def take(self, source: list[Any], upto: int) -> LentList:
        """A list holding ``source[:upto]``, to be extended into one request's list."""
        pool = self._pool
        if _REFCOUNT is not None:
            n = 0
            while n < len(pool):
                if _REFCOUNT(pool[n]) != _ALONE:  # referenced from outside the pool
                    n += 1
                    continue
                lent = pool[n]
                if not lent.sealed or lent.changed or len(lent) != lent.length:
                    del pool[n]  # changed by its holder (or never handed out): let it go
                    continue
                lent.sealed = False
                lent.length = -1
                reset(lent, source, upto)
                return lent
        self.copies += 1
        fresh = LentList(source[:upto], upto)
        if _REFCOUNT is not None:
            pool.append(fresh)
            if len(pool) > _POOL:
                del pool[0]  # its holder keeps it; it is just no longer recycled
        return fresh

    def cut(self, upto: int) -> None:
        """The source was cut back to ``upto`` entries: later entries may differ."""
        for lent in self._pool:
            lent.base = min(lent.base, upto)


def _count_alone() -> int:
    """What the reference count of a pooled list reads when only the pool holds it (measured
    the way :meth:`Lender.take` reads it, on this interpreter)."""
    pool = [LentList([], 0)]
    counter = _counter()
    return counter(pool[0]) if counter is not None else -1


_ALONE = _count_alone()


def reset(lent: LentList, source: list[Any], upto: int) -> None:
    """Bring ``lent`` (unsealed) back to ``source[:upto]``: O(its changes + the difference)."""
    keep = min(lent.base, upto, len(lent))
    for position in lent.patched:
        if position < keep:
            list.__setitem__(lent, position, source[position])
    lent.patched.clear()
    list.__delitem__(lent, slice(keep, None))
    list.extend(lent, source[keep:upto])
    lent.base = upto


def seal(value: object) -> None:
    """``value`` (a request's history list) is handed out: any later change is its holder's."""
    if type(value) is LentList:
        value.length = len(value)
        value.sealed = True
