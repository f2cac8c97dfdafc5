"""Compaction checkpoints over an append-only history (the library's policy, modelled locally).

The history is: the system prompt, then the summaries promoted so far (each an immutable message
that never changes again), then the conversation since the last checkpoint. Between checkpoints
the conversation only grows at the tail. As in the library's ``CompactionArea``, a checkpoint
happens only at the end of a model turn (the model answered without calling a tool) once the
conversation since the last checkpoint has reached ``threshold`` tokens: everything of it up to
that answer is replaced by one summary whose pointers lead to records holding those messages in
full, and the new user request follows the summary. Earlier summaries stay where they are, so the
cached prefix up to the last summary survives the checkpoint.

With ``rollup`` (the library's ``rollup_tokens``): once the summaries added since the last rollup
reach ``rollup`` tokens, the next checkpoint replaces all the summaries and the new one by one
merged digest (every fact and pointer kept), as the library's summary rollup does.
"""

from __future__ import annotations

from hydrangea.message import Message, Role

from .render import Renderer
from .strategy import Entry, ends_model_turn
from .summaries import Digest, digest
from .transcript import Turn

__all__ = ["CheckpointHistory"]


class CheckpointHistory:
    """System prompt, promoted summaries, and the conversation since the last checkpoint."""

    def __init__(
        self, system_prompt: str, renderer: Renderer, threshold: int, rollup: int | None = None
    ) -> None:
        if threshold < 1:
            raise ValueError("the compaction threshold must be positive")
        if rollup is not None and rollup < 1:
            raise ValueError("the rollup size must be positive")
        self.rollup = rollup
        self.digests: list[Digest] = []
        self.merged = False  # whether the first summary is a rollup
        self.rollups = 0
        self.system = Message(role=Role.system, content=system_prompt)
        self.renderer = renderer
        self.threshold = threshold
        self.summaries: list[Message] = []
        self.entries: list[Entry] = []
        self.records: dict[str, str] = {}
        self.checkpoints = 0
        self._tokens = 0

    def append(self, turn: Turn) -> list[Entry]:
        """Take in a turn's events (checkpointing first if due); return the entries replaced."""
        new = [Entry(turn.index, n, message) for n, message in enumerate(turn.events)]
        replaced: list[Entry] = []
        if ends_model_turn(turn):
            answer, rest = new[0], new[1:]
            self._add([answer])
            if self._tokens >= self.threshold:
                replaced = self._checkpoint()
            self._add(rest)
        else:
            self._add(new)
        return replaced

    def _add(self, entries: list[Entry]) -> None:
        self.entries.extend(entries)
        self._tokens += sum(self.renderer.tokens(entry.message) for entry in entries)

    def _checkpoint(self) -> list[Entry]:
        old = self.entries
        summary, records = digest([(e.turn, e.position, e.message) for e in old], pointers=True)
        for key, text in records:
            self.records[key] = text
        loose = self.summaries[1:] if self.merged else self.summaries
        due = sum(self.renderer.tokens(message) for message in loose)
        if self.rollup is not None and loose and due >= self.rollup:
            parts = [*self.digests, summary]
            summary = Digest(
                parts[0].first_turn,
                parts[-1].last_turn,
                tuple(dict.fromkeys(f for part in parts for f in part.facts)),
                tuple(dict.fromkeys(p for part in parts for p in part.pointers)),
            )
            self.digests, self.summaries = [], []
            self.merged = True
            self.rollups += 1
        self.digests.append(summary)
        self.summaries.append(Message(role=Role.user, content=summary.render()))
        self.entries = []
        self._tokens = 0
        self.checkpoints += 1
        return old
