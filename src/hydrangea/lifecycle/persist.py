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
from typing import TYPE_CHECKING, Any

from hydrangea.context.context import Context
from hydrangea.context.native import NativeContent
from hydrangea.errors import HydrangeaError, SerializationError
from hydrangea.lifecycle.component import Component, Placement, Stage
from hydrangea.lifecycle.history import (
    HistoryView,
    LifecycleRequest,
    OverlayItem,
    Segment,
    Snapshot,
)
from hydrangea.lifecycle.table import Entry
from hydrangea.lifecycle.visibility import Phase
from hydrangea.message import Message

if TYPE_CHECKING:
    from hydrangea.lifecycle.records import Renderer
    from hydrangea.lifecycle.session import Lifecycle

__all__ = ["FORMAT", "component_from_json", "component_to_json", "dump", "dumps", "load", "loads"]

FORMAT = "hydrangea.lifecycle"
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


def _unplain(value: object) -> object:
    if isinstance(value, dict):
        if set(value) == {_BYTES}:
            return base64.b64decode(value[_BYTES])
        return {k: _unplain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unplain(v) for v in value]
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
    """The component described by :func:`component_to_json`'s output."""
    message = Message.model_validate(_unplain(data["content"]))
    stages = data.get("stages")
    staged = stages is not None
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


def dump(lc: Lifecycle) -> dict[str, Any]:
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
    }


def dumps(lc: Lifecycle) -> str:
    """:func:`dump`'s document as compact JSON text."""
    return json.dumps(dump(lc), ensure_ascii=False, separators=(",", ":"))


def loads(text: str, attach: Callable[[Context], Renderer | Context] | None = None) -> Lifecycle:
    """Rebuild a session from :func:`dumps`'s text; SerializationError if it is not one."""
    try:
        document: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SerializationError(f"not a saved lifecycle session: invalid JSON ({exc})") from exc
    return load(document, attach)


def load(
    document: object,
    attach: Callable[[Context], Renderer | Context] | None = None,
) -> Lifecycle:
    """Rebuild a session from :func:`dump`'s document; SerializationError if it is not one."""
    from hydrangea.lifecycle.session import Lifecycle

    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise SerializationError("not a saved lifecycle session: the 'format' field is missing")
    if document.get("version") != _VERSION:
        raise SerializationError(f"unsupported session version {document.get('version')!r}")
    try:
        context = Context.from_json(json.dumps(document["context"]))
        lc = Lifecycle(context if attach is None else attach(context))
        if lc.context is not context:
            raise SerializationError("attach() must wrap the restored Context it is given")
        _restore(lc, document)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        if isinstance(exc, HydrangeaError):
            raise
        raise SerializationError(f"saved lifecycle session is malformed: {exc!r}") from exc
    return lc


def _restore(lc: Lifecycle, doc: dict[str, Any]) -> None:
    table = lc._table
    lc._episode = int(doc["episode"])
    table.seq = int(doc["seq"])
    for data in doc["components"]:
        component = component_from_json(data["component"])
        committed = data.get("committed")
        entry = Entry(
            data["key"],
            bool(data["auto"]),
            int(data["seq"]),
            component,
            int(data["start"]),
            lc._convert(component.content),
            (int(committed[0]), int(committed[1])) if committed is not None else None,
        )
        table.entries[entry.key] = entry
        if committed is None:
            table.link(entry)
    table.committed = [table.entries[key] for key in doc["committed_order"]]
    segments: list[Segment] = []
    for seg in doc["segments"]:
        parent = None if seg["parent"] is None else segments[seg["parent"]]
        segments.append(Segment(parent, int(seg["parent_len"]), list(seg["items"])))
    natives = [tuple(items) for items in doc["natives"]]
    adapter = lc.context.adapter

    def overlay(data: list[dict[str, Any]]) -> tuple[OverlayItem, ...]:
        return tuple(
            OverlayItem(o["key"], Phase(Placement(o["placement"]), o["stage"]), natives[o["items"]])
            for o in data
        )

    def request(data: dict[str, Any]) -> LifecycleRequest:
        return LifecycleRequest(
            int(data["episode"]),
            HistoryView(segments[data["segment"]], int(data["length"])),
            int(data["anchor"]),
            overlay(data["before"]),
            overlay(data["after"]),
            adapter,
        )

    for snap in doc["snapshots"]:
        lc._snapshots[snap["id"]] = Snapshot(snap["id"], str(snap["trigger"]), request(snap))
    lc._last = None if doc.get("last") is None else request(doc["last"])
