"""Loading: rebuild a session from the rows a store read (see :mod:`hydrangea.stores.changes`
for what the rows hold), and the :class:`Marks` that let its next save write only what is new.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from hydrangea.context.context import Context
from hydrangea.coop.coop_context import CoopContext
from hydrangea.coop.state import CoopState, restore_coop_state
from hydrangea.errors import HydrangeaError, InvalidItemError, SerializationError, StoreError
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import persist
from hydrangea.lifecycle.history import Segment
from hydrangea.lifecycle.session import Lifecycle
from hydrangea.providers.native import NativeContent
from hydrangea.stores.changes import (
    KINDS,
    Attach,
    Marks,
    SegmentMark,
    SessionValue,
    coop_of,
)

__all__ = ["Rows", "assemble"]

S = TypeVar("S", bound=SessionValue)



@dataclass(frozen=True, slots=True)
class Rows:
    """What a load reads: the session row and its item, segment and snapshot rows."""

    kind: str
    gateway: str
    version: int
    length: int
    state: str
    items: Sequence[str]
    segments: Sequence[tuple[int, int | None, int]]
    segment_items: Sequence[tuple[int, int, str]]
    snapshots: Sequence[tuple[int, str, str]]


def _loads(text: str | bytes, what: str) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError) as exc:
        raise SerializationError(f"stored {what} is not valid JSON: {exc}") from exc
    except RecursionError:
        raise SerializationError(
            f"stored {what} nests too deeply to read (no item the library stores nests deeper "
            "than 512 levels): the row was edited outside the library"
        ) from None


def assemble(
    session_id: str, rows: Rows, kind: type[S], attach: Attach | None
) -> tuple[S, Marks]:
    """Rebuild the session of ``rows`` as ``kind``; SerializationError if they are malformed."""
    wanted = KINDS.get(kind)
    if wanted is None:
        raise StoreError(f"a session loads as Context, CoopContext or Lifecycle, not {kind!r}")
    if wanted not in (rows.kind, "context"):
        raise StoreError(
            f"session {session_id!r} holds a {rows.kind} session, not a {wanted}; "
            f"load it as {_name(rows.kind)} (or as Context for its items alone)"
        )
    if len(rows.items) != rows.length:
        raise SerializationError(
            f"session {session_id!r} should hold {rows.length} items but {len(rows.items)} "
            "were read"
        )
    items: list[NativeContent] = [_loads(text, "item") for text in rows.items]
    state = _loads(rows.state, "session state")
    if not isinstance(state, dict):
        raise SerializationError(f"session {session_id!r} has a malformed state")
    try:
        gateway = GatewayType(rows.gateway)
    except ValueError as exc:
        raise SerializationError(f"session {session_id!r} has no valid gateway: {exc}") from exc
    value: SessionValue
    if wanted == "lifecycle":
        value = _load_lifecycle(session_id, rows, state, gateway, items, attach)
        context = value.context
    else:
        try:
            context = Context(gateway, items)
        except InvalidItemError as exc:
            raise SerializationError(
                f"session {session_id!r} holds an invalid item: {exc}"
            ) from exc
        context.restore_compactions(state.get("context", {}))
        value = context
        if wanted == "coop":
            target = CoopContext(context) if attach is None else attach(context)
            if not isinstance(target, CoopContext) or target.context is not context:
                raise StoreError(
                    "attach() must return a CoopContext around the Context it is given"
                )
            restore_coop_state(target, CoopState.from_json(state.get("coop")))
            value = target
    marks = Marks(length=len(context), detaches=context.detaches)
    if isinstance(value, Lifecycle):
        _mark_loaded(value, rows, state, marks)
    assert isinstance(value, kind)
    return value, marks


def _name(kind: str) -> str:
    return {"context": "Context", "coop": "CoopContext", "lifecycle": "Lifecycle"}.get(kind, kind)


def _load_lifecycle(  # noqa: PLR0917 - private, called once
    session_id: str,
    rows: Rows,
    state: dict[str, Any],
    gateway: GatewayType,
    items: list[NativeContent],
    attach: Attach | None,
) -> Lifecycle:
    doc = state.get("lifecycle")
    if not isinstance(doc, dict):
        raise SerializationError(f"session {session_id!r} has no lifecycle state")
    segments: list[dict[str, Any]] = []
    for number, (seg, parent, parent_len) in enumerate(rows.segments):
        if seg != number or (parent is not None and not 0 <= parent < number):
            raise SerializationError(f"session {session_id!r} has a malformed segment chain")
        segments.append({"parent": parent, "parent_len": parent_len, "items": []})
    for seg, index, text in rows.segment_items:
        if not 0 <= seg < len(segments) or index != len(segments[seg]["items"]):
            raise SerializationError(f"session {session_id!r} has a malformed segment item")
        segments[seg]["items"].append(_loads(text, "segment item"))
    natives: list[list[Any]] = []

    def request(data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise SerializationError(f"session {session_id!r} holds a malformed request")
        out = dict(data)
        if out.pop("live", False):
            out["segment"] = len(segments)
            segments.append({"parent": None, "parent_len": 0,
                             "items": items_prefix(int(out["length"]))})
        for side in ("before", "after"):
            placed = []
            for o in out.get(side, []):
                natives.append(list(o["items"]))
                placed.append({**o, "items": len(natives) - 1})
            out[side] = placed
        return out

    def items_prefix(length: int) -> list[Any]:
        if not 0 <= length <= len(items):
            raise SerializationError(f"session {session_id!r}: request longer than the history")
        return items[:length]

    try:
        snapshots = [{**request(_loads(body, "snapshot")), "id": sid} for _, sid, body in
                     rows.snapshots]
        document = {
            "format": persist.FORMAT,
            "version": persist._VERSION,
            "context": {"format": "hydrangea.context", "version": 1,
                        "gateway": gateway.value, "items": items, **state.get("context", {})},
            "episode": doc["episode"],
            "seq": doc["seq"],
            "components": doc["components"],
            "committed_order": doc["committed_order"],
            "segments": segments,
            "natives": natives,
            "snapshots": snapshots,
            "last": None if doc.get("last") is None else request(doc["last"]),
            "sending": doc.get("sending"),
        }
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, HydrangeaError):
            raise
        raise SerializationError(f"session {session_id!r} has a malformed state: {exc!r}") from exc
    lc = persist.load(document, attach, Lifecycle)
    coop = coop_of(lc)
    if coop is not None:
        restore_coop_state(coop, CoopState.from_json(state.get("coop")))
    return lc


def _mark_loaded(lc: Lifecycle, rows: Rows, state: dict[str, Any], marks: Marks) -> None:
    """Map the loaded segment objects to their stored numbers: later saves write only what is
    new."""
    doc = state["lifecycle"]
    loaded = lc._snapshots
    for ordinal, (_, sid, body) in enumerate(rows.snapshots):
        snap = loaded.get(sid)
        stored = _loads(body, "snapshot")
        if snap is None:
            raise SerializationError(f"snapshot {sid!r} did not load")
        _mark_chain(marks, snap.request.history_view.segment, int(stored["segment"]),
                    rows.segments)
        marks.snapshots = ordinal + 1
    marks.next_segment = len(rows.segments)
    if lc._last is not None and doc.get("last") is not None:
        marks.last, marks.last_doc = lc._last, doc["last"]
        if not doc["last"].get("live"):
            _mark_chain(marks, lc._last.history_view.segment, int(doc["last"]["segment"]),
                        rows.segments)
    _continue_log(lc)


def _continue_log(lc: Lifecycle) -> None:
    """Let the lifecycle's history log go on from the newest loaded snapshot's segment when
    that snapshot's history is a prefix of the Context (no collection since it was sealed).

    The log a fresh Lifecycle starts is one new segment holding the whole history; a snapshot
    sealed after the load would then be stored with all of it again. Continuing the stored
    chain keeps the first save after a load O(new items) too. The check compares the items:
    O(history), once per load."""
    if not lc._snapshots:
        return
    newest = next(reversed(lc._snapshots.values())).request.history_view
    context = lc.context
    if newest.length > len(context) or newest.items() != context[: newest.length]:
        return
    log = lc._log
    log._segment = Segment(newest.segment, newest.length, list(context[newest.length :]))
    log._length = len(context)
    log._seen = context.detaches


def _mark_chain(
    marks: Marks,
    segment: Segment,
    number: int,
    stored: Sequence[tuple[int, int | None, int]],
) -> None:
    current: Segment | None = segment
    at: int | None = number
    while current is not None and at is not None and id(current) not in marks.segments:
        marks.segments[id(current)] = SegmentMark(at, len(current.items), current)
        current, at = current.parent, stored[at][1]
