"""The component table of a lifecycle session: components by key and tags (private).

:class:`ComponentTable` is the bookkeeping half of :class:`~hydrangea.lifecycle.Lifecycle`:
which components exist under which keys, which ephemeral ones are live, which permanent ones
wait for their first episode and which are already in the history. It knows nothing of the
Context or of episodes; the session decides when entries are committed or expire.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from hydrangea.lifecycle.component import AUTO_KEY_PREFIX, Component, Phase, check_tags
from hydrangea.lifecycle.errors import (
    ComponentNotFoundError,
    DuplicateKeyError,
    InvalidComponentError,
    PermanentComponentError,
)
from hydrangea.lifecycle.history import OverlayItem
from hydrangea.providers.native import NativeContent

__all__ = ["ComponentTable", "Entry", "Plan", "check_mutable"]


@dataclass(slots=True, eq=False)
class Entry:
    """One component in a session, with its schedule start and its converted items."""

    key: str
    auto: bool
    seq: int
    component: Component
    start: int
    natives: tuple[NativeContent, ...]
    committed: tuple[int, int] | None = None
    shown: dict[Phase, OverlayItem] = field(default_factory=dict)
    """Overlay items already made for this entry, by phase (reset when it changes)."""
    plan: Plan | None = None
    """The entry's overlay item over a run of episodes, kept until its phase changes."""
    sent: tuple[int, int] | None = None
    """Where its content was last sent: (history index, the Context's detach count then)."""


@dataclass(frozen=True, slots=True)
class Plan:
    """What an entry shows in episodes ``first`` to ``stop - 1`` (absolute episodes): ``item``
    (``None``: hidden), and whether it ends for good at ``stop`` (for a hidden entry: it never
    shows again, so it is gone now). ``last`` is the episode after which the key is free (the
    last visible one of a final run), or -1; ``before`` tells the item's placement.

    A periodic plan (``period`` > 0: a sticky or cyclic component) shows ``item`` only in the
    episodes ``e`` with ``(e - origin) % period < shown``, hidden in the others, for good.

    A plan holds for the entry's component and schedule start as they were when it was made:
    whatever changes either (``Lifecycle.update``) drops the entry's plan."""

    first: int
    stop: int
    item: OverlayItem | None
    final: bool
    last: int
    before: bool
    period: int = 0
    shown: int = 0
    origin: int = 0


class ComponentTable:
    """Entries by key in insertion order, plus three views the session renders from.

    ``live`` holds the ephemeral entries and ``pending`` the permanent ones not yet in the
    history, each in ``seq`` order; ``committed`` lists the permanent entries in the order
    their items were appended to the history.
    """

    __slots__ = ("committed", "entries", "live", "pending", "seq")

    def __init__(self) -> None:
        self.entries: dict[str, Entry] = {}
        self.live: dict[str, Entry] = {}
        self.pending: dict[str, Entry] = {}
        self.committed: list[Entry] = []
        self.seq = 0

    def get(self, key: str) -> Entry:
        """The entry under ``key``; :class:`ComponentNotFoundError` if there is none."""
        if not isinstance(key, str):
            raise ComponentNotFoundError(f"keys are strings; no component has the key {key!r}")
        try:
            return self.entries[key]
        except KeyError:
            raise ComponentNotFoundError(f"no component has the key {key!r}") from None

    def by_tags(self, tags: Iterable[str], match: Literal["any", "all"]) -> list[Component]:
        """Components carrying any or all of ``tags``, in insertion order."""
        wanted = check_tags([tags] if isinstance(tags, str) else tags, "get_by_tags's tags")
        if not wanted:
            raise InvalidComponentError("get_by_tags needs at least one tag")
        if match not in ("any", "all"):
            raise InvalidComponentError(f"match must be 'any' or 'all', got {match!r}")
        found: list[Component] = []
        for entry in self.entries.values():
            tags_of = entry.component.tags
            match match:
                case "any":
                    hit = not wanted.isdisjoint(tags_of)
                case "all":
                    hit = wanted <= tags_of
                case _:
                    raise InvalidComponentError(f"match must be 'any' or 'all', got {match!r}")
            if hit:
                found.append(entry.component)
        return found

    def put(
        self,
        component: Component,
        natives: tuple[NativeContent, ...],
        start: int,
        *,
        replace: bool,
    ) -> str:
        """Add ``component`` (already converted to ``natives``) starting at episode ``start``;
        return its key (see :meth:`Lifecycle.add <hydrangea.lifecycle.Lifecycle.add>`).

        A component added without a key is stored with the key it was given, so the component
        that :meth:`get` and :meth:`by_tags` return names its own key."""
        key = component.key
        old = self.entries.get(key) if key is not None else None
        if old is not None:
            if not replace:
                raise DuplicateKeyError(
                    f"a component with key {key!r} exists; pass replace=True to replace it"
                )
            check_mutable(old, "replaced")
            self.unlink(old)
            seq = old.seq
        else:
            self.seq += 1
            seq = self.seq
        auto = key is None if old is None else old.auto
        if key is None:
            key = f"{AUTO_KEY_PREFIX}{seq}"
            component = component._assigned(key)  # so get(), get_by_tags() and states() tell it
        entry = Entry(key, auto, seq, component, start, natives)
        self.entries[key] = entry
        self.link(entry)
        return key

    def remove(self, key: str) -> Entry:
        """Remove the entry under ``key`` (not one already in the history) and return it."""
        entry = self.get(key)
        check_mutable(entry, "deleted")
        self.unlink(entry)
        del self.entries[key]
        return entry

    def expire(self, entries: Iterable[Entry]) -> None:
        """Forget ``entries`` (live ones): they will never be sent again. An entry that was
        replaced or deleted meanwhile is no longer here and is left alone."""
        for entry in entries:
            if self.entries.get(entry.key) is entry:
                del self.live[entry.key]
                del self.entries[entry.key]

    def link(self, entry: Entry) -> None:
        """Put ``entry`` in the live or pending table, keeping each in ``seq`` order."""
        table = self.live if entry.component.ephemeral else self.pending
        newest = next(reversed(table.values()), None)
        table[entry.key] = entry
        if newest is not None and newest.seq > entry.seq:  # a replacement: rare, so re-sort
            ordered = sorted(table.values(), key=lambda e: e.seq)
            table.clear()
            table.update((e.key, e) for e in ordered)

    def unlink(self, entry: Entry) -> None:
        """Take ``entry`` out of the live and pending tables."""
        self.live.pop(entry.key, None)
        self.pending.pop(entry.key, None)


def check_mutable(entry: Entry, what: str) -> None:
    """:class:`PermanentComponentError` if ``entry`` is already in the history."""
    if entry.committed is not None:
        raise PermanentComponentError(
            f"permanent component {entry.key!r} is already in the history and cannot be "
            f"{what}; the history is append-only"
        )
