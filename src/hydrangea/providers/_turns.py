"""The turn model shared by the Anthropic and Gemini request builders.

Both APIs take a conversation of user and assistant (``model``) turns in which the answers to
a turn's tool calls sit in the user turn right after it. Each builder pairs calls with results
by its own provider's rules (:mod:`._anthropic_request`, :mod:`._gemini_request`); what they
share lives here: the split of the leading system run, the :class:`Turn` record, and writing
the turns out with each turn's answers carried into the user turn that follows it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hydrangea.providers.native import NativeContent, clone_json

__all__ = [
    "LEADING_USER_PLACEHOLDER",
    "SYSTEM_NOTICE_PREFIX",
    "Turn",
    "emit_turns",
    "split_leading_system",
]

LEADING_USER_PLACEHOLDER = "[conversation start]"
"""Text of the user turn put before a conversation that would open with an assistant turn.

Plain text: a user message reading the same is indistinguishable (see "Text markers" in
docs/en/providers.md)."""

SYSTEM_NOTICE_PREFIX = "[system] "
"""Prefix of a mid-conversation system message rendered as user text.

Plain text, not a trust boundary: user text starting the same way is sent unchanged and reads
the same (see "Text markers" in docs/en/providers.md)."""


@dataclass(slots=True)
class Turn:
    """One turn on its way into the request.

    ``parts`` are the turn's content blocks (Anthropic) or parts (Gemini) as stored;
    ``original`` is the stored item, sent as it is when none of its parts changed (None for a
    turn the builder made). ``moved`` holds the indices of parts sent in another turn,
    ``orphans`` those of tool results that answer no call.
    """

    role: str
    parts: list[dict[str, Any]]
    original: dict[str, Any] | None
    moved: set[int] = field(default_factory=set)
    orphans: set[int] = field(default_factory=set)


def split_leading_system(
    items: Sequence[NativeContent], parts_of: Callable[[dict[str, Any]], list[dict[str, Any]]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A deep copy of ``items`` split into the parts of its leading run of system items
    (``parts_of`` reads them from one item) and the items after that run."""
    copied: list[dict[str, Any]] = clone_json(list(items))
    system: list[dict[str, Any]] = []
    start = 0
    while start < len(copied) and copied[start].get("role") == "system":
        system.extend(parts_of(copied[start]))
        start += 1
    return system, copied[start:]


def emit_turns(
    turns: list[Turn],
    answers: dict[int, list[dict[str, Any]]],
    *,
    key: str,
    orphan: Callable[[dict[str, Any]], list[dict[str, Any]]],
) -> list[dict[str, Any]]:
    """Write ``turns`` out as ``{"role": ..., key: [...]}`` messages.

    Moved parts are left out, orphan results replaced by ``orphan(part)``, and the answers to
    turn ``t`` (``answers[t]``) open the next user turn, or a user turn of their own when the
    next turn is not a user turn. A turn whose parts are unchanged is its ``original``.
    """
    messages: list[dict[str, Any]] = []
    carried: list[dict[str, Any]] = []
    for t, turn in enumerate(turns):
        if carried and turn.role != "user":
            messages.append({"role": "user", key: carried})
            carried = []
        parts = list(carried)
        carried = []
        for p, part in enumerate(turn.parts):
            if p in turn.moved:
                continue
            if p in turn.orphans:
                parts.extend(orphan(part))
            else:
                parts.append(part)
        if parts:
            if turn.original is not None and parts == turn.parts:
                messages.append(turn.original)
            else:
                messages.append({"role": turn.role, key: parts})
        carried = answers.get(t, [])
    if carried:
        messages.append({"role": "user", key: carried})
    return messages
