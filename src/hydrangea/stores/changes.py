"""What a save writes: the changes since the last save, and the rows a load reads back.

Every store keeps a session in the same rows, whatever its engine:

* one **session row**: kind, gateway, version, number of items, and the *state*: a small JSON
  document with the lifecycle's components, counters and latest request, and the CoopContext's
  own state (:mod:`hydrangea.coop.state`). It is rewritten on every save: O(components).
* one **item row** per Context item, ``(session_id, seq, item)``: a save appends the items added
  since the last save; a collection that detached a tail is recorded as a truncation (the rows
  from the detach start on are deleted, then the new items written).
* **segments** and their item rows, and one row per **snapshot**: a lifecycle's sealed
  snapshots keep the exact history they saw even after later collections, so that history is
  stored as a chain of append-only segments (as :mod:`hydrangea.lifecycle.history` holds it);
  a save writes the new snapshots and the segment items they need that are not stored yet.

So the cost of a save is O(new items + new snapshots + components), never O(history).
:func:`changes_since` computes them from a session and the :class:`Marks` of what the store
holds; :func:`hydrangea.stores.loading.assemble` rebuilds a session from the rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, TypeAlias

from hydrangea.context.context import Context
from hydrangea.coop.coop_context import CoopContext
from hydrangea.coop.state import coop_state
from hydrangea.errors import StoreError
from hydrangea.lifecycle import persist
from hydrangea.lifecycle.history import LifecycleRequest, OverlayItem, Segment
from hydrangea.lifecycle.records import Renderer
from hydrangea.lifecycle.session import Lifecycle

__all__ = [
    "KINDS",
    "Attach",
    "Changes",
    "Marks",
    "SegmentMark",
    "SessionValue",
    "changes_since",
    "coop_of",
    "kind_of",
]

SessionValue: TypeAlias = Context | CoopContext | Lifecycle
"""What a store saves under a session id."""

Attach: TypeAlias = Callable[[Context], Renderer | Context]
"""Builds what a loaded session attaches to (a CoopContext with its areas registered again)."""

KINDS: dict[type[Any], str] = {Context: "context", CoopContext: "coop", Lifecycle: "lifecycle"}


def kind_of(value: object) -> str:
    """``"context"``, ``"coop"`` or ``"lifecycle"``; StoreError for anything else."""
    for cls, name in KINDS.items():
        if isinstance(value, cls):
            return name
    raise StoreError(
        f"a session store saves a Context, a CoopContext or a Lifecycle, got {type(value).__name__}"
    )


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


@dataclass(slots=True)
class SegmentMark:
    """One stored segment of a lifecycle's history: its number and how many items are stored."""

    number: int
    stored: int
    segment: Segment  # held so that id(segment) stays this segment's


@dataclass(slots=True)
class Marks:
    """What the store holds of one in-memory session (kept by its :class:`StoredSession`)."""

    length: int = 0
    detaches: int = 0
    snapshots: int = 0
    segments: dict[int, SegmentMark] = field(default_factory=dict)
    next_segment: int = 0
    last: LifecycleRequest | None = None
    last_doc: dict[str, Any] | None = None

    def copy(self) -> Marks:
        """An independent copy (a failed save must leave the old marks intact)."""
        return Marks(self.length, self.detaches, self.snapshots, dict(self.segments),
                     self.next_segment, self.last, self.last_doc)


@dataclass(frozen=True, slots=True)
class Changes:
    """Everything one save writes, computed before the transaction starts."""

    kind: str
    gateway: str
    truncate_at: int | None
    """Delete the item rows from this seq on (a detach since the last save), or ``None``."""
    first_seq: int
    items: tuple[str, ...]
    """New items as JSON text, for seqs ``first_seq, first_seq + 1, ...``."""
    length: int
    state: str
    segments: tuple[tuple[int, int | None, int], ...]
    """New segments: ``(segment, parent, parent_len)``."""
    segment_items: tuple[tuple[int, int, str], ...]
    """New segment items: ``(segment, index, item JSON)``."""
    snapshots: tuple[tuple[int, str, str], ...]
    """New snapshots: ``(ordinal, snapshot id, body JSON)``."""
    marks: Marks
    """The marks once this save has committed."""

    @property
    def size(self) -> int:
        """Rows written besides the session row (for logging and benchmarks)."""
        return len(self.items) + len(self.segment_items) + len(self.snapshots)


def _lifecycle_of(value: SessionValue) -> Lifecycle | None:
    return value if isinstance(value, Lifecycle) else None


def coop_of(value: SessionValue) -> CoopContext | None:
    """The CoopContext of a session, if it has one."""
    if isinstance(value, CoopContext):
        return value
    if isinstance(value, Lifecycle) and isinstance(value.renderer, CoopContext):
        return value.renderer
    return None


