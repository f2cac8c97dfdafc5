"""The extractive digest shared by the summarizing strategies, and the pointer check.

A digest keeps the first sentence of every message it replaces (one fact per message) and, for
the library's strategy, the ids of the records that keep those messages in full. The
summarize-and-replace baseline uses the same facts without pointers and within a size cap, which
is what a common "summarize the history" step does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hydrangea.message import Message, ToolCallPart

__all__ = [
    "Digest",
    "digest",
    "first_sentence",
    "message_text",
    "reachable_texts",
    "record_id",
]

_MAX_FACT_CHARS = 160


def message_text(message: Message) -> str:
    """All the text of a message, tool calls included (name and arguments)."""
    chunks = [message.text]
    for part in message.parts:
        if isinstance(part, ToolCallPart):
            chunks.append(f"{part.name}({part.arguments})")
    return "\n".join(chunk for chunk in chunks if chunk)


def first_sentence(text: str) -> str:
    """The text up to its first full stop or line break, at most 160 characters."""
    line = text.strip().split("\n", 1)[0]
    stop = line.find(". ")
    sentence = line if stop < 0 else line[: stop + 1]
    return sentence[:_MAX_FACT_CHARS]


def record_id(turn: int, position: int) -> str:
    """The record id of the ``position``-th message of turn ``turn``."""
    return f"rec-t{turn:03d}-m{position}"


@dataclass(frozen=True, slots=True)
class Digest:
    """A structured summary: one fact per replaced message, and pointers to their records."""

    first_turn: int
    last_turn: int
    facts: tuple[str, ...]
    pointers: tuple[str, ...]

    def render(self) -> str:
        """Deterministic text; the pointers are spelled out when there are any."""
        lines = [f"Summary of turns {self.first_turn}-{self.last_turn}.", "Facts:"]
        lines.extend(f"- {fact}" for fact in self.facts)
        if self.pointers:
            lines.append("Full records: " + ", ".join(self.pointers))
        return "\n".join(lines)


def digest(
    entries: Sequence[tuple[int, int, Message]], *, pointers: bool
) -> tuple[Digest, list[tuple[str, str]]]:
    """Digest ``(turn, position, message)`` entries; also return the records to store."""
    if not entries:
        raise ValueError("nothing to summarize")
    facts: list[str] = []
    ids: list[str] = []
    records: list[tuple[str, str]] = []
    for turn, position, message in entries:
        text = message_text(message)
        facts.append(first_sentence(text))
        key = record_id(turn, position)
        ids.append(key)
        records.append((key, text))
    summary = Digest(entries[0][0], entries[-1][0], tuple(facts), tuple(ids) if pointers else ())
    return summary, records


_ID_SPLIT = re.compile(r"[^A-Za-z0-9_./:-]+")


def reachable_texts(final_text: str, records: Mapping[str, str] | None) -> list[str]:
    """The final request's text and every record that an id named in it leads to, followed
    through the records it reaches (as a model with the recall tool would read them).

    The text is split into id-like words (letters, digits and ``_./:-``); a record is reachable
    when its whole id is one of those words (or is one but for a trailing colon, as a summary
    entry ``- <id>: <note>`` writes it), so ``turn-5`` never matches ``turn-50``.
    """
    out = [final_text]
    if not records:
        return out
    seen: set[str] = set()
    frontier = [final_text]
    while frontier:
        words = set(_ID_SPLIT.split(frontier.pop()))
        words |= {word[:-1] for word in words if word.endswith(":")}  # "- <id>: <note>"
        for key in words & records.keys() - seen:
            seen.add(key)
            out.append(records[key])
            frontier.append(records[key])
    return out
