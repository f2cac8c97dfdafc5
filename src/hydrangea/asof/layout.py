"""Where each admitted item lands in the messages, and in which order.

Trust decides placement, never kind:

1. one ``system`` message: the trusted ``system`` items, then the trusted ``instruction`` items
   (each group by descending priority, then id), joined by a blank line;
2. one ``user`` data message, only if something untrusted is admitted: a trusted notice (see
   :func:`hydrangea.asof.fence.notice`) followed by every untrusted item shown as a fenced
   block, summaries first, then memory, documents, observations, and last the untrusted items
   that claim a harness kind (task, instruction, system); within a kind by ``published_at``
   (UTC), then id; then the end line, and the index line (:func:`index_line`) when some
   admitted records are too many to name;
3. one ``user`` task message: the trusted ``task`` items by descending priority, then id.

Messages with nothing to show are left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Final, assert_never

from hydrangea.asof.fence import data_text, fence_body, published_label
from hydrangea.asof.items import ContextItem, ItemKind, Trust
from hydrangea.message import Message, Role

__all__ = [
    "RANKS",
    "SEPARATOR",
    "assemble",
    "block_bodies",
    "block_body",
    "block_key",
    "data_message",
    "index_line",
    "split_trusted",
    "utc",
]

SEPARATOR = "\n\n"
"""Between trusted items."""

_OLDEST = datetime.min.replace(tzinfo=UTC)


def utc(moment: datetime | None) -> datetime:
    """``moment`` in UTC, the earliest aware datetime for ``None``: every comparison and every
    "latest" of the package goes through it (Python compares two datetimes of the same zone by
    wall time, ignoring ``fold``, so 01:15 after a DST fold would sort before 01:45 before it)."""
    return _OLDEST if moment is None else moment.astimezone(UTC)


def _block_rank(kind: ItemKind) -> int:
    match kind:
        case ItemKind.SUMMARY:
            return 0
        case ItemKind.MEMORY:
            return 1
        case ItemKind.DOCUMENT:
            return 2
        case ItemKind.OBSERVATION:
            return 3
        case ItemKind.TASK:
            return 4
        case ItemKind.INSTRUCTION:
            return 5
        case ItemKind.SYSTEM:
            return 6
        case _:
            assert_never(kind)


RANKS: Final = {kind: _block_rank(kind) for kind in ItemKind}
"""Each kind's place in the block order (summaries first; see the module documentation)."""


def block_key(item: ContextItem) -> tuple[int, datetime, str]:
    """Order of the fenced blocks: kind rank, then ``published_at`` (in UTC), then id."""
    return (RANKS[item.kind], utc(item.published_at), item.item_id)


def _trusted_key(item: ContextItem) -> tuple[int, str]:
    return (-item.priority, item.item_id)


def block_body(item: ContextItem) -> str:
    """The fenced block of one untrusted item without its mark and nonce (see
    :func:`hydrangea.asof.fence.fence_body`); a build renders each item's body once."""
    return fence_body(
        item.content,
        item_id=item.item_id,
        origin=item.provenance.origin,
        kind=item.kind.value,
        published=published_label(item.published_at),
    )


def block_bodies(items: Sequence[ContextItem]) -> list[str]:
    """:func:`block_body` of each of ``items``, in order."""
    return [block_body(item) for item in items]


def index_line(count: int, first: datetime, last: datetime) -> str:
    """The trusted line that covers ``count`` admitted records the request cannot name: how
    many, which time span (the UTC days of the first and the last, both included), and that
    the record store holds them. It carries no outside text (a number and two dates), so it
    needs no fence."""
    return (
        f"Not shown: {count} more record{'' if count == 1 else 's'}, published "
        f"{first.astimezone(UTC):%Y-%m-%d} to {last.astimezone(UTC):%Y-%m-%d} (UTC), "
        "kept in full in the record store."
    )


def data_message(bodies: Sequence[str], index: str | None) -> str | None:
    """The data message: the fenced blocks (:func:`hydrangea.asof.fence.data_text`), then the
    index line if any, after a line break; ``None`` when there is neither."""
    if not bodies:
        return index
    text = data_text(bodies)
    return text if index is None else f"{text}\n{index}"


def split_trusted(
    trusted: Sequence[ContextItem],
) -> tuple[list[ContextItem], list[ContextItem]]:
    """The trusted items of the system message (system, then instruction items) and of the task
    message, each in rendered order. Raises ``ValueError`` for an item that is not trusted."""
    system_items: list[ContextItem] = []
    instruction_items: list[ContextItem] = []
    task_items: list[ContextItem] = []
    for item in trusted:
        if item.trust is not Trust.TRUSTED:
            raise ValueError(f"item {item.item_id!r} is not trusted")
        match item.kind:
            case ItemKind.SYSTEM:
                system_items.append(item)
            case ItemKind.INSTRUCTION:
                instruction_items.append(item)
            case ItemKind.TASK:
                task_items.append(item)
            case (
                ItemKind.OBSERVATION | ItemKind.MEMORY | ItemKind.DOCUMENT | ItemKind.SUMMARY
            ):
                raise ValueError(f"a trusted {item.kind.value} item cannot exist")
            case _:
                assert_never(item.kind)
    head = sorted(system_items, key=_trusted_key) + sorted(instruction_items, key=_trusted_key)
    return head, sorted(task_items, key=_trusted_key)


def assemble(
    head: Sequence[ContextItem], data: str | None, tail: Sequence[ContextItem]
) -> tuple[Message, ...]:
    """The messages: system (``head``), the data message (``data``, if any), task (``tail``)."""
    messages: list[Message] = []
    if head:
        messages.append(Message(role=Role.system, content=_join(head)))
    if data is not None:
        messages.append(Message(role=Role.user, content=data))
    if tail:
        messages.append(Message(role=Role.user, content=_join(tail)))
    return tuple(messages)


def _join(items: Sequence[ContextItem]) -> str:
    return SEPARATOR.join(item.content for item in items)
