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
* a call the provider gave no id has a stable id counted from the history's start: Gemini
  pairs the new items with the counts of the prefix carried on (``pair_items(counted=)``);
  the other gateways do not cache past such a call;
* Gemini merges consecutive turns of one role: a boundary is only kept where the prefix's last
  turn (as built) and the next item's turn differ in role and the next item has parts; the
  tail of a request may still merge into the prefix's last turn, which is then rebuilt for that
  request (the cached turn is not changed).

The boundary always exists: each request moves the cached prefix up to the last position at or
before its stable part (on Gemini, whose turns merge, before its last item) that obeys these
rules: in a tool loop, the position right before the call still waiting for its result; a
request that ends closed takes all of it, so each item is built once as the cache takes it in
(a boundary the next item surely merges into is refused before it is built:
``Adapter.merges_with``). One pairing of the new segment serves every end tried
(``Pairing.split``). ``incremental``,
``from_scratch`` and ``built_items`` count what each request cost.

A detach below the cached prefix cuts the cache back to the last boundary before it.
Cached messages are built once and shared by every later request (read-only; see "What you may
mutate" in the providers guide); the request's top-level dict and lists are the caller's: the
history list is a fresh copy of the prefix, or a list an earlier request handed out that nothing
references any more, brought up to date in place (:mod:`hydrangea.providers._lent`).
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from hydrangea.providers._lent import Lender, reset, seal
from hydrangea.providers._prefix import shared_prefix
from hydrangea.providers.adapter import Adapter
from hydrangea.providers.native import NativeContent, share_items
from hydrangea.providers.pairing import Pairing, pair_items

__all__ = ["RequestCache"]


_TRIES = 4
"""How many closed ends, latest first, one advance tries (Gemini: an end whose next item would
merge into the prefix's last turn is passed over for the one before)."""

_KEPT_RUNS = 16
"""How many requests an overlay run's messages outlive its last use (a cyclic component that is
hidden for a few turns finds them again)."""


@dataclass(slots=True, eq=False)
class _Run:
    items: tuple[NativeContent, ...]  # held, so that the ids in the key are not reused
    joined: list[Any]  # Gemini: parts its first turn adds to the turn before it (merged)
    messages: list[Any]
    used: int


@dataclass(frozen=True, slots=True)
class _Checkpoint:
    items: int
    messages: int
    blocks: int = 0
    counted: Mapping[str, int] | None = None  # Gemini: id-less calls per name in the prefix


class RequestCache:
    """The built messages of a closed prefix of one Context's items, extended as it grows."""

    __slots__ = (
        "_adapter",
        "_alone",
        "_blocks",
        "_built",
        "_checkpoints",
        "_chunks",
        "_counts",
        "_head",
        "_key",
        "_lender",
        "_messages",
        "_non_system",
        "_on",
        "_requests",
        "_seen",
        "_shared",
        "_stuck",
        "lock",
        "memo",
    )

    def __init__(self, adapter: Adapter) -> None:
        self._adapter = adapter
        self._key = adapter.history_key
        self._messages: list[Any] = []
        self._head: dict[str, Any] = {}
        self._checkpoints: list[_Checkpoint] = [_Checkpoint(0, 0)]
        self._non_system = False
        self._seen = 0
        self._blocks = adapter.prefix_tracker(self._messages)  # (Anthropic: their blocks)
        self._alone: dict[str, int] = {}  # messages of each anchor built alone
        self._chunks: dict[tuple[object, ...], _Run] = {}  # overlay runs: role before, item ids
        self._requests = 0  # requests built with an overlay
        self._lender = Lender()  # the requests' top-level lists, recycled (see ``_lent``)
        self._stuck: tuple[int, int, int | None] | None = None  # an advance found not valid
        self._counts = [0, 0]  # requests built on a cached prefix, requests built whole
        self._built = 0  # items the last request handed to the builder (overlay runs kept aside)
        self._on = self._checkpoints[0]  # the checkpoint the last request was built on
        self._shared: dict[int, int] = {}  # boundary -> messages shared (see shared_messages)
        self.memo: dict[str, Any] = {}
        """Anthropic: the breakpoint placement's memo for this prefix (a detach below the
        prefix leaves in it what holds for the prefix kept: ``Adapter.keep_memo``)."""
        self.lock = threading.Lock()
        """Held while a request is built (``Context.build_incremental``): one at a time."""

    @property
    def prefix(self) -> int:
        """How many leading items the cached messages cover."""
        return self._checkpoints[-1].items

    def sync(self, detached_from: int | None, detaches: int) -> None:
        """Forget what a detach starting at ``detached_from`` changed (``None``: nothing)."""
        self._seen = detaches
        if detached_from is None:
            return
        self._stuck = None  # (it names items by id: a detach may free them)
        keep = detached_from
        if self._adapter.merges_turns:
            keep -= 1  # the boundary was judged with the item after it, now detached
        if keep >= self.prefix:
            return
        while self._checkpoints[-1].items > keep and len(self._checkpoints) > 1:
            self._checkpoints.pop()
        kept = self._checkpoints[-1]
        self._shared.clear()
        self._adapter.keep_memo(self.memo, kept.messages, kept.blocks)
        del self._messages[kept.messages :]
        self._lender.cut(kept.messages)
        self._blocks.cut(kept.messages, kept.blocks)
        if kept.items == 0:
            self._head = {}
            self._non_system = False

    def hand_out(self, built: dict[str, Any]) -> dict[str, Any]:
        """``built`` (a finished request) is the caller's now: its history list may no longer
        be changed by the cache, until the caller lets go of it (see ``_lent``)."""
        seal(built.get(self._key))
        return built

    @property
    def copies(self) -> int:
        """How many request lists were made by copying the cached prefix (not recycled)."""
        return self._lender.copies

    @property
    def incremental(self) -> int:
        """How many requests were built on a cached prefix (the items after it built alone)."""
        return self._counts[0]

    @property
    def from_scratch(self) -> int:
        """How many requests the builder made whole (no cached prefix before them yet)."""
        return self._counts[1]

    @property
    def built_items(self) -> int:
        """How many items the last request's builder calls were given (the cost of a turn):
        the stable items after the cached prefix and the tail, an overlay's kept runs aside."""
        return self._built

    @property
    def seen(self) -> int:
        """The Context's detach count at the last :meth:`sync`."""
        return self._seen

    def build(
        self,
        source: Sequence[NativeContent],
        stable: int,
        tail: Sequence[NativeContent],
        overlay: Sequence[int] = (),
    ) -> dict[str, Any]:
        """The request for ``source[:stable] + tail`` (``source``: the Context's items).

        ``tail`` starts with runs of ``overlay[0]``, ``overlay[1]`` ... items that later
        requests repeat (the same objects, never mutated: an overlay's components): each run's
        messages are kept and reused while it is the same, when the seams around the runs are
        exact (the rules of a cached prefix).
        """
        return self._compose(source, stable, tail, overlay)[0]

    def build_with_blocks(
        self,
        source: Sequence[NativeContent],
        stable: int,
        tail: Sequence[NativeContent],
        overlay: Sequence[int] = (),
    ) -> tuple[dict[str, Any], Sequence[Any], tuple[int, ...]]:
        """:meth:`build`, for an adapter that :attr:`~Adapter.places_breakpoints`, with the
        request's blocks and caller-marker positions as
        :func:`~hydrangea.providers.anthropic.caching.cache_anthropic_request` computes them, the
        cached
        prefix's taken from the cache. The blocks are a view of the cache's own (read them
        before the next call of this cache), so the cost does not grow with the prefix."""
        built, checkpoint = self._compose(source, stable, tail, overlay)
        view, kept = self._blocks.view(built, checkpoint.messages, checkpoint.blocks)
        return built, view, kept

    def _compose(
        self,
        source: Sequence[NativeContent],
        stable: int,
        tail: Sequence[NativeContent],
        overlay: Sequence[int] = (),
    ) -> tuple[dict[str, Any], _Checkpoint]:
        self._advance(source, stable)
        checkpoint = self._on = self._usable(stable)
        p = checkpoint.items
        covered = sum(overlay)
        messages = None
        if p > 0 and checkpoint.messages > 0 and 0 < covered <= len(tail):
            head = list(source[p:stable])  # stable items the cache has not taken in yet
            if self._closed(head):
                self._built = len(head) + len(tail) - covered
                messages = self._lender.take(self._messages, checkpoint.messages)
                if head:
                    self._extend(messages, source[p - 1], head, checkpoint.counted)
                if self._extend_overlay(messages, tail, overlay):
                    if covered < len(tail):  # (runs hold no calls: the counts are the prefix's)
                        remainder = list(tail[covered:])
                        self._extend(messages, tail[covered - 1], remainder, checkpoint.counted)
                    out = self._head_copy()
                    out[self._key] = messages
                    self._counts[0] += 1
                    return out, checkpoint
                reset(messages, self._messages, checkpoint.messages)  # a seam was not exact
        rest = [*source[p:stable], *tail]
        self._built = len(rest)
        if p == 0:
            self._counts[1] += 1
            built = self._adapter.build_request(rest)
            built[self._key] = list(built.get(self._key) or [])
            return built, self._checkpoints[0]
        self._counts[0] += 1
        out = self._head_copy()
        if messages is None:
            messages = self._lender.take(self._messages, checkpoint.messages)
        if rest:  # (none when the whole request is the cached prefix: nothing to build)
            self._extend(messages, source[p - 1], rest, checkpoint.counted)
        out[self._key] = messages
        return out, checkpoint

    def _head_copy(self) -> dict[str, Any]:
        return {
            key: list(value) if isinstance(value, list) else dict(value)
            if isinstance(value, dict) else value
            for key, value in self._head.items()
        }

    def _closed(self, segment: Sequence[NativeContent]) -> bool:
        """Whether a seam right after ``segment`` (built on its own, after a closed prefix) is
        exact: as a cache boundary (no call left open, none without an id, Responses: not
        ending in reasoning); Gemini: no tool call or result at all (its stable ids count from
        the start and it pairs by name; the turns merging across a seam are joined by
        :meth:`_extend`)."""
        if not segment:
            return True
        if self._adapter.pairs_by_name:
            sites = self._adapter.tool_sites
            return not any(calls or results for calls, results in map(sites, segment))
        return self._ends_exact(segment, self._pairing(segment, None))

    def _extend(
        self,
        messages: list[Any],
        last: NativeContent,
        rest: list[NativeContent],
        counted: Mapping[str, int] | None,
    ) -> None:
        """Append the messages of ``rest`` (sent after ``last``) to ``messages``; Gemini: a
        first turn that merges into the last message replaces it by the merged turn."""
        seam, new = self._tail_messages(messages, last, rest, counted)
        if seam is not None:
            messages[-1] = seam
        messages.extend(new)

    def _extend_overlay(
        self, messages: list[Any], tail: Sequence[NativeContent], overlay: Sequence[int]
    ) -> bool:
        """Append the messages of the overlay runs at the start of ``tail`` (each run's kept
        while it is the same objects after a turn of the same role); ``False`` (``messages``
        then half extended) when a seam after a run is not exact."""
        kept = self._chunks
        self._requests += 1
        now = self._requests
        gemini = self._adapter.merges_turns
        added: list[Any] = []  # kept runs' messages, appended together
        merged: list[Any] | None = None  # Gemini: the parts of the last turn, with joined ones

        def flush() -> None:
            nonlocal merged
            if merged is not None:
                target = added or messages
                target[-1] = {"role": target[-1]["role"], "parts": merged}
                merged = None
            messages.extend(added)
            added.clear()

        start = 0
        for length in overlay:
            if not length:
                continue
            # what a run builds to depends only on the role of the turn before it (Gemini)
            role = str((added or messages)[-1].get("role")) if gemini else ""
            # the kept runs hold their items: ids are not reused
            if length == 1:
                key: tuple[object, ...] = (role, id(tail[start]))
            else:
                key = (role, *map(id, tail[start : start + length]))
            start += length
            found = kept.get(key)
            if found is None:
                run = tuple(tail[start - length : start])
                flush()  # the seam is built against the messages before it
                if not self._closed(run):
                    return False
                seam, new = self._tail_messages(messages, run[-1], list(run), None)
                joined = seam["parts"][len(messages[-1]["parts"]) :] if seam is not None else []
                found = kept[key] = _Run(run, joined, new, now)
            else:
                found.used = now
            if found.joined:
                if merged is None:
                    merged = list((added or messages)[-1]["parts"])
                merged.extend(found.joined)
            if found.messages:
                if merged is not None:
                    flush()
                added.extend(found.messages)
        flush()
        if len(kept) > 2 * len(overlay) + _KEPT_RUNS:  # forget runs no recent request used
            for key in [k for k, r in kept.items() if now - r.used > _KEPT_RUNS]:
                del kept[key]
        return True

    def _usable(self, stable: int) -> _Checkpoint:
        """The last checkpoint at or before item ``stable``."""
        at = bisect_right(self._checkpoints, stable, key=_ITEMS) - 1
        return self._checkpoints[max(at, 0)]

    def shared_messages(
        self, source: Sequence[NativeContent], boundary: int, full: dict[str, Any]
    ) -> int:
        """How many leading messages of ``full`` the request of ``source[:boundary]`` shares.

        The cached messages up to the last checkpoint at or before ``boundary`` are shared by
        construction; only the items after it are built (none at a checkpoint)."""
        messages = full.get(self._key) or []
        # Anthropic: a boundary's count is kept for later requests when it stops inside the
        # messages of the latest checkpoint, which this request was built on (they are the
        # same objects in every request built on it, whatever its tail)
        latest = self._checkpoints[-1]
        memo = self._adapter.places_breakpoints and self._on is latest
        shared = self._shared
        hit = shared.get(boundary) if memo else None
        if hit is not None:
            return min(hit, len(messages))
        checkpoint = self._usable(boundary)
        count = min(checkpoint.messages, len(messages))
        p = checkpoint.items
        if p == boundary or count < checkpoint.messages:
            return count
        rest = list(source[p:boundary])
        if p == 0:
            tail = list(self._build(rest, None).get(self._key) or [])
        else:
            tail = self._tail_messages(self._messages, source[p - 1], rest, checkpoint.counted)[1]
        count += shared_prefix(tail, messages, count)
        if memo and boundary < latest.items and count < latest.messages:
            shared[boundary] = count
        return count

    # -- internals ---------------------------------------------------------------------------

    def _build(
        self, items: Sequence[NativeContent], counted: Mapping[str, int] | None
    ) -> dict[str, Any]:
        if counted is None:
            return self._adapter.build_request(items)
        return self._adapter.build_counted(items, lambda these: self._pairing(these, counted))

    def _pairing(
        self, items: Sequence[NativeContent], counted: Mapping[str, int] | None
    ) -> Pairing:
        adapter = self._adapter
        return pair_items(items, adapter.tool_sites, by_name=adapter.pairs_by_name, counted=counted)

    def _tail_messages(
        self,
        before: list[Any],
        last: NativeContent,
        rest: list[NativeContent],
        counted: Mapping[str, int] | None,
    ) -> tuple[Any, list[Any]]:
        """The messages ``rest`` adds after the cached ``before`` (built from items up to
        ``last``), and the rebuilt last message of ``before`` if the first of them merges into
        it (Gemini), else ``None``."""
        anchor = self._adapter.seam_anchor(before)
        role = str(anchor.get("role"))
        alone = self._alone.get(role)
        if alone is None:  # the anchor makes no call: its count does not depend on ``counted``
            alone = self._alone[role] = len(self._build([anchor], None).get(self._key) or [])
        built = self._build([anchor, *rest], counted)
        extra = set(built) - {self._key}
        if extra:  # cannot happen at a valid boundary; keep the builder's word
            raise AssertionError(f"tail build produced {sorted(extra)}")
        messages = list(built[self._key])
        joined = messages[alone - 1] if alone else None
        if self._adapter.merges_turns and joined is not None and len(joined["parts"]) > 1:
            # the tail's first turn merged into the anchor: merge it into the cached turn
            parts = [*before[-1]["parts"], *joined["parts"][1:]]
            return {"role": joined["role"], "parts": parts}, messages[alone:]
        return None, messages[alone:]

    def _advance(self, source: Sequence[NativeContent], stable: int) -> None:
        """Move the cached prefix up to the last usable boundary at or before ``stable``.

        In a tool loop the item before ``stable`` is often a call still waiting for its
        result: the boundary is then the last closed position before it (no call of the new
        segment open across it), so the cached prefix keeps up with the history."""
        p = self.prefix
        if stable <= p:
            return
        # whether the boundary is valid depends on the items up to it and the one after it
        attempt = (p, stable, id(source[stable]) if stable < len(source) else None)
        if attempt == self._stuck:
            return
        self._stuck = attempt  # until a boundary is taken below
        whole = stable >= len(source)
        if whole and self._adapter.merges_turns:
            # the boundary needs the item after it known (Gemini merges turns); a builder that
            # merges none makes the items' own request a prefix of every longer one's
            stable = len(source) - 1
            if stable <= p:
                return
        segment = list(source[p:stable])
        before = self._checkpoints[-1]
        pairing = self._pairing(segment, before.counted)
        ends = self._closed_ends(segment, pairing)
        if whole and ends[:2] == [len(segment), len(segment) - 1]:
            # the request's last item is often detached before the next one (a reminder sent
            # once): a checkpoint right before it keeps the rest of the prefix cached
            head, rest = segment[:-1], segment[-1:]
            paired_head, paired_rest = pairing.split(len(head))
            if self._take(source, p, head, paired_head):
                self._stuck = None
                self._take(source, p + len(head), rest, paired_rest)
                return
        for end in ends:  # (no call is open across a closed end: the pairing splits there)
            if end < len(segment):
                pairing = pairing.split(end)[0]
            if self._take(source, p, segment[:end], pairing):
                self._stuck = None
                return

    def _closed_ends(self, segment: list[NativeContent], pairing: Pairing) -> list[int]:
        """The ends ``e`` (latest first, at most ``_TRIES``) at which ``segment[:e]`` may be a
        cache boundary: no call of it open across ``e``, a non-system item before it (or in the
        prefix), no id-less call before it (not Gemini), Responses: not after a reasoning item."""
        n = len(segment)
        limit = n
        blocked = [0] * (n + 2)  # +1 at the first end a call's exchange covers, -1 past it
        idless_stop = not self._adapter.pairs_by_name
        for site, call, _ in pairing.calls:
            at = site[0]
            result = pairing.answer.get(site)
            if result is None or (idless_stop and call.id is None):
                limit = min(limit, at)
                continue
            if result[0] > at:
                blocked[at + 1] += 1
                blocked[result[0] + 1] -= 1
        first = 0
        if not self._non_system:
            first = next((i + 1 for i, item in enumerate(segment)
                          if item.get("role") != "system"), n + 1)
        open_after = self._adapter.open_after
        open_calls = 0
        open_at = [False] * (limit + 1)
        for e in range(1, limit + 1):
            open_calls += blocked[e]
            open_at[e] = open_calls > 0
        ends: list[int] = []
        for e in range(limit, max(first, 1) - 1, -1):
            if open_at[e] or open_after(segment[e - 1]):
                continue
            ends.append(e)
            if len(ends) == _TRIES:
                break
        return ends

    def _take(
        self,
        source: Sequence[NativeContent],
        p: int,
        segment: list[NativeContent],
        pairing: Pairing,
    ) -> bool:
        """Cache ``segment`` (the items after the prefix ``p``) as a new checkpoint, if the
        boundary after it is exact (:meth:`_ends_exact` and ``Adapter.closes_turn``)."""
        stable = p + len(segment)
        if not self._ends_exact(segment, pairing):
            return False
        if stable < len(source) and self._adapter.merges_with(segment[-1], source[stable]):
            return False  # (closes_turn would refuse it below: not built for nothing)
        before = self._checkpoints[-1]
        # (an adapter pairing by name counts id-less calls on from the prefix's counts)
        counted = pairing.counted if self._adapter.pairs_by_name else None
        if counted is not None and counted == before.counted:
            counted = before.counted  # (one map for the checkpoints it did not change)
        if p == 0:
            built = self._build(segment, None)
            new = list(built.get(self._key) or [])
            last = new[-1] if new else None
        else:
            seam, new = self._tail_messages(self._messages, source[p - 1], segment, before.counted)
            if seam is not None:  # the boundary rules keep turns from merging across it
                raise AssertionError("a cached Gemini turn merged with the next segment")
            last = new[-1] if new else self._messages[-1] if self._messages else None
        if stable < len(source) and not self._adapter.closes_turn(last, source[stable]):
            return False
        share_items(new, segment)  # kept as long as the items: not a second copy of them
        if p == 0:
            self._head = {k: v for k, v in built.items() if k != self._key}
            self._messages = new
            self._blocks.reset(new)
            self._lender.cut(0)
        else:
            self._messages.extend(new)
        self._non_system = True
        for m in range(self._checkpoints[-1].messages, len(self._messages)):
            self._blocks.add(m, self._messages[m])
        self._checkpoints.append(
            _Checkpoint(stable, len(self._messages), self._blocks.size, counted)
        )
        return True

    def _ends_exact(self, segment: Sequence[NativeContent], pairing: Pairing) -> bool:
        """Whether what follows ``segment`` (non-empty, paired as ``pairing``) can be built on
        its own: no call of it left open; no id-less call (Gemini: their counts are carried on,
        ``Pairing.counted``); Responses: it does not end in a reasoning item."""
        adapter = self._adapter
        if pairing.unanswered or adapter.ends_open(segment) or adapter.open_after(segment[-1]):
            return False
        if adapter.pairs_by_name:
            return True  # (the id-less calls' counts are carried on: ``Pairing.counted``)
        return all(call.id is not None for _, call, _ in pairing.calls)


_ITEMS = attrgetter("items")
