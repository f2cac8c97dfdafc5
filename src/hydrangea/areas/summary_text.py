"""The text of a conversation summary: each pointer spelled out exactly once.

A conversation summary stays in the cached prefix for the rest of the session (and a rollup
carries all of them), so its text must not repeat itself.
:meth:`StructuredSummary.render <hydrangea.asof.StructuredSummary.render>` already writes each
pointer once (a record with a note on its own line, the others on one ``also:`` line), so
:func:`summary_text` is that rendering; it stays the one name the areas use for it.
"""

from __future__ import annotations

from hydrangea.asof.summary import StructuredSummary

__all__ = ["summary_text"]


def summary_text(summary: StructuredSummary) -> str:
    """``summary`` as text, each pointer written once (``summary.render()``); deterministic,
    and :func:`~hydrangea.asof.summary.parse_pointers` reads the pointers back."""
    return summary.render()
