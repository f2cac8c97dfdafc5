"""This library's policy modelled locally, as a cross-check of :mod:`.real_library`.

* The history is append-only between checkpoints: each turn's events go at the tail.
* At the end of a model turn, once the conversation since the last checkpoint has reached
  ``threshold`` tokens, a checkpoint replaces it by a structured summary whose pointers lead to
  records (see :mod:`.checkpoints`); earlier summaries are not touched, except that with a
  ``rollup`` size a checkpoint merges them all into one once enough have accumulated.
* What was sent is history: after the turn's events, the turn's visible reminders are appended
  to the history, and stay where they were sent. With ``resend="each_episode"`` every visible
  reminder is appended again in every turn; with ``"when_changed"`` a reminder is appended only
  when the history holds no sending of its current text (first shown, text changed, or a
  checkpoint took its sending with the conversation it sat in). Reminders are not summarized
  and do not count toward the threshold (they are not the conversation's turns).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from hydrangea.message import Message

from .accounting import Request
from .checkpoints import CheckpointHistory
from .render import Renderer
from .strategy import Entry, check_budget, reminder_message
from .transcript import Transcript, Turn

__all__ = ["LibraryModel"]


class LibraryModel:
    """The library's context policy in a few lines (see the module docstring)."""

    def __init__(
        self,
        transcript: Transcript,
        renderer: Renderer,
        budget: int,
        *,
        threshold: int,
        rollup: int | None = None,
        resend: Literal["each_episode", "when_changed"] = "each_episode",
    ) -> None:
        self.name = f"library policy (local model, resend {resend.replace('_', ' ')})"
        self.renderer = renderer
        self.budget = budget
        self.resend = resend
        self.history = CheckpointHistory(transcript.system_prompt, renderer, threshold, rollup)
        self.slots: list[Entry | tuple[str, str, Message]] = []  # entries and sent reminders

    @property
    def rollups(self) -> int:
        """How many summary rollups happened."""
        return self.history.rollups

    def step(self, turn: Turn) -> Request:
        """Append the turn's events (checkpointing when due), then the reminders it sends."""
        history = self.history
        before = len(history.entries)
        if history.append(turn):  # a checkpoint: the conversation (reminders in it) is gone
            self.slots = []
            before = 0
        self.slots.extend(history.entries[before:])
        in_history = {(slot[0], slot[1]) for slot in self.slots if isinstance(slot, tuple)}
        for reminder in turn.reminders:
            version = (reminder.key, reminder.text)
            if self.resend == "each_episode" or version not in in_history:
                self.slots.append((*version, reminder_message(reminder)))
        body = [slot.message if isinstance(slot, Entry) else slot[2] for slot in self.slots]
        request = self.renderer.request_of([history.system, *history.summaries, *body])
        return check_budget(self.name, request, self.budget)

    def records(self) -> Mapping[str, str] | None:
        """The records the summaries point into."""
        return self.history.records
