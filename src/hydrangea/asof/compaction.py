"""Making summary items: their entries, their pointers, their id and their date.

A summary stands for its *sources*, the items a build did not show in full. Each source
contributes entries (a pointer, with or without a note) at the detail the planner chose:

* a plain item: its own id, with its note (the first sentence, whole or shortened), or alone;
* a carried summary (one an earlier build made, or one the caller wrote): its own id, every
  pointer of it that is *valid* (:func:`valid_pointers`), with its notes or alone, and, while
  it keeps its notes, its facts, decisions and open questions.

Each pointer is listed once (its first entry wins, in the sources' chronological order), so the
summary names every source and nothing twice. Pointers come from the items, never from a
summarizer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence, Set
from datetime import UTC, datetime

from hydrangea.asof.items import ContextItem, ItemKind, Provenance, Trust
from hydrangea.asof.layout import utc
from hydrangea.asof.records import RecordStore
from hydrangea.asof.summary import StructuredSummary
from hydrangea.errors import SummaryPointerError

__all__ = [
    "COMPACTION_ORIGIN",
    "check_summary_pointers",
    "summary_id",
    "summary_item",
    "valid_pointers",
]

COMPACTION_ORIGIN = "compaction"
"""The provenance origin of every summary item the builder makes."""


def valid_pointers(
    items: Iterable[ContextItem], records: RecordStore, as_of: datetime,
    admitted: Set[str] = frozenset(),
) -> frozenset[str]:
    """The pointers of the summary items among ``items`` that a new summary may carry: a
    record is stored under each, it was not published after ``as_of`` (compared in UTC), and
    it names no item of ``admitted`` (the ids admitted to the build).

    A summary item's ``pointers`` are whatever its maker wrote (a caller may hand in forged
    ones, or one made for a later ``as_of``); carrying such a pointer would lead the model to a
    record that is not there, or to one it may not see yet. An admitted item stands for itself
    (shown, summarized under its own id, or counted by the index line), so a pointer to it is
    never carried: whether the record store holds it (a build of the same items stores the
    ones it compacts) does not change what a later build carries. One store look-up per
    distinct pointer.
    """
    limit = utc(as_of)
    valid: set[str] = set()
    seen: set[str] = set(admitted)
    for item in items:
        if item.summary is None:
            continue
        for pointer in item.summary.pointers:
            if pointer in seen:
                continue
            seen.add(pointer)
            record = records.get(pointer)
            if record is None or record.item_id != pointer:
                continue
            if record.published_at is not None and utc(record.published_at) > limit:
                continue
            valid.add(pointer)
    return frozenset(valid)


def check_summary_pointers(
    items: Iterable[ContextItem], records: RecordStore, as_of: datetime,
    admitted: Set[str] = frozenset(),
) -> None:
    """Refuse a summary item among ``items`` that points at a stored record it did not replace.

    A summary stored under its own id exactly as given (one a build made) stands for what it
    points at. Any other summary item (one the caller wrote) may point only at stored summaries
    and at the records those summaries point at: what the summaries it merged replaced. A
    pointer to no record, or to one published after ``as_of``, leads nowhere the model may
    read; such pointers are left out of a new summary (see :func:`valid_pointers`), not
    refused; nor is a pointer to an item of ``admitted`` (the ids admitted to the build), which
    stands for itself, whether or not an earlier build of the same items stored it. Raises
    :class:`~hydrangea.errors.SummaryPointerError` naming the summary and the pointer; one store
    look-up per pointer, and per pointer of a merged summary.
    """
    limit = utc(as_of)
    for item in items:
        summary = item.summary
        if summary is None or records.get(item.item_id) == item:
            continue
        held = {p: records.get(p) for p in summary.pointers}
        merged: set[str] = set()
        for pointer, record in held.items():
            if record is not None and record.summary is not None and record.item_id == pointer:
                merged.add(pointer)
                merged.update(record.summary.pointers)
        for pointer, record in held.items():
            if record is None or record.item_id != pointer or pointer in merged:
                continue
            if pointer in admitted:
                continue
            if record.published_at is not None and utc(record.published_at) > limit:
                continue
            raise SummaryPointerError(
                f"summary item {item.item_id!r} points at the stored record {pointer!r}, which "
                "it did not replace: a summary may point only at the records it stands for; "
                "store the summary a build made as it was, or point at the stored summaries "
                "that replaced that record"
            )


def summary_id(content: str, pointers: Sequence[str], taken: Set[str],
               records: RecordStore, candidate: ContextItem | None = None) -> str:
    """An id for a summary with this text and these pointers: ``summary-`` and 12 decimal
    digits of their SHA-256 (digits cost the same tokens whatever they are), with ``-2``,
    ``-3`` ... appended while the id is taken by an admitted item
    (``taken``) or by a record in ``records`` that is not this very summary (``candidate``,
    the summary item to be stored under it).

    So a replay that makes the same summary over a shared store finds its own record and reuses
    the id, and a record planted under the id it would take cannot stand in for it.
    """
    digest = hashlib.sha256()
    digest.update(content.encode("utf-8"))
    for pointer in pointers:
        digest.update(b"\0" + pointer.encode("utf-8"))
    base = f"summary-{int.from_bytes(digest.digest()[:8], 'big') % 10**12:012d}"
    item_id, suffix = base, 1
    while True:
        if item_id not in taken:
            held = records.get(item_id)
            if held is None or (
                candidate is not None and held == candidate.model_copy(update={"item_id": item_id})
            ):
                return item_id
        suffix += 1
        item_id = f"{base}-{suffix}"


def summary_item(
    summary: StructuredSummary, *, published_at: datetime, priority: int, taken: Set[str],
    records: RecordStore,
) -> ContextItem:
    """The untrusted summary item whose final summary (pointers included) is ``summary``,
    standing for sources of which ``published_at`` is the latest time (every admitted
    untrusted item is dated) and ``priority`` the highest priority.

    Its content is ``summary.render()``, its ``published_at`` that time in UTC, and its id
    :func:`summary_id`.
    """
    content = summary.render()
    # Every field is built from validated items and summaries, and satisfies the item's checks
    # (an untrusted summary item carrying its summary, dated by aware sources), so it is not
    # validated again: that would re-read every pointer and note.
    draft = ContextItem.model_construct(
        item_id="summary",
        kind=ItemKind.SUMMARY,
        content=content,
        trust=Trust.UNTRUSTED,
        published_at=published_at.astimezone(UTC),
        provenance=Provenance(origin=COMPACTION_ORIGIN),
        priority=priority,
        pointers=summary.pointers,
        summary=summary,
    )
    item_id = summary_id(content, summary.pointers, taken, records, draft)
    return draft.model_copy(update={"item_id": item_id})
