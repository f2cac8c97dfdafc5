"""Saving a lifecycle session to JSON and reading it back.

A saved session holds the Context's items, every component with its schedule position, the
episode counter and every snapshot (with the exact history it sealed). Areas registered with a
CoopContext are the caller's objects and are not saved: on load the session attaches to a
plain Context, or to whatever ``attach`` builds around the restored Context.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from hydrangea._saved import check_format
from hydrangea.context.boundary import CompactionBoundary
from hydrangea.context.context import Context
from hydrangea.errors import HydrangeaError, SerializationError, UnencodableTextError
from hydrangea.lifecycle._sendings import SendingLog
from hydrangea.lifecycle.component import AUTO_KEY_PREFIX, Component, Placement, Stage
from hydrangea.lifecycle.history import (
    HistoryView,
    LifecycleRequest,
    OverlayItem,
    Segment,
    Sending,
    Snapshot,
)
from hydrangea.lifecycle.table import Entry
from hydrangea.lifecycle.visibility import Phase
from hydrangea.message import Message
from hydrangea.providers.adapter import Adapter
from hydrangea.providers.native import MAX_DEPTH, NativeContent, copy_json
from hydrangea.text import check_encodable

if TYPE_CHECKING:
    from hydrangea.lifecycle.records import Renderer
    from hydrangea.lifecycle.table import ComponentTable


class Saved(Protocol):
    """What saving and loading read and set of a :class:`~hydrangea.lifecycle.Lifecycle` (a
    Protocol, so this module does not import the session it serves)."""

    _episode: int
    _table: ComponentTable
    _snapshots: dict[str, Snapshot]
    _last: LifecycleRequest | None
    _sendings: SendingLog
    _seen: int
    _expiring: tuple[Entry, ...]

    @property
    def context(self) -> Context: ...
    def _still_sent(self, entry: Entry) -> bool: ...


_L = TypeVar("_L", bound=Saved)

__all__ = ["FORMAT", "component_from_json", "component_to_json", "dump", "dumps", "load", "loads"]

FORMAT = "hydrangea.lifecycle"
_PLACEMENTS = tuple(p.value for p in Placement)  # a tuple: unhashable values compare safely
_VERSION = 1
_BYTES = "$base64"


def _plain(value: object) -> object:
    if isinstance(value, bytes):
        return {_BYTES: base64.b64encode(value).decode("ascii")}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _unplain(value: object, depth: int = 0) -> object:
    if depth > MAX_DEPTH:
        raise SerializationError(f"a saved component nests deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        if set(value) == {_BYTES}:
            encoded = value[_BYTES]
            try:
                return base64.b64decode(encoded, validate=True)
            except (TypeError, ValueError) as exc:
                raise SerializationError(f"a saved image holds invalid base64: {exc}") from exc
        return {k: _unplain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_unplain(v, depth + 1) for v in value]
    return value


def component_to_json(component: Component) -> dict[str, Any]:
    """A JSON-ready description of ``component`` (image bytes in base64)."""
    return {
        "content": _plain(component.content.model_dump()),
        "key": component.key,
        "tags": sorted(component.tags),
        "ttl": component.ttl,
        "cadence": component.cadence,
        "placement": component.placement.value,
        "stages": [[s.placement.value, s.ttl] for s in component.stages] or None,
        "cycle": component.cycle,
    }


def component_from_json(data: dict[str, Any]) -> Component:
    """The component described by :func:`component_to_json`'s output.

    Raises :class:`SerializationError` for a description of the wrong shape, and the
    library's own errors (``InvalidComponentError``, ``MessageValidationError`` ...) for one
    that no component could have.
    """
    if not isinstance(data, dict) or "content" not in data:
        raise SerializationError("a saved component must be an object with 'content'")
    message = Message.model_validate(_unplain(data["content"]))
    stages = data.get("stages")
    staged = stages is not None
    if staged and not (
        isinstance(stages, list)
        and all(
            isinstance(s, list) and len(s) == 2 and s[0] in _PLACEMENTS
            for s in stages
        )
    ):
        raise SerializationError(f"a saved component's stages are malformed: {stages!r}")
    return Component(
        message,
        key=data.get("key"),
        tags=data.get("tags", ()),
        ttl=data.get("ttl"),
        cadence=data.get("cadence"),
        placement=None if staged or data.get("ttl") is None else data.get("placement"),
        stages=[Stage(Placement(p), t) for p, t in stages] if stages is not None else None,
        cycle=data.get("cycle", False),
    )


class _Interner:
    def __init__(self) -> None:
        self.segments: dict[int, int] = {}
        self.segment_docs: list[dict[str, Any]] = []
        self.natives: dict[int, int] = {}
        self.native_docs: list[list[NativeContent]] = []

    def segment(self, segment: Segment) -> int:
        found = self.segments.get(id(segment))
        if found is not None:
            return found
        parent = None if segment.parent is None else self.segment(segment.parent)
        index = len(self.segment_docs)
        self.segments[id(segment)] = index
        self.segment_docs.append(
            {"parent": parent, "parent_len": segment.parent_len, "items": list(segment.items)}
        )
        return index

    def native(self, items: tuple[NativeContent, ...]) -> int:
        found = self.natives.get(id(items))
        if found is None:
            found = self.natives[id(items)] = len(self.native_docs)
            self.native_docs.append(list(items))
        return found

    def request(self, req: LifecycleRequest) -> dict[str, Any]:
        return {
            "episode": req.episode,
            "segment": self.segment(req.history_view.segment),
            "length": req.history_view.length,
            "anchor": req.anchor,
            "before": self.overlay(req.before),
            "after": self.overlay(req.after),
            "in_history": req.in_history,
            **({} if req.compaction is None else {"compaction": req.compaction.saved()}),
        }

    def overlay(self, items: tuple[OverlayItem, ...]) -> list[dict[str, Any]]:
        return [
            {
                "key": o.key,
                "placement": o.phase.placement.value,
                "stage": o.phase.stage,
                "items": self.native(o.items),
            }
            for o in items
        ]


def sending_state(lc: Saved) -> dict[str, Any]:
    """What the session knows of the components it sent: each sending's place (the run that
    ends the history, if any, was not answered yet: the next render takes it back), where each
    component's content was last sent, and the components in their last episode."""
    return {
        "sendings": [[s.key, s.episode, s.start, s.end] for s in lc._sendings],
        "sent_at": {
            e.key: e.sent[0] for e in lc._table.entries.values()
            if e.sent is not None and lc._still_sent(e)
        },
        "expiring": [e.key for e in lc._expiring],
        "context_sent": lc.context.sent,
    }


