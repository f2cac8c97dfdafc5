"""Choosing what to compact and what to drop, in O(n log n), and making summary items.

The untrusted items are sorted once, least important first (lower ``priority``, then older
``published_at``, then ``item_id``). Each item's rendered cost ``c`` and its estimated cost as a
summary entry ``f`` are counted once; prefix sums give, for any split, the cost of

* dropping the ``d`` least important items,
* summarizing the next ``k - d`` of them into one summary block (overhead ``h``), and
* showing the rest in full.

:func:`plan` picks the fewest drops first, then the fewest compacted items, with linear scans
over the prefix sums.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence, Set
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import accumulate

from hydrangea.asof.items import ContextItem, ItemKind, Provenance, Trust
from hydrangea.asof.summary import StructuredSummary

__all__ = [
    "COMPACTION_ORIGIN",
    "Plan",
    "carried_summary",
    "importance_key",
    "make_summary_item",
    "plan",
    "scaled_fact_costs",
    "summary_item",
    "summary_pointers",
    "unresolved_pointers",
]

COMPACTION_ORIGIN = "compaction"
"""The provenance origin of every summary item the builder makes."""

_OLDEST = datetime.min.replace(tzinfo=UTC)


def importance_key(item: ContextItem) -> tuple[int, datetime, str]:
    """Sort key, least important first: priority, then age (older first), then id.

    Undated items (the builder never admits an undated untrusted item) would sort as oldest.
    """
    return (item.priority, item.published_at or _OLDEST, item.item_id)


@dataclass(frozen=True, slots=True)
class Plan:
    """A split of the importance order: ``[0, drop)`` dropped, ``[drop, compact)`` summarized,
    ``[compact, n)`` shown in full. ``drop == compact`` means no summary."""

    drop: int
    compact: int


def plan(costs: Sequence[int], fact_costs: Sequence[int], overhead: int, available: int) -> Plan:
    """The split with the fewest drops, then the fewest compacted items, whose estimated cost
    ``sum(costs[compact:]) + (overhead + sum(fact_costs[drop:compact]) if compacting)`` is at
    most ``available``. Linear in ``len(costs)`` (the caller sorts)."""
    n = len(costs)
    if n != len(fact_costs):
        raise ValueError("costs and fact_costs must have the same length")
    prefix_c = [0, *accumulate(costs)]
    prefix_f = [0, *accumulate(fact_costs)]
    total = prefix_c[n]
    if total <= available:
        return Plan(0, 0)
    if available < 0:
        return Plan(n, n)
    # g(k) = prefix_f[k] - prefix_c[k]: summarizing [0, k) (without overhead) and showing
    # [k, n) in full costs g(k) + total. low[j] = min g(k) over k in [j, n].
    gains = [f - c for f, c in zip(prefix_f, prefix_c, strict=True)]
    low = [*accumulate(reversed(gains), min)][::-1]
    for drop in range(n + 1):
        shown = total - prefix_c[drop]
        if shown <= available:
            return Plan(drop, drop)
        if drop < n and overhead - prefix_f[drop] + low[drop + 1] + total <= available:
            limit = available - overhead + prefix_f[drop] - total
            for compact in range(drop + 1, n + 1):
                if gains[compact] <= limit:
                    return Plan(drop, compact)
    return Plan(n, n)  # unreachable: drop == n always fits when available >= 0


def scaled_fact_costs(
    pointer_costs: Sequence[int], entry_costs: Sequence[int], plain: Sequence[bool],
    scale: tuple[int, int],
) -> list[int]:
    """Summary-entry estimates with each plain item's entry scaled by ``num / den`` (rounded
    up): a summarizer that writes shorter (or longer) entries than extraction is priced by the
    ratio it was observed to write at. Pointers and carried summaries are not scaled."""
    num, den = scale
    if num == den:
        return [p + e for p, e in zip(pointer_costs, entry_costs, strict=True)]
    return [
        p + (-(-e * num // den) if is_plain else e)
        for p, e, is_plain in zip(pointer_costs, entry_costs, plain, strict=True)
    ]


def carried_summary(item: ContextItem, resolved: Set[str]) -> StructuredSummary | None:
    """The summary ``item`` carries into a merge: its own, with only the pointers that are in
    ``resolved`` (the ids found in the record store). ``None`` for a plain item."""
    summary = item.summary
    if summary is None or all(p in resolved for p in summary.pointers):
        return summary
    return summary.model_copy(update={"pointers": tuple(
        p for p in summary.pointers if p in resolved
    )})


def summary_pointers(sources: Sequence[ContextItem], resolved: Set[str]) -> tuple[str, ...]:
    """The ids a summary of ``sources`` names, in order, without duplicates: each source's id,
    and for a summary source the ids it already pointed to that are in ``resolved``.

    Pointers come from the items, never from a summarizer, and each must lead back to a full
    record: a summary item's ``pointers`` are whatever its maker wrote (a caller may hand in
    forged ones), so only those found in the record store are carried (a summary this library
    made earlier, with the same store, has all of its pointers there). Nothing is lost by
    leaving the others out: the summary source itself is stored and pointed to by its own id.
    """
    if [source.summary for source in sources].count(None) == len(sources):  # none carried
        return tuple(dict.fromkeys([source.item_id for source in sources]))
    ids: dict[str, None] = {}
    for source in sources:
        ids[source.item_id] = None
        if source.summary is not None:
            ids.update(dict.fromkeys([p for p in source.summary.pointers if p in resolved]))
    return tuple(ids)


def unresolved_pointers(sources: Sequence[ContextItem], resolved: Set[str]) -> list[str]:
    """The pointers of the summary sources among ``sources`` that are not in ``resolved``, so
    that :func:`summary_pointers` leaves them out; in order, without duplicates."""
    return list(dict.fromkeys([
        p for s in sources if s.summary is not None for p in s.summary.pointers
        if p not in resolved
    ]))


def make_summary_item(
    sources: Sequence[ContextItem], extracted: StructuredSummary, taken: set[str],
    resolved: Set[str],
) -> ContextItem:
    """The untrusted summary item standing for ``sources``.

    ``extracted`` is the summarizer's output for the plain sources; the summaries carried by
    summary sources are merged in (never re-summarized), and the pointers are overwritten with
    :func:`summary_pointers` (``resolved`` holds the carried pointers found in the record
    store). Its ``published_at`` is the latest of the sources', its priority the highest, and
    its id a hash of the pointers that avoids every id in ``taken``.
    """
    pointers = summary_pointers(sources, resolved)
    carried = [s.summary for s in sources if s.summary is not None]
    merged = StructuredSummary.merge([extracted, *carried]).model_copy(
        update={"pointers": pointers}
    )
    return summary_item(sources, merged, taken)


def summary_item(
    sources: Sequence[ContextItem], merged: StructuredSummary, taken: set[str]
) -> ContextItem:
    """The summary item for ``sources`` given their final summary ``merged``, whose pointers
    are already :func:`summary_pointers` of ``sources`` (see :func:`make_summary_item`)."""
    pointers = merged.pointers
    digest = hashlib.sha256(json.dumps(pointers).encode("utf-8", "surrogatepass")).hexdigest()
    item_id = f"summary-{digest[:16]}"
    suffix = 1
    while item_id in taken:
        suffix += 1
        item_id = f"summary-{digest[:16]}-{suffix}"
    dates = [s.published_at for s in sources]
    if None in dates:
        dates = [d for d in dates if d is not None]
    # Every field is built from validated items and summaries, and satisfies the item's checks
    # (an untrusted summary item carrying its summary, dated by aware sources), so it is not
    # validated again: that would re-read every pointer and fact.
    return ContextItem.model_construct(
        item_id=item_id,
        kind=ItemKind.summary,
        content=merged.render(),
        trust=Trust.UNTRUSTED,
        published_at=max(dates) if dates else None,  # type: ignore[type-var]
        provenance=Provenance(origin=COMPACTION_ORIGIN),
        priority=max([s.priority for s in sources]),
        pointers=pointers,
        summary=merged,
    )
