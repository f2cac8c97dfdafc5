"""Provider compaction boundaries: where a Context's requests start.

A provider that compacts a conversation on the server tells the client to stop sending what it
compacted. Two forms exist, and a :class:`~hydrangea.context.Context` understands both:

* **inside a reply** (Anthropic threshold compaction's ``compaction`` block, a Responses
  ``compaction`` item): the provider ignores everything before the compaction, so later
  requests start there (``Adapter.compaction_start`` gives the item as it is then sent);
* **a head swap** (Anthropic on-demand and background compaction, OpenAI
  ``/responses/compact``): a compaction *request* is answered with a summary that takes the
  place of exactly the items that request sent; every item appended since stays after it. This
  is the one sanctioned change of a sent prefix, done as the providers document it.

Nothing is removed from the Context: its items keep their indices (areas, lifecycles, keys and
snapshots keep pointing at them), the compacted ones stay readable by index (and in a saved
Context), and only what requests send changes. :class:`Wire` keeps that sent form, head items
followed by the Context's items from the boundary on, as one list grown with the Context, so a
request after a compaction still costs O(new items).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from hydrangea.errors import ContextStateError, HydrangeaError, SerializationError
from hydrangea.providers.native import NativeContent

__all__ = ["CompactionBoundary", "Wire", "remap"]

BoundaryKind = Literal["in_reply", "swap"]


@dataclass(frozen=True, slots=True)
class CompactionBoundary:
    """One provider compaction the Context continues across.

    ``kind`` is ``"in_reply"`` (a compaction inside a pushed reply: ``at`` is the index of the
    item holding it, or of the first item of a compaction reply pushed with no compaction
    request pending, whose summary is then the ``head``) or ``"swap"`` (a compaction
    request's summary swapped in: ``at`` is ``None``). Requests after it send ``head`` and
    then the Context's items from ``start`` on; items ``0`` to ``start`` (for ``"in_reply"``,
    those before ``at``) are what the provider compacted: still in the Context, no longer
    sent.
    """

    kind: BoundaryKind
    start: int
    head: tuple[NativeContent, ...]
    at: int | None = None
    lead: int = 0
    """How many of the Context's first items, its leading system items, are still sent ahead
    of ``head``: a compaction summarizes the conversation, never the system prompt (Anthropic
    sends it as the request's ``system``, outside the compacted messages)."""

    def saved(self) -> dict[str, object]:
        """The boundary as JSON values (``at`` and ``lead`` only when set), as saved Contexts
        and lifecycle requests hold it; :meth:`from_saved` reads it back."""
        entry: dict[str, object] = {"kind": self.kind, "start": self.start, "head": list(self.head)}
        if self.at is not None:
            entry["at"] = self.at
        if self.lead:
            entry["lead"] = self.lead
        return entry

    @classmethod
    def from_saved(
        cls,
        entry: object,
        size: int,
        stage: Callable[[list[Any]], Sequence[NativeContent]],
        where: str,
    ) -> CompactionBoundary:
        """Read back what :meth:`saved` wrote, for a history of ``size`` items; ``stage``
        checks and copies the head items (it raises the library's error for a bad one). A
        missing ``kind`` is ``"swap"``. :class:`~hydrangea.errors.SerializationError` naming
        ``where`` if it is not a boundary of that history."""
        if not isinstance(entry, dict):
            raise SerializationError(f"{where} is not a compaction boundary: {entry!r}")
        kind, start = entry.get("kind", "swap"), entry.get("start")
        head, at, lead = entry.get("head", []), entry.get("at"), entry.get("lead", 0)
        if (
            kind not in ("in_reply", "swap")
            or type(start) is not int
            or not 0 <= start <= size
            or not isinstance(head, list)
            or (at is not None and type(at) is not int)
            or type(lead) is not int
            or not 0 <= lead <= start
        ):
            raise SerializationError(f"{where} is not a compaction boundary: {entry!r}")
        try:
            staged = tuple(stage(head))
        except HydrangeaError as exc:
            raise SerializationError(f"{where} holds an invalid item: {exc}") from exc
        return cls("in_reply" if kind == "in_reply" else "swap", start, staged, at, lead)

    def sent(self, items: Sequence[NativeContent]) -> list[NativeContent]:
        """What requests after this boundary send of the Context's ``items``: its leading
        system items, the head, then the items from :attr:`start` on."""
        return [*items[: self.lead], *self.head, *items[self.start :]]

    def to_wire(self, count: int) -> int:
        """The sent-form count of the Context's first ``count`` items (``count`` at or after
        :attr:`start`)."""
        return count - self.start + self.lead + len(self.head)

    def wire_index(self, index: int) -> int | None:
        """Where the Context's item ``index`` sits in requests after this boundary (``None``:
        it is not sent)."""
        if index < self.lead:
            return index
        if index >= self.start:
            return self.to_wire(index)
        at = self.at
        if at is not None and at <= index < at + len(self.head):
            return self.lead + index - at
        return None

    def stored_index(self, index: int) -> int | None:
        """The Context index of the item at ``index`` of requests after this boundary
        (``None``: a head item that stands for no item of the Context)."""
        if index < self.lead:
            return index
        own = index - self.lead
        if own >= len(self.head):
            return own - len(self.head) + self.start
        return None if self.at is None else self.at + own


class Wire:
    """What requests send: the Context's items, or after a boundary its head and the items
    from its start on (see the module docstring). Private to the Context."""

    __slots__ = ("boundaries", "items", "pending", "sent")

    def __init__(self, items: list[NativeContent]) -> None:
        self.items = items
        self.sent: list[NativeContent] = items  # the same list while there is no boundary
        self.boundaries: list[CompactionBoundary] = []
        self.pending: int | None = None  # items an open head-swap compaction request sent

    @property
    def boundary(self) -> CompactionBoundary | None:
        """The boundary requests start at now (the latest), if any."""
        return self.boundaries[-1] if self.boundaries else None

    def to_wire(self, index: int) -> int:
        """The sent-form count of the Context's first ``index`` items (``index`` at or after
        the latest boundary's start)."""
        boundary = self.boundary
        return index if boundary is None else boundary.to_wire(index)

    def covers(self, index: int) -> bool:
        """Whether the Context's first ``index`` items reach the latest boundary's start."""
        boundary = self.boundary
        return boundary is None or index >= boundary.start

    def appended(self, staged: Sequence[NativeContent]) -> None:
        """The Context appended ``staged``."""
        if self.sent is not self.items:
            self.sent.extend(staged)

    def add(self, boundary: CompactionBoundary) -> None:
        """Requests start at ``boundary`` from now on."""
        self.boundaries.append(boundary)
        self._rebuild()

    def detached(self, start: int) -> bool:
        """The Context's items from ``start`` on were detached; ``True`` when that took a
        boundary with it (requests start at the one before again)."""
        if self.pending is not None and self.pending > start:
            self.pending = None  # (what it sent is gone: its summary cannot be swapped in)
        kept = len(self.boundaries)
        while self.boundaries and _beyond(self.boundaries[-1], start):
            self.boundaries.pop()
        if len(self.boundaries) != kept:
            self._rebuild()
            return True
        if self.sent is not self.items:
            del self.sent[self.to_wire(start) :]
        return False

    def sent_form(self, items: Sequence[NativeContent]) -> Sequence[NativeContent]:
        """Caller-given ``items`` as requests send them after the latest compaction: they
        must begin with the Context's items up to it (the compacted ones give way to its
        head)."""
        boundary = self.boundary
        if boundary is None:
            return items
        reach = boundary.start if boundary.at is None else boundary.at + 1
        own = self.items
        if len(items) < reach or any(items[i] is not own[i] for i in range(reach)):
            raise ContextStateError(
                f"after the provider compaction at item {reach - 1}, request(items=...) must "
                f"begin with this Context's first {reach} items (they are replaced by the "
                "compaction's summary): pass the Context's own items, or none"
            )
        return boundary.sent(items)

    def _rebuild(self) -> None:
        boundary = self.boundary
        self.sent = self.items if boundary is None else boundary.sent(self.items)


def _beyond(boundary: CompactionBoundary, start: int) -> bool:
    """Whether detaching from ``start`` removes what ``boundary`` stands on."""
    if boundary.at is not None:
        return boundary.at >= start
    return boundary.start > start


def remap(
    old: CompactionBoundary | None, new: CompactionBoundary | None
) -> Callable[[int], int | None]:
    """Where an index of the sent form after ``old`` sits in the sent form after ``new``
    (``None``: not sent any more)."""

    def moved(index: int) -> int | None:
        stored = index if old is None else old.stored_index(index)
        if stored is None:
            return None
        return stored if new is None else new.wire_index(stored)

    return moved