def dump(lc: Saved) -> dict[str, Any]:
    """The JSON document of a session (see the module docstring for what it holds)."""
    interner = _Interner()
    snapshots = []
    for snap in lc._snapshots.values():
        snapshots.append({"id": snap.id, "trigger": snap.trigger, **interner.request(snap.request)})
    last = None if lc._last is None else interner.request(lc._last)
    components = [
        {
            "key": e.key,
            "auto": e.auto,
            "seq": e.seq,
            "start": e.start,
            "committed": list(e.committed) if e.committed is not None else None,
            "component": component_to_json(e.component),
        }
        for e in lc._table.entries.values()
    ]
    return {
        "format": FORMAT,
        "version": _VERSION,
        "context": json.loads(lc.context.to_json()),
        "episode": lc._episode,
        "seq": lc._table.seq,
        "components": components,
        "committed_order": [e.key for e in lc._table.committed],
        "segments": interner.segment_docs,
        "natives": interner.native_docs,
        "snapshots": snapshots,
        "last": last,
        "sending": sending_state(lc),
    }


def dumps(lc: Saved) -> str:
    """:func:`dump`'s document as compact JSON text."""
    return json.dumps(dump(lc), ensure_ascii=False, separators=(",", ":"))


def loads(
    text: str,
    attach: Callable[[Context], Renderer | Context] | None,
    make: Callable[[Renderer | Context], _L],
) -> _L:
    """Rebuild a session (``make(target)``) from :func:`dumps`'s text; SerializationError if it
    is not one."""
    if not isinstance(text, str):
        raise SerializationError(f"a saved session is JSON text, got {type(text).__name__}")
    try:
        document: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SerializationError(f"not a saved lifecycle session: invalid JSON ({exc})") from exc
    except RecursionError as exc:  # the C parser's own bound
        raise SerializationError("not a saved lifecycle session: JSON nested too deeply") from exc
    return load(document, attach, make)


