"""Anthropic prompt-cache breakpoints, placed on the request a builder returned.

Anthropic caches a prompt only up to a block marked ``cache_control`` (at most
:data:`MAX_BREAKPOINTS` per request). A breakpoint reads an earlier cache entry only when that
entry ends at most :data:`LOOKBACK_BLOCKS` blocks before it, and nothing shorter than the
model's minimum (:func:`minimum_cacheable_tokens`) is cached. The cache key is the prefix's
content: moving a marker from one request to the next still reads what the earlier marker wrote
(the provider's documented way of caching a growing conversation), so the markers are the only
bytes of the stable prefix that change between requests.

Blocks are counted in the order the API reads them: tools, then system blocks, then every
message's content blocks. :func:`cache_anthropic_request` places, in this priority:

1. the **history anchor** on the last markable block of the stable history (the messages before
   the lifecycle overlay), always: below the minimum it costs nothing and caches nothing;
2. a **bridge** within the lookback after the previous request's history anchor, when the new
   anchor is too far from it to find it;
3. a **cut guard** on the last block before the newest place where a later collection may cut
   the stable history (the start of the newest area of a CoopContext, passed as ``cuts``): the
   prefix that survives that collection is then already cached when it happens, and the first
   request after it reads everything before the cut instead of only tools and system;
4. the **head** on the end of tools and system, so a collection that cuts the history keeps it;
5. a **fallback** within the lookback after the history anchor of the request before that, so a
   write that never happened (a failed request) does not cost the whole conversation;
6. guards for older cut points, while breakpoints remain.

2-6 are skipped when their prefix is shorter than the model's minimum. Breakpoints the caller
set are kept and counted. Nothing is ever placed after the stable history, and the input is
never changed: marked blocks (and the lists and messages holding them) are shallow copies.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, get_args

from hydrangea.errors import CachingError
from hydrangea.providers._prefix import shared_entries
from hydrangea.providers.adapter import Adapter
from hydrangea.providers.anthropic.blocks import (
    BlockView,
    _Block,
    _blocks,
    request_blocks,
)
from hydrangea.providers.native import NativeContent, without_key

__all__ = [
    "DEFAULT_MIN_TOKENS",
    "LOOKBACK_BLOCKS",
    "MAX_BREAKPOINTS",
    "AnthropicCaching",
    "BreakpointPlan",
    "CacheTTL",
    "cache_anthropic_request",
    "cached_anthropic_kwargs",
    "keep_memo",
    "marker_positions",
    "minimum_cacheable_tokens",
    "request_blocks",
    "strip_cache_control",
]

MAX_BREAKPOINTS = 4
"""The most ``cache_control`` markers one Anthropic request may carry."""
LOOKBACK_BLOCKS = 20
"""A breakpoint finds an earlier cache entry only among the blocks it ends and the 19 before."""
DEFAULT_MIN_TOKENS = 1_024
"""The minimum assumed for a model :func:`minimum_cacheable_tokens` does not know."""

CacheTTL = Literal["5m", "1h"]
"""The cache lifetimes Anthropic offers (``5m`` is the default; ``1h`` writes cost 2x)."""

# Longest prefix first: "claude-opus-4-5" must not fall through to "claude-opus-4".
_MINIMUMS: tuple[tuple[str, int], ...] = (
    ("claude-opus-4-8", 1_024),
    ("claude-opus-4-7", 2_048),
    ("claude-opus-4-6", 4_096),
    ("claude-opus-4-5", 4_096),
    ("claude-opus-4-1", 1_024),
    ("claude-opus-4", 1_024),
    ("claude-sonnet-4-6", 2_048),
    ("claude-sonnet-4-5", 1_024),
    ("claude-sonnet-4", 1_024),
    ("claude-haiku-4-5", 4_096),
    ("claude-3-7-sonnet", 1_024),
    ("claude-3-5-sonnet", 1_024),
    ("claude-3-5-haiku", 2_048),
    ("claude-3-haiku", 2_048),
    ("claude-3-opus", 1_024),
)

_MARKABLE = frozenset(
    {
        "text",
        "image",
        "document",
        "search_result",
        "container_upload",
        "tool_use",
        "tool_result",
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "tool_search_tool_result",
    }
)
"""Block types the SDK lets carry ``cache_control`` (thinking blocks and unknown types cannot)."""


class TokenCounter(Protocol):
    """Anything with ``count(text) -> int`` (``hydrangea.asof.TokenCounter`` fits)."""

    def count(self, text: str) -> int:
        """Tokens in ``text``."""
        ...


def minimum_cacheable_tokens(model: str | None) -> int:
    """The shortest prefix ``model`` caches, from Anthropic's table (1,024 to 4,096 tokens).

    Matched by model-name prefix (dated and ``-latest`` names included); an unknown or missing
    model gets :data:`DEFAULT_MIN_TOKENS`.
    """
    if model:
        name = model.lower().removeprefix("anthropic/")
        for prefix, minimum in _MINIMUMS:
            if name.startswith(prefix):
                return minimum
    return DEFAULT_MIN_TOKENS


@dataclass(frozen=True, slots=True)
class AnthropicCaching:
    """How breakpoints are placed. The default places them; ``enabled=False`` opts out.

    ``ttl`` is written into every placed marker (``None`` leaves the provider's default, five
    minutes). ``model`` selects the minimum cacheable length; ``min_tokens`` overrides it.
    ``counter`` estimates a prefix's tokens (default: four characters a token).
    """

    enabled: bool = True
    ttl: CacheTTL | None = None
    model: str | None = None
    min_tokens: int | None = None
    counter: TokenCounter | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.ttl is not None and self.ttl not in get_args(CacheTTL):
            raise CachingError(f"ttl must be one of {get_args(CacheTTL)}, got {self.ttl!r}")
        if self.min_tokens is not None and self.min_tokens < 0:
            raise CachingError(f"min_tokens must not be negative, got {self.min_tokens}")

    @property
    def minimum(self) -> int:
        """The minimum cacheable prefix in tokens for this setting."""
        if self.min_tokens is not None:
            return self.min_tokens
        return minimum_cacheable_tokens(self.model)

    def count(self, text: str) -> int:
        """Estimated tokens of ``text``."""
        if self.counter is not None:
            return self.counter.count(text)
        return -(-len(text) // 4)

    @property
    def marker(self) -> dict[str, str]:
        """The ``cache_control`` value placed."""
        if self.ttl is None:
            return {"type": "ephemeral"}
        return {"type": "ephemeral", "ttl": self.ttl}


_DEFAULT = AnthropicCaching()


@dataclass(frozen=True, slots=True)
class BreakpointPlan:
    """Where a request's breakpoints are, as block positions (tools, system, messages order)."""

    kept: tuple[int, ...]
    """Breakpoints the caller had set."""
    placed: tuple[int, ...]
    """Breakpoints this module added."""
    stable_blocks: int
    """Blocks before the first one that may change next turn."""
    anchor: int | None
    """The history anchor: the last markable stable block."""

    @property
    def positions(self) -> tuple[int, ...]:
        """Every breakpoint of the request, ascending."""
        return tuple(sorted((*self.kept, *self.placed)))


