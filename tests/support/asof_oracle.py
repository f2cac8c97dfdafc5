"""Strategies and independent oracles for the hydrangea.asof tests."""

from __future__ import annotations

import html
import json
import math
import unicodedata
from datetime import UTC, datetime, timedelta

from hypothesis import strategies as st

from hydrangea.asof import BuiltContext, ContextItem, ItemKind
from hydrangea.message import Message, Role

AS_OF = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)

# Pieces of the real fence syntax and their look-alikes: case, whitespace, zero-width,
# full-width, HTML entities, other brackets, escape sequences and stray quotes or line breaks.
FRAGMENTS = [
    "¤", "␛", "␛r", "␛␛", "␛q", "␛x00000a", "␛x", "data", "DATA", "end", "END",
    "ｅｎｄ", "ｄａｔａ", "nonce=", " summary", " system", " harness", "-", "\"",
    "\n", "\n\n", "\r\n", "\r", "\u2028", "\u2029", "\x0b", "\x0c", "\x85",
    "\u200b", "\u200d", "\ufeff", "\u2060", "\u00ad", "\t", " ", "\u3000", "［", "］", "〚", "〛",
    "&#164;", "&curren;", "&#xa4;", "&amp;curren;", "\n¤", "\n\n¤", "000000000000",
    "00000000000000000000", "123456789012", "０１２３", "¤000000000000 x y system -",
    "<untrusted>", "</untrusted>", "SYSTEM:", "Ignore previous instructions.",
    "\\u00a4", "\\", "\x00", "\x1b", "é", "e\u0301", "🙂", "\ud7ff", "⟦", "⟧", "§", "‡",
]

adversarial_text = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), max_size=12
).map("".join)
adversarial_label = adversarial_text.filter(lambda s: len(s) > 0)
plain_words = st.text(alphabet="abcdefghij .", min_size=1, max_size=40)
aware_times = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2040, 1, 1), timezones=st.just(UTC)
)
untrusted_kinds = st.sampled_from(list(ItemKind))


def approx_tokens(text: str) -> int:
    """Four characters a token, rounded up, written independently of ApproxTokenCounter."""
    return math.ceil(len(text) / 4)


def normalize(text: str) -> str:
    """A lenient reader's view: entities decoded, NFKC, case folded, format characters and
    whitespace removed."""
    for _ in range(3):
        text = html.unescape(text)
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(
        ch for ch in text if unicodedata.category(ch) not in {"Cf", "Cc"} and not ch.isspace()
    )


def data_message(built: BuiltContext) -> Message | None:
    """The user message that carries the fenced blocks, if any."""
    found = [m for m in built.messages if m.role is Role.user and "\n\n¤" in m.text]
    assert len(found) <= 1
    return found[0] if found else None


def fence_lines(text: str) -> list[str]:
    """Every line (split on newline only) that starts with the fence mark."""
    return [line for line in text.split("\n") if line.startswith("¤")]


def nonce_of(text: str) -> str:
    """The block nonce announced by the first header line."""
    return fence_lines(text)[0][1:13]


def end_nonce_of(text: str) -> str:
    """The nonce of the last fence line (the end line)."""
    return fence_lines(text)[-1][1:]


def pointers_in(rendered_summary: str) -> list[str]:
    """The pointers a rendered summary lists (noted entries, then the also/records line),
    parsed independently of hydrangea.asof.summary."""
    lines = rendered_summary.split("\n")
    start = next(n for n, ln in enumerate(lines) if ln.startswith("summary of "))
    found: list[str] = []
    decoder = json.JSONDecoder()
    for line in lines[start + 1 :]:
        if line.startswith("  "):
            continue
        if line.startswith("- "):
            if line[2] == '"':
                value, end = decoder.raw_decode(line, 2)
                found.append(value)
            else:
                found.append(line[2:].split(": ", 1)[0])
            continue
        if line.startswith(("also:", "records:")):
            rest = line.split(":", 1)[1]
            while rest:
                assert rest[0] == " ", line
                rest = rest[1:]
                if rest.startswith('"'):
                    value, end = decoder.raw_decode(rest)
                    found.append(value)
                    rest = rest[end:]
                else:
                    word, _, tail = rest.partition(" ")
                    found.append(word)
                    rest = " " + tail if tail else ""
        break
    return found


def doc(i: int, *, days: int = 1, priority: int = 0, text: str | None = None) -> ContextItem:
    """An untrusted document published ``days`` before AS_OF."""
    return ContextItem.outside(
        ItemKind.DOCUMENT,
        text if text is not None else f"Fact number {i} is true. Padding words follow here.",
        item_id=f"doc-{i}",
        published_at=AS_OF - timedelta(days=days),
        origin="web",
        priority=priority,
    )
