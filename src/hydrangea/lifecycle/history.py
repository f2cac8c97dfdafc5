"""A persistent record of the history, so that requests and snapshots stay exact and cheap.

The lifecycle mirrors the Context it watches in a chain of append-only segments. A view of
the history at some moment is ``(segment, length)``: taking one is O(1), and it stays exact
after the collector detaches a tail, because a detach starts a new segment instead of
truncating the old one. Reading a view back walks it: O(length).

What a detach took out is kept only while a view still reads it: once no live view reaches
past the detach, the old segment lets go of its dead tail (each segment knows its views by
weak reference), so a session that takes a reminder back every turn does not keep every
reminder it ever sent. A segment so cut back that no view reads any more, and that follows all
of its parent, is folded into that parent (its items appended to the parent's, its child
pointed at the parent: O(its items)), so that session's chain stays two segments long instead
of growing one per turn. A fold changes no segment anyone reads past its end, and one pointer
at a time, so a view read meanwhile stays exact.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hydrangea import _spans
from hydrangea.context.boundary import CompactionBoundary
from hydrangea.context.context import Context
from hydrangea.errors import RequestOptionError
from hydrangea.lifecycle.visibility import Phase
from hydrangea.providers.adapter import Adapter, CachePolicy
from hydrangea.providers.features import RequestFeature, add_options, checked_options
from hydrangea.providers.native import NativeContent

__all__ = [
    "HistoryLog", "HistoryView", "LifecycleRequest", "OverlayItem", "Sending", "Snapshot",
]

_RETRIES = 4
"""How many later detaches a segment left by a detach waits for its views to go (it keeps its
tail after that: a caller holds a view of it)."""


@dataclass(eq=False, slots=True)
class Segment:
    """Items appended after the first ``parent_len`` items of ``parent``'s view."""

    parent: Segment | None
    parent_len: int
    items: list[NativeContent] = field(default_factory=list)
    views: list[weakref.ref[HistoryView]] | None = field(default=None, repr=False)
    """The views taken of this segment (weakly; pruned as they go), newest last."""

    def watch(self, view: HistoryView) -> None:
        """Remember ``view`` (weakly) until this segment's dead tail is let go of."""
        views = self.views
        if views is None:
            views = self.views = []
        views.append(weakref.ref(view))
        if len(views) >= 8 and len(views) & (len(views) - 1) == 0:  # (amortized O(1))
            views[:] = [ref for ref in views if ref() is not None]

    def trim(self, keep: int) -> bool:
        """Let go of the items past history position ``keep`` unless a live view reads them;
        whether it did (for a segment nothing more is appended to)."""
        live = [ref for ref in self.views or () if ref() is not None]
        for ref in live:
            view = ref()
            if view is not None and view.length > keep:
                return False
        del self.items[max(keep - self.parent_len, 0) :]
        # a segment cut back past its start now follows only what is left of its parent (a
        # chain read or stored later must not ask the parent for items it let go of)
        self.parent_len = min(self.parent_len, keep)
        self.views = live or None  # (a later detach further back may trim this one again)
        return True


@dataclass(frozen=True, slots=True, weakref_slot=True)
class HistoryView:
    """The first ``length`` items of the chain ending at ``segment``."""

    segment: Segment
    length: int

    def __post_init__(self) -> None:
        self.segment.watch(self)

    def items(self) -> tuple[NativeContent, ...]:
        """The items of this view, oldest first."""
        chunks: list[list[NativeContent]] = []
        segment: Segment | None = self.segment
        length = self.length
        while segment is not None and length > 0:
            own = length - segment.parent_len
            if own > 0:
                chunks.append(segment.items[:own])
                length = segment.parent_len
            segment = segment.parent
        out: list[NativeContent] = []
        for chunk in reversed(chunks):
            out.extend(chunk)
        return tuple(out)


