"""What a build returns and what it refuses: :class:`BuiltContext`, :class:`Compaction`,
:class:`Rejection` and :class:`RejectionReason`."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from hydrangea.asof.items import ContextItem, ItemKind
from hydrangea.message import Message

__all__ = ["BuiltContext", "Compaction", "Rejection", "RejectionReason", "content_sha256"]


class RejectionReason(StrEnum):
    """Why an item was kept out of the context: published after as_of, undated, or a duplicate
    id."""

    published_after_as_of = "published_after_as_of"
    undated = "undated"
    duplicate_id = "duplicate_id"


def content_sha256(content: str) -> str:
    """Hex SHA-256 of ``content`` encoded as UTF-8 (lone surrogates passed through)."""
    return hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()


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
    ``compactions`` and ``dropped`` (ids, least important first) account for every admitted item
    that is not shown in full; ``rejections`` are the refusals recorded by the builder.
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
        return tuple(i for i in self.items if i.kind is ItemKind.summary and i.item_id in made)
