"""Where each admitted item lands in the messages, and in which order.

Trust decides placement, never kind:

1. one ``system`` message: the trusted ``system`` items, then the trusted ``instruction`` items
   (each group by descending priority, then id), joined by a blank line;
2. one ``user`` data message, only if something untrusted is shown: a trusted notice (see
   :func:`hydrangea.asof.fence.notice`) followed by every untrusted item as a fenced block,
   summaries first, then memory, documents, observations, and last the untrusted items that
   claim a harness kind (task, instruction, system); within a kind by ``published_at``, then id;
3. one ``user`` task message: the trusted ``task`` items by descending priority, then id.

Messages with no items are left out. Blocks are separated by a blank line.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import assert_never

from hydrangea.asof.fence import build_nonce, fence, notice
from hydrangea.asof.items import ContextItem, ItemKind, Trust
from hydrangea.message import Message, Role

__all__ = ["SEPARATOR", "block_key", "published_label", "render_block", "render_messages"]

SEPARATOR = "\n\n"
"""Between the notice and each fenced block, and between trusted items."""

_OLDEST = datetime.min.replace(tzinfo=UTC)


def _block_rank(kind: ItemKind) -> int:
    match kind:
        case ItemKind.summary:
            return 0
        case ItemKind.memory:
            return 1
        case ItemKind.document:
            return 2
        case ItemKind.observation:
            return 3
        case ItemKind.task:
            return 4
        case ItemKind.instruction:
            return 5
        case ItemKind.system:
            return 6
        case _:
            assert_never(kind)


def block_key(item: ContextItem) -> tuple[int, datetime, str]:
    """Order of the fenced blocks: kind rank, then ``published_at``, then id."""
    return (_block_rank(item.kind), item.published_at or _OLDEST, item.item_id)


def _trusted_key(item: ContextItem) -> tuple[int, str]:
    return (-item.priority, item.item_id)


def published_label(item: ContextItem) -> str:
    """``published_at`` in ISO 8601, or ``none``."""
    return "none" if item.published_at is None else item.published_at.isoformat()


def render_block(item: ContextItem, nonce: str) -> str:
    """The fenced block of one untrusted item."""
    return fence(
        item.content,
        nonce=nonce,
        item_id=item.item_id,
        origin=item.provenance.origin,
        kind=item.kind.value,
        published=published_label(item),
    )


def render_messages(
    trusted: Sequence[ContextItem], untrusted: Sequence[ContextItem]
) -> tuple[tuple[Message, ...], tuple[ContextItem, ...]]:
    """The messages for these items, and the items in the order they appear."""
    system_items: list[ContextItem] = []
    instruction_items: list[ContextItem] = []
    task_items: list[ContextItem] = []
    for item in trusted:
        if item.trust is not Trust.TRUSTED:
            raise ValueError(f"item {item.item_id!r} is not trusted")
        match item.kind:
            case ItemKind.system:
                system_items.append(item)
            case ItemKind.instruction:
                instruction_items.append(item)
            case ItemKind.task:
                task_items.append(item)
            case (
                ItemKind.observation | ItemKind.memory | ItemKind.document | ItemKind.summary
            ):
                raise ValueError(f"a trusted {item.kind.value} item cannot exist")
            case _:
                assert_never(item.kind)
    head = sorted(system_items, key=_trusted_key) + sorted(instruction_items, key=_trusted_key)
    tail = sorted(task_items, key=_trusted_key)
    blocks = sorted(untrusted, key=block_key)
    messages: list[Message] = []
    if head:
        messages.append(Message(role=Role.system, content=_join(head)))
    if blocks:
        nonce = build_nonce(
            (b.item_id, b.provenance.origin, b.kind.value, published_label(b), b.content)
            for b in blocks
        )
        parts = [notice(nonce), *(render_block(b, nonce) for b in blocks)]
        messages.append(Message(role=Role.user, content=SEPARATOR.join(parts)))
    if tail:
        messages.append(Message(role=Role.user, content=_join(tail)))
    return tuple(messages), (*head, *blocks, *tail)


def _join(items: Sequence[ContextItem]) -> str:
    return SEPARATOR.join(item.content for item in items)
