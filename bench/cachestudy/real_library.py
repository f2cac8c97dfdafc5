"""This library's strategy, driven through the library's own pieces.

* a :class:`~hydrangea.context.Context` holding the system prompt, under a
  :class:`~hydrangea.coop.CoopContext`;
* a :class:`~hydrangea.areas.CompactingConversation` owning the turns: the user requests and tool
  results are its user turns, the model's replies are pushed into the Context and routed to it;
  its :class:`~hydrangea.areas.CompactionArea` segments checkpoint at ``threshold`` tokens at the
  end of a model turn, promoting a structured summary whose pointers lead to the full records in
  an :class:`~hydrangea.asof.records.InMemoryRecordStore`; with ``rollup`` (the conversation's
  ``rollup_tokens``) the summaries are carried ahead of each segment and merged into one once
  those added since the last rollup reach that size;
* a :class:`~hydrangea.lifecycle.session.Lifecycle` over the CoopContext for the reminders: the
  to-do list is sticky (``ttl=1, cadence=1``) and updated in place of its key, a file note lives
  three turns (``ttl=3``), the test reminder comes back every ten (``ttl=1, cadence=10``). What
  was sent is history: the lifecycle appends each reminder to the history in the episodes it
  sends it, after the episode's new turns, and it stays there (until a checkpoint compacts the
  conversation it sits in). ``resend`` is the lifecycle's policy for a reminder visible over
  several episodes: :attr:`~hydrangea.lifecycle.session.Resend.each_episode` appends it again
  in each, :attr:`~hydrangea.lifecycle.session.Resend.when_changed` only once, and again after
  its text changed or a checkpoint took its sending away.

With ``in_loops`` the conversation also checkpoints between two exchanges of a tool loop
(``CompactingConversation(in_loops=True)``: each reply goes through ``push_reply``, which renders
the CoopContext once before pushing a reply that follows a checkpoint).

Each turn is one ``Lifecycle.render()``; the request counted is the lifecycle request's kwargs
(the whole history; on Anthropic with the lifecycle's breakpoints).

With ``in_place=True`` the same pipeline stands in for the "reminders edited in place" strategy:
the reminders are not given to the lifecycle; each is inserted into the request's history at the
index where it first appeared, rewritten there when its text changes and dropped when it expires.
A reminder whose position was reclaimed by a checkpoint moves to just after the summaries (the
first item that differs from the previous history is where the reclaimed tail started). The
summaries, checkpoints and records are then exactly the library's, and only the reminders'
position differs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Literal, assert_never

from hydrangea.areas import CompactingConversation
from hydrangea.asof.items import ContextItem
from hydrangea.asof.records import InMemoryRecordStore
from hydrangea.asof.summarizers import Summarizer
from hydrangea.asof.summary import StructuredSummary, first_sentence
from hydrangea.context import Context, NativeContent
from hydrangea.coop import CoopContext
from hydrangea.lifecycle import Component
from hydrangea.lifecycle.session import Lifecycle, Resend
from hydrangea.message import Message, Role

from .accounting import Request
from .render import Renderer
from .strategy import check_budget, reminder_message
from .transcript import Reminder, Transcript, Turn

__all__ = ["LibraryStrategy", "OverlayMismatchError", "PlainFactSummarizer", "library_name"]

_CLOCK_START = datetime(2026, 1, 1, tzinfo=UTC)
_SUMMARY_MARK = "were compacted into this summary"
"""A phrase of every summary CompactionArea promotes (its header line)."""


def _after_summaries(history: Sequence[NativeContent], start: int) -> int:
    """The index just after the run of summary items that starts at or after ``start``."""
    index = start
    while index < len(history) and _SUMMARY_MARK not in json.dumps(history[index]):
        index += 1
    while index < len(history) and _SUMMARY_MARK in json.dumps(history[index]):
        index += 1
    return index


class OverlayMismatchError(RuntimeError):
    """The lifecycle sent a reminder the session says is not visible, or (resending each
    episode) left out one that is (a study defect)."""


def library_name(resend: Resend) -> str:
    """The table label of the library's strategy under ``resend``."""
    match resend:
        case Resend.each_episode:
            return "hydrangea (resend each episode)"
        case Resend.when_changed:
            return "hydrangea (resend when changed)"
        case _:
            assert_never(resend)


class PlainFactSummarizer:
    """A summarizer passed to the library through its ``summarizer`` parameter: the first
    sentence of each record as its fact, without repeating the record id after it (the area sets
    the summary's pointers to the record ids anyway, and they are listed once at its end)."""

    def summarize(self, items: Sequence[ContextItem]) -> StructuredSummary:
        """One plain fact per item; earlier summaries are merged."""
        parts = [
            item.summary
            if item.summary is not None
            else StructuredSummary(facts=(first_sentence(item.content),), pointers=(item.item_id,))
            for item in items
        ]
        return StructuredSummary.merge(parts)