def marker_positions(kwargs: Mapping[str, Any]) -> tuple[int, ...]:
    """Block positions that carry ``cache_control`` in ``kwargs``."""
    return tuple(
        n
        for n, block in enumerate(request_blocks(kwargs))
        if isinstance(block, dict) and "cache_control" in block
    )


def _markable(block: object, section: str) -> bool:
    if not isinstance(block, dict):
        return False
    if section == "tools":
        return True
    kind = block.get("type")
    if kind == "text" and not block.get("text"):
        return False  # the API refuses cache_control on an empty text block
    return kind in _MARKABLE


def cache_anthropic_request(
    kwargs: Mapping[str, Any],
    *,
    stable_messages: int | None = None,
    earlier: Sequence[int] = (),
    caching: AnthropicCaching | None = None,
    blocks: Sequence[_Block] | None = None,
    kept: tuple[int, ...] | None = None,
    memo: dict[str, Any] | None = None,
    cuts: Sequence[int] = (),
    owned: bool = False,
) -> tuple[dict[str, Any], BreakpointPlan]:
    """``kwargs`` with breakpoints placed, and where they are.

    ``stable_messages`` is how many leading messages belong to the stable history (``None``:
    all of them); tools and system always do. ``earlier`` holds the ``stable_messages`` of the
    previous requests of the session, newest first, where their history anchors were (only
    those whose messages this request still starts with). ``cuts`` holds message counts where
    a later collection may cut the stable history, newest first (a cut guard goes on the last
    block before each, while breakpoints remain). The input is not changed, unless ``owned``
    says the caller owns the top-level lists of ``kwargs`` (a request built fresh for this
    call): marked entries are then replaced in those lists instead of copies of them.
    ``blocks`` and ``kept`` (the blocks and the positions of caller markers, as computed here)
    may be passed by a caller that keeps them for an unchanged prefix, with a ``memo`` dict
    (kept by that caller, emptied when its prefix changes) for the token estimate of the
    prefix; the cost is then independent of the conversation's length.
    """
    caching = caching or _DEFAULT
    if blocks is None:
        blocks = _blocks(kwargs)
    messages = kwargs.get("messages") or ()
    stable = len(messages) if stable_messages is None else stable_messages
    if not 0 <= stable <= len(messages):
        raise CachingError(f"stable_messages {stable} outside 0..{len(messages)}")
    if kept is None:
        kept = tuple(
            n
            for n, b in enumerate(blocks)
            if isinstance(b.value, dict) and "cache_control" in b.value
        )
    stable_end = _section_end(blocks, stable)
    if not caching.enabled:
        return dict(kwargs), BreakpointPlan(kept, (), stable_end, None)
    prefix = _memo_prefix_tokens(
        blocks, stable_end, caching.count, caching.minimum, memo=memo, counter_key=caching.counter
    )
    prefix_total = prefix[-1] if prefix else 0
    chosen = set(kept)
    placed: list[int] = []

    def add(position: int | None, *, check_minimum: bool) -> None:
        if position is None or position in chosen or len(chosen) >= MAX_BREAKPOINTS:
            return
        if check_minimum and (prefix[position] if position < len(prefix) else prefix_total) < (
            caching.minimum
        ):
            return
        chosen.add(position)
        placed.append(position)

    last: dict[int, int | None] = {} if memo is None else memo.setdefault("last", {})
    fixed = blocks.fixed if isinstance(blocks, BlockView) else 0

    def last_before(messages: int) -> int | None:
        """The last markable block before message ``messages`` (memoized in the fixed part)."""
        if messages in last:
            return last[messages]
        end = _section_end(blocks, messages)
        found = _last_markable(blocks, 0, end)
        if end <= fixed:
            last[messages] = found
        return found

    anchor = _last_markable(blocks, 0, stable_end)
    head_end = _section_end(blocks, 0)
    head = _last_markable(blocks, 0, min(head_end, stable_end))
    targets = [last_before(m) for m in earlier[:2]]

    def bridge(target: int | None) -> int | None:
        """A markable block within the lookback after ``target``, unless one is chosen."""
        if target is None or anchor is None or target > anchor:
            return None
        if any(target <= p < target + LOOKBACK_BLOCKS for p in chosen):
            return None
        return _first_markable(blocks, target, min(target + LOOKBACK_BLOCKS, anchor + 1))

    guards = [
        guard for cut in cuts if 0 <= cut <= stable and (guard := last_before(cut)) is not None
    ]
    add(anchor, check_minimum=False)
    if targets:
        add(bridge(targets[0]), check_minimum=True)
    if guards:
        add(guards[0], check_minimum=True)
    add(head, check_minimum=True)
    if len(targets) > 1:
        add(bridge(targets[1]), check_minimum=True)
    for guard in guards[1:]:
        add(guard, check_minimum=True)
    plan = BreakpointPlan(kept, tuple(sorted(placed)), stable_end, anchor)
    if kept:  # (without the caller's markers every breakpoint has the same marker)
        markers: dict[int, object] = {}
        for n in kept:
            value = blocks[n].value
            markers[n] = value.get("cache_control") if isinstance(value, dict) else None
        markers.update((n, caching.marker) for n in plan.placed)
        _check_ttl_order([markers[n] for n in sorted(markers)], sorted(markers))
    return _apply(kwargs, blocks, plan.placed, caching.marker, owned=owned), plan


