"""Summary rollup: the summaries a compacting conversation keeps in its prefix, and their merge.

Without a rollup, every checkpoint of a :class:`~hydrangea.areas.CompactingConversation` promotes
one more summary and nothing ever reclaims it (a promoted message belongs to no area): after many
checkpoints the prefix holds many summaries, each with its own notice, fence and heading. With a
rollup (``CompactingConversation(..., rollup_tokens=N)``) the summaries are *carried* instead:

* The summaries in the prefix form the **summary region**. A :class:`SummaryRegionArea`, registered
  just before each segment and anchored to it, renders the region once, ahead of the segment's
  first turn. Its EffectRange therefore covers the summaries, and it retires with its segment.
* At a checkpoint the collector reclaims the segment *and* the region area in front of it (one
  tail of retired components), and the segment promotes nothing. The next region area renders
  the same summaries again, plus the new one: the same messages give the same bytes, so the
  provider's cached prefix is untouched. Between rollups the prefix only grows.
* When the summaries added since the last rollup reach ``rollup_tokens``, the next checkpoint
  **rolls up** instead: the region becomes one summary, :meth:`StructuredSummary.merge` of all of
  them and of the new one (facts, decisions, open questions and pointers all kept; nothing is
  summarized again). Every summary merged away is kept as a record of its own (kind ``summary``)
  and its id is added to the pointers, so each pointer still resolves in the record store. This
  is one cache break at the rollup, from the first summary on; the checkpoint breaks the cache
  at its segment anyway, so a rollup costs the rewrite of the region, not an extra break.

With ``rollup_detail="headlines"`` a rollup carries one headline and one pointer per summary it
merges instead of every fact: each merged summary is a record (its own pointers lead to the full
records), so every fact stays reachable through the recall tool (:mod:`hydrangea.areas.recall`)
while the carried region stays small however long the session runs.

Areas registered after a segment render after its region; an area that is not anchored to the
segments and renders between the collection and the region (a ring position before the region
area) would land in front of the summaries and break the cached prefix once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from hydrangea.areas._common import message_tokens
from hydrangea.areas.compaction import CompactionArea, summary_message
from hydrangea.asof.counting import TokenCounter
from hydrangea.asof.items import ContextItem, ItemKind, Provenance, Trust
from hydrangea.asof.records import RecordStore
from hydrangea.asof.summary import StructuredSummary
from hydrangea.context.area import AreaFlowState, AreaLifeState, ContextAreaImplementation
from hydrangea.errors import ContextStateError
from hydrangea.message import Message
from hydrangea.providers.native import NativeContent

__all__ = ["CarriedSummary", "SummaryRegionArea", "carried_summary", "roll_up"]


@dataclass(frozen=True, slots=True)
class CarriedSummary:
    """One summary of the region: the summary, the message that shows it, and what it covers.

    ``tokens`` is the message's size (its JSON, counted with the conversation's counter);
    ``merged`` is how many earlier summaries it stands for (0 for a segment's own summary).
    """

    summary: StructuredSummary
    message: Message
    item_id: str
    origin: str
    heading: str
    published: datetime
    first_turn: int
    last_turn: int
    first_segment: int
    last_segment: int
    tokens: int
    merged: int = 0

    def record(self) -> ContextItem:
        """This summary as a record for the store: an untrusted ``summary`` item carrying the
        structured summary, its pointers, and its text (heading and rendered summary)."""
        return ContextItem(
            item_id=self.item_id,
            kind=ItemKind.SUMMARY,
            content=f"{self.heading}\n{self.summary.render()}",
            trust=Trust.UNTRUSTED,
            published_at=self.published,
            provenance=Provenance(origin=self.origin),
            priority=0,
            pointers=self.summary.pointers,
            summary=self.summary,
        )


def carried_summary(segment: CompactionArea, counter: TokenCounter) -> CarriedSummary:
    """The summary a segment made at its checkpoint, ready to be carried in the region."""
    summary, message, published = (
        segment.summary,
        segment.summary_message,
        segment.summary_published,
    )
    if summary is None or message is None or published is None:
        raise ContextStateError(f"{segment!r} has no summary before its checkpoint")
    first, last = segment.turn_span
    return CarriedSummary(
        summary=summary,
        message=message,
        item_id=segment.summary_id,
        origin=segment.origin,
        heading=segment.summary_heading,
        published=published,
        first_turn=first,
        last_turn=last,
        first_segment=segment.segment,
        last_segment=segment.segment,
        tokens=message_tokens(message, counter),
    )


def roll_up(
    parts: Sequence[CarriedSummary],
    *,
    number: int,
    name: str,
    records: RecordStore,
    counter: TokenCounter,
    headlines: bool = False,
) -> CarriedSummary:
    """One summary standing for ``parts`` (oldest first): their merge, with their ids added to
    the pointers. Each part is stored in ``records`` first, so every pointer resolves.

    With ``headlines``, the summary holds one headline and one pointer per part instead of
    their merge: the parts' own records keep their facts and pointers."""
    if not parts:
        raise ContextStateError("a rollup needs at least one summary")
    for part in parts:
        records.put(part.record())
    first, last = parts[0], parts[-1]
    merged = sum(max(part.merged, 1) for part in parts)
    ids = StructuredSummary(pointers=tuple(part.item_id for part in parts))
    if headlines:
        summary = ids.model_copy(update={"facts": tuple(_headline(part) for part in parts)})
        heading = (
            f"Conversation turns {first.first_turn}-{last.last_turn} ({name}, segments "
            f"{first.first_segment}-{last.last_segment}) were compacted into this summary: one "
            "headline per earlier summary. Each pointer is the record of that summary; recall "
            "it to read its facts and its own pointers to the full records."
        )
    else:
        summary = StructuredSummary.merge([*(part.summary for part in parts), ids])
        heading = (
            f"Conversation turns {first.first_turn}-{last.last_turn} ({name}, segments "
            f"{first.first_segment}-{last.last_segment}) were compacted into this summary, which "
            f"merges {merged} earlier summaries. Each pointer is the id of a full record in the "
            "record store (the summaries merged here are records too)."
        )
    published = max(part.published for part in parts)
    item_id = f"{name}/rollup-{number}"
    origin = f"{name}:rollup"
    message = summary_message(heading, summary, item_id=item_id, origin=origin, published=published)
    return CarriedSummary(
        summary=summary,
        message=message,
        item_id=item_id,
        origin=origin,
        heading=heading,
        published=published,
        first_turn=first.first_turn,
        last_turn=last.last_turn,
        first_segment=first.first_segment,
        last_segment=last.last_segment,
        tokens=message_tokens(message, counter),
        merged=merged,
    )


_HEADLINE_CHARS = 72


def _headline(part: CarriedSummary) -> str:
    """``turns a-b: <the part's first fact, cut short>``."""
    fact = part.summary.facts[0] if part.summary.facts else ""
    fact = " ".join(fact.split())
    if len(fact) > _HEADLINE_CHARS:
        fact = fact[: _HEADLINE_CHARS - 1].rstrip() + "…"
    return f"turns {part.first_turn}-{part.last_turn}: {fact}".rstrip(": ")


class SummaryRegionArea:
    """Renders the summary region once, ahead of its segment; retires when the segment does.

    It promotes nothing: when it is reclaimed, the next region area renders the summaries again
    (see the module documentation).
    """

    __slots__ = ("_anchor", "_carried", "_rendered")

    def __init__(
        self, carried: Sequence[CarriedSummary], *, anchor: ContextAreaImplementation
    ) -> None:
        """``carried`` are the region's summaries, oldest first; ``anchor`` is the segment."""
        self._carried = tuple(carried)
        self._anchor = anchor
        self._rendered = False

    @property
    def carried(self) -> tuple[CarriedSummary, ...]:
        """The summaries this area renders."""
        return self._carried

    @property
    def rendered(self) -> bool:
        """Whether the summaries have been rendered."""
        return self._rendered

    @property
    def life_state(self) -> AreaLifeState:
        """Retired once its segment is."""
        return self._anchor.life_state

    @property
    def flow_state(self) -> AreaFlowState:
        """Always ``yielded``."""
        return AreaFlowState.yielded

    def observe(self, context: Sequence[NativeContent]) -> None:
        """Nothing to watch: the region never changes."""

    def render(self) -> list[Message]:
        """The summaries' messages the first time, nothing afterwards."""
        if self._rendered:
            return []
        self._rendered = True
        return [part.message for part in self._carried]

    def promote(self) -> tuple[Message, ...]:
        """Nothing: the next region carries the summaries."""
        return ()

    def gc_prologue(self) -> None:
        """No resources to release."""

    def __repr__(self) -> str:
        state = "rendered" if self._rendered else "pending"
        return f"SummaryRegionArea({len(self._carried)} summaries, {state})"