class LibraryStrategy:
    """The library's strategy on its real CoopContext, areas and lifecycle."""

    def __init__(
        self,
        transcript: Transcript,
        renderer: Renderer,
        budget: int,
        *,
        threshold: int,
        rollup: int | None = None,
        summarizer: Summarizer | None = None,
        in_place: bool = False,
        rollup_detail: Literal["full", "headlines"] = "full",
        name: str | None = None,
        in_loops: bool = False,
        resend: Resend = Resend.each_episode,
    ) -> None:
        self.name = library_name(resend)
        if summarizer is not None:
            self.name += ", plain-fact summarizer"
        if in_place:
            self.name = "in-place reminders"
        if name is not None:
            self.name = name
        self.in_place = in_place
        self.positions: dict[str, int] = {}
        self.summary_tokens = 0
        self.renderer = renderer
        self.budget = budget
        context = Context(renderer.gateway)
        context.emplace_message(Message(role=Role.system, content=transcript.system_prompt))
        self.coop = CoopContext(context)
        self.store = InMemoryRecordStore()
        self.conversation = CompactingConversation(
            self.coop,
            threshold_tokens=threshold,
            summarizer=summarizer,
            records=self.store,
            counter=renderer.counter,
            clock=lambda: _CLOCK_START,
            rollup_tokens=rollup,
            rollup_detail=rollup_detail,
            in_loops=in_loops,
        )
        self.resend = resend
        # In-place reminders bypass the lifecycle: it would drive the coop and refuse a bare
        # coop.render() (issue 25), so that strategy has none.
        self.lifecycle: Lifecycle | None = (
            None if in_place else Lifecycle(self.coop, resend=resend)
        )

    @property
    def checkpoints(self) -> int:
        """How many compaction checkpoints happened."""
        return len(self.conversation.summaries)

    @property
    def rollups(self) -> int:
        """How many summary rollups happened."""
        return self.conversation.rollups

    def step(self, turn: Turn) -> Request:
        """Push/route the model's reply, queue the user side, sync reminders, render."""
        for message in turn.events:
            if message.role is Role.assistant:
                self.conversation.push_reply(self.renderer.native(message), message)
            else:
                self.conversation.user(message)
        if self.in_place:
            return self._step_in_place(turn)
        assert self.lifecycle is not None  # made for every strategy but in-place reminders
        self._sync(turn.reminders)
        request = self.lifecycle.render()
        visible = {reminder.key for reminder in turn.reminders}
        sent = set(request.overlay_keys)
        every = self.resend is Resend.each_episode
        if not sent <= visible or (every and sent != visible):
            raise OverlayMismatchError(
                f"turn {turn.index}: sent {sorted(sent)}, visible {sorted(visible)}"
            )
        return self._measured(self.renderer.units(request.kwargs))

    def _step_in_place(self, turn: Turn) -> Request:
        before = self.coop.context[:]
        history = self.coop.render()[:]
        pairs = enumerate(zip(before, history, strict=False))
        shorter = min(len(before), len(history))
        kept = next((n for n, (old, new) in pairs if old != new), shorter)
        if kept < len(before):  # a checkpoint reclaimed the tail from ``kept`` on
            after = _after_summaries(history, kept)
            for key, position in self.positions.items():
                if position > kept:
                    self.positions[key] = after
        visible = {reminder.key: reminder for reminder in turn.reminders}
        self.positions = {k: p for k, p in self.positions.items() if k in visible}
        for key in visible:
            self.positions.setdefault(key, len(history))
        items = list(history)
        order = sorted(
            ((position, n, key) for n, (key, position) in enumerate(self.positions.items())),
            reverse=True,
        )
        for position, _, key in order:  # from the back, so earlier indices stay valid
            items[position:position] = self.renderer.native(reminder_message(visible[key]))
        return self._measured(self.renderer.request(items))

    def _measured(self, request: Request) -> Request:
        """Note how many tokens of ``request`` are promoted summaries, then check the budget."""
        self.summary_tokens = sum(m.tokens for m in request if _SUMMARY_MARK in m.text)
        return check_budget(self.name, request, self.budget)

    def _sync(self, reminders: tuple[Reminder, ...]) -> None:
        lifecycle = self.lifecycle
        assert lifecycle is not None
        for reminder in reminders:
            message = reminder_message(reminder)
            known = reminder.key in lifecycle
            if known and lifecycle.get(reminder.key).content == message:
                continue
            if reminder.key == "todo":
                if known:
                    lifecycle.update("todo", content=message)
                else:
                    lifecycle.add(Component(message, key="todo", ttl=1, cadence=1))
            elif reminder.key == "run-tests":
                lifecycle.add(Component(message, key=reminder.key, ttl=1, cadence=10))
            else:
                lifecycle.add(Component(message, key=reminder.key, ttl=3), replace=True)

    def records(self) -> Mapping[str, str] | None:
        """Every record of the store, by id."""
        return {key: self.store.require(key).content for key in self.store.ids()}