def _section_end(blocks: Sequence[_Block], messages: int) -> int:
    """The number of blocks before message ``messages`` (tools and system included)."""
    if isinstance(blocks, BlockView):
        return blocks.section_end(messages)
    head = 0
    while head < len(blocks) and blocks[head].section != "messages":
        head += 1  # tools and system: a few blocks
    return bisect_left(blocks, messages, lo=head, key=lambda block: block.outer)


def _prefix_tokens(
    blocks: Sequence[_Block], end: int, count: Callable[[str], int], enough: int
) -> list[int]:
    """Estimated tokens up to each block; counting stops once ``enough`` is reached (later
    prefixes are only longer), so a long conversation costs O(blocks up to the minimum)."""
    total = 0
    out: list[int] = []
    for n in range(end):
        if total >= enough:
            break  # every later prefix holds the same or more (the caller reads the last)
        total += count(json.dumps(blocks[n].value, ensure_ascii=False, separators=(",", ":")))
        out.append(total)
    return out


def _memo_prefix_tokens(
    blocks: Sequence[_Block],
    end: int,
    count: Callable[[str], int],
    enough: int,
    *,
    memo: dict[str, Any] | None,
    counter_key: object,
) -> list[int]:
    """:func:`_prefix_tokens`, continued from the leading blocks an earlier call counted while
    they are the same objects (those of a :class:`BlockView`'s fixed part are, for as long as
    its caller keeps ``memo``): each block is counted once while the prefix grows to the
    minimum, and not at all after that."""
    if memo is None:
        return _prefix_tokens(blocks, end, count, enough)
    fixed = blocks.fixed if isinstance(blocks, BlockView) else 0
    values: list[object] = []
    out: list[int] = []
    hit = memo.get("tokens")
    if hit is not None and hit[0] is counter_key and hit[1] == enough:
        _, _, values, out, fixed_then = hit
        limit = min(len(values), end)
        same = min(fixed, fixed_then, limit)  # fixed when stored and now: unchanged since
        while same < limit and blocks[same].value is values[same]:
            same += 1
        if same == len(values) and (same == end or (out and out[-1] >= enough)):
            return out
        values, out = values[:same], out[:same]
    total = out[-1] if out else 0
    for n in range(len(out), end):
        if total >= enough:
            break  # every later prefix holds the same or more (the caller reads the last)
        value = blocks[n].value
        total += count(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
        values.append(value)
        out.append(total)
    memo["tokens"] = (counter_key, enough, values, out, fixed)
    return out


def keep_memo(memo: dict[str, Any], messages: int, blocks: int) -> None:
    """Cut the placement ``memo`` back to a prefix cut back to its first ``messages`` messages
    and ``blocks`` blocks (a request cache's detach): the prefix's token counts stay.

    They are trusted without a look only for the first ``blocks`` blocks: the kept messages'
    own count, which leaves out the head (tools, system) a request's fixed part also spans, so
    a lower bound and nothing past the cut. Past them each block is compared with the one
    counted (the same object) before its count is used again, so a prefix that grows back to
    the minimum is not counted again from its start. The last markable block before each
    message count is forgotten (found again in a few steps).
    """
    memo.pop("last", None)
    tokens = memo.get("tokens")
    if tokens is not None:
        key, enough, values, out, fixed = tokens
        memo["tokens"] = (key, enough, values, out, min(fixed, blocks))


def _last_markable(blocks: Sequence[_Block], start: int, stop: int) -> int | None:
    for n in range(stop - 1, start - 1, -1):
        block = blocks[n]
        if _markable(block.value, block.section):
            return n
    return None


def _first_markable(blocks: Sequence[_Block], start: int, stop: int) -> int | None:
    for n in range(start, stop):
        block = blocks[n]
        if _markable(block.value, block.section):
            return n
    return None


def _apply(
    kwargs: Mapping[str, Any],
    blocks: Sequence[_Block],
    placed: Sequence[int],
    marker: dict[str, str],
    *,
    owned: bool = False,
) -> dict[str, Any]:
    out = dict(kwargs)
    copied: dict[str, list[Any]] = {}
    message_lists: dict[int, list[Any]] = {}

    def fresh(key: str) -> list[Any]:
        listed = kwargs[key]
        return listed if owned and isinstance(listed, list) else list(listed)

    for position in placed:
        block = blocks[position]
        assert isinstance(block.value, dict)
        marked = {**block.value, "cache_control": dict(marker)}
        if block.section != "messages":
            target = copied.get(block.section)
            if target is None:
                target = copied[block.section] = fresh(block.section)
            target[block.outer] = marked
            continue
        messages = copied.get("messages")
        if messages is None:
            messages = copied["messages"] = fresh("messages")
        content = message_lists.get(block.outer)
        if content is None:
            content = message_lists[block.outer] = list(messages[block.outer]["content"])
            messages[block.outer] = {**messages[block.outer], "content": content}
        content[block.inner] = marked
    out.update(copied)
    return out


_TTL_ORDER = {"1h": 1, "5m": 0}


def _check_ttl_order(markers: Sequence[object], positions: Sequence[int]) -> None:
    """A longer-lived breakpoint may not follow a shorter-lived one (the API refuses it)."""
    shortest = 1
    for position, marker in zip(positions, markers, strict=True):
        if not isinstance(marker, dict):
            continue
        rank = _TTL_ORDER.get(str(marker.get("ttl", "5m")), 0)
        if rank > shortest:
            raise CachingError(
                f"block {position} has a 1h cache breakpoint after a 5m one; Anthropic requires "
                "longer-lived breakpoints first (set ttl to match the caller's markers)"
            )
        shortest = min(shortest, rank)


def strip_cache_control(value: object) -> object:
    """``value`` with every ``cache_control`` key removed (a copy), to compare prefixes."""
    return without_key(value, "cache_control")


def cached_anthropic_kwargs(
    adapter: Adapter,
    items: Sequence[NativeContent],
    *,
    stable_items: int | None = None,
    earlier_items: Sequence[int] = (),
    caching: AnthropicCaching | None = None,
    boundaries: MutableMapping[int, int] | None = None,
    built: dict[str, Any] | None = None,
    shared_of: Callable[[int], int] | None = None,
    blocks: tuple[Sequence[Any], tuple[int, ...]] | None = None,
    memo: dict[str, Any] | None = None,
    cut_items: Sequence[int] = (),
) -> dict[str, Any]:
    """Build the request for ``items`` and place its breakpoints.

    ``stable_items`` is how many leading items are the stable history (``None``: all);
    ``earlier_items`` the same count for the previous requests of the session, newest first
    (see :func:`cache_anthropic_request`). Each boundary is found by building the request of
    the items before it and taking the messages it shares with the full request; pass a
    ``boundaries`` mapping (item count to message count, kept while those items do not change)
    to build each boundary once per session. ``built`` (the request already built for
    ``items``) and ``shared_of`` (boundary to shared message count) let an incremental builder
    (:mod:`hydrangea.context.request_cache`) skip both builds; a ``built`` request is the
    caller's own (its top-level lists are marked in place). ``cut_items`` are item counts where
    a later collection may cut the stable history, newest first (cut guards, see
    :func:`cache_anthropic_request`).
    """
    kwargs = adapter.build_request(items) if built is None else built
    caching = caching or _DEFAULT
    if not caching.enabled:
        return kwargs
    messages = kwargs.get("messages") or []
    total = len(items)
    stable = total if stable_items is None else stable_items
    if not 0 <= stable <= total:
        raise CachingError(f"stable_items {stable} outside 0..{total}")

    def shared(boundary: int) -> int:
        if boundaries is not None and boundary < total and boundary in boundaries:
            return min(boundaries[boundary], len(messages))
        count = shared_entries(
            adapter.build_request, items, messages, "messages", boundary, shared_of=shared_of
        )
        if boundaries is not None and boundary < total and shared_of is None:
            boundaries[boundary] = count
        return count

    stable_messages = shared(stable)
    earlier = [shared(n) for n in earlier_items[:2] if 0 < n <= stable]
    cuts = [shared(n) for n in cut_items[:MAX_BREAKPOINTS] if 0 < n <= stable]
    out, _ = cache_anthropic_request(
        kwargs, stable_messages=stable_messages, earlier=earlier, caching=caching,
        blocks=None if blocks is None else blocks[0], kept=None if blocks is None else blocks[1],
        memo=memo, cuts=cuts, owned=built is not None,
    )
    return out
