"""The text of a conversation summary: each pointer spelled out exactly once.

:meth:`StructuredSummary.render <hydrangea.asof.StructuredSummary.render>` writes every fact as
the summarizer made it, and :class:`~hydrangea.asof.ExtractiveSummarizer` ends each fact with
``(record "<id>")``: every record id then appears twice, after its fact and on the pointers line.
A conversation summary stays in the cached prefix for the rest of the session (and a rollup
carries all of them), so :func:`summary_text` writes such an ending as ``[n]``, ``n`` being the
pointer's position on the pointers line (counted from 1), and says so in its first line.

The form is deterministic (same summary, same text), the last line is the same
``pointers: [...]`` JSON array (:func:`~hydrangea.asof.summary.parse_pointers` reads it), and a
summary whose entries carry no such ending, or where shortening would not save anything, is
rendered exactly as ``render()`` renders it. An entry that already ends like ``[n]`` would read
as a reference, so then nothing is shortened.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from hydrangea.asof.summary import POINTERS_PREFIX, StructuredSummary, quoted

__all__ = ["REFERENCE_NOTE", "summary_text"]

REFERENCE_NOTE = " ([n] = the n-th pointer)"
"""Added to the first line of a summary text whose entries refer to pointers as ``[n]``."""

_RECORD_OPEN = " (record "
_REFERENCE = re.compile(r" \[[0-9]+\]\Z")

Sections = list[tuple[str, Sequence[str]]]


def _shortened(sections: Sections, pointers: Sequence[str]) -> Sections | None:
    """``sections`` with each ``(record "<pointer>")`` ending written ``[n]``; ``None`` when that
    would not make the text shorter, or when an entry already ends like ``[n]``."""
    if not pointers:
        return None
    position: dict[str, int] = {}
    for n, pointer in enumerate(pointers, 1):
        position.setdefault(quoted(pointer), n)
    out: Sections = []
    saved = 0
    for title, entries in sections:
        rewritten: list[str] = []
        for entry in entries:
            if _REFERENCE.search(entry):
                return None
            cut = entry.rfind(_RECORD_OPEN) if entry.endswith(")") else -1
            found = position.get(entry[cut + len(_RECORD_OPEN) : -1]) if cut >= 0 else None
            if found is None:
                rewritten.append(entry)
            else:
                short = f"{entry[:cut]} [{found}]"
                saved += len(entry) - len(short)
                rewritten.append(short)
        out.append((title, rewritten))
    return out if saved > len(REFERENCE_NOTE) else None


def _bullets(entries: Sequence[str]) -> str:
    return "\n".join("- " + entry.replace("\n", "\n  ") for entry in entries)


def summary_text(summary: StructuredSummary) -> str:
    """``summary`` as text, each pointer written once (see the module documentation)."""
    sections: Sections = [
        (title, entries)
        for title, entries in (
            ("facts", summary.facts),
            ("decisions", summary.decisions),
            ("open questions", summary.open_questions),
        )
        if entries
    ]
    shortened = _shortened(sections, summary.pointers)
    if shortened is None:
        return summary.render()
    count = len(summary.pointers)
    lines = [f"summary of {count} record{'' if count == 1 else 's'}{REFERENCE_NOTE}"]
    for title, entries in shortened:
        lines.append(f"{title}:")
        lines.append(_bullets(entries))
    lines.append(POINTERS_PREFIX + json.dumps(list(summary.pointers), ensure_ascii=False))
    return "\n".join(lines)