def load(
    document: object,
    attach: Callable[[Context], Renderer | Context] | None,
    make: Callable[[Renderer | Context], _L],
) -> _L:
    """Rebuild a session from :func:`dump`'s document; SerializationError if it is not one.

    ``make`` is the session's class (:class:`~hydrangea.lifecycle.Lifecycle`, given by its
    caller: this module does not import it), called with what the session attaches to.

    Everything is checked before the session is returned: every item (history, snapshots and
    overlays) through the gateway's adapter, every counter and index in range, every
    cross-reference (committed components are where the history says, snapshot views lie within
    their segments). ``attach``'s own exceptions pass through unchanged.
    """
    doc = check_format(document, FORMAT, _VERSION, "a saved lifecycle session")
    try:
        context_doc = _field(doc, "context", dict)
        context = Context.from_json(json.dumps(context_doc, ensure_ascii=True))
        parsed = _Parsed(doc, context)
    except SerializationError:
        raise
    except HydrangeaError as exc:
        raise SerializationError(f"saved lifecycle session holds invalid data: {exc}") from exc
    lc = make(context if attach is None else attach(context))
    if lc.context is not context:
        raise SerializationError("attach() must wrap the restored Context it is given")
    parsed.apply(lc)
    return lc


# -- checked reading ---------------------------------------------------------------------------

_MAX_COUNTER = 2**63 - 1
"""Counters and indices are kept below this (they fit a signed 64-bit database column)."""


def _bad(message: str) -> SerializationError:
    return SerializationError(f"saved lifecycle session is malformed: {message}")


def _field(data: dict[str, Any], name: str, kind: type, where: str = "the session") -> Any:
    if name not in data:
        raise _bad(f"{where} has no {name!r}")
    value = data[name]
    if kind is int:
        if type(value) is not int:
            raise _bad(f"{where}: {name!r} must be an integer, got {value!r}")
    elif not isinstance(value, kind) or isinstance(value, bool) != (kind is bool):
        raise _bad(f"{where}: {name!r} must be a {kind.__name__}, got {type(value).__name__}")
    return value


def _int(data: dict[str, Any], name: str, low: int, high: int, where: str) -> int:
    value: int = _field(data, name, int, where)
    if not low <= value <= high:
        raise _bad(f"{where}: {name!r} is {value}, outside {low}..{high}")
    return value


def _text(data: dict[str, Any], name: str, where: str) -> str:
    value: str = _field(data, name, str, where)
    try:
        return check_encodable(value, f"{where}: {name!r}")
    except UnencodableTextError as exc:
        raise _bad(str(exc)) from exc


def _index(value: object, size: int, what: str) -> int:
    if type(value) is not int or not 0 <= value < size:
        raise _bad(f"{what} is {value!r}, not an index below {size}")
    return value


