"""CoopContext: areas take turns appending to one append-only Context.

Each :meth:`CoopContext.render` call first runs a collection at a safe point (between model
calls), then an unfold pass over the ring of areas starting at the cursor. The cost of a render is
proportional to the number of areas plus the items it appends (and the ranges it hands to
``observe()``), never to the length of the Context.

:meth:`CoopContext.arender` is the same render for async areas. Both run one sequence of steps
(collection, then the unfold pass), written once as generators that call each area callback and
yield what it returns when that is awaitable (see :mod:`hydrangea.coop._steps`); the async
driver awaits it, the sync one refuses it. So the two share every ordering and fault rule by
construction.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
import weakref
from collections.abc import Iterator
from typing import Protocol, assert_never

from hydrangea import _spans, tracing
from hydrangea.context.area import AnyContextArea, AreaFlowState, AreaLifeState
from hydrangea.context.context import Context
from hydrangea.coop._steps import Steps, adrive, drive, settle
from hydrangea.coop.collector import RangedArea, plan_collection, repair_cursor
from hydrangea.coop.effect_range import EffectRange
from hydrangea.coop.errors import AreaContractError, DuplicateAreaError, GcPrologueError
from hydrangea.coop.view import AreaRecord, CollectionRecord, CoopSnapshot
from hydrangea.errors import ContextStateError
from hydrangea.message import Message
from hydrangea.providers.native import NativeContent, copy_json

__all__ = ["CoopContext"]

_log = logging.getLogger(__name__)

_MEMBERS = ("life_state", "flow_state", "observe", "render", "promote", "gc_prologue")
_METHODS = frozenset({"observe", "render", "promote", "gc_prologue"})

class _Entry:
    """Internal bookkeeping for one registered area."""

    __slots__ = ("area", "effect_range", "is_async", "order", "retired")

    def __init__(self, area: AnyContextArea, order: int) -> None:
        self.area = area
        self.order = order
        self.effect_range: EffectRange | None = None
        self.retired = False
        self.is_async = any(inspect.iscoroutinefunction(getattr(area, m)) for m in _METHODS)

    def life(self) -> AreaLifeState:
        """The area's life state, refusing a retired area that claims to be retained again."""
        life = self.area.life_state  # _life(), inlined: read three times a render
        if not isinstance(life, AreaLifeState):
            raise _not_a_life_state(self.area, life)
        match life:
            case AreaLifeState.retired:
                self.retired = True
            case AreaLifeState.retain:
                if self.retired:
                    raise AreaContractError(
                        f"{self.area!r} went back from retired to retain; retirement is final"
                    )
            case _:
                assert_never(life)
        return life


def _life(area: AnyContextArea) -> AreaLifeState:
    value = area.life_state
    if not isinstance(value, AreaLifeState):
        raise _not_a_life_state(area, value)
    return value


def _not_a_life_state(area: AnyContextArea, value: object) -> AreaContractError:
    return AreaContractError(f"{area!r}.life_state is {value!r}, not an AreaLifeState")


def _flow(area: AnyContextArea) -> AreaFlowState:
    value = area.flow_state
    if not isinstance(value, AreaFlowState):
        raise AreaContractError(f"{area!r}.flow_state is {value!r}, not an AreaFlowState")
    return value


class Driver(Protocol):
    """What drives a CoopContext's renders (a :class:`~hydrangea.lifecycle.Lifecycle`)."""

    @property
    def rendering(self) -> bool:
        """Whether it is rendering right now."""


_SEQUENCES = (list, tuple)  # a tuple: `list | tuple` would build a union at every call


def _messages(area: AnyContextArea, result: object, member: str) -> list[Message]:
    if not isinstance(result, _SEQUENCES):
        raise AreaContractError(
            f"{area!r}.{member}() returned {type(result).__name__}, not a list of Message"
        )
    for message in result:
        if not isinstance(message, Message):
            raise AreaContractError(
                f"{area!r}.{member}() returned a {type(message).__name__}, not a Message"
            )
    return list(result)


