"""Context items: what a builder assembles, with trust, publication time and provenance."""

from __future__ import annotations

import hashlib
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from hydrangea.asof.errors import InvalidContextItemError
from hydrangea.asof.summary import StructuredSummary, library_error
from hydrangea.text import check_encodable

__all__ = ["HARNESS_KINDS", "ContextItem", "ItemKind", "Provenance", "Trust"]


class ItemKind(StrEnum):
    """What a context item is: system text, an instruction, the task, an observation, memory,
    a document or a summary.

    The members are keelgate.context's UPPERCASE names. The lowercase spellings of version 0.1
    (``ItemKind.system`` ...) still work at run time as aliases of the same members; type
    checkers see only the UPPERCASE names.
    """

    SYSTEM = "system"
    INSTRUCTION = "instruction"
    TASK = "task"
    OBSERVATION = "observation"
    MEMORY = "memory"
    DOCUMENT = "document"
    SUMMARY = "summary"
    if not TYPE_CHECKING:  # 0.1 spellings: aliases, hidden from type checkers
        system = "system"
        instruction = "instruction"
        task = "task"
        observation = "observation"
        memory = "memory"
        document = "document"
        summary = "summary"


HARNESS_KINDS: frozenset[ItemKind] = frozenset(
    {ItemKind.SYSTEM, ItemKind.INSTRUCTION, ItemKind.TASK}
)
"""The kinds the harness itself authors; only these may be trusted."""


class Trust(StrEnum):
    """Whether a context item may be treated as an instruction (TRUSTED) or only as data
    (UNTRUSTED)."""

    TRUSTED = "trusted"
    UNTRUSTED = "untrusted"


class Provenance(BaseModel):
    """Where an item came from. ``origin`` is a stable label; ``ref`` is a record id."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    origin: str
    ref: str = ""
    uri: str | None = None

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise library_error(exc, InvalidContextItemError) from exc

    @model_validator(mode="after")
    def _encodable(self) -> Provenance:
        check_encodable(self.origin, "provenance.origin")
        check_encodable(self.ref, "provenance.ref")
        if self.uri is not None:
            check_encodable(self.uri, "provenance.uri")
        return self


class ContextItem(BaseModel):
    """One piece of context: its content, trust level, publication time and provenance.

    Only harness-authored kinds (system, instruction, task) can be trusted; anything from outside
    is untrusted by type. ``published_at`` must carry a timezone when given (times are compared
    in UTC). ``summary`` is set on the ``summary`` items that compaction produces. As in
    keelgate.context, ``trust`` defaults to untrusted, ``published_at`` to ``None`` and
    ``priority`` to 0 (higher survives longer when the budget forces a choice).

    Invalid fields raise :class:`InvalidContextItemError` (a ``ValueError``); text that cannot
    be encoded as UTF-8 (a lone surrogate) raises :class:`~hydrangea.errors.UnencodableTextError`.

    >>> ContextItem.harness(ItemKind.TASK, "Summarize the filings.", item_id="task").trust
    <Trust.TRUSTED: 'trusted'>
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    item_id: str = Field(min_length=1)
    kind: ItemKind
    content: str
    trust: Trust = Trust.UNTRUSTED
    published_at: datetime | None = None
    provenance: Provenance
    priority: int = 0
    pointers: tuple[str, ...] = ()
    summary: StructuredSummary | None = None

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise library_error(exc, InvalidContextItemError) from exc

    @model_validator(mode="after")
    def _consistent(self) -> ContextItem:
        check_encodable(self.item_id, "item_id")
        check_encodable(self.content, f"content of item {self.item_id!r}")
        for pointer in self.pointers:
            check_encodable(pointer, f"a pointer of item {self.item_id!r}")
        if self.published_at is not None and self.published_at.utcoffset() is None:
            raise ValueError(
                f"item {self.item_id!r}: published_at {self.published_at.isoformat()} has no "
                "timezone; it must be timezone-aware, such as datetime(..., tzinfo=UTC)"
            )
        if self.trust is Trust.TRUSTED and self.kind not in HARNESS_KINDS:
            raise ValueError(
                f"item {self.item_id!r}: a {self.kind.value} item carries outside text and "
                "cannot be TRUSTED; only system, instruction and task items authored by the "
                "harness can"
            )
        if self.summary is not None and self.kind is not ItemKind.SUMMARY:
            raise ValueError(
                f"item {self.item_id!r}: only a summary item carries a StructuredSummary"
            )
        return self

    @property
    def is_trusted(self) -> bool:
        """Whether the item is trusted (harness-authored)."""
        return self.trust is Trust.TRUSTED

    @property
    def content_sha256(self) -> str:
        """Hex SHA-256 of the content encoded as UTF-8 (what a :class:`Rejection` carries)."""
        return hashlib.sha256(self.content.encode("utf-8")).hexdigest()

    @classmethod
    def harness(
        cls,
        kind: ItemKind,
        content: str,
        *,
        item_id: str,
        priority: int = 1000,
        origin: str = "harness",
    ) -> ContextItem:
        """A trusted, harness-authored item (system prompt, instructions, the operator task).

        Raises :class:`InvalidContextItemError` for any other kind.
        """
        return _build(
            item_id=item_id,
            kind=kind,
            content=content,
            trust=Trust.TRUSTED,
            published_at=None,
            provenance={"origin": origin},
            priority=priority,
        )

    @classmethod
    def outside(
        cls,
        kind: ItemKind,
        content: str,
        *,
        item_id: str,
        published_at: datetime | None,
        origin: str,
        ref: str = "",
        uri: str | None = None,
        priority: int = 0,
    ) -> ContextItem:
        """An untrusted item carrying outside text: tool output, memory, a document.

        It is untrusted whatever ``kind`` it claims. A naive ``published_at`` raises
        :class:`InvalidContextItemError`; ``None`` is allowed here but refused by the builder.
        """
        return _build(
            item_id=item_id,
            kind=kind,
            content=content,
            trust=Trust.UNTRUSTED,
            published_at=published_at,
            provenance={"origin": origin, "ref": ref, "uri": uri},
            priority=priority,
        )


def _build(**fields: object) -> ContextItem:
    try:
        return ContextItem.model_validate(fields)
    except ValidationError as exc:
        raise library_error(exc, InvalidContextItemError) from exc