class HistoryLog:
    """Keeps a segment chain in step with a Context that only grows or loses a tail."""

    __slots__ = ("_dead", "_length", "_seen", "_segment")

    def __init__(self, items: Sequence[NativeContent] = (), *, detaches: int = 0) -> None:
        """Start from ``items``, the Context's items after its first ``detaches`` detaches."""
        self._segment = Segment(None, 0, list(items))
        self._length = len(items)
        self._seen = detaches
        # (a left segment, what its child reads, the child)
        self._dead: list[tuple[Segment, int, Segment]] = []

    @property
    def segment(self) -> Segment:
        """The segment new items go to."""
        return self._segment

    def __len__(self) -> int:
        return self._length

    def view(self) -> HistoryView:
        """An O(1) view of the current history that stays exact from now on."""
        return HistoryView(self._segment, self._length)

    def sync(self, context: Context) -> int | None:
        """Catch up with ``context``; return the index a detach started from, or ``None``.

        The Context records where each detach started (:meth:`Context.detached_from`), so this
        costs O(detaches since the last sync + new items), never O(history).
        """
        start = context.detached_from(self._seen)
        self._seen = context.detaches
        detached_from: int | None = None
        if start is not None and start < self._length:
            detached_from = start
            left = self._segment
            self._segment = Segment(left, start)
            self._dead.append((left, start, self._segment))
            self._length = start
        if self._dead:
            self._dead = self._let_go(self._dead[-_RETRIES:])
        self._segment.items.extend(context[self._length :])
        self._length = len(context)
        return detached_from

    @staticmethod
    def _let_go(dead: list[tuple[Segment, int, Segment]]) -> list[tuple[Segment, int, Segment]]:
        """Trim each segment left by a detach to what its child reads (``keep``), and its
        parents when the child reads fewer items than they hold; what a live view still reads
        is tried again at the next sync (one a caller holds stays after a few detaches). A
        left segment trimmed to what its child reads, which no view reads, is folded into its
        parent when it follows all of it (see :func:`_fold`)."""
        waiting: list[tuple[Segment, int, Segment]] = []
        for segment, keep, child in dead:
            current: Segment | None = segment
            below = child
            while current is not None:
                into_parent = keep < current.parent_len  # (a trim lowers parent_len to keep)
                if not current.trim(keep):
                    waiting.append((current, keep, below))
                    break
                if current is segment:
                    _fold(segment, child)
                if not into_parent:
                    break
                below, current = current, current.parent
        return waiting


def _fold(segment: Segment, child: Segment) -> None:
    """Append ``segment``'s items to its parent's and make the parent ``child``'s parent, when
    that reads the same: nothing else reads ``segment`` (no view, and a left segment has one
    child), ``child`` follows all of it, and it follows all of its parent (whose list then
    only grows past what its readers read). ``segment`` itself is not changed."""
    parent = segment.parent
    if (
        parent is None
        or segment.views is not None
        or child.parent is not segment
        or child.parent_len != segment.parent_len + len(segment.items)
        or segment.parent_len != parent.parent_len + len(parent.items)
    ):
        return
    parent.items.extend(segment.items)
    child.parent = parent


@dataclass(frozen=True, slots=True)
class OverlayItem:
    """One ephemeral component as placed in one request."""

    key: str
    phase: Phase
    items: tuple[NativeContent, ...]
    """The component's native items (shared between requests; never mutate them)."""


@dataclass(frozen=True, slots=True)
class Sending:
    """One component as one episode sent it: its items are history ``[start, end)``."""

    key: str
    episode: int
    start: int
    end: int


