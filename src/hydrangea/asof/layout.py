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

from hydrangea.asof.fence import (
    CLOSE,
    NONCE_LENGTH,
    OPEN,
    fence_bodies,
    fence_body,
    nonce_of_bodies,
    notice,
)
from hydrangea.asof.items import ContextItem, ItemKind, Trust
from hydrangea.message import Message, Role

__all__ = [
    "SEPARATOR",
    "assemble",
    "block_bodies",
    "block_body",
    "block_key",
    "data_length",
    "data_text",
    "in_block_order",
    "published_label",
    "published_labels",
    "split_trusted",
    "with_nonce",
]

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


_RANKS = {kind: _block_rank(kind) for kind in ItemKind}


def block_key(item: ContextItem) -> tuple[int, datetime, str]:
    """Order of the fenced blocks: kind rank, then ``published_at``, then id."""
    return (_RANKS[item.kind], item.published_at or _OLDEST, item.item_id)


def in_block_order(items: Sequence[ContextItem]) -> list[ContextItem]:
    """``items`` sorted by :func:`block_key`."""
    return sorted(items, key=block_key)


def _trusted_key(item: ContextItem) -> tuple[int, str]:
    return (-item.priority, item.item_id)


def published_label(item: ContextItem) -> str:
    """``published_at`` in ISO 8601, or ``none``."""
    return "none" if item.published_at is None else item.published_at.isoformat()


def block_body(item: ContextItem, published: str | None = None) -> str:
    """The fenced block of one untrusted item without its nonce (see
    :func:`hydrangea.asof.fence.fence_body`); a build renders each item's body once.
    ``published`` is :func:`published_label` of the item, when the caller already has it."""
    return fence_body(
        item.content,
        item_id=item.item_id,
        origin=item.provenance.origin,
        kind=item.kind.value,
        published=published_label(item) if published is None else published,
    )


def published_labels(items: Sequence[ContextItem]) -> list[str]:
    """:func:`published_label` of each of ``items``."""
    return [published_label(item) for item in items]


def block_bodies(
    items: Sequence[ContextItem], labels: Sequence[str] | None = None
) -> tuple[Sequence[str], list[str]]:
    """The :func:`published_label` and the :func:`block_body` of each of ``items``, in order
    (``labels``, when the caller has them already)."""
    if labels is None:
        labels = published_labels(items)
    bodies = fence_bodies(zip(
        [i.content for i in items],
        [i.item_id for i in items],
        [i.provenance.origin for i in items],
        [i.kind.value for i in items],
        labels,
        strict=True,
    ))
    return labels, bodies


def data_length(body_chars: int, blocks: int) -> int:
    """``len(data_text(bodies))`` for ``blocks`` bodies of ``body_chars`` characters in all."""
    nonce = "0" * NONCE_LENGTH  # every nonce has this length
    per_block = len(SEPARATOR) + len(with_nonce("", nonce))
    return len(notice(nonce)) + body_chars + per_block * blocks


def with_nonce(body: str, nonce: str) -> str:
    """The complete fenced block for a :func:`block_body` and a nonce."""
    return f"{OPEN}data nonce={nonce}{body}{nonce}{CLOSE}"


def data_text(bodies: Sequence[str]) -> str:
    """The data message for blocks with these bodies, in rendered order: the notice, then each
    block, separated by :data:`SEPARATOR`. The nonce is derived from all the bodies."""
    nonce = nonce_of_bodies(bodies)
    opening = f"{OPEN}data nonce="
    # nonce.join over [notice + opening, body1, link, body2, ..., bodyN, CLOSE] puts the nonce
    # exactly where each block's header and end line need it.
    link = f"{CLOSE}{SEPARATOR}{opening}"
    pieces = [notice(nonce) + SEPARATOR + opening]
    for body in bodies:
        pieces.append(body)
        pieces.append(link)
    pieces[-1] = CLOSE
    return nonce.join(pieces)


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
