"""CompactionArea: a conversation segment that compacts itself at a checkpoint.

How compaction works with the collector
---------------------------------------

A conversation is a chain of segments. Each segment is a :class:`CompactionArea`: it renders the
user turns of its part of the conversation, so its EffectRange runs from its first user turn to
its latest one, and everything in between (model replies, retrieved documents, tool exchanges)
lies inside that range. Areas that belong to the segment's turns (an
:class:`~hydrangea.areas.AsOfArea`, a :class:`~hydrangea.areas.ToolLoopArea`) take the segment as
their ``anchor``: they stay retained until the segment retires, then retire with it.

The segment watches its size (:attr:`~hydrangea.areas.ConversationArea.tokens`: its range as
observed, plus what was rendered and routed since). The check runs when a reply that calls no
tool is routed, that is at the end of a model turn, never in the middle of one or of a tool loop
(a :class:`~hydrangea.areas.CompactingConversation` with ``in_loops=True`` also checkpoints
between two exchanges of a tool loop, before the next reply enters the Context; see
:meth:`~hydrangea.areas.CompactingConversation.push_reply`). When the size reaches
``threshold_tokens`` the **checkpoint** happens, once:

1. the summarizer condenses the segment's full records into a
   :class:`~hydrangea.asof.StructuredSummary`; its pointers are set to the record ids (never
   taken from the summarizer), and every pointer resolves in the record store; the message
   shows it with each record id written once (:mod:`hydrangea.areas.summary_text`);
2. the segment retires, and so do the areas anchored to it.

At the next ``CoopContext.render()`` the collector finds a tail made only of retired areas (the
segment, its anchored areas, and any older retired area behind them such as a one-shot notice),
detaches it from its earliest index to the end of the Context, and appends what
:meth:`CompactionArea.promote` returns: one fenced, untrusted message holding the summary. The
next segment (:meth:`CompactionArea.successor`, registered by
:class:`~hydrangea.areas.CompactingConversation`) then renders the new user turn after it.

What survives a checkpoint: everything before the segment's range (the system prompt and earlier
summaries: the cached prefix grows, it is never rewritten) and the new summary. What is
reclaimed: the segment's turns, the model replies among them and after them, and whatever the
anchored areas rendered. Between checkpoints nothing is reclaimed and nothing is summarized.

With ``promotes=False`` the segment promotes nothing: a
:class:`~hydrangea.areas.CompactingConversation` with a summary rollup carries the summaries in a
summary region ahead of the next segment instead (see :mod:`hydrangea.areas.rollup`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from hydrangea.areas.conversation import ConversationArea
from hydrangea.areas.errors import AreaUsageError
from hydrangea.areas.summary_text import summary_text
from hydrangea.asof.counting import TokenCounter
from hydrangea.asof.fence import data_text, fence_body, published_label
from hydrangea.asof.items import ItemKind
from hydrangea.asof.layout import utc
from hydrangea.asof.records import InMemoryRecordStore, RecordStore
from hydrangea.asof.summarizers import ExtractiveSummarizer, Summarizer
from hydrangea.asof.summary import StructuredSummary
from hydrangea.context.area import AreaLifeState
from hydrangea.errors import ContextStateError
from hydrangea.message import Message, Role, ToolCallPart

__all__ = ["CompactionArea", "summary_message"]


def summary_message(
    heading: str,
    summary: StructuredSummary,
    *,
    item_id: str,
    origin: str,
    published: datetime,
) -> Message:
    """The user message that carries ``summary`` into the Context: a short notice, then one
    fenced, untrusted block holding ``heading`` and the summary's text
    (:func:`~hydrangea.areas.summary_text.summary_text`: each pointer written once).

    Deterministic: the same arguments give the same message (the fence's nonce is derived from
    the content), so a summary carried again renders to the same bytes.
    """
    text = f"{heading}\n{summary_text(summary)}"
    body = fence_body(
        text, item_id=item_id, origin=origin, kind=ItemKind.SUMMARY.value,
        published=published_label(published),
    )
    return Message(role=Role.user, content=data_text([body]))


class CompactionArea(ConversationArea):
    """A conversation segment that retires at a size checkpoint and promotes its summary.

    It takes user turns and routed replies like :class:`~hydrangea.areas.ConversationArea`
    (whose records it always keeps: ``records`` defaults to a fresh in-memory store). See the
    module documentation for how the checkpoint and the collector work together.
    """

    def __init__(
        self,
        *,
        threshold_tokens: int,
        summarizer: Summarizer | None = None,
        records: RecordStore | None = None,
        counter: TokenCounter | None = None,
        clock: Callable[[], datetime] | None = None,
        name: str = "conversation",
        segment: int = 1,
        first_turn: int = 1,
        promotes: bool = True,
    ) -> None:
        """``threshold_tokens`` is the size at which the checkpoint happens; ``segment`` numbers
        this segment in its conversation. With ``promotes=False`` :meth:`promote` returns nothing:
        the owner carries the summary into the Context itself (a
        :class:`~hydrangea.areas.CompactingConversation` with a rollup does)."""
        if threshold_tokens < 1:
            raise AreaUsageError(f"threshold_tokens must be positive, got {threshold_tokens}")
        if segment < 1:
            raise AreaUsageError(f"segment must be at least 1, got {segment}")
        super().__init__(
            name=name,
            records=records if records is not None else InMemoryRecordStore(),
            counter=counter,
            clock=clock,
            first_turn=first_turn,
        )
        self._threshold = threshold_tokens
        self._summarizer: Summarizer = (
            summarizer if summarizer is not None else ExtractiveSummarizer()
        )
        self._segment = segment
        self._promotes = promotes
        self._summary: StructuredSummary | None = None
        self._summary_message: Message | None = None
        self._summary_published: datetime | None = None

    @property
    def threshold_tokens(self) -> int:
        """The size at which the checkpoint happens."""
        return self._threshold

    @property
    def segment(self) -> int:
        """This segment's number in its conversation (1 for the first)."""
        return self._segment

    @property
    def promotes(self) -> bool:
        """Whether :meth:`promote` returns the summary message (see the constructor)."""
        return self._promotes

    @property
    def summary_id(self) -> str:
        """The id the summary carries in its fence (and as a record, when one is kept)."""
        return f"{self._name}/summary-{self._segment}"

    @property
    def origin(self) -> str:
        """The origin label of the summary's fence."""
        return f"{self._name}:compaction"

    @property
    def turn_span(self) -> tuple[int, int]:
        """The first and last turn numbers this segment covers (the first twice before any
        turn rendered)."""
        return self._first_turn, max(self._turn, self._first_turn)

    @property
    def summary_heading(self) -> str:
        """The heading written above the summary: which turns it stands for, and what its
        pointers are."""
        first, last = self.turn_span
        return (
            f"Conversation turns {first}-{last} ({self._name}, segment {self._segment}) were "
            "compacted into this summary. Each pointer is the id of a full record in the "
            "record store."
        )

    @property
    def summary_published(self) -> datetime | None:
        """The latest publication time of the records summarized; ``None`` before the
        checkpoint."""
        return self._summary_published

    @property
    def summary(self) -> StructuredSummary | None:
        """The summary made at the checkpoint; ``None`` before it."""
        return self._summary

    @property
    def summary_message(self) -> Message | None:
        """The message :meth:`promote` returns; ``None`` before the checkpoint."""
        return self._summary_message

    @property
    def checkpoint_due(self) -> bool:
        """Whether the size has reached the threshold (while still retained)."""
        return self._life is AreaLifeState.retain and self.tokens >= self._threshold

    def route(self, reply: Message) -> None:
        """Record a model reply; if it ends the model's turn (it calls no tool) and the segment
        has reached its threshold, run the checkpoint."""
        super().route(reply)
        ends_turn = not any(isinstance(part, ToolCallPart) for part in reply.parts)
        if ends_turn and self.checkpoint_due:
            self.checkpoint()

    @property
    def replies_this_turn(self) -> int:
        """How many replies were routed since the latest user turn rendered."""
        return self._replies_this_turn

    def continue_turn(self, replies: int) -> None:
        """Continue a turn its predecessor started: a checkpoint inside a tool loop hands the
        open turn over, so the replies routed here are numbered after the ``replies`` routed
        there (their record ids stay unique). Only before this segment renders or routes."""
        if self._transcript or self._turn != self._first_turn - 1:
            raise ContextStateError(f"{self!r} has already taken turns")
        if replies < 0:
            raise AreaUsageError(f"replies must not be negative, got {replies}")
        self._replies_this_turn = replies

    def checkpoint(self) -> StructuredSummary:
        """Summarize the segment's records and retire. Runs once; queued turns stay queued for
        :meth:`successor`. A segment with no records yet cannot be compacted."""
        self._require_open("checkpoint()")
        ids = self.record_ids
        if not ids:
            raise ContextStateError(f"{self!r} has no turns to compact yet")
        store = self._records
        assert store is not None  # always set by __init__
        items = [store.require(item_id) for item_id in ids]
        drafted = self._summarizer.summarize(items)
        summary = drafted.model_copy(update={"pointers": ids})
        latest = max((item.published_at for item in items if item.published_at is not None),
                     key=utc)
        message = summary_message(
            self.summary_heading,
            summary,
            item_id=self.summary_id,
            origin=self.origin,
            published=latest,
        )
        self._summary = summary
        self._summary_message = message
        self._summary_published = latest
        self._life = AreaLifeState.retired
        return summary

    def successor(self) -> CompactionArea:
        """The next segment: same settings and store, turn numbers continued, and the user turns
        that were queued here when the checkpoint ran handed over."""
        if self._life is not AreaLifeState.retired:
            raise ContextStateError(f"{self!r} has no successor before its checkpoint")
        nxt = CompactionArea(
            threshold_tokens=self._threshold,
            summarizer=self._summarizer,
            records=self._records,
            counter=self._counter,
            clock=self._clock,
            name=self._name,
            segment=self._segment + 1,
            first_turn=self._turn + 1,
            promotes=self._promotes,
        )
        nxt._pending.extend(self._pending)  # handed over as queued: nxt is registered next
        self._pending.clear()
        return nxt

    def promote(self) -> tuple[Message, ...]:
        """The fenced summary message (made at the checkpoint); nothing for a closed segment or
        when the segment does not promote (see the constructor)."""
        if self._summary_message is None or not self._promotes:
            return ()
        return (self._summary_message,)

    def __repr__(self) -> str:
        return (
            f"CompactionArea({self._name!r} segment {self._segment}, turn {self._turn}, "
            f"{self.tokens}/{self._threshold} tokens, {self._life.value})"
        )
