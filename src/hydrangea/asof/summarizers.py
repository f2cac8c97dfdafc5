"""The summarizer protocols and the model-free :class:`ExtractiveSummarizer`.

A summarizer compacts :class:`~hydrangea.asof.items.ContextItem` s into a
:class:`~hydrangea.asof.summary.StructuredSummary`; the builder calls it while it compacts to a
budget (``ContextBuilder(..., summarizer=...)``). Model-backed summarizers are in
:mod:`hydrangea.asof.llm`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from hydrangea.asof.items import ContextItem
from hydrangea.asof.summary import StructuredSummary, first_sentence

__all__ = ["AsyncSummarizer", "ExtractiveSummarizer", "Summarizer"]


@runtime_checkable
class Summarizer(Protocol):
    """Compacts items into a structured summary.

    A summary of untrusted text stays untrusted, and the pointers to the originals are not the
    summarizer's to forge: the builder overwrites them with the ids of the items it replaced.
    """

    def summarize(self, items: Sequence[ContextItem]) -> StructuredSummary:
        """A summary of ``items``."""
        ...


@runtime_checkable
class AsyncSummarizer(Protocol):
    """A summarizer that must be awaited (a model call); used by ``ContextBuilder.abuild``."""

    async def asummarize(self, items: Sequence[ContextItem]) -> StructuredSummary:
        """A summary of ``items``."""
        ...


class ExtractiveSummarizer:
    """Deterministic and model-free: the first sentence of each item, with a pointer.

    Each item's first sentence (:meth:`note`) is one of the summary's ``facts``, as in
    keelgate's ExtractiveSummarizer, and also the note of its record's pointer, so the text
    says which record each sentence comes from (:meth:`StructuredSummary.render` writes a fact
    that is already a note once). An item that already carries a :class:`StructuredSummary` (a
    summary from an earlier round) is merged, not re-read.
    """

    __slots__ = ("limit",)

    def __init__(self, *, limit: int = 280) -> None:
        if limit < 2:
            raise ValueError(f"limit must be at least 2 characters, got {limit}")
        self.limit = limit

    def note(self, item: ContextItem) -> str:
        """The note this summarizer extracts from one plain item: its first sentence."""
        return first_sentence(item.content, limit=self.limit)

    def notes(self, items: Sequence[ContextItem]) -> list[str]:
        """:meth:`note` of each of ``items``, in order."""
        limit = self.limit
        return [first_sentence(item.content, limit=limit) for item in items]

    def summarize(self, items: Sequence[ContextItem]) -> StructuredSummary:
        """One note per plain item and the merged fields of every summary item."""
        parts: list[StructuredSummary] = []
        for item in items:
            if item.summary is not None:
                parts.append(item.summary)
            else:
                note = self.note(item)
                parts.append(StructuredSummary.model_construct(
                    facts=(note,) if note else (), decisions=(), open_questions=(),
                    pointers=(item.item_id,), notes=(note,),
                ))
        return StructuredSummary.merge(parts)

    def __repr__(self) -> str:
        return f"ExtractiveSummarizer(limit={self.limit})"
