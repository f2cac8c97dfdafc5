"""The three common strategies the library is compared with.

* :class:`SlidingWindow` keeps the system prompt and drops the oldest messages until the request
  fits the budget, every turn.
* :class:`SummarizeReplace` replaces the history by one summary message plus the newest turn
  every ``every`` turns; the summary is the first-sentence digest without pointers, cut to a size
  cap (oldest facts first), as a rolling "summary of the conversation so far" is. Between
  summaries it only appends; a request still over the budget drops its oldest messages.
* :class:`InPlaceReminders` compacts exactly like the library (checkpoints at the end of a model
  turn, summaries with pointers), but keeps each reminder in the history at the position where it
  first appeared, rewrites it there whenever its text changes and deletes it there when it
  expires, as a coordinate-addressed lifecycle system does. The only difference from the library
  is therefore where the reminders live.

All three show a turn's reminders like the library does (:func:`.strategy.reminder_message`);
the first two put them at the tail of the request, as an injected "system reminder" is.
"""

from __future__ import annotations

from collections.abc import Mapping

from hydrangea.message import Message, Role

from .accounting import Request
from .checkpoints import CheckpointHistory
from .render import Renderer
from .strategy import (
    BudgetExceededError,
    Entry,
    check_budget,
    reminder_message,
    reminder_messages,
)
from .summaries import Digest, digest
from .transcript import Reminder, Transcript, Turn

__all__ = ["InPlaceReminders", "SlidingWindow", "SummarizeReplace"]


def _size(request: Request) -> int:
    return sum(message.tokens for message in request)


class SlidingWindow:
    """Drop the oldest messages (never the system prompt) until the request fits."""

    def __init__(self, transcript: Transcript, renderer: Renderer, budget: int) -> None:
        self.name = "sliding window"
        self.renderer = renderer
        self.budget = budget
        self.system = Message(role=Role.system, content=transcript.system_prompt)
        self.entries: list[Message] = []
        self.start = 0

    def step(self, turn: Turn) -> Request:
        """Append the events, then slide the window start forward until the request fits."""
        self.entries.extend(turn.events)
        tail = reminder_messages(turn.reminders)
        while True:
            request = self.renderer.request_of(
                [self.system, *self.entries[self.start :], *tail], tail=len(tail)
            )
            if _size(request) <= self.budget:
                return request
            if self.start >= len(self.entries) - len(turn.events):
                raise BudgetExceededError(f"{self.name}: the newest turn alone exceeds the budget")
            self.start += 1

    def records(self) -> Mapping[str, str] | None:
        """No records."""
        return None


class SummarizeReplace:
    """Every ``every`` turns: one capped summary message, then the newest turn."""

    def __init__(
        self,
        transcript: Transcript,
        renderer: Renderer,
        budget: int,
        *,
        every: int,
        summary_cap: int = 3_000,
    ) -> None:
        self.name = "summarize and replace"
        self.renderer = renderer
        self.budget = budget
        self.every = every
        self.summary_cap = summary_cap
        self.system = Message(role=Role.system, content=transcript.system_prompt)
        self.facts: list[str] = []
        self.summary: Message | None = None
        self.entries: list[Entry] = []

    def _summarize(self, current_turn: int) -> None:
        old = [e for e in self.entries if e.turn < current_turn]
        if not old:
            return
        new, _ = digest([(e.turn, e.position, e.message) for e in old], pointers=False)
        self.facts.extend(new.facts)
        while True:
            text = Digest(0, old[-1].turn, tuple(self.facts), ()).render()
            message = Message(role=Role.user, content=text)
            if self.renderer.tokens(message) <= self.summary_cap or len(self.facts) <= 1:
                break
            self.facts.pop(0)
        self.summary = message
        self.entries = self.entries[len(old) :]

    def step(self, turn: Turn) -> Request:
        """Append, summarize on schedule, and trim the oldest messages if still over budget."""
        self.entries.extend(Entry(turn.index, n, m) for n, m in enumerate(turn.events))
        if turn.index > 0 and turn.index % self.every == 0:
            self._summarize(turn.index)
        tail = reminder_messages(turn.reminders)
        head = [self.system] if self.summary is None else [self.system, self.summary]
        while True:
            body = [e.message for e in self.entries]
            request = self.renderer.request_of([*head, *body, *tail], tail=len(tail))
            if _size(request) <= self.budget:
                return request
            if all(e.turn == turn.index for e in self.entries):
                raise BudgetExceededError(f"{self.name}: the newest turn alone exceeds the budget")
            self.entries.pop(0)

    def records(self) -> Mapping[str, str] | None:
        """No records: the summary has no pointers."""
        return None


class InPlaceReminders:
    """The library's checkpoints, but reminders live in history where they first appeared."""

    def __init__(
        self,
        transcript: Transcript,
        renderer: Renderer,
        budget: int,
        *,
        threshold: int,
        rollup: int | None = None,
    ) -> None:
        self.name = "in-place reminders"
        self.renderer = renderer
        self.budget = budget
        self.history = CheckpointHistory(transcript.system_prompt, renderer, threshold, rollup)
        self.slots: list[Entry | str] = []

    def _messages(self, turn: Turn) -> list[Message]:
        texts = {r.key: r for r in turn.reminders}
        out = [self.history.system, *self.history.summaries]
        for slot in self.slots:
            out.append(slot.message if isinstance(slot, Entry) else reminder_message(texts[slot]))
        return out

    def step(self, turn: Turn) -> Request:
        """Append events (checkpointing when due), then edit the reminders in place."""
        before = len(self.history.entries)
        replaced = {id(e) for e in self.history.append(turn)}
        if replaced:
            self.slots = _after_checkpoint(self.slots, replaced)
            before = 0
        self.slots.extend(self.history.entries[before:])
        self._sync_reminders(turn.reminders)
        request = self.renderer.request_of(self._messages(turn))
        return check_budget(self.name, request, self.budget)

    def _sync_reminders(self, reminders: tuple[Reminder, ...]) -> None:
        active = {r.key for r in reminders}
        self.slots = [s for s in self.slots if isinstance(s, Entry) or s in active]
        present = {s for s in self.slots if isinstance(s, str)}
        self.slots.extend(r.key for r in reminders if r.key not in present)

    def records(self) -> Mapping[str, str] | None:
        """The records the summaries point into."""
        return self.history.records


def _after_checkpoint(slots: list[Entry | str], replaced: set[int]) -> list[Entry | str]:
    """Drop the replaced entries; reminders that sat among them move to just after the summary."""
    first_kept = next(
        (n for n, s in enumerate(slots) if isinstance(s, Entry) and id(s) not in replaced),
        len(slots),
    )
    moved = [s for s in slots[:first_kept] if isinstance(s, str)]
    return [*moved, *slots[first_kept:]]
