"""Anthropic cache breakpoints: placed by default, never on the overlay, within the lookback.

The long-session property checks the requests with an oracle of its own: it flattens each
request's blocks itself, finds the markers and the overlay by their text, and compares the
prefixes byte for byte (markers removed) between consecutive requests.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.coop import CoopContext
from hydrangea.errors import CachingError
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle, Placement, Stage
from hydrangea.message import Message, Role, ToolResultPart
from hydrangea.providers.anthropic.blocks import BlockView, _Block
from hydrangea.providers.anthropic.caching import (
    AnthropicCaching,
    _memo_prefix_tokens,
    cache_anthropic_request,
    minimum_cacheable_tokens,
)
from tests.support import check_anthropic
from tests.support.coop_areas import Probe

SYSTEM = "You are a careful agent. " * 240  # about 1,500 tokens at four characters a token
OVERLAY = "OVERLAY-"


def _flat(kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    """The oracle's own block order: tools, system blocks, then each message's blocks."""
    out: list[dict[str, Any]] = list(kwargs.get("tools", []))
    out.extend(kwargs.get("system", []))
    for message in kwargs["messages"]:
        content = message["content"]
        out.extend(content if isinstance(content, list) else [{"string": content}])
    return out


def _bare(block: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in block.items() if k != "cache_control"}, sort_keys=True)


def _markers(blocks: list[dict[str, Any]]) -> list[int]:
    return [n for n, block in enumerate(blocks) if "cache_control" in block]


# -- the long-session property ---------------------------------------------------------------


@dataclass(frozen=True)
class Op:
    kind: str
    size: int


ops = st.builds(
    Op,
    st.sampled_from(["user", "reply", "tools", "tools", "area", "retire", "component"]),
    st.integers(1, 28),
)


def _component(n: int, size: int) -> Component:
    text = f"{OVERLAY}{n}"
    match size % 4:
        case 0:
            return Component(f"permanent {n}")  # appended once
        case 1:
            return Component(text, ttl=1 + size % 3, placement=Placement.before)
        case 2:
            return Component(text, ttl=1, cadence=1 + size % 3)
        case _:
            stages = [Stage(Placement.before, 1), Stage(Placement.after, 2)]
            return Component(text, stages=stages, cycle=True)


@given(st.lists(st.lists(ops, min_size=1, max_size=3), min_size=2, max_size=24))
def test_breakpoints_over_long_sessions(episodes: list[list[Op]]) -> None:
    context = Context(GatewayType.anthropic)
    context.emplace_message(Message(role=Role.system, content=SYSTEM))
    context.emplace_message(Message(role=Role.user, content="the task"))
    coop = CoopContext(context)
    lifecycle = Lifecycle(coop)
    areas: list[Probe] = []
    previous: list[dict[str, Any]] | None = None
    collections = coop.collections
    calls = 0
    for e, episode in enumerate(episodes):
        for o, op in enumerate(episode):
            match op.kind:
                case "user":
                    context.emplace_message(Message(role=Role.user, content=f"user {e}.{o}"))
                case "reply":
                    context.push_back({"role": "assistant", "content": [
                        {"type": "text", "text": f"reply {e}.{o}"}]})
                case "tools":
                    ids = [f"toolu_{calls + k}" for k in range(op.size)]
                    calls += op.size
                    uses = [{"type": "tool_use", "id": i, "name": "read", "input": {"n": i}}
                            for i in ids]
                    context.push_back({"role": "assistant", "content": uses})
                    results = tuple(ToolResultPart(call_id=i, content=f"result {i}") for i in ids)
                    context.emplace_message(Message(role=Role.user, content=results))
                case "area":
                    probe = Probe(f"a{e}.{o}", [], [[f"area {e}.{o}"]], promoted=[f"sum {e}.{o}"])
                    coop.register(probe)
                    areas.append(probe)
                case "retire":
                    if areas:
                        areas.pop(op.size % len(areas)).retire()
                case _:
                    lifecycle.add(_component(e * 10 + o, op.size))
        request = lifecycle.render()
        kwargs = request.kwargs
        check_anthropic.validate(kwargs)
        blocks = _flat(kwargs)
        markers = _markers(blocks)
        assert 1 <= len(markers) <= 4
        assert markers[0] <= len(kwargs["system"]) - 1  # the system prompt is long enough
        collected = coop.collections != collections
        collections = coop.collections
        if previous is not None and not collected:
            # what was sent is history: the previous request's blocks begin this one's
            assert [_bare(b) for b in blocks[: len(previous)]] == [_bare(b) for b in previous]
            last = max(_markers(previous))
            assert [_bare(b) for b in blocks[: last + 1]] == [
                _bare(b) for b in previous[: last + 1]
            ]
            assert any(last <= p < last + 20 for p in markers), (last, markers)
        previous = blocks
        # the stored items never carry a marker
        assert "cache_control" not in json.dumps(context[:])
        # the model answers every request, as in an agent loop
        context.push_back({"role": "assistant", "content": [{"type": "text", "text": f"a{e}"}]})


# -- scenarios ---------------------------------------------------------------------------------


def _kwargs(turns: int) -> dict[str, Any]:
    """A long system prompt and ``turns`` one-block user messages, without breakpoints."""
    context = Context(GatewayType.anthropic)
    context.emplace_message(Message(role=Role.system, content=SYSTEM))
    for t in range(turns):
        context.emplace_message(Message(role=Role.user, content=f"turn {t}"))
    return context.request(caching=AnthropicCaching(enabled=False))


def test_the_default_request_marks_the_head_and_the_last_stable_block() -> None:
    kwargs = _kwargs(3)
    out, plan = cache_anthropic_request(kwargs, stable_messages=2)
    blocks = _flat(out)
    # head: the system block (index 0); history anchor: message 1's block (index 2)
    assert _markers(blocks) == [0, 2]
    assert plan.placed == (0, 2) and plan.kept == ()
    assert "cache_control" not in json.dumps(kwargs)  # the input is not changed
    assert out["messages"][2] is kwargs["messages"][2]  # unmarked messages are shared


def test_a_short_prefix_keeps_only_the_history_anchor() -> None:
    context = Context(GatewayType.anthropic)
    context.emplace_message(Message(role=Role.system, content="Be brief."))
    context.emplace_message(Message(role=Role.user, content="hi"))
    blocks = _flat(context.request())
    assert _markers(blocks) == [1]  # the head is under 1,024 tokens: skipped


def test_opt_out_and_ttl() -> None:
    kwargs = _kwargs(2)
    out, _ = cache_anthropic_request(kwargs, caching=AnthropicCaching(enabled=False))
    assert _markers(_flat(out)) == []
    out, _ = cache_anthropic_request(kwargs, caching=AnthropicCaching(ttl="1h"))
    assert {json.dumps(b["cache_control"]) for b in _flat(out) if "cache_control" in b} == {
        '{"type": "ephemeral", "ttl": "1h"}'
    }
    with pytest.raises(CachingError):
        AnthropicCaching(ttl="2h")  # type: ignore[arg-type]


def test_caller_breakpoints_are_kept_and_counted() -> None:
    kwargs = _kwargs(6)
    marked = copy.deepcopy(kwargs)
    for m in (0, 1, 2):
        marked["messages"][m]["content"][0]["cache_control"] = {"type": "ephemeral"}
    out, plan = cache_anthropic_request(marked)
    blocks = _flat(out)
    assert len(_markers(blocks)) == 4
    assert plan.kept == (1, 2, 3) and plan.placed == (6,)  # only the history anchor fits
    # a 1h marker after the caller's 5m ones would be refused by the API
    with pytest.raises(CachingError, match="longer-lived"):
        cache_anthropic_request(marked, caching=AnthropicCaching(ttl="1h"))


def test_a_long_turn_gets_a_bridge_within_the_lookback() -> None:
    kwargs = _kwargs(40)  # system + 40 one-block messages
    out, _ = cache_anthropic_request(kwargs, stable_messages=40, earlier=[10])
    markers = _markers(_flat(out))
    # previous anchor: message 9 (block 10); new anchor: block 40, 30 blocks on: bridged at 10
    assert markers == [0, 10, 40]
    out, _ = cache_anthropic_request(kwargs, stable_messages=40, earlier=[30, 5])
    assert _markers(_flat(out)) == [0, 5, 40]  # block 30 is in the anchor's lookback


def test_thinking_and_empty_blocks_are_never_marked() -> None:
    kwargs = {
        "system": [{"type": "text", "text": SYSTEM}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "q"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "a"},
                {"type": "thinking", "thinking": "t", "signature": "s"},
                {"type": "text", "text": ""},
            ]},
        ],
    }
    out, _ = cache_anthropic_request(kwargs)
    assert _markers(_flat(out)) == [0, 2]
    check_anthropic.validate(out)


def test_tools_carry_the_head_when_there_is_no_system() -> None:
    tools = [{"name": f"t{n}", "description": "d" * 2_000, "input_schema": {"type": "object"}}
             for n in range(3)]
    kwargs = {"tools": tools, "messages": [{"role": "user", "content": [
        {"type": "text", "text": "q"}]}]}
    out, _ = cache_anthropic_request(kwargs)
    assert _markers(_flat(out)) == [2, 3]
    assert "cache_control" not in tools[2]


def test_minimums_follow_the_documented_table() -> None:
    # platform.claude.com prompt-caching: 4,096 for Opus 4.5/4.6 and Haiku 4.5,
    # 2,048 for Haiku 3/3.5, 1,024 for Sonnet 4.5, Opus 4/4.1 and Sonnet 3.7
    assert minimum_cacheable_tokens("claude-opus-4-5-20251101") == 4_096
    assert minimum_cacheable_tokens("claude-haiku-4-5") == 4_096
    assert minimum_cacheable_tokens("claude-3-5-haiku-latest") == 2_048
    assert minimum_cacheable_tokens("claude-sonnet-4-5") == 1_024
    assert minimum_cacheable_tokens("claude-opus-4-1") == 1_024
    assert minimum_cacheable_tokens(None) == 1_024
    short = AnthropicCaching(model="claude-haiku-4-5")
    out, _ = cache_anthropic_request(_kwargs(2), caching=short)
    assert _markers(_flat(out)) == [2]  # 1,500 tokens of system: under Haiku 4.5's minimum


# -- cut guards: the prefix a collection keeps is cached before the collection ------------------


def _entries_read(entries: set[tuple[str, ...]], blocks: list[dict[str, Any]]) -> int:
    """The oracle's Anthropic read: the longest prefix written at an earlier request's marker
    that ends among the 20 blocks up to one of this request's markers (in blocks)."""
    bare = [_bare(b) for b in blocks]
    best = 0
    for marker in _markers(blocks):
        for end in range(marker + 1, max(marker - 19, 0), -1):
            if tuple(bare[:end]) in entries:
                best = max(best, end)
                break
    return best