def changes_since(value: SessionValue, marks: Marks | None) -> Changes:
    """The changes to write for ``value``; ``marks`` is ``None`` for a session not stored yet."""
    kind = kind_of(value)
    context = value if isinstance(value, Context) else value.context
    new = Marks() if marks is None else marks.copy()
    truncate_at: int | None = None
    first = new.length
    start = context.detached_from(new.detaches)
    if marks is not None and start is not None and start < new.length:
        truncate_at = first = start
    if first > len(context):
        raise StoreError("the Context is shorter than what was saved of it (not append-only?)")
    items = tuple(_dump(item) for item in context[first:])
    new.length = len(context)
    new.detaches = context.detaches
    state: dict[str, Any] = {}
    segments: list[tuple[int, int | None, int]] = []
    segment_items: list[tuple[int, int, str]] = []
    snapshots: list[tuple[int, str, str]] = []
    lc = _lifecycle_of(value)
    if lc is not None:
        writer = _SegmentWriter(new, segments, segment_items)
        fresh = len(lc._snapshots) - new.snapshots
        if fresh < 0:
            raise StoreError("the lifecycle holds fewer snapshots than were saved of it")
        ordinal = new.snapshots
        for snap in reversed(list(islice(reversed(lc._snapshots.values()), fresh))):
            body = {"id": snap.id, "trigger": snap.trigger, **writer.request(snap.request)}
            snapshots.append((ordinal, snap.id, _dump(body)))
            ordinal += 1
        new.snapshots = len(lc._snapshots)
        state["lifecycle"] = _lifecycle_state(lc, new, writer)
    coop = coop_of(value)
    if coop is not None:
        state["coop"] = coop_state(coop).to_json()
    compactions = context.compaction_state()
    if compactions:
        state["context"] = compactions
    return Changes(
        kind=kind,
        gateway=context.gateway.value,
        truncate_at=truncate_at,
        first_seq=first,
        items=items,
        length=len(context),
        state=_dump(state),
        segments=tuple(segments),
        segment_items=tuple(segment_items),
        snapshots=tuple(snapshots),
        marks=new,
    )


class _SegmentWriter:
    """Stores the segments a request's history view needs, each item once across saves."""

    def __init__(
        self,
        marks: Marks,
        segments: list[tuple[int, int | None, int]],
        items: list[tuple[int, int, str]],
    ) -> None:
        self.marks = marks
        self.segments = segments
        self.items = items

    def view(self, segment: Segment, length: int) -> int:
        """Make sure the first ``length`` items of ``segment``'s chain are stored; its number."""
        chain: list[tuple[Segment, int]] = []
        current: Segment | None = segment
        need = length
        while current is not None:
            own = max(0, need - current.parent_len)
            mark = self.marks.segments.get(id(current))
            if mark is not None and mark.stored >= own:
                break
            chain.append((current, own))
            # the parent holds what this view reads of it, and (a segment stored for the first
            # time says it follows ``parent_len`` items of its parent) at least that much
            need = current.parent_len
            current = current.parent
        for seg, own in reversed(chain):
            mark = self.marks.segments.get(id(seg))
            if mark is None:
                parent = None
                if seg.parent is not None:
                    parent = self._number(seg.parent)
                mark = SegmentMark(self.marks.next_segment, 0, seg)
                self.marks.next_segment += 1
                self.marks.segments[id(seg)] = mark
                self.segments.append((mark.number, parent, seg.parent_len))
            if own > mark.stored:
                for index in range(mark.stored, own):
                    self.items.append((mark.number, index, _dump(seg.items[index])))
                self.marks.segments[id(seg)] = SegmentMark(mark.number, own, seg)
        return self.marks.segments[id(segment)].number

    def _number(self, segment: Segment) -> int:
        mark = self.marks.segments.get(id(segment))
        if mark is None:  # a parent no view needed items of yet: register it empty
            self.view(segment, segment.parent_len)
            mark = self.marks.segments[id(segment)]
        return mark.number

    def request(self, request: LifecycleRequest) -> dict[str, Any]:
        view = request.history_view
        return {
            "episode": request.episode,
            "segment": self.view(view.segment, view.length),
            "length": view.length,
            "anchor": request.anchor,
            "before": _overlay(request.before),
            "after": _overlay(request.after),
            "in_history": request.in_history,
        }


def _overlay(items: tuple[OverlayItem, ...]) -> list[dict[str, Any]]:
    return [
        {"key": o.key, "placement": o.phase.placement.value, "stage": o.phase.stage,
         "items": list(o.items)}
        for o in items
    ]


def _lifecycle_state(lc: Lifecycle, marks: Marks, writer: _SegmentWriter) -> dict[str, Any]:
    table = lc._table
    components = [
        {
            "key": e.key,
            "auto": e.auto,
            "seq": e.seq,
            "start": e.start,
            "committed": list(e.committed) if e.committed is not None else None,
            "component": persist.component_to_json(e.component),
        }
        for e in table.entries.values()
    ]
    last = lc._last
    last_doc: dict[str, Any] | None
    if last is None:
        last_doc = None
    elif last is marks.last and marks.last_doc is not None:
        last_doc = marks.last_doc
    elif (
        last.history_view.segment is lc._log.segment
        and lc._log._seen == lc.context.detaches
        and last.history_view.length <= len(lc.context)
    ):
        # The latest request's history is a prefix of the live Context: no copy is stored.
        last_doc = {
            "episode": last.episode,
            "live": True,
            "length": last.history_view.length,
            "anchor": last.anchor,
            "before": _overlay(last.before),
            "after": _overlay(last.after),
            "in_history": last.in_history,
        }
    else:
        last_doc = writer.request(last)
    marks.last, marks.last_doc = last, last_doc
    return {
        "episode": lc._episode,
        "seq": table.seq,
        "components": components,
        "committed_order": [e.key for e in table.committed],
        "last": last_doc,
        "sending": persist.sending_state(lc),
    }
