"""Structured summaries, the summarizer protocols and the model-free :class:`ExtractiveSummarizer`.

A :class:`StructuredSummary` keeps facts, decisions and open questions apart, and names the record
ids it stands for. Summarizing summaries never re-reads their text: :meth:`StructuredSummary.merge`
unions the fields, so nothing a previous round kept is cut.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
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
    "quoted",
]

POINTERS_PREFIX = "pointers: "
"""The line of a rendered summary that lists its record ids, as a JSON array of strings."""

_SENTENCE_END = re.compile(r"[.!?。！？](?=\s|$)")


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
                lines.append(_bullets(entries))
        lines.append(POINTERS_PREFIX + json.dumps(list(self.pointers), ensure_ascii=False))
        return "\n".join(lines)

    @classmethod
    def merge(cls, summaries: Iterable[StructuredSummary]) -> StructuredSummary:
        """One summary holding every entry of ``summaries``: each field is the union of theirs,
        in order of first appearance, without duplicates."""
        parts = list(summaries)
        # The parts are validated models already: their fields are tuples of str.
        return cls.model_construct(
            facts=_union(s.facts for s in parts),
            decisions=_union(s.decisions for s in parts),
            open_questions=_union(s.open_questions for s in parts),
            pointers=_union(s.pointers for s in parts),
        )


def _union(fields: Iterable[Sequence[str]]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(chain.from_iterable(fields)))


_MARK = "\x00\x01\x02"


def _bullets(entries: Sequence[str]) -> str:
    """``entries`` as ``- entry`` lines, a multi-line entry indented under its bullet."""
    joined = _MARK.join(entries)
    if joined.count(_MARK) != len(entries) - 1:  # an entry holds the mark itself
        return "\n".join("- " + entry.replace("\n", "\n  ") for entry in entries)
    # The mark overlaps no shifted copy of itself, so each occurrence is one that was joined.
    return "- " + joined.replace("\n", "\n  ").replace(_MARK, "\n- ")


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


def quoted(text: str) -> str:
    """``json.dumps(text, ensure_ascii=False)``, without the call for plain printable text."""
    if text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'  # nothing JSON would escape
    return json.dumps(text, ensure_ascii=False)


def first_sentence(text: str, *, limit: int = 280) -> str:
    """The first sentence of ``text``: up to the first line break or sentence end.

    Longer than ``limit`` characters, it is cut and ends with an ellipsis. Empty text gives
    ``"(empty)"``.
    """
    stripped = text.strip()
    end = stripped.find("\n")
    line = stripped if end < 0 else stripped[:end].rstrip()  # it starts with no whitespace
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
        return f"{first_sentence(item.content, limit=self.limit)} (record {quoted(item.item_id)})"

    def facts(self, items: Sequence[ContextItem]) -> list[str]:
        """:meth:`fact` of each of ``items``, in order (the same text, in one loop)."""
        limit = self.limit
        search = _SENTENCE_END.search
        found: list[str] = []
        append = found.append
        for item in items:
            line = item.content.strip()
            end = line.find("\n")
            if end >= 0:
                line = line[:end].rstrip()  # as first_sentence: the stripped first line
            match = search(line)
            sentence = line[: match.end()] if match else line
            if len(sentence) > limit:
                sentence = sentence[: limit - 1].rstrip() + "…"
            item_id = item.item_id
            label = (
                f'"{item_id}"'
                if item_id.isprintable() and '"' not in item_id and "\\" not in item_id
                else quoted(item_id)
            )
            append(f"{sentence or '(empty)'} (record {label})")
        return found

    def summarize(self, items: Sequence[ContextItem]) -> StructuredSummary:
        """One fact per plain item and the merged fields of every summary item."""
        return self.summarize_known(items, {})

    def summarize_known(
        self, items: Sequence[ContextItem], facts: Mapping[str, str]
    ) -> StructuredSummary:
        """Like :meth:`summarize`, reusing ``facts`` (item id to :meth:`fact`, as extracted
        earlier from the same items) instead of extracting them again.

        The result equals ``StructuredSummary.merge`` over one part per item.
        """
        if [i.summary for i in items].count(None) == len(items):  # no summary item among them
            get = facts.get
            return StructuredSummary.model_construct(  # tuples of str, as validation makes
                facts=_union([[get(i.item_id) or self.fact(i) for i in items]]),
                pointers=_union([[i.item_id for i in items]]),
            )
        parts: list[StructuredSummary] = []
        for item in items:
            if item.summary is not None:
                parts.append(item.summary)
            else:
                fact = facts.get(item.item_id) or self.fact(item)
                parts.append(StructuredSummary(facts=(fact,), pointers=(item.item_id,)))
        return StructuredSummary.merge(parts)

    def __repr__(self) -> str:
        return f"ExtractiveSummarizer(limit={self.limit})"
