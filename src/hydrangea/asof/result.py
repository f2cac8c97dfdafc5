"""What a build returns and what it refuses: :class:`BuiltContext`, :class:`Compaction`,
:class:`Rejection` and :class:`RejectionReason`."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING

from hydrangea.asof.items import ContextItem, ItemKind
from hydrangea.message import Message

__all__ = ["BuiltContext", "Compaction", "Rejection", "RejectionReason", "content_sha256"]


class RejectionReason(StrEnum):
    """Why an item was kept out of the context: published after as_of, undated, or a duplicate
    id.

    Members and values are keelgate.context's (``AS_OF_VIOLATION = "as_of_violation"`` ...).
    The 0.1 spellings (``published_after_as_of``, ``undated``, ``duplicate_id``) still work at
    run time as aliases, names and values both; type checkers see only the UPPERCASE names.
    """

    AS_OF_VIOLATION = "as_of_violation"
    UNDATED = "undated"
    DUPLICATE = "duplicate"
    if not TYPE_CHECKING:  # 0.1 spellings: aliases, hidden from type checkers
        published_after_as_of = "as_of_violation"
        undated = "undated"
        duplicate_id = "duplicate"

    @classmethod
    def _missing_(cls, value: object) -> RejectionReason | None:
        return _OLD_VALUES.get(value) if isinstance(value, str) else None


_OLD_VALUES = {
    "published_after_as_of": RejectionReason.AS_OF_VIOLATION,
    "duplicate_id": RejectionReason.DUPLICATE,
}


def content_sha256(content: str) -> str:
    """Hex SHA-256 of ``content`` encoded as UTF-8 (lone surrogates passed through)."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Rejection:
    """A refused item. Deliberately carries a hash, never the content."""

    item_id: str
    reason: RejectionReason
    origin: str
    published_at: datetime | None
    as_of: datetime
    content_sha256: str


@dataclass(frozen=True, slots=True)
class Compaction:
    """A record that several context items were replaced by one summary item.

    The summary points back to the full records: ``source_ids`` are the items this build
    replaced, and each of them is in the builder's record store.
    """

    summary_id: str
    source_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BuiltContext:
    """The result of building a context.

    ``messages`` are what to send. ``items`` are the items they show, in rendered order,
    including the summary items compaction made. ``tokens`` is exactly
    ``sum(counter.count(m.text) for m in messages)`` and never exceeds ``token_budget``.
    ``compactions`` and ``dropped`` account for every admitted item that is not shown in full:
    a compaction's summary names each of its ``source_ids``; ``dropped`` (ids, least important
    first) are the items too many to name, which the request still covers with its index line
    (how many, which time span, that the record store holds them). ``rejections`` are the
    refusals recorded by the builder.
    """

    messages: tuple[Message, ...]
    items: tuple[ContextItem, ...]
    tokens: int
    token_budget: int
    compactions: tuple[Compaction, ...]
    dropped: tuple[str, ...]
    rejections: tuple[Rejection, ...]

    @property
    def summary_items(self) -> tuple[ContextItem, ...]:
        """The summary items compaction produced in this build (ready to feed a later build)."""
        made = {c.summary_id for c in self.compactions}
        return tuple(i for i in self.items if i.kind is ItemKind.SUMMARY and i.item_id in made)
