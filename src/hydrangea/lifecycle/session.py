"""The lifecycle session: components with schedules, attached to a CoopContext (or a Context).

Each :meth:`Lifecycle.render` is one **episode** (one model turn). It runs the CoopContext's
own ``render()`` (collection, then the areas' unfold pass) and appends to the history every
component the episode sends, then returns a
:class:`~hydrangea.lifecycle.history.LifecycleRequest` for the whole history.

**What was sent is history.** A component's schedule (ttl, cadence, stages) says in which
episodes it is *sent*; a sent component is appended to the Context like any other item and stays
where it was once the model answered after it, because the providers bind a reply's reasoning
to the exact request that produced it (see "Prefix binding" in the docs). A request that was
never answered binds nothing: at the start of the next render, components that are still the
Context's very last items (nothing came after them, not even a reply) are taken back, so
rendering twice without sending never repeats a component.

* ``after`` components are appended after the episode's area output (the end of the request);
* ``before`` components are appended before the areas render, so they come in front of the
  episode's new area output; never in front of anything already in the history, and never
  inside an open tool exchange (then they go at the end, like ``after`` ones).

Permanent components (``ttl=None``) are appended once, after the areas' output of the episode
in which they first appear. If a collection detaches a permanent component, the session appends
it again at the end of that render, so it is never lost.

The bookkeeping of components by key and tags lives in :mod:`hydrangea.lifecycle.table`, saving
and loading in :mod:`hydrangea.lifecycle.persist`; this module schedules episodes and seals
snapshots.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from hydrangea import _spans
from hydrangea._saved import read_text_checked, write_text_atomic
from hydrangea.context.context import Context
from hydrangea.coop.coop_context import CoopContext
from hydrangea.errors import ContextStateError
from hydrangea.lifecycle._sendings import SendingLog
from hydrangea.lifecycle.component import AUTO_KEY_PREFIX, Component
from hydrangea.lifecycle.errors import InvalidComponentError, InvalidTargetError
from hydrangea.lifecycle.history import (
    HistoryLog,
    LifecycleRequest,
    OverlayItem,
    Sending,
    Snapshot,
)
from hydrangea.lifecycle.placement import before_newest
from hydrangea.lifecycle.records import ComponentState, PlainRenderer, Renderer, SnapshotHistory
from hydrangea.lifecycle.schedule import Episode, Resend, plan_of, size_of
from hydrangea.lifecycle.table import ComponentTable, Entry, check_mutable
from hydrangea.message import Message
from hydrangea.providers.adapter import CachePolicy
from hydrangea.providers.native import NativeContent

__all__ = ["Lifecycle", "Resend", "Sending"]

_log = logging.getLogger(__name__)


@runtime_checkable
class _AsyncRenderer(Protocol):
    """A renderer that can also render asynchronously (a CoopContext)."""

    async def arender(self) -> Context: ...


class Lifecycle:
    """Components with lifecycles over the append-only history of a CoopContext.

    ``target`` is a :class:`~hydrangea.coop.CoopContext` (or any :class:`Renderer`), or a bare
    :class:`~hydrangea.context.Context` when no areas are needed. Not thread-safe: use one
    session from one thread.

    On Anthropic every request's kwargs carry cache breakpoints on the stable history (see
    :mod:`hydrangea.providers.anthropic.caching`); ``caching`` sets the model, TTL or opts out.
    ``resend`` chooses how a component visible over several episodes is sent again
    (:class:`Resend`).
    """

    __slots__ = (
        "__weakref__",  # a CoopContext it drives holds it weakly (dayone, issue 25)
        "_boundaries",
        "_caching",
        "_earlier",
        "_episode",
        "_expiring",
        "_last",
        "_log",
        "_renderer",
        "_rendering",
        "_resend",
        "_seals",
        "_seen",
        "_sendings",
        "_session",
        "_snapshots",
        "_table",
    )

    def __init__(
        self,
        target: Renderer | Context,
        *,
        caching: CachePolicy | None = None,
        resend: Resend | str = Resend.each_episode,
    ) -> None:
        self._renderer: Renderer = PlainRenderer(target) if isinstance(target, Context) else target
        if not isinstance(self._renderer, Renderer):
            raise InvalidTargetError(
                f"a Lifecycle attaches to a CoopContext or a Context, got {type(target).__name__}"
            )
        self._log = HistoryLog(
            self._renderer.context[:], detaches=self._renderer.context.detaches
        )
        self._table = ComponentTable()
        self._episode = 0
        self._seals = 0
        self._session = secrets.token_hex(6)
        self._snapshots: dict[str, Snapshot] = {}
        self._last: LifecycleRequest | None = None
        self._rendering = False
        self._caching = caching
        self._earlier: tuple[int, ...] = ()
        self._boundaries: dict[int, int] = {}
        try:
            self._resend = Resend(resend)
        except ValueError:
            raise InvalidComponentError(
                f"resend must be one of {', '.join(r.value for r in Resend)}, got {resend!r}"
            ) from None
        self._sendings = SendingLog()
        self._seen = self._renderer.context.detaches  # the detaches _sendings caught up with
        self._expiring: tuple[Entry, ...] = ()
        if isinstance(self._renderer, CoopContext):  # coop.render() alone now refuses (issue 25)
            self._renderer.driven_by(self)

    # -- reading -----------------------------------------------------------------------------

    @property
    def context(self) -> Context:
        """The Context whose history this session manages."""
        return self._renderer.context

    @property
    def rendering(self) -> bool:
        """Whether :meth:`render` or :meth:`arender` is running (the CoopContext asks)."""
        return self._rendering

    @property
    def renderer(self) -> Renderer:
        """The CoopContext (or plain renderer) this session drives."""
        return self._renderer

    @property
    def episode(self) -> int:
        """The episode of the latest render (-1 before the first)."""
        return self._episode - 1

    @property
    def next_episode(self) -> int:
        """The episode the next render will be; components added now start there."""
        return self._episode

    @property
    def last_request(self) -> LifecycleRequest | None:
        """The request returned by the latest render, or ``None`` before the first."""
        return self._last

    @property
    def history(self) -> SnapshotHistory:
        """Sealed snapshots (``history.at_snapshot(id)``)."""
        return SnapshotHistory(self._snapshots)

    def sendings(self) -> tuple[Sending, ...]:
        """Where the components were sent: one record per component per episode that sent it,
        oldest first, for the items still in the history (what a collection cut or a render
        took back unanswered is gone from here too). Permanent components are in
        :meth:`states` (``committed``)."""
        return tuple(self._sendings)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self._table.entries

    def __len__(self) -> int:
        return len(self._table.entries)

    def keys(self) -> tuple[str, ...]:
        """Every component key, in insertion order."""
        return tuple(self._table.entries)

    def states(self) -> Iterator[ComponentState]:
        """Every component with its first episode, in insertion order."""
        for entry in self._table.entries.values():
            yield ComponentState(entry.key, entry.component, entry.start, entry.committed)

    def get(self, key: str) -> Component:
        """The component under ``key``; :class:`~hydrangea.lifecycle.ComponentNotFoundError` if
        there is none.

        Expired components are forgotten: their keys are free again.
        """
        return self._table.get(key).component

    def get_by_key(self, key: str) -> Component:
        """egregore's name for :meth:`get`."""
        return self.get(key)

    def get_by_tags(
        self, tags: Iterable[str], *, match: Literal["any", "all"] = "any"
    ) -> list[Component]:
        """Components carrying any (default) or all of ``tags``, in insertion order."""
        return self._table.by_tags(tags, match)

    # -- changing ----------------------------------------------------------------------------

    def add(self, component: Component, *, replace: bool = False) -> str:
        """Add ``component``; it starts at the next render. Returns its key.

        A component without a key gets one starting with ``#``: ``add()`` returns it, and the
        stored component carries it (``get(key).key``, ``get_by_tags(...)[n].key``), so a
        component found by its tags can be updated or deleted. A taken key raises
        :class:`~hydrangea.lifecycle.DuplicateKeyError` unless ``replace=True``: the new
        component then takes the old one's place in the overlay order and its schedule starts
        afresh. A component in its last episode stays readable (``get``, ``in``, the explorer)
        until the next render, while the latest request still shows it; adding a component
        under its key meanwhile takes the key over without ``replace``.
        """
        if not isinstance(component, Component):
            raise InvalidComponentError(f"expected a Component, got {type(component).__name__}")
        key = component.key
        if key is not None and key.startswith(AUTO_KEY_PREFIX):
            entry = self._table.entries.get(key)
            if not (replace and entry is not None and entry.auto):
                raise InvalidComponentError(
                    f"keys starting with {AUTO_KEY_PREFIX!r} are assigned by the lifecycle: "
                    f"{key!r} (an assigned key can only be used to replace its component)"
                )
        natives = self._convert(component.content)
        if key is not None and not replace:
            finished = [e for e in self._expiring if e.key == key]
            if finished:  # it was sent for the last time: its key can be taken over
                self._table.expire(finished)
                self._expiring = tuple(e for e in self._expiring if e.key != key)
        return self._table.put(component, natives, self._episode, replace=replace)

    def update(
        self,
        key: str,
        *,
        content: Message | str | None = None,
        tags: Iterable[str] | None = None,
        restart: bool = False,
    ) -> Component:
        """Change a component's content and/or tags, keeping its key and its overlay position.

        The schedule is kept (``restart=False``) or starts afresh at the next render. The
        content of a permanent component already in the history cannot change.
        """
        entry = self._table.get(key)
        if content is not None or restart:
            check_mutable(entry, "changed")
        updated = entry.component
        natives = entry.natives
        if content is not None:
            updated = updated.with_content(content)
            natives = self._convert(updated.content)
        if tags is not None:
            updated = updated.with_tags(tags)
        entry.component = updated
        entry.natives = natives
        entry.shown = {}
        entry.plan = None
        if content is not None:
            entry.sent = None  # new content: sent again even under Resend.when_changed
        if restart:
            entry.start = self._episode
            self._expiring = tuple(e for e in self._expiring if e is not entry)
        return updated

    def delete(self, key: str) -> Component:
        """Remove the component under ``key`` and return it.

        A permanent component already appended to the history raises
        :class:`~hydrangea.lifecycle.PermanentComponentError`: the history is append-only.
        """
        return self._table.remove(key).component

    # -- rendering ---------------------------------------------------------------------------

    @_spans.lifecycle_render
    def render(self) -> LifecycleRequest:
        """Run one episode: the CoopContext's render, then the components it sends.

        If the CoopContext's render raises (any exception, ``KeyboardInterrupt`` included), the
        episode does not advance: the ``before`` components appended for it are taken back
        while nothing follows them, and a permanent component that a collection of that render
        detached is taken back to the waiting ones (``states()`` shows it uncommitted) and is
        appended again by the next render that succeeds, also after a save and a load. The
        lifecycle's own work is O(live components + new items); it never walks the whole
        history.
        """
        if self._rendering:
            raise ContextStateError("Lifecycle.render() called while it is already rendering")
        self._rendering = True
        try:
            episode = self._begin_episode()
            try:
                context = self._renderer.render()
            except BaseException:
                self._abandon_episode(episode)
                raise
            return self._finish_episode(context, episode)
        finally:
            self._rendering = False

    @_spans.lifecycle_render
    async def arender(self) -> LifecycleRequest:
        """:meth:`render` with the CoopContext's ``arender()``, for async areas.

        The same episode; a renderer without ``arender`` (a bare Context) is rendered with its
        ``render()``.
        """
        if self._rendering:
            raise ContextStateError("Lifecycle.arender() called while it is already rendering")
        self._rendering = True
        try:
            episode = self._begin_episode()
            renderer = self._renderer
            try:
                if isinstance(renderer, _AsyncRenderer):
                    context = await renderer.arender()
                else:
                    context = renderer.render()
            except BaseException:  # cancellation included: the episode does not advance
                self._abandon_episode(episode)
                raise
            return self._finish_episode(context, episode)
        finally:
            self._rendering = False

    def _begin_episode(self) -> Episode:
        """Before the areas render: take back what was never answered, plan the episode and
        place its ``before`` components (see :meth:`_before_at`)."""
        context = self.context
        self._withdraw(context)
        self._take_back_detached()  # catch up with the withdrawal and any detach since
        self._expire_finished()
        episode = self._schedule(self._episode)
        before = episode.before
        if before:
            at = self._before_at(context)
            if at is not None:
                items = [native for item in before for native in item.items]
                if at == len(context):
                    self._send(context, before)
                else:
                    context.move_unsent(at, items)
                    self._take_back_detached()  # (the move is a detach: catch up with it)
                    self._mark_sent_entries(before, at, context.detaches)
                episode.length = at
                episode.detaches = context.detaches
                episode.before_placed = True
        return episode

    def _before_at(self, context: Context) -> int | None:
        """Where this episode's ``before`` components go: with a CoopContext, at the end, in
        front of what the areas are about to render; on a bare Context, in front of the newest
        item that no request has covered (nor the lifecycle appended). ``None`` when that point
        would split a tool exchange (they then go at the end, after the areas' output)."""
        adapter = context.adapter
        if isinstance(self._renderer, CoopContext):
            at = len(context)  # in front of what the areas render next
        else:
            floor = max(context.sent, self._owned_end())
            at = max(before_newest(adapter, context), floor)
        if at > 0 and at < len(context) and (
            adapter.opens_exchange(context[at - 1]) or adapter.closes_exchange(context[at])
        ):
            return None
        if at == len(context) and at > 0 and adapter.opens_exchange(context[at - 1]):
            return None
        return at

    def _owned_end(self) -> int:
        """One past the last item the lifecycle itself appended (components sent, permanent
        ones committed): nothing is placed in front of them."""
        end = self._sendings.end()
        committed = self._table.committed
        if committed and committed[-1].committed is not None:
            end = max(end, committed[-1].committed[1])
        return end

    def _mark_sent_entries(
        self, items: tuple[OverlayItem, ...], begin: int, detaches: int
    ) -> None:
        at = begin
        for item in items:
            entry = self._table.entries.get(item.key)
            if entry is not None:
                entry.sent = (begin, detaches)
            self._sendings.append(Sending(item.key, self._episode, at, at + len(item.items)))
            at += len(item.items)

    def _abandon_episode(self, episode: Episode) -> None:
        """The renderer raised: the episode's ``before`` components go while nothing follows."""
        if episode.before_placed:
            self._withdraw(self.context)
        self._take_back_detached()

    def _finish_episode(self, context: Context, episode: Episode) -> LifecycleRequest:
        """The lifecycle's part of an episode, once the renderer has rendered ``context``."""
        self._take_back_detached()
        pending = self._table.pending
        for entry in pending.values():
            self._commit(context, entry)
        pending.clear()
        start = episode.length
        moved = context.detached_from(episode.detaches)
        if episode.before_placed and moved is not None and moved < start + size_of(episode.before):
            episode.before_placed = False  # a collection of this render took them with it
        anchor = start
        if not episode.before_placed:
            anchor = len(context)
            if episode.before:
                self._send(context, episode.before)
        after = episode.after
        if moved is not None and episode.kept:  # a collection may have cut an earlier sending
            again = tuple(item for entry, item in episode.kept if not self._still_sent(entry))
            after = (*after, *again)  # (in the order they are sent in: at the end)
        if after:
            self._send(context, after)
            episode.after = after
        self._log.sync(context)
        self._expiring = episode.gone
        request = LifecycleRequest(
            self._episode, self._log.view(), anchor, episode.before, episode.after,
            context.adapter, self._earlier, self._caching, self._boundaries, context,
            context.detaches, self._cuts(),
            compaction=next(reversed(context.compactions), None),
        )
        self._earlier = (request.stable, *self._earlier)[:2]
        self._episode += 1
        self._last = request
        return request

    def _send(self, context: Context, items: tuple[OverlayItem, ...]) -> None:
        """Append the components ``items`` to the history: they are sent from now on."""
        begin = len(context)
        context.extend([native for item in items for native in item.items])
        self._mark_sent_entries(items, begin, context.detaches)

    def _withdraw(self, context: Context) -> None:
        """Take back the components sent last if nothing followed them (the run of sendings
        that ends the history): no reply came after them, so nothing is bound to them and no
        request will repeat them."""
        self._take_back_detached()  # (the sendings a detach cut are off the list)
        end = len(context)
        n, start = self._sendings.run_start(end)
        if start == end:
            return
        self._sendings.cut(n)
        context.detach_tail(start)
        _log.debug("took back %d unanswered component item(s) from %d", end - start, start)

    def _expire_finished(self) -> None:
        """Free the keys of the components whose last episode was the previous one (they stay
        readable until the next render, while the request that sent them is the latest)."""
        expiring = self._expiring
        if expiring:
            self._table.expire(expiring)
            self._expiring = ()

    def seal(self, trigger: str = "manual") -> str:
        """Seal the latest request under a new unique id and return the id.

        Before the first render the current history with an empty overlay is sealed.
        Ids are ``<session>-<counter>``: never reused, however fast seals come.
        """
        request = self._last
        if request is None:
            self._log.sync(self.context)
            request = LifecycleRequest(-1, self._log.view(), 0, (), (), self.context.adapter)
        self._seals += 1
        snapshot_id = f"{self._session}-{self._seals}"
        self._snapshots[snapshot_id] = Snapshot(snapshot_id, str(trigger), request)
        return snapshot_id

    def at_snapshot(self, snapshot_id: str) -> Snapshot:
        """Shorthand for ``history.at_snapshot(snapshot_id)``."""
        return self.history.at_snapshot(snapshot_id)

    # -- persistence -------------------------------------------------------------------------

    def to_json(self) -> str:
        """The session as JSON: items, components, episode and snapshots (areas excluded)."""
        from hydrangea.lifecycle.persist import dumps

        return dumps(self)

    @classmethod
    def from_json(
        cls, text: str, attach: Callable[[Context], Renderer | Context] | None = None
    ) -> Lifecycle:
        """Read a session written by :meth:`to_json`.

        The session attaches to the restored Context, or to ``attach(context)`` (for example
        ``CoopContext``, to register areas again). New seals get a new session id, so their ids
        never collide with the saved ones, even when one file is loaded twice.
        """
        from hydrangea.lifecycle.persist import loads

        return loads(text, attach, cls)

    def save(self, path: str | Path) -> None:
        """Write :meth:`to_json` to ``path`` (UTF-8), atomically.

        A temporary file in the same folder is written, flushed to disk and renamed over
        ``path``: a save that fails, or a crash in the middle, leaves the previous file intact.
        """
        write_text_atomic(path, self.to_json(), "the lifecycle session")

    @classmethod
    def load(
        cls, path: str | Path, attach: Callable[[Context], Renderer | Context] | None = None
    ) -> Lifecycle:
        """Read a session saved with :meth:`save` (see :meth:`from_json`)."""
        return cls.from_json(read_text_checked(path, "lifecycle session"), attach)

    # -- internals ---------------------------------------------------------------------------

    def _convert(self, message: Message) -> tuple[NativeContent, ...]:
        adapter = self.context.adapter
        natives = adapter.from_message(message)
        for item in natives:
            adapter.validate(item)
        return tuple(natives)

    def _commit(self, context: Context, entry: Entry) -> None:
        begin = len(context)
        context.extend(entry.natives)
        entry.committed = (begin, len(context))
        self._table.committed.append(entry)

    def _take_back_detached(self) -> None:
        """Catch up with the Context; permanent components a detach removed wait again.

        They go back to the pending table (in their original order: committed entries are in
        ``seq`` order), so the next successful render appends them after the areas' output.
        """
        context = self.context
        moved = context.detached_from(self._seen)
        self._seen = context.detaches
        if moved is not None:  # (the log below knows only what it had synced)
            self._sendings.cut_past(moved)
        detached_from = self._log.sync(context)
        if detached_from is None:
            return
        self._earlier = tuple(n for n in self._earlier if n <= detached_from)
        self._boundaries = {n: m for n, m in self._boundaries.items() if n <= detached_from}
        committed = self._table.committed
        while committed:
            last = committed[-1]
            assert last.committed is not None
            if last.committed[1] <= detached_from:  # wholly before the detach: still there
                break
            committed.pop()
            _log.debug("permanent component %r was detached; it will be appended again", last.key)
            last.committed = None
            self._table.link(last)

    def _schedule(self, episode: int) -> Episode:
        """The ``before`` and ``after`` components ``episode`` sends, the entries whose last
        episode it is (their keys are freed at the next render), and the visible ones not sent
        again because their content is still in the history (``Resend.when_changed``)."""
        before: list[OverlayItem] = []
        after: list[OverlayItem] = []
        gone: list[Entry] = []
        kept: list[tuple[Entry, OverlayItem]] = []
        finished: list[Entry] = []
        once = self._resend is Resend.when_changed
        for entry in self._table.live.values():
            plan = entry.plan
            if plan is None or not plan.first <= episode < plan.stop:
                plan = entry.plan = plan_of(entry, episode)
            item = plan.item
            if item is None:
                if plan.final:
                    finished.append(entry)
                continue
            if plan.period and (episode - plan.origin) % plan.period >= plan.shown:
                continue  # a periodic component, hidden in this episode
            if plan.last == episode:
                gone.append(entry)  # last episode: the key is free after it
            if once and self._still_sent(entry):
                kept.append((entry, item))
                continue
            if plan.before:
                before.append(item)
            else:
                after.append(item)
        if finished:
            self._table.expire(finished)
        context = self.context
        return Episode(
            tuple(before), tuple(after), tuple(gone), len(context), context.detaches, False,
            tuple(kept),
        )

    def _still_sent(self, entry: Entry) -> bool:
        """True if ``entry``'s content, as it is now, is in the history already."""
        sent = entry.sent
        if sent is None:
            return False
        position, detaches = sent
        moved = self.context.detached_from(detaches)
        return moved is None or moved > position

    def _cuts(self) -> tuple[int, ...]:
        """Where a later collection may cut the history, newest first (the starts of the
        CoopContext's areas: a collection detaches from one of them), when breakpoints are
        placed (Anthropic; OpenAI Responses with explicit caching)."""
        renderer = self._renderer
        if not self.context.adapter.places_breakpoints_for(self._caching) or not isinstance(
            renderer, CoopContext
        ):
            return ()
        return renderer.range_starts()
