"""What a build reads of its untrusted items, gathered in one pass: one list per field.

A build that does not fit reads every item's fields many times: to order the blocks, to rank the
items by importance, to render and price each block, note and pointer, to date the summary and
the index line. Read through a sorted list, each read lands on an item far in memory from the
one before, and at 100,000 items nearly every one misses the CPU caches (the per-item cost of a
build grew 2.5x from 1,000 to 100,000 items that way). So a build reads its items once, in the
order they were admitted, which is as a rule the order they were made in, and everything after
that pass indexes these lists and sorts integers.

A *position* is an item's place among the untrusted items in admission order. Times are
*stamps*: integer microseconds since 0001-01-01 UTC (:func:`stamp`), the earliest moment for
``None`` as :func:`~hydrangea.asof.layout.utc` takes it, so comparing stamps is comparing UTC
instants. Ties are broken by id (:func:`ordered`), in every order of a build.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import compress, count, islice
from operator import eq
from typing import Final

from hydrangea.asof.fence import MARK, PLACEHOLDER_NONCE, SEPARATOR, fence_body, published_label
from hydrangea.asof.items import ContextItem
from hydrangea.asof.layout import RANKS
from hydrangea.asof.summary import StructuredSummary

__all__ = ["Columns", "block_costs", "moment", "ordered", "stamp"]

_OLDEST: Final = datetime.min.replace(tzinfo=UTC)
_MICROSECOND: Final = timedelta(microseconds=1)


def stamp(when: datetime | None) -> int:
    """``when`` as integer microseconds since 0001-01-01 UTC; 0 for ``None``."""
    return 0 if when is None else (when.astimezone(UTC) - _OLDEST) // _MICROSECOND


def moment(value: int) -> datetime:
    """The UTC datetime of a :func:`stamp`."""
    return _OLDEST + timedelta(microseconds=value)


def ordered(positions: Iterable[int], keys: Sequence[int], ids: Sequence[str]) -> list[int]:
    """``positions`` sorted by ``(keys[a], ids[a])``: the integers decide, the ids only among
    equal keys (ids are distinct, so the order is total)."""
    out = sorted(positions, key=keys.__getitem__)
    values = list(map(keys.__getitem__, out))
    # i where values[i] == values[i - 1]: each run of them is one tie, sorted by id
    tied = compress(count(1), map(eq, values, islice(values, 1, None)))
    low = high = -1
    for i in tied:
        if i != high + 1:
            if high > low:
                out[low:high + 1] = sorted(out[low:high + 1], key=ids.__getitem__)
            low = i - 1
        high = i
    if high > low:
        out[low:high + 1] = sorted(out[low:high + 1], key=ids.__getitem__)
    return out


@dataclass(frozen=True, slots=True)
class Columns:
    """The untrusted items of one build and what it reads of them, by position.

    ``bodies`` are the fenced blocks without mark and nonce
    (:func:`~hydrangea.asof.layout.block_body`). Three orders of the positions:
    ``chronological`` (time in UTC, then id), ``blocks`` (block order,
    :func:`~hydrangea.asof.layout.block_key`: kind, time, id) and ``importance`` (priority,
    time, id: least important first). ``carried``: the positions of the items carrying a
    summary, in block order."""

    items: list[ContextItem]
    ids: list[str]
    stamps: list[int]
    priorities: list[int]
    summaries: list[StructuredSummary | None]
    bodies: list[str]
    blocks: list[int]
    chronological: list[int]
    importance: list[int]
    carried: list[int]

    @classmethod
    def gather(cls, items: Sequence[ContextItem]) -> Columns:
        """Read ``items`` (untrusted, in admission order) once and render each block."""
        ids: list[str] = []
        stamps: list[int] = []
        priorities: list[int] = []
        summaries: list[StructuredSummary | None] = []
        bodies: list[str] = []
        kinds: list[int] = []  # each kind's place in the block order
        ranks = RANKS
        for item in items:
            when = item.published_at
            at = stamp(when)
            item_id = item.item_id
            ids.append(item_id)
            stamps.append(at)
            priorities.append(item.priority)
            summaries.append(item.summary)
            kinds.append(ranks[item.kind])
            bodies.append(fence_body(
                item.content, item_id=item_id, origin=item.provenance.origin,
                kind=item.kind.value, published=published_label(when),
            ))
        # One sort by time; a stable sort of that by kind is the block order, by priority the
        # importance order (small integers: these two are cheap).
        chronological = ordered(range(len(ids)), stamps, ids)
        blocks = sorted(chronological, key=kinds.__getitem__)
        return cls(
            items=list(items), ids=ids, stamps=stamps, priorities=priorities,
            summaries=summaries, bodies=bodies, blocks=blocks, chronological=chronological,
            importance=sorted(chronological, key=priorities.__getitem__),
            carried=[a for a in blocks if summaries[a] is not None],
        )


def block_costs(bodies: Sequence[str], measure: Callable[[str], int]) -> list[int]:
    """Each block of ``bodies`` (:attr:`Columns.bodies`) with its mark, placeholder nonce and
    separator, as ``measure`` counts it."""
    opening = MARK + PLACEHOLDER_NONCE
    return [measure(f"{opening}{body}{SEPARATOR}") for body in bodies]
