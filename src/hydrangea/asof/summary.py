"""Structured summaries, the summarizer protocols and the model-free :class:`ExtractiveSummarizer`.

A :class:`StructuredSummary` keeps facts, decisions and open questions apart, and names the record
ids it stands for. Summarizing summaries never re-reads their text: :meth:`StructuredSummary.merge`
unions the fields, so nothing a previous round kept is cut.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from hydrangea.asof.items import ContextItem

__all__ = [
    "POINTERS_PREFIX",
    "AsyncSummarizer",
    "ExtractiveSummarizer",
    "StructuredSummary",
    "Summarizer",
    "first_sentence",
    "parse_pointers",
]

POINTERS_PREFIX = "pointers: "
"""The line of a rendered summary that lists its record ids, as a JSON array of strings."""

_SENTENCE_END = re.compile(r"[.!?。！？](?=\s|$)")


def _dedup(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(values))


class StructuredSummary(BaseModel):
    """A compacted summary: facts, decisions and open questions, plus pointers back to the full
    records it replaced.

    >>> s = StructuredSummary(facts=("Rates rose.",), pointers=("doc-1",))
    >>> print(s.render())
    summary of 1 record
    facts:
    - Rates rose.
    pointers: ["doc-1"]
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    facts: tuple[str, ...] = ()
    decisions: tuple[str, ...] = ()
    open_questions: tuple[str, ...] = ()
    pointers: tuple[str, ...] = ()

    def render(self) -> str:
        """Deterministic text form, with the pointers spelled out.

        Sections that are empty are left out; the last line is always ``pointers: [...]``, a JSON
        array of the record ids (see :func:`parse_pointers`). A multi-line entry is indented so
        that it stays under its bullet.
        """
        count = len(self.pointers)
        lines = [f"summary of {count} record{'' if count == 1 else 's'}"]
        for title, entries in (
            ("facts", self.facts),
            ("decisions", self.decisions),
            ("open questions", self.open_questions),
        ):
            if entries:
                lines.append(f"{title}:")
                lines.extend("- " + entry.replace("\n", "\n  ") for entry in entries)
        lines.append(POINTERS_PREFIX + json.dumps(list(self.pointers), ensure_ascii=False))
        return "\n".join(lines)

    @classmethod
    def merge(cls, summaries: Iterable[StructuredSummary]) -> StructuredSummary:
        """One summary holding every entry of ``summaries``: each field is the union of theirs,
        in order of first appearance, without duplicates."""
        parts = list(summaries)
        return cls(
            facts=_dedup(f for s in parts for f in s.facts),
            decisions=_dedup(d for s in parts for d in s.decisions),
            open_questions=_dedup(q for s in parts for q in s.open_questions),
            pointers=_dedup(p for s in parts for p in s.pointers),
        )


def parse_pointers(rendered: str) -> tuple[str, ...]:
    """The record ids listed by a summary's :meth:`~StructuredSummary.render` output.

    Raises ``ValueError`` if ``rendered`` has no pointers line.
    """
    for line in reversed(rendered.split("\n")):
        if line.startswith(POINTERS_PREFIX):
            values = json.loads(line[len(POINTERS_PREFIX) :])
            if isinstance(values, list) and all(isinstance(v, str) for v in values):
                return tuple(values)
    raise ValueError("the text carries no summary pointers line")


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


def first_sentence(text: str, *, limit: int = 280) -> str:
    """The first sentence of ``text``: up to the first line break or sentence end.

    Longer than ``limit`` characters, it is cut and ends with an ellipsis. Empty text gives
    ``"(empty)"``.
    """
    stripped = text.strip()
    line = stripped.split("\n", 1)[0].strip()
    match = _SENTENCE_END.search(line)
    sentence = line[: match.end()] if match else line
    if len(sentence) > limit:
        sentence = sentence[: limit - 1].rstrip() + "…"
    return sentence or "(empty)"


class ExtractiveSummarizer:
    """Deterministic and model-free: the first sentence of each item, with a pointer.

    Each fact reads ``<first sentence> (record "<id>")``. An item that already carries a
    :class:`StructuredSummary` (a summary from an earlier round) is merged, not re-read.
    """

    __slots__ = ("limit",)

    def __init__(self, *, limit: int = 280) -> None:
        if limit < 2:
            raise ValueError(f"limit must be at least 2 characters, got {limit}")
        self.limit = limit

    def fact(self, item: ContextItem) -> str:
        """The fact this summarizer extracts from one plain item."""
        quoted = json.dumps(item.item_id, ensure_ascii=False)
        return f"{first_sentence(item.content, limit=self.limit)} (record {quoted})"

    def summarize(self, items: Sequence[ContextItem]) -> StructuredSummary:
        """One fact per plain item and the merged fields of every summary item."""
        parts: list[StructuredSummary] = []
        for item in items:
            if item.summary is not None:
                parts.append(item.summary)
            else:
                parts.append(
                    StructuredSummary(facts=(self.fact(item),), pointers=(item.item_id,))
                )
        return StructuredSummary.merge(parts)

    def __repr__(self) -> str:
        return f"ExtractiveSummarizer(limit={self.limit})"
