"""This library's policy modelled locally, as a cross-check of :mod:`.real_library`.

* The history is append-only between checkpoints: each turn's events go at the tail.
* At the end of a model turn, once the conversation since the last checkpoint has reached
  ``threshold`` tokens, a checkpoint replaces it by a structured summary whose pointers lead to
  records (see :mod:`.checkpoints`); earlier summaries are not touched, except that with a
  ``rollup`` size a checkpoint merges them all into one once enough have accumulated.
* Reminders never enter the history: they are shown at the tail of the request, in the turns
  they are visible.
"""

from __future__ import annotations

from collections.abc import Mapping

from .accounting import Request
from .checkpoints import CheckpointHistory
from .render import Renderer
from .strategy import check_budget, reminder_messages
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
    ) -> None:
        self.name = "library policy (local model)"
        self.renderer = renderer
        self.budget = budget
        self.history = CheckpointHistory(transcript.system_prompt, renderer, threshold, rollup)

    @property
    def rollups(self) -> int:
        """How many summary rollups happened."""
        return self.history.rollups

    def step(self, turn: Turn) -> Request:
        """Append the turn's events (checkpointing when due) and add the reminders at the tail."""
        history = self.history
        history.append(turn)
        body = [entry.message for entry in history.entries]
        tail = reminder_messages(turn.reminders)
        request = self.renderer.request_of([history.system, *history.summaries, *body, *tail])
        return check_budget(self.name, request, self.budget)

    def records(self) -> Mapping[str, str] | None:
        """The records the summaries point into."""
        return self.history.records