def _write(entries: set[tuple[str, ...]], blocks: list[dict[str, Any]]) -> None:
    bare = [_bare(b) for b in blocks]
    entries.update(tuple(bare[: marker + 1]) for marker in _markers(blocks))


def test_a_cut_guard_marks_the_block_before_the_cut() -> None:
    kwargs = _kwargs(6)  # system (block 0) + six one-block messages (blocks 1-6)
    out, plan = cache_anthropic_request(kwargs, stable_messages=6, cuts=[3])
    # message 2 (block 3) is the last before the cut; head 0; anchor 6
    assert _markers(_flat(out)) == [0, 3, 6] and plan.placed == (0, 3, 6)
    out, _ = cache_anthropic_request(kwargs, stable_messages=4, cuts=[5, 2])
    assert _markers(_flat(out)) == [0, 2, 4]  # the cut at 5 lies after the stable history
    out, _ = cache_anthropic_request(kwargs, stable_messages=6, cuts=[4, 3, 2])
    assert _markers(_flat(out)) == [0, 3, 4, 6]  # newest guard first, then while room is left
    assert "cache_control" not in json.dumps(kwargs)


def test_the_prefix_before_a_collected_area_is_read_after_the_collection() -> None:
    context = Context(GatewayType.anthropic)
    context.emplace_message(Message(role=Role.system, content=SYSTEM))
    context.emplace_message(Message(role=Role.user, content="the task"))
    coop = CoopContext(context)
    lifecycle = Lifecycle(coop)
    entries: set[tuple[str, ...]] = set()
    reads: list[int] = []

    def turn() -> list[str]:
        kwargs = lifecycle.render().kwargs
        check_anthropic.validate(kwargs)
        blocks = _flat(kwargs)
        reads.append(_entries_read(entries, blocks))
        _write(entries, blocks)
        return [_bare(b) for b in blocks]

    turn()
    # a summary region and the segment after it are rendered in the same turn, as a
    # compacting conversation does: no request ever ends its history at the summary
    region = Probe("region", [], [["summary 0"]])
    segment = Probe("segment", [], [["next request"]], promoted=["summary 1"])
    coop.register(region)
    coop.register(segment)
    turn()
    for n in range(4):
        context.push_back({"role": "assistant", "content": [{"type": "text", "text": f"r{n}"}]})
        context.emplace_message(Message(role=Role.user, content=f"tool output {n}"))
        before = turn()
    segment.retire()
    after = turn()
    assert coop.collections == 1
    kept = next(n for n, (b, a) in enumerate(zip(before, after, strict=False)) if b != a)
    assert kept == 3  # system, the task, summary 0
    assert reads[-1] == kept  # without the guard: 2 (only up to the task)


