"""CompactingConversation: keeps a chain of CompactionArea segments registered with a CoopContext.

It is not an area itself: it is the object the harness talks to. It registers the first segment,
forwards user turns and replies to the current one, and after a checkpoint registers the
successor segment before queuing the next user turn, so the next ``render()`` first reclaims the
compacted segment (promoting its summary) and then renders the new turn after the summary.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from hydrangea.areas.compaction import CompactionArea
from hydrangea.asof.counting import TokenCounter
from hydrangea.asof.records import InMemoryRecordStore, RecordStore
from hydrangea.asof.summary import StructuredSummary, Summarizer
from hydrangea.context.area import AreaLifeState
from hydrangea.coop.coop_context import CoopContext
from hydrangea.message import Message

__all__ = ["CompactingConversation"]


class CompactingConversation:
    """A conversation made of :class:`CompactionArea` segments over one CoopContext."""

    __slots__ = ("_coop", "_current", "_records", "_segments")

    def __init__(
        self,
        coop: CoopContext,
        *,
        threshold_tokens: int,
        summarizer: Summarizer | None = None,
        records: RecordStore | None = None,
        counter: TokenCounter | None = None,
        clock: Callable[[], datetime] | None = None,
        name: str = "conversation",
    ) -> None:
        """Create the first segment and register it with ``coop``."""
        self._coop = coop
        self._records: RecordStore = records if records is not None else InMemoryRecordStore()
        self._current = CompactionArea(
            threshold_tokens=threshold_tokens,
            summarizer=summarizer,
            records=self._records,
            counter=counter,
            clock=clock,
            name=name,
        )
        coop.register(self._current)
        self._segments: list[CompactionArea] = [self._current]

    @property
    def current(self) -> CompactionArea:
        """The segment taking turns now (anchor new per-turn areas to it).

        After a checkpoint, reading it starts the next segment (registered with the
        CoopContext), so an area anchored to it belongs to the turns that follow.
        """
        if self._current.life_state is AreaLifeState.retired:
            self._advance()
        return self._current

    @property
    def segments(self) -> tuple[CompactionArea, ...]:
        """Every segment so far, oldest first."""
        return tuple(self._segments)

    @property
    def records(self) -> RecordStore:
        """The store holding the full record of every turn."""
        return self._records

    @property
    def summaries(self) -> tuple[StructuredSummary, ...]:
        """The summaries made at the checkpoints so far, oldest first."""
        return tuple(s.summary for s in self._segments if s.summary is not None)

    def user(self, turn: str | Message) -> None:
        """Queue a user turn on the current segment (starting the next one after a checkpoint)."""
        self.current.user(turn)

    def route(self, reply: Message) -> StructuredSummary | None:
        """Route a model reply to the current segment; the summary if it caused a checkpoint."""
        segment = self.current
        segment.route(reply)
        return segment.summary

    def _advance(self) -> None:
        nxt = self._current.successor()
        self._coop.register(nxt)
        self._current = nxt
        self._segments.append(nxt)

    def __repr__(self) -> str:
        return f"CompactingConversation({len(self._segments)} segments, {self._current!r})"
