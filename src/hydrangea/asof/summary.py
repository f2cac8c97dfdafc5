"""Structured summaries: their fields, their text form and the pointers read back from it.

The summarizers that make them are in :mod:`hydrangea.asof.summarizers`.

A :class:`StructuredSummary` keeps facts, decisions and open questions apart, names the record
ids it stands for, and may carry a note for each of them (what that record says, in a line).
Summarizing summaries never re-reads their text: :meth:`StructuredSummary.merge` unions the
fields, so nothing a previous round kept is cut.

Its text form (:meth:`StructuredSummary.render`) lists every pointer exactly once: a record with
a note on its own line (``- doc-1: Rates rose.``), the others on one line (``also: doc-2
doc-3``). This module is the one source of that format: the builder's planner prices entries
with :func:`entry_line`, :func:`pointer_word` and :func:`summary_overhead`, never by
re-deriving the format.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from hydrangea.errors import UnencodableTextError
from hydrangea.text import check_encodable

__all__ = [
    "ALSO_PREFIX",
    "RECORDS_PREFIX",
    "SHORT_NOTE",
    "StructuredSummary",
    "entry_line",
    "first_sentence",
    "heading",
    "label",
    "library_error",
    "parse_pointers",
    "pointer_word",
    "quoted",
    "shorten",
    "summary_overhead",
]

RECORDS_PREFIX = "records:"
"""Begins the line of pointers when no record has a note."""
ALSO_PREFIX = "also:"
"""Begins the line of the pointers without a note, after the noted ones."""
SHORT_NOTE = 60
"""The length a note is cut to when the planner shortens it one step."""

_SENTENCE_END = re.compile(r"[.!?。！？](?=\s|$)")
_SECTIONS = (("facts", "facts"), ("decisions", "decisions"), ("open questions", "open_questions"))


def library_error(exc: ValidationError, kind: type[Exception]) -> Exception:
    """The library error for a failed validation of a public model: the
    :class:`~hydrangea.errors.UnencodableTextError` a validator raised (or pydantic's own
    refusal of a lone surrogate), else a ``kind`` listing every problem."""
    for error in exc.errors():
        cause = (error.get("ctx") or {}).get("error")
        if isinstance(cause, UnencodableTextError):
            return cause
        if error["type"] == "string_unicode":
            where = ".".join(str(p) for p in error["loc"]) or "a field"
            return UnencodableTextError(
                f"{where} holds a lone surrogate; text must encode as UTF-8"
            )
    problems = "; ".join(
        f"{'.'.join(str(p) for p in error['loc']) or 'value'}: {error['msg']}"
        if error["type"] != "value_error" else str(error["msg"]).removeprefix("Value error, ")
        for error in exc.errors()
    )
    return kind(problems)


def quoted(text: str) -> str:
    """``json.dumps(text, ensure_ascii=False)``, without the call for plain printable text."""
    if text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'  # nothing JSON would escape
    return json.dumps(text, ensure_ascii=False)


def label(pointer: str) -> str:
    """A pointer as a summary writes it: bare when it is printable, has no whitespace and does
    not start with a quote; JSON-quoted otherwise."""
    if pointer.isascii():  # printable ASCII holds no whitespace but the space
        if pointer and pointer.isprintable() and " " not in pointer and pointer[0] != '"':
            return pointer
    elif pointer.isprintable() and pointer[0] != '"' and not any(
        char.isspace() for char in pointer
    ):
        return pointer
    return json.dumps(pointer, ensure_ascii=False)


def heading(count: int) -> str:
    """The first line of a summary of ``count`` records."""
    return f"summary of {count} record{'' if count == 1 else 's'} (full text in the record store)"


def entry_line(pointer: str, note: str) -> str:
    """One noted record: ``- <label>: <note>`` (continuation lines indented), with its
    newline."""
    if "\n" in note:
        note = note.replace("\n", "\n  ")
    return f"- {label(pointer)}: {note}\n"


def pointer_word(pointer: str) -> str:
    """One pointer on the ``also:``/``records:`` line, with the space before it."""
    return " " + label(pointer)


def summary_overhead(*, noted: bool, bare: bool) -> str:
    """The fixed text of a summary (heading, newline, the pointer line's prefix) apart from its
    entries, for pricing: ``noted`` when some record has a note, ``bare`` when some has none."""
    text = heading(10) + "\n"
    if bare:
        text += (ALSO_PREFIX if noted else RECORDS_PREFIX) + "\n"
    return text


def _bullets(entries: Sequence[str]) -> list[str]:
    return ["- " + entry.replace("\n", "\n  ") for entry in entries]


class StructuredSummary(BaseModel):
    """A compacted summary: facts, decisions and open questions, plus pointers back to the full
    records it replaced, and optionally a note per pointer (``notes[i]`` belongs to
    ``pointers[i]``; empty means the pointer alone). The pointers are kept in the order the
    text lists them, those with a note first.

    >>> s = StructuredSummary(facts=("Rates rose.",), pointers=("doc-1", "doc-2"),
    ...                       notes=("The Fed raised rates.", ""))
    >>> print(s.render())
    summary of 2 records (full text in the record store)
    - doc-1: The Fed raised rates.
    also: doc-2
    facts:
    - Rates rose.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    facts: tuple[str, ...] = ()
    decisions: tuple[str, ...] = ()
    open_questions: tuple[str, ...] = ()
    pointers: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise library_error(exc, ValueError) from exc

    @model_validator(mode="before")
    @classmethod
    def _noted_first(cls, data: Any) -> Any:
        """Pointers are kept in the order the text lists them: those with a note first."""
        if isinstance(data, dict) and data.get("notes"):
            pointers, notes = data.get("pointers", ()), data["notes"]
            if isinstance(pointers, Sequence) and isinstance(notes, Sequence) and len(
                pointers
            ) == len(notes):
                pairs = list(zip(pointers, notes, strict=True))
                ordered = [p for p in pairs if p[1]] + [p for p in pairs if not p[1]]
                data = {**data, "pointers": tuple(p for p, _ in ordered),
                        "notes": tuple(n for _, n in ordered)}
        return data

    @model_validator(mode="after")
    def _checked(self) -> StructuredSummary:
        if self.notes and len(self.notes) != len(self.pointers):
            raise ValueError(
                f"notes must be empty or one per pointer: {len(self.notes)} notes for "
                f"{len(self.pointers)} pointers"
            )
        for name in ("facts", "decisions", "open_questions", "pointers", "notes"):
            for text in getattr(self, name):
                check_encodable(text, f"a summary's {name}")
        return self

    def note_of(self, pointer: str) -> str:
        """The note for ``pointer`` (``""`` when it has none or is not a pointer)."""
        if not self.notes:
            return ""
        try:
            return self.notes[self.pointers.index(pointer)]
        except ValueError:
            return ""

    def render(self) -> str:
        """Deterministic text form, with the pointers spelled out, each exactly once.

        The heading says how many records the summary stands for; then each noted record on its
        own line, then the others on one ``also:`` line (``records:`` when none has a note),
        then the facts (those that are not already a note), decisions and open questions that
        are not empty. A multi-line entry is
        indented under its bullet. :func:`parse_pointers` reads the pointers back.
        """
        notes = self.notes or ("",) * len(self.pointers)
        lines = [heading(len(self.pointers))]
        lines.extend(
            entry_line(p, n)[:-1] for p, n in zip(self.pointers, notes, strict=True) if n
        )
        bare = [pointer_word(p) for p, n in zip(self.pointers, notes, strict=True) if not n]
        if bare:
            prefix = ALSO_PREFIX if len(bare) < len(self.pointers) else RECORDS_PREFIX
            lines.append(prefix + "".join(bare))
        for title, field in _SECTIONS:
            entries: tuple[str, ...] = getattr(self, field)
            if field == "facts" and entries:  # a fact that is a note stands by its pointer
                shown = set(notes)
                entries = tuple(e for e in entries if e not in shown)
            if entries:
                lines.append(f"{title}:")
                lines.extend(_bullets(entries))
        return "\n".join(lines)

    @classmethod
    def merge(cls, summaries: Iterable[StructuredSummary]) -> StructuredSummary:
        """One summary holding every entry of ``summaries``: each field is the union of theirs,
        in order of first appearance, without duplicates; a pointer keeps its first non-empty
        note (and the pointers with a note come first, as the text lists them)."""
        parts = list(summaries)
        notes: dict[str, str] = {}
        for part in parts:
            part_notes = part.notes or ("",) * len(part.pointers)
            for pointer, note in zip(part.pointers, part_notes, strict=True):
                if not notes.get(pointer):
                    notes[pointer] = note
        ordered = [p for p, n in notes.items() if n] + [p for p, n in notes.items() if not n]
        # The parts are validated models already: their fields are tuples of str.
        return cls.model_construct(
            facts=_union(s.facts for s in parts),
            decisions=_union(s.decisions for s in parts),
            open_questions=_union(s.open_questions for s in parts),
            pointers=tuple(ordered),
            notes=tuple(notes[p] for p in ordered) if any(notes.values()) else (),
        )


def _union(fields: Iterable[Sequence[str]]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(chain.from_iterable(fields)))


def _read_label(text: str, start: int, *, entry: bool = False) -> tuple[str, int]:
    """The label starting at ``text[start]`` and the index after it (in an ``entry`` line a
    bare label ends at the first ``": "``, on the pointer line at the next space)."""
    if text.startswith('"', start):
        value, end = json.JSONDecoder().raw_decode(text, start)
        if not isinstance(value, str):
            raise ValueError("a quoted pointer is not a string")
        return value, end
    if entry:
        end = text.find(": ", start)
        return (text[start:end], end) if end > start else (text[start:], len(text))
    end = start
    while end < len(text) and not text[end].isspace():
        end += 1
    return text[start:end], end


def parse_pointers(rendered: str) -> tuple[str, ...]:
    """The record ids a summary's :meth:`~StructuredSummary.render` output lists, in the
    order they are written (noted records first). Text before the heading line is skipped.

    Raises ``ValueError`` if ``rendered`` holds no summary heading.
    """
    lines = rendered.split("\n")
    starts = [n for n, line in enumerate(lines)
              if line.startswith("summary of ") and "record" in line]
    if not starts:
        raise ValueError("the text carries no summary heading")
    pointers: list[str] = []
    for line in lines[starts[0] + 1 :]:
        if line.startswith("  "):
            continue  # a note's continuation line
        if line.startswith("- "):
            pointer, end = _read_label(line, 2, entry=True)
            if not line.startswith(": ", end):
                raise ValueError(f"malformed summary entry {line!r}")
            pointers.append(pointer)
            continue
        for prefix in (ALSO_PREFIX, RECORDS_PREFIX):
            if line.startswith(prefix):
                index = len(prefix)
                while index < len(line):
                    if line[index] != " ":
                        raise ValueError(f"malformed pointer line {line!r}")
                    pointer, index = _read_label(line, index + 1)
                    pointers.append(pointer)
                break
        break  # the record entries end at the first other line
    return tuple(pointers)


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
    return shorten(sentence, limit) or "(empty)"


def shorten(note: str, limit: int) -> str:
    """``note`` cut to at most ``limit`` characters, ending with an ellipsis when cut."""
    if len(note) <= limit:
        return note
    return note[: limit - 1].rstrip() + "…"
