"""Context items: what a builder assembles, with trust, publication time and provenance."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from hydrangea.asof.errors import InvalidContextItemError
from hydrangea.asof.summary import StructuredSummary

__all__ = ["HARNESS_KINDS", "ContextItem", "ItemKind", "Provenance", "Trust"]


class ItemKind(StrEnum):
    """What a context item is: system text, an instruction, the task, an observation, memory,
    a document or a summary."""

    system = "system"
    instruction = "instruction"
    task = "task"
    observation = "observation"
    memory = "memory"
    document = "document"
    summary = "summary"


HARNESS_KINDS: frozenset[ItemKind] = frozenset(
    {ItemKind.system, ItemKind.instruction, ItemKind.task}
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


class ContextItem(BaseModel):
    """One piece of context: its content, trust level, publication time and provenance.

    Only harness-authored kinds (system, instruction, task) can be trusted; anything from outside
    is untrusted by type. ``published_at`` must carry a timezone when given. ``summary`` is set on
    the ``summary`` items that compaction produces.

    >>> ContextItem.harness(ItemKind.task, "Summarize the filings.", item_id="task").trust
    <Trust.TRUSTED: 'trusted'>
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    item_id: str = Field(min_length=1)
    kind: ItemKind
    content: str
    trust: Trust
    published_at: datetime | None
    provenance: Provenance
    priority: int
    pointers: tuple[str, ...] = ()
    summary: StructuredSummary | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ContextItem:
        if self.published_at is not None and self.published_at.utcoffset() is None:
            raise ValueError(
                f"item {self.item_id!r}: published_at {self.published_at.isoformat()} has no "
                "timezone; give an aware datetime such as datetime(..., tzinfo=UTC)"
            )
        if self.trust is Trust.TRUSTED and self.kind not in HARNESS_KINDS:
            raise ValueError(
                f"item {self.item_id!r}: a {self.kind.value} item cannot be trusted; only "
                "system, instruction and task items authored by the harness can"
            )
        if self.summary is not None and self.kind is not ItemKind.summary:
            raise ValueError(
                f"item {self.item_id!r}: only a summary item carries a StructuredSummary"
            )
        return self

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
            provenance=Provenance(origin=origin),
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
            provenance=Provenance(origin=origin, ref=ref, uri=uri),
            priority=priority,
        )


def _build(**fields: object) -> ContextItem:
    try:
        return ContextItem.model_validate(fields)
    except ValidationError as exc:
        problems = "; ".join(str(error["msg"]) for error in exc.errors())
        raise InvalidContextItemError(problems) from exc