class _Parsed:
    """A saved session read and checked in full, before any session object exists."""

    def __init__(self, doc: dict[str, Any], context: Context) -> None:
        self.context = context
        adapter = context.adapter
        self.episode = _int(doc, "episode", 0, _MAX_COUNTER, "the session")
        self.seq = _int(doc, "seq", 0, _MAX_COUNTER, "the session")
        self.entries = [self._entry(n, data) for n, data in enumerate(_list(doc, "components"))]
        self._check_keys()
        self.committed = self._committed_order(doc)

        self.segments: list[Segment] = []
        self.totals: list[int] = []
        for n, raw_segment in enumerate(_list(doc, "segments")):
            where = f"segment {n}"
            seg = _object(raw_segment, where)
            parent_ref = seg.get("parent")
            parent = None if parent_ref is None else _index(parent_ref, n, f"{where}'s parent")
            limit = 0 if parent is None else self.totals[parent]
            parent_len = _int(seg, "parent_len", 0, limit, where)
            items = [
                _item(adapter, item, f"{where} item {i}")
                for i, item in enumerate(_field(seg, "items", list, where))
            ]
            self.segments.append(
                Segment(None if parent is None else self.segments[parent], parent_len, items)
            )
            self.totals.append(parent_len + len(items))
        self.natives = [
            tuple(
                _item(adapter, item, f"overlay items {n}, item {i}")
                for i, item in enumerate(_array(group, f"overlay items {n}"))
            )
            for n, group in enumerate(_list(doc, "natives"))
        ]
        self.snapshots: dict[str, Snapshot] = {}
        for n, raw_snapshot in enumerate(_list(doc, "snapshots")):
            where = f"snapshot {n}"
            snap = _object(raw_snapshot, where)
            ident = _text(snap, "id", where)
            if not ident or ident in self.snapshots:
                raise _bad(f"{where}: the id {ident!r} is empty or used twice")
            trigger = _text(snap, "trigger", where)
            self.snapshots[ident] = Snapshot(ident, trigger, self._request(snap, where))
        last = doc.get("last")
        self.last = None if last is None else self._request(_object(last, "last"), "last")
        if self.last is not None and self.last.episode != self.episode - 1:
            raise _bad(f"the latest request is of episode {self.last.episode}, not the last one")
        if self.last is None and self.episode != 0:
            raise _bad(f"episode {self.episode} but no latest request")
        self.sending = self._sending(doc.get("sending"))

    def _sending(self, data: object) -> tuple[list[Sending], dict[str, int], list[str]]:
        """The ``sending`` block (absent in files written before components were history)."""
        if data is None:
            return [], {}, []  # (the Context's items count as sent)
        doc = _object(data, "sending")
        size = len(self.context)
        keys = {entry.key for entry in self.entries if entry.component.ephemeral}
        sendings: list[Sending] = []
        for n, raw in enumerate(_field(doc, "sendings", list, "sending")):
            if not (isinstance(raw, list) and len(raw) == 4 and isinstance(raw[0], str)
                    and all(type(v) is int for v in raw[1:])):
                raise _bad(f"sending {n} is {raw!r}, not [key, episode, start, end]")
            key, episode, start, end = raw
            if not (0 <= episode <= self.episode and 0 <= start < end <= size):
                raise _bad(f"sending {n} ({raw!r}) does not fit the session")
            if sendings and start < sendings[-1].end:
                raise _bad(f"sending {n} overlaps the one before it")
            sendings.append(Sending(key, episode, start, end))
        sent_at = _field(doc, "sent_at", dict, "sending")
        for key, position in sent_at.items():
            if key not in keys or type(position) is not int or not 0 <= position < size:
                raise _bad(f"'sent_at' {key!r}: {position!r} is not a component's place")
        expiring = _field(doc, "expiring", list, "sending")
        if not all(isinstance(key, str) and key in keys for key in expiring):
            raise _bad(f"'expiring' {expiring!r} names a component the session does not hold")
        sent = doc.get("context_sent", size)
        if type(sent) is not int or not 0 <= sent <= size:
            raise _bad(f"'context_sent' {sent!r} is not a length of the history")
        self.context._sent = sent
        return sendings, sent_at, expiring

    def _entry(self, n: int, data: object) -> Entry:
        where = f"component {n}"
        data = _object(data, where)
        key = _text(data, "key", where)
        auto = _field(data, "auto", bool, where)
        seq = _int(data, "seq", 1, self.seq, where)
        start = _int(data, "start", 0, self.episode, where)
        if auto != (key == f"{AUTO_KEY_PREFIX}{seq}"):
            raise _bad(f"{where}: the key {key!r} does not match auto={auto} and seq={seq}")
        try:
            component = component_from_json(_field(data, "component", dict, where))
            if component.key is not None and component.key != key:
                raise _bad(f"{where}: the component's key {component.key!r} is not {key!r}")
            if auto and component.key is None:  # written before components carried their key
                component = component.with_key(key)
            natives = _convert(self.context, component.content)
        except HydrangeaError as exc:
            if isinstance(exc, SerializationError):
                raise
            raise _bad(f"{where}: {exc}") from exc
        committed = data.get("committed")
        span: tuple[int, int] | None = None
        if committed is not None:
            if component.ephemeral:
                raise _bad(f"{where}: an ephemeral component cannot be in the history")
            if not isinstance(committed, list) or len(committed) != 2:
                raise _bad(f"{where}: 'committed' must be [begin, end], got {committed!r}")
            size = len(self.context)
            begin = _index(committed[0], size, f"{where}: the committed begin")
            end = committed[1]
            if type(end) is not int or end != begin + len(natives) or end > size:
                raise _bad(f"{where}: 'committed' {committed!r} does not fit the history")
            if tuple(self.context[begin:end]) != natives:
                raise _bad(f"{where}: the history at {begin}..{end} is not this component")
            span = (begin, end)
        return Entry(key, auto, seq, component, start, natives, span)

    def _check_keys(self) -> None:
        keys = [e.key for e in self.entries]
        if len(set(keys)) != len(keys):
            raise _bad("two components share a key")
        seqs = [e.seq for e in self.entries]
        if len(set(seqs)) != len(seqs):
            raise _bad("two components share a sequence number")

    def _committed_order(self, doc: dict[str, Any]) -> list[Entry]:
        by_key = {e.key: e for e in self.entries}
        order = _list(doc, "committed_order")
        if not all(isinstance(key, str) and key in by_key for key in order):
            raise _bad("'committed_order' names a component that does not exist")
        committed = [by_key[key] for key in order]
        expected = [e for e in self.entries if e.committed is not None]
        if len(committed) != len(set(order)) or {id(e) for e in committed} != {
            id(e) for e in expected
        }:
            raise _bad("'committed_order' does not list exactly the committed components")
        spans = [e.committed for e in committed if e.committed is not None]
        if any(a[1] > b[0] for a, b in pairwise(spans)):
            raise _bad("'committed_order' is not the order of the components in the history")
        return committed

    def _request(self, data: dict[str, Any], where: str) -> LifecycleRequest:
        episode = _int(data, "episode", -1, self.episode - 1, where)
        segment = _index(data.get("segment"), len(self.segments), f"{where}: the segment")
        length = _int(data, "length", 0, self.totals[segment], where)
        anchor = _int(data, "anchor", 0, length, where)
        in_history = data.get("in_history", False)  # absent: written by version 0.1
        if type(in_history) is not bool:
            raise _bad(f"{where}: 'in_history' is {in_history!r}, not true or false")
        return LifecycleRequest(
            episode,
            HistoryView(self.segments[segment], length),
            anchor,
            self._overlay(data, "before", where),
            self._overlay(data, "after", where),
            self.context.adapter,
            in_history=in_history,
            compaction=self._compaction(data.get("compaction"), length, where),
        )

    def _compaction(self, raw: object, length: int, where: str) -> CompactionBoundary | None:
        """The compaction a saved request started at (absent: none)."""
        if raw is None:
            return None
        return CompactionBoundary.from_saved(
            raw, length, self._natives,
            f"saved lifecycle session is malformed: {where}: its compaction",
        )

    def _natives(self, items: list[Any]) -> list[NativeContent]:
        """Saved native items, each copied and checked by the adapter."""
        natives = [copy_json(item, "a saved compaction item") for item in items]
        for native in natives:
            self.context.adapter.validate(native)
        return natives

    def _overlay(self, data: dict[str, Any], name: str, where: str) -> tuple[OverlayItem, ...]:
        out: list[OverlayItem] = []
        for n, raw_item in enumerate(_field(data, name, list, where)):
            at = f"{where}: {name} {n}"
            item = _object(raw_item, at)
            key = _text(item, "key", at)
            placement = item.get("placement")
            if placement not in _PLACEMENTS:
                raise _bad(f"{at}: unknown placement {placement!r}")
            stage = item.get("stage")
            if stage is not None and (type(stage) is not int or not 0 <= stage <= _MAX_COUNTER):
                raise _bad(f"{at}: stage {stage!r} is not a stage index")
            natives = self.natives[_index(item.get("items"), len(self.natives), f"{at}: items")]
            out.append(OverlayItem(key, Phase(Placement(placement), stage), natives))
        return tuple(out)

    def apply(self, lc: Saved) -> None:
        """Install what was read into a new session attached to the restored Context."""
        table = lc._table
        lc._episode = self.episode
        table.seq = self.seq
        for entry in self.entries:
            table.entries[entry.key] = entry
            if entry.committed is None:
                table.link(entry)
        table.committed = self.committed
        lc._snapshots.update(self.snapshots)
        lc._last = self.last
        sendings, sent_at, expiring = self.sending
        detaches = lc.context.detaches
        lc._sendings = SendingLog(sendings)
        lc._seen = detaches
        for key, position in sent_at.items():
            table.entries[key].sent = (position, detaches)
        lc._expiring = tuple(table.entries[key] for key in expiring)


def _list(doc: dict[str, Any], name: str) -> list[Any]:
    value: list[Any] = _field(doc, name, list)
    return value


def _object(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _bad(f"{where} must be an object, got {type(value).__name__}")
    return value


def _array(value: object, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _bad(f"{where} must be a list, got {type(value).__name__}")
    return value


def _item(adapter: Adapter, item: object, where: str) -> NativeContent:
    try:
        copied = copy_json(item, where)
        adapter.validate(copied)
    except HydrangeaError as exc:
        raise _bad(str(exc)) from exc
    return copied


def _convert(context: Context, message: Message) -> tuple[NativeContent, ...]:
    adapter = context.adapter
    natives = adapter.from_message(message)
    for item in natives:
        adapter.validate(item)
    return tuple(natives)
