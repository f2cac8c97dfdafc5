"""A per-Context cache of the built request prefix, so a turn costs O(new items + tail).

The gateway's builder (``Adapter.build_request``) stays the one definition of a request. The
cache keeps, for a *closed* prefix of the Context (every tool call in it answered inside it),
the messages the builder made for it, and builds only the rest: the request for
``items[:p] + tail`` is the cached messages of ``items[:p]`` followed by the messages the
builder makes for ``[anchor] + tail`` without the anchor's own (``anchor`` is a one-word turn of
the role the prefix ends with, so nothing at the tail's start is mistaken for the conversation's
start: no leading system run, no leading-user placeholder, no turn merged across the boundary).

A boundary is only used when that composition is exact for the gateway:

* the new segment's pairing leaves no call unanswered (so no later result can answer a call of
  the prefix, and no orphan repair of the prefix can change; the still-open tail is repaired
  per request, for the tail only);
* the prefix holds a non-system item (the leading system run is over);
* Responses: the prefix does not end with a reasoning item (it is kept only when followed);
* Gemini: the prefix does not end in a turn of the role the tail starts with (consecutive turns
  merge); for now it is not cached at all (see `_valid`).

A detach below the cached prefix cuts the cache back to the last boundary before it.
Cached messages are built once and shared by every later request (read-only; see "What you may
mutate" in the providers guide); the request's top-level dict and lists are fresh every time.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from hydrangea.context.adapter import Adapter
from hydrangea.context.caching import BlockView, head_blocks, message_blocks
from hydrangea.context.native import NativeContent
from hydrangea.gateway import GatewayType

__all__ = ["RequestCache"]

_LIST_KEY = {
    GatewayType.openai: "messages",
    GatewayType.openai_responses: "input",
    GatewayType.anthropic: "messages",
    GatewayType.gemini: "contents",
}


@dataclass(frozen=True, slots=True)
class _Checkpoint:
    items: int
    messages: int
    blocks: int = 0


class RequestCache:
    """The built messages of a closed prefix of one Context's items, extended as it grows."""

    __slots__ = (
        "_adapter",
        "_alone",
        "_blocks",
        "_checkpoints",
        "_head",
        "_kept",
        "_key",
        "_messages",
        "_non_system",
        "_seen",
        "memo",
    )

    def __init__(self, adapter: Adapter) -> None:
        self._adapter = adapter
        self._key = _LIST_KEY[adapter.gateway]
        self._messages: list[Any] = []
        self._head: dict[str, Any] = {}
        self._checkpoints: list[_Checkpoint] = [_Checkpoint(0, 0)]
        self._non_system = False
        self._seen = 0
        self._blocks: list[Any] = []  # Anthropic: the cached messages' blocks
        self._kept: list[int] = []  # Anthropic: which of them carry a caller's cache_control
        self._alone: dict[str, int] = {}  # messages of each anchor built alone
        self.memo: dict[str, Any] = {}
        """Anthropic: the breakpoint placement's memo for this prefix (emptied on a detach)."""

    @property
    def prefix(self) -> int:
        """How many leading items the cached messages cover."""
        return self._checkpoints[-1].items

    def sync(self, detached_from: int | None, detaches: int) -> None:
        """Forget what a detach starting at ``detached_from`` changed (``None``: nothing)."""
        self._seen = detaches
        if detached_from is None or detached_from >= self.prefix:
            return
        while self._checkpoints[-1].items > detached_from:
            self._checkpoints.pop()
        self.memo.clear()
        kept = self._checkpoints[-1]
        del self._messages[kept.messages :]
        del self._blocks[kept.blocks :]
        self._kept = [n for n in self._kept if n < kept.blocks]
        if kept.items == 0:
            self._head = {}
            self._non_system = False

    @property
    def seen(self) -> int:
        """The Context's detach count at the last :meth:`sync`."""
        return self._seen

    def build(
        self, source: Sequence[NativeContent], stable: int, tail: Sequence[NativeContent]
    ) -> dict[str, Any]:
        """The request for ``source[:stable] + tail`` (``source``: the Context's items)."""
        return self._compose(source, stable, tail)[0]

    def build_with_blocks(
        self, source: Sequence[NativeContent], stable: int, tail: Sequence[NativeContent]
    ) -> tuple[dict[str, Any], Sequence[Any], tuple[int, ...]]:
        """Anthropic: :meth:`build`, with the request's blocks and caller-marker positions as
        :func:`~hydrangea.context.caching.cache_anthropic_request` computes them, the cached
        prefix's taken from the cache. The blocks are a view of the cache's own (read them
        before the next call of this cache), so the cost does not grow with the prefix."""
        built, checkpoint = self._compose(source, stable, tail)
        head = head_blocks(built)
        messages = built.get(self._key) or []
        offset = len(head)
        kept = [n for n, b in enumerate(head) if _marked(b.value)]
        kept.extend(offset + n for n in self._kept if n < checkpoint.blocks)
        position = offset + checkpoint.blocks
        for m in range(checkpoint.messages, len(messages)):
            content = messages[m].get("content") if isinstance(messages[m], dict) else None
            if not isinstance(content, list):
                position += 1
                continue
            kept.extend(position + b for b, block in enumerate(content) if _marked(block))
            position += len(content)
        view = BlockView(head, self._blocks, checkpoint.blocks, messages, checkpoint.messages)
        return built, view, tuple(kept)

    def _compose(
        self, source: Sequence[NativeContent], stable: int, tail: Sequence[NativeContent]
    ) -> tuple[dict[str, Any], _Checkpoint]:
        anthropic = self._adapter.gateway is GatewayType.anthropic
        self._advance(source, stable if anthropic else min(stable, len(source) - 1))
        checkpoint = self._usable(source, stable, tail)
        p = checkpoint.items
        rest = [*source[p:stable], *tail]
        if p == 0:
            built = self._adapter.build_request(rest)
            built[self._key] = list(built.get(self._key) or [])
            return built, self._checkpoints[0]
        out = {
            key: list(value) if isinstance(value, list) else dict(value)
            if isinstance(value, dict) else value
            for key, value in self._head.items()
        }
        messages = self._messages[: checkpoint.messages]  # the one copy of the prefix
        messages.extend(self._tail_messages(source[p - 1], rest))
        out[self._key] = messages
        return out, checkpoint

    def _usable(
        self, source: Sequence[NativeContent], stable: int, tail: Sequence[NativeContent]
    ) -> _Checkpoint:
        for checkpoint in reversed(self._checkpoints):
            p = checkpoint.items
            if p > stable:
                continue
            if p == 0 or p < stable or self._adapter.gateway is not GatewayType.gemini:
                return checkpoint
            if not tail or _gemini_role(tail[0]) != _gemini_role(source[p - 1]):
                return checkpoint
        return self._checkpoints[0]

    def shared_messages(
        self, source: Sequence[NativeContent], boundary: int, full: dict[str, Any]
    ) -> int:
        """How many leading messages of ``full`` the request of ``source[:boundary]`` shares.

        The cached messages up to the last checkpoint at or before ``boundary`` are shared by
        construction; only the items after it are built (none at a checkpoint)."""
        messages = full.get(self._key) or []
        shared: dict[int, int] = self.memo.setdefault("shared", {})
        hit = shared.get(boundary)
        if hit is not None:
            return min(hit, len(messages))
        at = bisect_right(self._checkpoints, boundary, key=_ITEMS) - 1
        checkpoint = self._checkpoints[max(at, 0)]
        count = min(checkpoint.messages, len(messages))
        p = checkpoint.items
        if p == boundary or count < checkpoint.messages:
            return count
        rest = list(source[p:boundary])
        if p == 0:
            tail = list(self._adapter.build_request(rest).get(self._key) or [])
        else:
            tail = self._tail_messages(source[p - 1], rest)
        for before, now in zip(tail, messages[count:], strict=False):
            if before is not now and before != now:
                break
            count += 1
        if boundary < self.prefix and count < len(messages):
            # inside the closed prefix the answer no longer depends on the request's tail
            shared[boundary] = count
        return count

    # -- internals ---------------------------------------------------------------------------

    def _tail_messages(self, last: NativeContent, rest: list[NativeContent]) -> list[Any]:
        anchor = self._anchor(last)
        role = str(anchor.get("role"))
        alone = self._alone.get(role)
        if alone is None:
            alone = len(self._adapter.build_request([anchor]).get(self._key) or [])
            self._alone[role] = alone
        built = self._adapter.build_request([anchor, *rest])
        extra = set(built) - {self._key}
        if extra:  # cannot happen at a valid boundary; keep the builder's word
            raise AssertionError(f"tail build produced {sorted(extra)}")
        return list(built[self._key])[alone:]

    def _anchor(self, last: NativeContent) -> NativeContent:
        gateway = self._adapter.gateway
        if gateway is GatewayType.gemini:
            role = "model" if last.get("role") == "model" else "user"
            return {"role": role, "parts": [{"text": "."}]}
        if gateway is GatewayType.openai_responses:
            return {"type": "message", "role": "user", "content": "."}
        return {"role": "user", "content": "."}

    def _advance(self, source: Sequence[NativeContent], stable: int) -> None:
        p = self.prefix
        if stable <= p:
            return
        segment = list(source[p:stable])
        if not self._valid(source, p, stable, segment):
            return
        if p == 0:
            built = self._adapter.build_request(segment)
            self._head = {k: v for k, v in built.items() if k != self._key}
            self._messages = list(built.get(self._key) or [])
        else:
            self._messages.extend(self._tail_messages(source[p - 1], segment))
        self._non_system = True
        if self._adapter.gateway is GatewayType.anthropic:
            for m in range(self._checkpoints[-1].messages, len(self._messages)):
                for block in message_blocks(m, self._messages[m]):
                    if _marked(block.value):
                        self._kept.append(len(self._blocks))
                    self._blocks.append(block)
        self._checkpoints.append(_Checkpoint(stable, len(self._messages), len(self._blocks)))

    def _valid(
        self, source: Sequence[NativeContent], p: int, stable: int, segment: list[NativeContent]
    ) -> bool:
        if stable >= len(source) and self._adapter.gateway is not GatewayType.anthropic:
            # the boundary needs the item after it (Gemini merging) known; Anthropic's builder
            # merges no turns, so the items' own request is a prefix of every longer one's
            return False
        if not (self._non_system or any(item.get("role") != "system" for item in segment)):
            return False
        if self._adapter.pairing(segment).unanswered:
            return False
        last = source[stable - 1]
        match self._adapter.gateway:
            case GatewayType.openai_responses:
                return last.get("type") != "reasoning"
            case GatewayType.gemini:
                # Gemini merges consecutive turns and pairs by name and order across the whole
                # history; a ci-profile property run found a history (a repeated call id after
                # an empty model turn) where a cached prefix built differently from a fresh
                # build, so Gemini requests are built from scratch until that case is mended.
                return False
            case _:
                return True


_ITEMS = attrgetter("items")


def _marked(value: object) -> bool:
    return isinstance(value, dict) and "cache_control" in value


def _gemini_role(item: NativeContent) -> str:
    return "model" if item.get("role") == "model" else "user"