# -- the block view of a cached prefix -------------------------------------------------------


@given(
    st.integers(0, 3),
    st.lists(st.integers(1, 3), max_size=8),
    st.integers(0, 8),
    st.lists(st.integers(1, 3), max_size=5),
)
def test_a_block_view_reads_like_the_concatenated_list(
    head_size: int, cached_sizes: list[int], cut: int, rest_sizes: list[int]
) -> None:
    # oracle: the plain list head + cached blocks of the first ``cut`` messages + rest
    head = [_Block("system", n, -1, {"system": n}) for n in range(head_size)]
    cached = [_Block("messages", m, b, {"m": m, "b": b})
              for m, size in enumerate(cached_sizes) for b in range(size)]
    cut = min(cut, len(cached_sizes))
    count = sum(cached_sizes[:cut])
    listed: list[dict[str, Any]] = [
        {"role": "user", "content": [{"m": m, "b": b} for b in range(size)]}
        for m, size in enumerate([*cached_sizes[:cut], *rest_sizes])
    ]
    rest = [_Block("messages", cut + m, b, listed[cut + m]["content"][b])
            for m, size in enumerate(rest_sizes) for b in range(size)]
    flat = head + cached[:count] + rest
    view = BlockView(head, cached, count, listed, cut)
    assert len(view) == len(flat)
    assert all(view[n] == flat[n] for n in range(-len(flat), len(flat)))
    assert view[:] == flat
    with pytest.raises(IndexError):
        view[len(flat)]
    for messages in range(cut + len(rest_sizes) + 2):
        first = next((n for n, b in enumerate(flat) if b.section == "messages"
                      and b.outer >= messages), len(flat))
        assert view.section_end(messages) == first
    assert view.fixed == (head_size + count if count else 0)