@dataclass(frozen=True, slots=True, eq=False)
class LifecycleRequest:
    """One request: the history at render time, the components the episode sent included.

    The components of :attr:`before` and :attr:`after` are already in the history (what was
    sent is history: see :mod:`hydrangea.lifecycle.session`); they are listed here so that the
    explorer, snapshots and selectors can tell which components this episode sent. Taking it is
    O(components); :attr:`items` and :attr:`kwargs` walk the whole history.
    """

    episode: int
    """The episode this request belongs to (0 for the first render)."""
    history_view: HistoryView
    anchor: int
    """Where the ``before`` components start in the history."""
    before: tuple[OverlayItem, ...]
    after: tuple[OverlayItem, ...]
    adapter: Adapter
    earlier_stable: tuple[int, ...] = ()
    """:attr:`stable` of the previous requests, newest first, while their items are unchanged."""
    caching: CachePolicy | None = None
    """Anthropic breakpoint settings (``None``: the defaults;
    :mod:`hydrangea.providers.anthropic.caching`)."""
    boundaries: dict[int, int] | None = None
    """The session's memo of where item boundaries fall in the built messages (shared)."""
    context: Context | None = None
    """The Context the history mirrors: :attr:`kwargs` builds from its request cache."""
    detaches: int = 0
    """The Context's detach count at render time (the cache is used while the history holds)."""
    cuts: tuple[int, ...] = ()
    """Where a later collection may cut the history (its areas' starts), newest first."""
    in_history: bool = True
    """``False`` only for a request read from a file written before components were history
    (version 0.1): its components were a tail overlay, inserted at :attr:`anchor` and the end."""
    compaction: CompactionBoundary | None = None
    """The provider compaction this request started at (``None``: none), so that it is
    rebuilt as it was sent: the compaction's head, then the history from its start on."""

    @property
    def stable(self) -> int:
        """How many leading items are stable history: all of them (an old-format request:
        everything before its overlay)."""
        if self.in_history or not self.before:
            return self.history_view.length
        return self.anchor

    @property
    def overlay(self) -> tuple[OverlayItem, ...]:
        """The components this episode sent, in request order: ``before`` ones, then ``after``."""
        return self.before + self.after

    @property
    def overlay_keys(self) -> tuple[str, ...]:
        """The keys of the components this episode sent, in request order."""
        return tuple(item.key for item in self.overlay)

    @property
    def history(self) -> tuple[NativeContent, ...]:
        """The history of the request (for an old-format request: its overlay excluded)."""
        return self.history_view.items()

    @property
    def items(self) -> tuple[NativeContent, ...]:
        """The request's items, in order."""
        history = self.history
        if self.in_history:
            return history
        out: list[NativeContent] = list(history[: self.anchor])
        for entry in self.before:
            out.extend(entry.items)
        out.extend(history[self.anchor :])
        for entry in self.after:
            out.extend(entry.items)
        return tuple(out)

    @property
    @_spans.lifecycle_request
    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments for the gateway's SDK call (without ``model``).

        On Anthropic, cache breakpoints are placed on the history unless :attr:`caching` opts
        out. Built from the Context's request cache while the Context still holds this
        request's history (O(new items)), else from :attr:`items`.
        """
        context = self.context
        length = self.history_view.length
        if self.in_history and context is not None and len(context) >= length:
            moved = context.detached_from(self.detaches)
            if moved is None or moved >= length:
                return context.build_incremental(
                    length, (), earlier=self.earlier_stable, caching=self.caching,
                    cuts=self.cuts,
                )
        compaction = self.compaction
        if compaction is None:
            return self.adapter.breakpoint_request(
                self.items, stable_items=self.stable, earlier_items=self.earlier_stable,
                caching=self.caching, boundaries=self.boundaries, cut_items=self.cuts,
            )
        # what was sent: the compaction's head in place of what it compacted
        start, wire = compaction.start, compaction.to_wire
        return self.adapter.breakpoint_request(
            compaction.sent(self.items), stable_items=wire(max(self.stable, start)),
            earlier_items=tuple(wire(n) for n in self.earlier_stable if n >= start),
            caching=self.caching, cut_items=tuple(wire(n) for n in self.cuts if n >= start),
        )

    def request(
        self, *, model: str | None = None, features: Sequence[RequestFeature] = ()
    ) -> dict[str, Any]:
        """:attr:`kwargs` with typed provider options merged in, as
        ``Context.request(features=...)`` does (:meth:`~hydrangea.context.Context.request`): each
        feature is checked against the gateway and ``model`` before anything is built (a
        refusal raises :class:`~hydrangea.errors.UnsupportedOptionError` and changes nothing),
        and ``model`` is included. A head-swap compaction request (a feature whose
        ``swaps_head`` is true) is the Context's to send: ``Context.request(features=[...])``.
        """
        for feature in features:
            if feature.swaps_head:
                raise RequestOptionError(
                    f"{type(feature).__name__} asks for a head-swap compaction: send it with "
                    "Context.request(features=[...]) and push its reply with "
                    "Context.push_compaction, not with a lifecycle request"
                )
        asked = checked_options(features, self.adapter.gateway, model)
        kwargs = self.kwargs
        add_options(kwargs, asked, model)
        return kwargs


@dataclass(frozen=True, slots=True, eq=False)
class Snapshot:
    """A sealed request: exactly what the request was at :meth:`Lifecycle.seal` time."""

    id: str
    trigger: str
    request: LifecycleRequest

    @property
    def episode(self) -> int:
        """The episode of the sealed request (-1 if sealed before the first render)."""
        return self.request.episode

    @property
    def items(self) -> tuple[NativeContent, ...]:
        """The sealed request's items, history and overlay."""
        return self.request.items

    @property
    def history(self) -> tuple[NativeContent, ...]:
        """The history part of the sealed request (overlay excluded), as it was when sealed."""
        return self.request.history

    @property
    def overlay(self) -> tuple[OverlayItem, ...]:
        """The sealed request's overlay in request order (``before`` then ``after``)."""
        return self.request.overlay

    @property
    def overlay_keys(self) -> tuple[str, ...]:
        """The keys of the sealed overlay's components, in request order."""
        return self.request.overlay_keys

    @property
    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments of the SDK call for the sealed request (without ``model``)."""
        return self.request.kwargs
