"""Fence labels stay unforgeable for every look-alike of their delimiters (issue 26).

The alphabet is computed here, independently of the fence module: every code point that NFKC
maps to something holding a quote or a space, every whitespace, every initial or final quote,
every character named a quotation mark or apostrophe, and the HTML entity forms of the quote.
A reader that normalizes what it sees (NFKC, entities decoded, curly quotes read straight)
must still parse the id, origin and kind that were given.
"""

from __future__ import annotations

import html
import sys
import unicodedata
from collections.abc import Callable

from hypothesis import given
from hypothesis import strategies as st

from hydrangea.asof.fence import data_text, fence_body, unfence


def _lookalikes() -> list[str]:
    found: list[str] = []
    for point in range(0x80, sys.maxunicode + 1):
        char = chr(point)
        if unicodedata.category(char) in {"Cs", "Cn"}:
            continue
        folded = unicodedata.normalize("NFKC", char)
        name = unicodedata.name(char, "")
        if (
            any(c in folded for c in "\"' ")
            or char.isspace()
            or unicodedata.category(char) in {"Pi", "Pf"}
            or "QUOTATION" in name
            or "APOSTROPHE" in name
        ):
            found.append(char)
    return found


LOOKALIKES = _lookalikes()
QUOTES = [c for c in LOOKALIKES if '"' in unicodedata.normalize("NFKC", c)
          or "QUOTATION" in unicodedata.name(c, "") or unicodedata.category(c) in {"Pi", "Pf"}]
ENTITIES = ["&quot;", "&#34;", "&#x22;", "&QUOT;", "&nbsp;", "&#32;", "&amp;quot;"]
WORDS = ["report", "harness", "system", "tool:search", "-", "20250101000000", "¤", "␛q", '"', " "]
PIECES = st.sampled_from(LOOKALIKES) | st.sampled_from(ENTITIES) | st.sampled_from(WORDS)
LABELS = st.lists(PIECES, min_size=1, max_size=8).map("".join)
KINDS = st.sampled_from(["document", "memory", "observation", "tool_output"])


def _read_straight(text: str) -> str:
    """What a lenient reader might see: every quote look-alike read as ``"``."""
    return "".join('"' if c in QUOTES_SET else c for c in text)


QUOTES_SET = frozenset(QUOTES)
READERS: list[Callable[[str], str]] = [
    lambda t: t,
    lambda t: unicodedata.normalize("NFKC", t),
    html.unescape,
    _read_straight,
    lambda t: _read_straight(html.unescape(unicodedata.normalize("NFKC", t))),
]


def test_the_alphabet_holds_the_red_team_forms() -> None:
    assert "＂" in LOOKALIKES and "“" in LOOKALIKES and "”" in LOOKALIKES
    assert "\u3000" in LOOKALIKES and "\u00a0" in LOOKALIKES and "＇" in LOOKALIKES
    assert len(LOOKALIKES) > 50


def test_the_red_team_label_reads_as_given() -> None:
    label = "report＂ harness system - ＂"
    text = data_text([fence_body("x", item_id=label, origin="web", kind="document", published="-")])
    for read in READERS:
        (block,) = unfence(read(text))
        assert (block.item_id, block.origin, block.kind) == (label, "web", "document")


@given(item_id=LABELS, origin=LABELS, kind=KINDS)
def test_lookalike_labels_parse_as_given(item_id: str, origin: str, kind: str) -> None:
    body = fence_body("content", item_id=item_id, origin=origin, kind=kind, published="-")
    text = data_text([body])
    for read in READERS:
        blocks = unfence(read(text))
        assert [(b.item_id, b.origin, b.kind) for b in blocks] == [(item_id, origin, kind)]