class CoopContext:
    """Schedules registered areas over one :class:`~hydrangea.context.Context`.

    * :meth:`register` adds an area; it joins the ring at the next :meth:`render`. Safe to call
      from any thread, and from inside an area callback.
    * :meth:`render` collects the reclaimable tail, then lets areas render from the cursor on,
      and returns the Context. Calls are serialized; a call from inside an area callback raises
      :class:`~hydrangea.errors.ContextStateError`.
    * :meth:`arender` is :meth:`render` for async areas (sync areas may join it too): the same
      collection and pass, awaiting each callback that returns an awaitable. Calls from several
      tasks are serialized; one from inside an area callback raises.
    * :meth:`snapshot` is a read-only view for debugging.

    Errors: if ``promote()`` raises (or returns something that is not a sequence of messages the
    gateway accepts), the render raises it and nothing has changed (the next render plans the
    collection again and calls ``promote()`` again). If ``gc_prologue()`` raises, the collection
    is completed and the render then raises a :class:`GcPrologueError` holding every such
    exception, before the unfold pass (the next render runs the pass). If a ``gc_prologue()``
    raises a ``BaseException`` that is not an ``Exception`` (``KeyboardInterrupt``,
    ``SystemExit``), the remaining prologues of that collection are not called, the collection
    is completed all the same (no callback of it ever runs twice) and that exception is
    re-raised, with notes saying what was done and which prologues were skipped. If ``observe()``
    or ``render()`` raises, the render raises it; earlier areas' output stays, nothing of the
    failing area is appended, and the cursor stays on the failing area.
    """

    __slots__ = (
        "_any_async",
        "_async_locks",
        "_collections",
        "_context",
        "_cursor",
        "_drivers",
        "_last_collection",
        "_next_order",
        "_pending",
        "_pending_lock",
        "_ranged",
        "_registered",
        "_render_lock",
        "_render_task",
        "_render_thread",
        "_renders",
        "_ring",
        "_starts",
    )

    def __init__(self, context: Context) -> None:
        if not isinstance(context, Context):
            raise AreaContractError(
                f"CoopContext needs a hydrangea Context, got {type(context).__name__}"
            )
        self._context = context
        self._ring: list[_Entry] = []
        self._cursor = 0
        # Ranged entries by id(area), kept in ascending order of EffectRange.latest: a render
        # always extends a range to the current end of the Context, so moving the entry to the
        # end of this dict keeps it sorted in O(1).
        self._ranged: dict[int, _Entry] = {}
        self._pending: list[_Entry] = []
        self._registered: set[int] = set()
        self._any_async = False  # any area of the ring or the pending list has async callbacks
        self._next_order = 0
        self._pending_lock = threading.Lock()
        self._render_lock = threading.Lock()
        self._render_thread: int | None = None
        self._render_task: asyncio.Task[object] | None = None
        self._async_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )
        self._renders = 0
        self._collections = 0
        self._last_collection: CollectionRecord | None = None
        # range_starts(), kept until a range starts or an area leaves the ring (None: unknown)
        self._starts: tuple[int, ...] | None = None
        self._drivers: weakref.WeakSet[Driver] = weakref.WeakSet()

    # -- reading -----------------------------------------------------------------------------

    @property
    def context(self) -> Context:
        """The underlying append-only Context."""
        return self._context

    @property
    def renders(self) -> int:
        """How many :meth:`render` calls have started (including ones that raised)."""
        return self._renders

    @property
    def collections(self) -> int:
        """How many collections removed at least one area."""
        return self._collections

    @property
    def last_collection(self) -> CollectionRecord | None:
        """The most recent collection that removed an area, or ``None``.

        ``last_collection.render == renders`` tells that the latest render collected.
        """
        return self._last_collection

    def range_starts(self) -> tuple[int, ...]:
        """Where the areas' effect ranges begin, newest first, without repeats: the only
        places a collection can start detaching (cheaper than :meth:`snapshot` when that is
        all one needs, e.g. for placing Anthropic cache breakpoints)."""
        if self._render_thread == threading.get_ident():
            return self._range_starts()
        with self._render_lock:
            return self._range_starts()

    def ranges_end(self) -> int:
        """One past the last item any area's effect range covers (0 when no area rendered):
        items from there on belong to no area yet."""
        if self._render_thread == threading.get_ident():
            return self._ranges_end()
        with self._render_lock:
            return self._ranges_end()

    def _ranges_end(self) -> int:
        newest = next(reversed(self._ranged.values()), None)  # kept in order of ``latest``
        if newest is None or newest.effect_range is None:
            return 0
        return newest.effect_range.latest + 1

    def _range_starts(self) -> tuple[int, ...]:
        if self._starts is None:
            starts = {e.effect_range.earliest for e in self._ring if e.effect_range is not None}
            self._starts = tuple(sorted(starts, reverse=True))
        return self._starts

    def snapshot(self) -> CoopSnapshot:
        """The ring in registration order with each area's states and range, and the cursor.

        Reads each area's ``life_state`` and ``flow_state``. Waits for a render running on another
        thread; from inside an area callback it shows the state as it is at that moment.
        """
        if self._render_thread == threading.get_ident():
            return self._snapshot()
        with self._render_lock:
            return self._snapshot()

    def areas(self) -> tuple[AreaRecord, ...]:
        """Shorthand for ``snapshot().areas``."""
        return self.snapshot().areas

    def _snapshot(self) -> CoopSnapshot:
        records = tuple(
            AreaRecord(e.area, _life(e.area), _flow(e.area), e.effect_range) for e in self._ring
        )
        with self._pending_lock:
            pending = tuple(e.area for e in self._pending)
        return CoopSnapshot(
            areas=records,
            cursor=self._cursor if records else None,
            pending=pending,
            context_length=len(self._context),
            renders=self._renders,
        )

    # -- registering -------------------------------------------------------------------------

    def register(self, area: AnyContextArea) -> None:
        """Add ``area``; it joins the end of the ring at the next :meth:`render`.

        An area with an ``on_register(coop)`` method (the ready-made areas have one) has it
        called first, so it knows it belongs to this CoopContext; if it raises, nothing is
        registered.

        Raises :class:`AreaContractError` (a ``TypeError``) for a missing or non-callable contract
        member or an unhashable object, and :class:`DuplicateAreaError` (a ``ValueError``) when
        this instance is already registered.
        """
        missing = [name for name in _MEMBERS if not hasattr(area, name)]
        if missing:
            raise AreaContractError(
                f"{type(area).__name__} is not a Context Area: missing {', '.join(missing)}"
            )
        not_callable = [name for name in sorted(_METHODS) if not callable(getattr(area, name))]
        if not_callable:
            raise AreaContractError(
                f"{type(area).__name__} is not a Context Area: "
                f"{', '.join(not_callable)} must be callable"
            )
        try:
            hash(area)
        except TypeError as exc:
            raise AreaContractError(
                f"{type(area).__name__} is not hashable; an area must hash by identity "
                "(for a dataclass, use @dataclass(eq=False))"
            ) from exc
        with self._pending_lock:
            if id(area) in self._registered:
                raise DuplicateAreaError(f"{area!r} is already registered")
        hook = getattr(area, "on_register", None)
        if callable(hook):  # the area learns it is registered (and may refuse a second coop)
            hook(self)
        with self._pending_lock:
            if id(area) in self._registered:
                raise DuplicateAreaError(f"{area!r} is already registered")
            self._registered.add(id(area))
            entry = _Entry(area, self._next_order)
            self._pending.append(entry)
            self._any_async = self._any_async or entry.is_async
            self._next_order += 1

    def driven_by(self, driver: Driver) -> None:
        """Note that ``driver`` renders this CoopContext (a Lifecycle calls this when it attaches).

        From then on :meth:`render` and :meth:`arender` called by anything else raise
        :class:`~hydrangea.errors.ContextStateError`: a render outside the driver would build a
        request without its components (the reminders would be silently missing).
        """
        self._drivers.add(driver)

    def _refuse_undriven(self, what: str) -> None:
        drivers = list(self._drivers)
        if drivers and not any(driver.rendering for driver in drivers):
            raise ContextStateError(
                f"coop.{what}() on a CoopContext a {type(drivers[0]).__name__} drives: its "
                f"components would be left out of the request; call lifecycle.{what}() instead"
            )

    # -- rendering ---------------------------------------------------------------------------

    @_spans.coop_render
    def render(self) -> Context:
        """Collect the reclaimable tail, run one unfold pass, and return the Context.

        Refused (:class:`~hydrangea.errors.ContextStateError`) when a Lifecycle drives this
        CoopContext: call ``lifecycle.render()``, which runs this render and adds its components.
        """
        self._refuse_undriven("render")
        return self._render()

    def _render(self) -> Context:
        """:meth:`render` without the driver check (a render inside a turn, between replies)."""
        me = threading.get_ident()
        if self._render_thread == me:
            raise ContextStateError("CoopContext.render() called from inside an area callback")
        with self._render_lock:
            self._render_thread = me
            try:
                self._refuse_async_areas()
                drive(self._render_steps())
            finally:
                self._render_thread = None
        return self._context

    def _refuse_async_areas(self) -> None:
        """Before a sync render changes anything: no area may have ``async def`` callbacks."""
        if not self._any_async:
            return
        with self._pending_lock:
            found = [e.area for e in (*self._ring, *self._pending) if e.is_async]
        if found:
            raise AreaContractError(
                f"{found[0]!r} has async callbacks; use `await coop.arender()` for async areas"
            )

    @_spans.coop_render
    async def arender(self) -> Context:
        """:meth:`render` for async areas: awaits each callback that returns an awaitable.

        Same collection, pass, ordering and errors (the Lifecycle check included) as
        :meth:`render`. Concurrent calls from tasks
        of one event loop run one after the other; a call from inside an area callback raises
        :class:`~hydrangea.errors.ContextStateError`. The callbacks run on the event loop's
        thread; while they are awaited, a sync :meth:`render` from that thread raises and one from
        another thread waits.
        """
        self._refuse_undriven("arender")
        me = threading.get_ident()
        task = asyncio.current_task()
        if self._render_thread == me and self._render_task in (None, task):
            raise ContextStateError("CoopContext.arender() called from inside an area callback")
        async with self._loop_lock():
            with self._render_lock:
                self._render_thread = me
                self._render_task = task
                try:
                    await adrive(self._render_steps())
                finally:
                    self._render_thread = None
                    self._render_task = None
        return self._context

    def _loop_lock(self) -> asyncio.Lock:
        """The lock serializing :meth:`arender` calls among the running event loop's tasks (one
        per loop; calls from different threads are serialized by the render lock)."""
        loop = asyncio.get_running_loop()
        lock = self._async_locks.get(loop)
        if lock is None:
            lock = self._async_locks[loop] = asyncio.Lock()
        return lock

    def _render_steps(self) -> Steps[None]:
        self._admit_pending()
        self._renders += 1
        errors = yield from self._collect()
        if errors:
            raise GcPrologueError(f"{len(errors)} gc_prologue() call(s) raised", errors)
        yield from self._unfold()

    def _admit_pending(self) -> None:
        if not self._pending:  # read without the lock: a register racing with this render
            return  # joins at the next one, as if it had come a moment later
        with self._pending_lock:
            self._ring.extend(self._pending)
            self._pending.clear()

    def _newest_first(self) -> Iterator[RangedArea[_Entry]]:
        for entry in reversed(self._ranged.values()):
            assert entry.effect_range is not None
            yield RangedArea(entry, entry.effect_range, entry.order)

    def _collect(self) -> Steps[list[Exception]]:
        # Read every life state once; entry.retired then holds it (retirement is final).
        if not [e for e in self._ring if e.life() is AreaLifeState.retired]:
            return []
        plan = plan_collection(self._newest_first(), lambda e: e.retired)
        never_rendered = [e for e in self._ring if e.effect_range is None and e.retired]
        doomed = [*plan.areas, *never_rendered]
        if not doomed:
            return []
        started = tracing.now()
        # Phase 1: every promote(), and the conversion of what they return. Nothing has changed
        # yet, so an exception here leaves everything as it was.
        promoted: list[NativeContent] = []
        adapter = self._context.adapter
        for entry in plan.areas:
            promotes = yield from settle(entry.area.promote())
            for message in _messages(entry.area, promotes, "promote"):
                for item in adapter.from_message(message):
                    checked = copy_json(item)
                    adapter.validate(checked)
                    promoted.append(checked)
        # Phase 2: the plan is committed. Every gc_prologue(), then detach, then append.
        # A BaseException (KeyboardInterrupt, SystemExit ...) in one prologue stops the calls
        # there, but the bookkeeping still completes before it is re-raised: every doomed area
        # is removed, so no callback of this collection can ever run a second time.
        errors: list[Exception] = []
        interrupted: BaseException | None = None
        skipped: list[_Entry] = []
        for number, entry in enumerate(doomed):
            try:
                yield from settle(entry.area.gc_prologue())
            except Exception as exc:  # noqa: BLE001 - re-raised together once the collection is done
                exc.add_note(f"raised by gc_prologue() of {entry.area!r}")
                errors.append(exc)
            except BaseException as exc:  # noqa: BLE001 - re-raised once the bookkeeping is done
                interrupted = exc
                skipped = doomed[number + 1 :]
                break
        detached = 0
        if plan.start is not None:
            detached = len(self._context.detach_tail(plan.start))
        self._context.extend(promoted)
        self._remove(doomed)
        self._collections += 1
        self._last_collection = CollectionRecord(
            render=self._renders,
            start=plan.start,
            detached=detached,
            promoted=len(promoted),
            areas=tuple(e.area for e in doomed),
        )
        _spans.collection(started, self._last_collection, len(errors))
        _log.debug(
            "collected %d area(s): detached %d item(s) from %s, promoted %d",
            len(doomed),
            detached,
            plan.start,
            len(promoted),
        )
        if interrupted is not None:
            interrupted.add_note(
                "the collection was completed before this was re-raised (tail detached, "
                f"promoted messages appended, {len(doomed)} area(s) removed)"
            )
            if skipped:
                names = ", ".join(repr(e.area) for e in skipped)
                interrupted.add_note(f"gc_prologue() was not called for: {names}")
                _log.warning("gc_prologue() interrupted; not called for %s", names)
            for error in errors:
                interrupted.add_note(f"an earlier gc_prologue() raised {error!r}")
            raise interrupted
        return errors

    def _remove(self, doomed: list[_Entry]) -> None:
        self._starts = None
        gone = {id(e) for e in doomed}
        flags = [id(e) in gone for e in self._ring]
        self._cursor = repair_cursor(self._cursor, flags)
        self._ring = [e for e, flag in zip(self._ring, flags, strict=True) if not flag]
        for entry in doomed:
            self._ranged.pop(id(entry.area), None)
        with self._pending_lock:
            for entry in doomed:
                self._registered.discard(id(entry.area))
            self._any_async = any(e.is_async for e in (*self._ring, *self._pending))

    def _unfold(self) -> Steps[None]:
        size = len(self._ring)
        start = self._cursor
        for step in range(size):
            index = (start + step) % size
            self._cursor = index
            entry = self._ring[index]
            if (yield from self._visit(entry)) is AreaFlowState.exclusive:
                return
        self._cursor = start

    def _visit(self, entry: _Entry) -> Steps[AreaFlowState | None]:
        """Observe and render one area; its flow state, or ``None`` when it was skipped."""
        area = entry.area
        if entry.life() is AreaLifeState.retired:
            return None
        if entry.effect_range is not None:
            rng = entry.effect_range
            observed = area.observe(self._context.view(rng.earliest, rng.latest + 1))
            if observed is not None:
                yield from settle(observed)
            if entry.life() is AreaLifeState.retired:
                return None
        rendered: object = area.render()
        if type(rendered) is not list:  # the fast path skips settle() for a sync area's list
            rendered = yield from settle(rendered)
        messages = _messages(area, rendered, "render")
        before = after = len(self._context)
        if messages:
            self._context.emplace_messages(messages)
            after = len(self._context)
        if after > before:
            if entry.effect_range is None:
                entry.effect_range = EffectRange(before, after - 1)
                self._starts = None  # a new start (a range only ever grows at its end)
            else:
                entry.effect_range = entry.effect_range.extended_to(after - 1)
                del self._ranged[id(area)]
            self._ranged[id(area)] = entry
        flow = _flow(area)
        match flow:
            case AreaFlowState.exclusive | AreaFlowState.yielded:
                return flow
            case _:
                assert_never(flow)