@given(
    st.lists(
        st.tuples(st.lists(st.integers(0, 60), max_size=12), st.integers(0, 12), st.booleans()),
        min_size=1,
        max_size=8,
    ),
    st.integers(1, 200),
)
def test_the_prefix_token_memo_counts_like_a_fresh_count(
    steps: list[tuple[list[int], int, bool]], enough: int
) -> None:
    # each step: a list of block text lengths, how many leading blocks stay the same objects
    # as in the step before, and whether the caller kept its memo; the oracle counts afresh
    memo: dict[str, Any] = {}
    previous: list[tuple[int, _Block]] = []  # (text length, block)
    for sizes, keep, kept_memo in steps:
        made = [
            previous[n] if n < min(keep, len(previous)) and previous[n][0] == size
            else (size, _Block("messages", n, 0, {"t": "x" * size}))
            for n, size in enumerate(sizes)
        ]
        blocks = [block for _, block in made]
        if not kept_memo:
            memo = {}
        end = len(blocks)
        got = _memo_prefix_tokens(blocks, end, len, enough, memo=memo,
                                  counter_key=None)
        totals: list[int] = []
        for block in blocks:
            if totals and totals[-1] >= enough:
                break
            text = json.dumps(block.value, ensure_ascii=False, separators=(",", ":"))
            totals.append((totals[-1] if totals else 0) + len(text))
        assert got == totals
        previous = made
