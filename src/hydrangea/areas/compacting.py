"""CompactingConversation: keeps a chain of CompactionArea segments registered with a CoopContext.

It is not an area itself: it is the object the harness talks to. It registers the first segment,
forwards user turns and replies to the current one, and after a checkpoint registers the
successor segment before queuing the next user turn, so the next ``render()`` first reclaims the
compacted segment (promoting its summary) and then renders the new turn after the summary.

Summary rollup (``rollup_tokens``)
----------------------------------

Promoted summaries belong to no area, so without a rollup they stay in the prefix for good: after
many checkpoints the prefix holds many summaries. With ``rollup_tokens=N`` the conversation
carries its summaries itself (see :mod:`hydrangea.areas.rollup`): a
:class:`~hydrangea.areas.rollup.SummaryRegionArea` registered just before each segment renders
them ahead of the segment's first turn, each checkpoint reclaims it with the segment and the next
one renders the same summaries plus the new one (the same bytes: the cached prefix survives), and
once the summaries added since the last rollup reach ``N`` tokens, the next checkpoint replaces
them all (and the previous rollup) by one merged :class:`~hydrangea.asof.StructuredSummary`. The
merged summaries are stored as records and named among the pointers. In this mode a checkpoint
made by :meth:`route` starts the next segment at once, so the summaries are back in the Context at
the next render even before another user turn; after calling ``checkpoint()`` on a segment
yourself, read :attr:`CompactingConversation.current` before the next render.

Checkpoints inside tool loops (``in_loops=True``)
-------------------------------------------------

A segment normally checks its size only when a reply that calls no tool is routed, so a long tool
loop keeps every tool output of the loop in the request until the model answers. With
``in_loops=True``, hand each model reply to :meth:`CompactingConversation.push_reply` (instead of
``Context.push_back`` plus :meth:`~CompactingConversation.route`) and each tool result to
:meth:`CompactingConversation.user`. The reply is always pushed right after the request that
produced it (its reasoning is bound to that request: see "Prefix binding" in the docs). When a
reply that calls a tool arrives and the segment has reached its threshold, that exchange is a
safe point: once :meth:`~CompactingConversation.user` has brought the results of all its calls,
the segment, this exchange included, is checkpointed, the CoopContext renders (the collector
detaches the segment from the tail, which takes every later reasoning block with it, and the
summary takes its place) and the next request starts from the summary. Everything before the
segment is untouched, as at any checkpoint.

It needs a rollup (``rollup_tokens``): the summary region renders in that render, ahead of the
turns that follow, so they lie inside the reclaimable tail of the next checkpoint (a promoted
summary belongs to no area). It is for a harness that runs the tools itself and queues their
results as user turns; a :class:`~hydrangea.areas.ToolLoopArea` anchored to the segment would
retire with it in the middle of its loop.

Provider compaction (``compaction="provider"`` or ``"auto"``)
------------------------------------------------------------

Anthropic (threshold compaction) and OpenAI Responses (``compact_threshold``) can compact the
conversation on the server. With ``compaction="provider"`` the conversation asks for that
instead of checkpointing itself: pass :attr:`CompactingConversation.features` to
``Context.request(features=...)``; once the input reaches ``threshold_tokens`` the provider
answers with a compaction inside its reply, :meth:`~CompactingConversation.push_reply` (or
``push_back`` then :meth:`~CompactingConversation.route`) pushes it, and the Context starts
later requests there (see "Provider compaction" in the prefix-binding guide). The segment never
checkpoints, every turn is still kept in the record store, and
:attr:`~CompactingConversation.provider_compactions` names the records each compaction took out
of the requests (the provider's summary is its own and holds no pointers). ``"auto"`` is
``"provider"`` where the provider has server compaction and ``"library"`` (the default, the
library's own summaries) elsewhere. Rollups and ``in_loops`` belong to the library's own.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from hydrangea.areas.compaction import CompactionArea
from hydrangea.areas.conversation import check_reply
from hydrangea.areas.errors import AreaUsageError
from hydrangea.areas.rollup import CarriedSummary, SummaryRegionArea, carried_summary, roll_up
from hydrangea.asof.counting import ApproxTokenCounter, TokenCounter
from hydrangea.asof.records import InMemoryRecordStore, RecordStore
from hydrangea.asof.summarizers import Summarizer
from hydrangea.asof.summary import StructuredSummary
from hydrangea.context.area import AreaLifeState
from hydrangea.context.boundary import CompactionBoundary
from hydrangea.coop.coop_context import CoopContext
from hydrangea.errors import RequestOptionError
from hydrangea.message import Message, Role, ToolCallPart, ToolResultPart
from hydrangea.providers.features import RequestFeature

__all__ = ["CompactingConversation", "CompactionMode", "ProviderCompaction"]

CompactionMode = Literal["library", "provider", "auto"]
"""Who compacts: the library's own summaries, the provider's server, or the provider where it
can (see the module documentation)."""


@dataclass(frozen=True, slots=True)
class ProviderCompaction:
    """One compaction the provider made: where requests start since, and the records of the
    turns it took out of them (still in the record store and in the Context)."""

    boundary: CompactionBoundary
    pointers: tuple[str, ...]


class CompactingConversation:
    """A conversation made of :class:`CompactionArea` segments over one CoopContext."""

    __slots__ = (
        "_awaited",
        "_carried",
        "_coop",
        "_counter",
        "_current",
        "_detail",
        "_in_loops",
        "_name",
        "_native",
        "_provider",
        "_records",
        "_regions",
        "_rollup",
        "_rollups",
        "_segments",
    )

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
        rollup_tokens: int | None = None,
        rollup_detail: Literal["full", "headlines"] = "full",
        in_loops: bool = False,
        compaction: CompactionMode = "library",
    ) -> None:
        """Create the first segment and register it with ``coop``.

        ``rollup_tokens`` turns the summary rollup on (see the module documentation): the size
        the summaries added since the last rollup must reach for the next checkpoint to merge
        the whole summary region into one summary. ``None`` (the default) promotes each summary
        once and never reclaims it. ``rollup_detail="headlines"`` makes a rollup carry one
        headline and pointer per merged summary instead of all their facts (each merged summary
        stays a record; give the model :func:`~hydrangea.areas.recall.recall_tool`).
        ``in_loops=True`` lets :meth:`push_reply` checkpoint inside tool loops too (see the
        module documentation); it needs ``rollup_tokens``. ``compaction`` chooses who
        compacts at ``threshold_tokens``: ``"library"`` (its own summaries), ``"provider"``
        (the provider's server: pass :attr:`features` to each request) or ``"auto"`` (the
        provider where it has server compaction).
        """
        if rollup_detail not in ("full", "headlines"):
            raise AreaUsageError(
                f"rollup_detail must be 'full' or 'headlines', got {rollup_detail!r}"
            )
        if rollup_tokens is not None and rollup_tokens < 1:
            raise AreaUsageError(f"rollup_tokens must be positive, got {rollup_tokens}")
        if in_loops and rollup_tokens is None:
            raise AreaUsageError(
                "in_loops=True needs rollup_tokens: the summary region must render ahead of the "
                "reply that follows a checkpoint, so the next checkpoint reclaims that reply too"
            )
        if compaction not in ("library", "provider", "auto"):
            raise AreaUsageError(
                f"compaction must be 'library', 'provider' or 'auto', got {compaction!r}"
            )
        adapter = coop.context.adapter
        try:
            native = (
                None if compaction == "library" else adapter.native_compaction(threshold_tokens)
            )
        except RequestOptionError as exc:
            raise AreaUsageError(
                f"threshold_tokens={threshold_tokens} does not suit {adapter.gateway.value}'s "
                f"server compaction ({exc}): raise it, or use compaction='library'"
            ) from exc
        if compaction == "provider" and native is None:
            raise AreaUsageError(
                f"{adapter.gateway.value} has no server compaction: use compaction='library' "
                "(the library's own summaries) or 'auto'"
            )
        if native is not None and (rollup_tokens is not None or in_loops):
            raise AreaUsageError(
                "rollup_tokens and in_loops shape the library's own checkpoints; with the "
                "provider's compaction there are none: leave them out or use "
                "compaction='library'"
            )
        self._native: RequestFeature | None = native
        self._provider: list[ProviderCompaction] = []
        self._coop = coop
        self._name = name
        self._rollup = rollup_tokens
        self._detail = rollup_detail
        self._in_loops = in_loops
        self._awaited: set[str] = set()  # in loops: the calls whose results end a safe point
        self._rollups = 0
        self._carried: tuple[CarriedSummary, ...] = ()
        self._regions: list[SummaryRegionArea] = []
        self._counter: TokenCounter = counter if counter is not None else ApproxTokenCounter()
        self._records: RecordStore = records if records is not None else InMemoryRecordStore()
        self._current = CompactionArea(  # (the provider compacts: the segment never does)
            threshold_tokens=threshold_tokens if native is None else sys.maxsize,
            summarizer=summarizer,
            records=self._records,
            counter=self._counter,
            clock=clock,
            name=name,
            promotes=rollup_tokens is None,
        )
        coop.register(self._current)
        self._segments: list[CompactionArea] = [self._current]

    @property
    def features(self) -> tuple[RequestFeature, ...]:
        """The request options to pass to ``Context.request(features=...)``: the provider's
        server compaction at ``threshold_tokens``, or none when the library compacts."""
        return () if self._native is None else (self._native,)

    @property
    def compaction(self) -> Literal["library", "provider"]:
        """Who compacts this conversation (``"auto"`` resolved)."""
        return "library" if self._native is None else "provider"

    @property
    def provider_compactions(self) -> tuple[ProviderCompaction, ...]:
        """The provider's compactions so far, oldest first, each with the records of the
        turns it took out of the requests (noted when the reply after it is routed)."""
        self._note_compactions()
        return tuple(self._provider)

    def _note_compactions(self) -> None:
        """Name the records each new provider compaction of the Context covers: every turn
        routed before it that an earlier one did not cover."""
        found = self._coop.context.compactions
        del self._provider[len(found) :]  # (a detach took some back)
        if len(found) == len(self._provider):
            return
        covered = {pointer for done in self._provider for pointer in done.pointers}
        ids = tuple(i for seg in self._segments for i in seg.record_ids if i not in covered)
        for boundary in found[len(self._provider) :]:
            self._provider.append(ProviderCompaction(boundary, ids))
            ids = ()

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

    @property
    def rollup_tokens(self) -> int | None:
        """The rollup setting (``None``: no rollup)."""
        return self._rollup

    @property
    def rollups(self) -> int:
        """How many rollups have happened."""
        return self._rollups

    @property
    def carried(self) -> tuple[CarriedSummary, ...]:
        """With a rollup, the summaries the prefix holds now (or will hold from the next render),
        oldest first; empty without a rollup."""
        return self._carried

    @property
    def regions(self) -> tuple[SummaryRegionArea, ...]:
        """Every summary region area registered so far, oldest first."""
        return tuple(self._regions)

    @property
    def last_reply_text(self) -> str:
        """The text of the newest reply routed to any segment (``""`` before the first)."""
        for segment in reversed(self._segments):
            if any(message.role is Role.assistant for message in segment.transcript):
                return segment.last_reply_text
        return ""

    def user(self, turn: str | Message) -> StructuredSummary | None:
        """Queue a user turn on the current segment (starting the next one after a checkpoint).

        With ``in_loops=True``, the turn that brings the results of every call of a reply
        :meth:`push_reply` found due for a checkpoint completes the exchange; the segment, that
        exchange included, is then compacted at once (rendered, summarized, collected), so the
        next request starts from the summary. Returns that checkpoint's summary, else ``None``.
        """
        self.current.user(turn)
        awaited = self._awaited
        if not awaited or not isinstance(turn, Message):
            return None
        awaited.difference_update(
            part.call_id for part in turn.parts if isinstance(part, ToolResultPart)
        )
        if awaited:
            return None
        self._coop._render()  # the results join the segment: the exchange is complete
        segment = self.current
        if not (segment.checkpoint_due and not segment.pending and segment.record_ids):
            return None
        summary = segment.checkpoint()
        replies = segment.replies_this_turn
        self._advance()
        self._current.continue_turn(replies)
        self._coop._render()  # the collector detaches the segment; the summary takes its place
        return summary

    def route(self, reply: Message) -> StructuredSummary | None:
        """Route a model reply to the current segment; the summary if it caused a checkpoint
        (with the provider's compaction: always ``None``; see :attr:`provider_compactions`)."""
        self._note_compactions()  # (the reply holding a compaction is kept: it is sent)
        segment = self.current
        segment.route(reply)
        if segment.summary is not None and self._rollup is not None:
            self._advance()  # carry the summaries at the next render, turn or no turn
        return segment.summary

    @property
    def in_loops(self) -> bool:
        """Whether :meth:`push_reply` checkpoints inside tool loops."""
        return self._in_loops

    def push_reply(self, output: object, reply: Message) -> StructuredSummary | None:
        """Push model output into the Context and route it: ``output`` is what the provider
        sent (given to ``Context.push_back`` unchanged), ``reply`` the same reply as a
        :class:`~hydrangea.message.Message`. Returns the summary of a checkpoint it caused.

        The reply is always pushed right after what the model saw (its reasoning is bound to
        that request). With ``in_loops=True``, a reply that calls a tool, arriving when the
        segment has reached its threshold with no user turn queued, marks a safe point: once
        :meth:`user` brings the results of all its calls, the segment (this exchange included)
        is compacted before the next request. Otherwise this is ``push_back`` followed by
        :meth:`route`. Output ``push_back`` refuses raises its error and is neither pushed nor
        routed.
        """
        check_reply(reply, "push_reply()")
        segment = self.current
        calls = {part.id for part in reply.parts if isinstance(part, ToolCallPart)}
        self._coop.context.push_back(output)
        routed = self.route(reply)
        if self._in_loops and calls and segment.checkpoint_due and not segment.pending:
            self._awaited = calls  # compacted once their results are in (see :meth:`user`)
        return routed

    def _advance(self) -> None:
        done = self._current
        nxt = done.successor()
        if self._rollup is not None:
            carried = self._region_after(carried_summary(done, self._counter))
            region = SummaryRegionArea(carried, anchor=nxt)
            self._coop.register(region)  # before the segment: it renders ahead of its turns
            self._carried = carried
            self._regions.append(region)
        self._coop.register(nxt)
        self._current = nxt
        self._segments.append(nxt)

    def _region_after(self, new: CarriedSummary) -> tuple[CarriedSummary, ...]:
        """The region after a checkpoint: the new summary added, or everything rolled up."""
        assert self._rollup is not None
        base = self._carried[:1] if self._carried and self._carried[0].merged else ()
        added = self._carried[len(base) :]
        if not added or sum(part.tokens for part in added) < self._rollup:
            return (*self._carried, new)
        self._rollups += 1
        merged = roll_up(
            [*self._carried, new],
            number=self._rollups,
            name=self._name,
            records=self._records,
            counter=self._counter,
            headlines=self._detail == "headlines",
        )
        return (merged,)

    def __repr__(self) -> str:
        rollup = "" if self._rollup is None else f", {len(self._carried)} carried summaries"
        return f"CompactingConversation({len(self._segments)} segments{rollup}, {self._current!r})"
