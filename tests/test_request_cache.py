"""Incremental request building (issue 16): the cached build equals a from-scratch build.

The oracle is the gateway's own builder run on the whole item list with no cache
(``Adapter.build_request``; on Anthropic ``cached_anthropic_kwargs`` without ``built=``), after
every step of a random session: appends of every kind, model output with tool calls (and
Gemini's id-less calls, Responses reasoning), collector detaches, save/load, and lifecycle-style
requests (a stable prefix plus an overlay tail).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, TextPart, ToolCallPart, ToolResultPart
from hydrangea.providers.anthropic.caching import cached_anthropic_kwargs
from hydrangea.providers.native import NativeContent
from tests.test_conformance import response

ALL = list(GatewayType)
IDS = ["c1", "c2", "lookup", "lookup#1", "lookup#2", "x"]

step = st.one_of(
    st.tuples(st.just("user"), st.text("ab", max_size=3)),
    st.tuples(st.just("system"), st.text("ab", max_size=3)),
    st.tuples(
        st.just("calls"), st.lists(st.sampled_from(["c1", "c2", "x"]), min_size=1, max_size=2)
    ),
    st.tuples(st.just("result"), st.sampled_from(IDS)),
    st.tuples(st.just("reply"), st.just(False)),
    st.tuples(st.just("assistant"), st.text("ab", max_size=3)),
    st.tuples(st.just("detach"), st.integers(1, 4)),
    st.tuples(st.just("reload"), st.just(0)),
)


def oracle(context: Context, stable: int, tail: list[NativeContent]) -> dict[str, Any]:
    kept = from_latest_compaction(list(context[:stable]))
    items = [*kept, *copy.deepcopy(tail)]
    if context.gateway is GatewayType.anthropic:
        return cached_anthropic_kwargs(context.adapter, items, stable_items=len(kept))
    return context.adapter.build_request(items)


def latest_compaction(items: Sequence[NativeContent]) -> int | None:
    """The index of the latest item holding a compaction (``None``: none)."""
    for index in range(len(items) - 1, -1, -1):
        item = items[index]
        content = item.get("content")
        if item.get("type") == "compaction" or (
            item.get("role") == "assistant" and isinstance(content, list)
            and any(isinstance(b, dict) and b.get("type") == "compaction" for b in content)
        ):
            return index
    return None


def from_latest_compaction(items: list[NativeContent]) -> list[NativeContent]:
    """What the providers' documented rule keeps of a history: everything from its latest
    compaction on (a Responses ``compaction`` item; an Anthropic assistant message holding a
    ``compaction`` block, sent from that block on), after the leading system items (the
    system prompt is not part of what a compaction summarizes)."""
    lead = 0
    while lead < len(items) and items[lead].get("role") in ("system", "developer"):
        lead += 1
    for index in range(len(items) - 1, -1, -1):
        item = items[index]
        if item.get("type") == "compaction":
            return [*items[:lead], *items[index:]]
        content = item.get("content")
        if item.get("role") == "assistant" and isinstance(content, list):
            at = [n for n, block in enumerate(content)
                  if isinstance(block, dict) and block.get("type") == "compaction"]
            if at:
                return [*items[:lead], {**item, "content": content[at[-1]:]},
                        *items[index + 1 :]]
    return items


def overlay(gateway: GatewayType) -> list[NativeContent]:
    probe = Context(gateway)
    probe.emplace_message(Message(role=Role.user, content="[overlay] now"))
    return list(probe)


def apply(context: Context, kind: str, value: Any) -> Context:
    gateway = context.gateway
    match kind:
        case "user":
            context.emplace_message(Message(role=Role.user, content="u" + value))
        case "system":
            context.emplace_message(Message(role=Role.system, content="s" + value))
        case "assistant":
            context.emplace_message(Message(role=Role.assistant, content="a" + value))
        case "calls":
            parts = tuple(
                ToolCallPart(id=ident, name="lookup", arguments={})
                for ident in dict.fromkeys(value)
            )
            context.emplace_message(Message(role=Role.assistant, content=parts))
        case "result":
            result = ToolResultPart(call_id=value, content="r")
            context.emplace_message(Message(role=Role.user, content=(result,)))
        case "reply":
            context.push_back(response(gateway, unknown=value))
        case "detach":
            context.detach_tail(max(0, len(context) - value))
        case "reload":
            return Context.from_json(context.to_json())
    return context


def dumped(kwargs: dict[str, Any]) -> str:
    return json.dumps(kwargs, sort_keys=True, default=repr)


@given(
    gateway=st.sampled_from(ALL),
    steps=st.lists(step, max_size=25),
    cuts=st.lists(st.integers(0, 30), min_size=25, max_size=25),
)
def test_incremental_requests_equal_a_build_from_scratch(
    gateway: GatewayType, steps: list[tuple[str, Any]], cuts: list[int]
) -> None:
    check_every_step(Context(gateway), steps, cuts, apply)


def check_every_step(
    context: Context,
    steps: list[tuple[str, Any]],
    cuts: list[int],
    apply_step: Callable[[Context, str, Any], Context],
) -> None:
    """After each step: the whole Context's request, and the request of its first ``cut``
    items plus an overlay tail, equal the builds from scratch."""
    tail = overlay(context.gateway)
    for (kind, value), cut in zip(steps, cuts, strict=False):
        context = apply_step(context, kind, value)
        assert dumped(context.request()) == dumped(oracle(context, len(context), []))
        stable = min(cut, len(context))
        built = context.build_incremental(stable, copy.deepcopy(tail))
        assert dumped(built) == dumped(oracle(context, stable, tail))
        context.request()  # what is sent (and answered next) is the history itself


@given(gateway=st.sampled_from(ALL), steps=st.lists(step, min_size=3, max_size=15))
def test_mutating_a_returned_request_corrupts_neither_the_context_nor_the_next(
    gateway: GatewayType, steps: list[tuple[str, Any]]
) -> None:
    context = Context(gateway)
    for kind, value in steps:
        context = apply(context, kind, value)
        context.request()  # warm the cache
    saved = context.to_json()
    expected = dumped(oracle(context, len(context), []))
    request = context.request()
    for key, value in list(request.items()):
        if isinstance(value, list):
            value.clear()
            value.append({"role": "user", "content": "injected"})
        elif isinstance(value, dict):
            value.clear()
        request[key] = "replaced"
    request["extra"] = 1
    assert context.to_json() == saved
    assert dumped(context.request()) == expected


def test_a_requests_own_lists_are_not_the_contexts() -> None:
    """The top-level lists of a request are the caller's: changing them changes nothing the
    Context holds or saves (the message dicts inside are shared read-only, the stored items'
    own where identical: see "What you may mutate")."""
    for gateway in ALL:
        context = Context(gateway)
        context.emplace_message(Message(role=Role.user, content="hi"))
        context.emplace_message(Message(role=Role.assistant, content=(TextPart(text="yo"),)))
        context.emplace_message(Message(role=Role.user, content="again"))
        context.emplace_message(Message(role=Role.assistant, content="ok"))
        key = {"openai_responses": "input", "gemini": "contents"}.get(gateway.value, "messages")
        saved = context.to_json()
        expected = dumped(context.request())
        sent = context.request()[key]
        sent.reverse()
        sent.append({"role": "user", "content": "extra"})
        assert context.to_json() == saved, gateway
        assert dumped(context.request()) == expected, gateway


SCENARIOS: list[list[tuple[str, Any]]] = [
    # a detach right after a Responses reasoning item; Gemini turns that merge at the seam
    [("user", "a"), ("reply", False), ("result", "c1"), ("user", "b"), ("reply", False),
     ("detach", 2), ("assistant", "d"), ("user", "c"), ("assistant", "d"), ("user", "e")],
    # Gemini id-less calls answered by name and by stable id, then more of them
    [("user", "a"), ("reply", False), ("result", "lookup"), ("user", "b"), ("reply", False),
     ("reply", False), ("result", "lookup#3"), ("result", "lookup#2"), ("user", "c"),
     ("reply", False), ("result", "lookup#4"), ("user", "d")],
    [("user", "a"), ("user", "b"), ("assistant", "c"), ("assistant", "d"), ("user", "e"),
     ("user", "f"), ("assistant", "g"), ("user", "h")],
]


def test_every_cut_of_fixed_sessions_equals_a_build_from_scratch() -> None:
    for gateway in ALL:
        tail = overlay(gateway)
        for steps in SCENARIOS:
            context = Context(gateway)
            for kind, value in steps:
                context = apply(context, kind, value)
                context.request()
                for stable in range(len(context) + 1):
                    built = context.build_incremental(stable, copy.deepcopy(tail))
                    expected = oracle(context, stable, tail)
                    assert dumped(built) == dumped(expected), (gateway, steps, stable)
                context.request()  # what is sent (and answered next) is the history itself


# -- Gemini: turns merge and id-less calls count from the history's start --------------------

GEMINI_REFS = ["lookup", "other", "lookup#1", "lookup#2", "lookup#3", "other#1", "other#2", "x"]

gemini_step = st.one_of(
    st.tuples(st.just("user"), st.text("ab", max_size=2)),
    st.tuples(st.just("system"), st.text("ab", max_size=2)),
    st.tuples(st.just("model"), st.text("ab", max_size=2)),
    st.tuples(
        st.just("idless"), st.lists(st.sampled_from(["lookup", "other"]), min_size=1, max_size=3)
    ),
    st.tuples(st.just("calls"), st.lists(st.just("x"), min_size=1, max_size=1)),
    st.tuples(st.just("result"), st.sampled_from(GEMINI_REFS)),
    st.tuples(st.just("detach"), st.integers(1, 4)),
    st.tuples(st.just("reload"), st.just(0)),
)


def gemini_body(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": parts}}]}


def gemini_apply(context: Context, kind: str, value: Any) -> Context:
    match kind:
        case "model":
            context.push_back(gemini_body([{"text": "m" + value}]))
        case "idless":
            calls = [{"functionCall": {"name": name, "args": {}}} for name in value]
            context.push_back(gemini_body(calls))
        case _:
            context = apply(context, kind, value)
    return context


@given(
    steps=st.lists(gemini_step, max_size=30),
    cuts=st.lists(st.integers(0, 35), min_size=30, max_size=30),
)
def test_gemini_incremental_requests_equal_a_build_from_scratch(
    steps: list[tuple[str, Any]], cuts: list[int]
) -> None:
    check_every_step(Context(GatewayType.gemini), steps, cuts, gemini_apply)


GEMINI_SCENARIOS: list[list[tuple[str, Any]]] = [
    # a detach takes the item after a boundary away, and the next item has the role of the
    # prefix's last turn (found by hypothesis)
    [("assistant", ""), ("user", ""), ("user", ""), ("detach", 2), ("assistant", ""),
     ("user", "")],
    # a user item whose only part is an answer moved up to its call: it builds no turn, so the
    # model turns on either side of it merge
    [("user", "a"), ("calls", ["x"]), ("model", "b"), ("result", "x"), ("model", "c"),
     ("user", "d"), ("model", "e"), ("user", "f")],
    # id-less calls before and after a long closed prefix, answered by stable id and by name
    [("user", "a"), ("idless", ["lookup", "lookup"]), ("result", "lookup#1"),
     ("result", "lookup#2"), ("model", "b"), ("user", "c"), ("idless", ["lookup", "other"]),
     ("result", "lookup#3"), ("result", "other"), ("model", "d"), ("user", "e"),
     ("idless", ["lookup"]), ("result", "lookup#1"), ("result", "lookup"), ("model", "f"),
     ("user", "g"), ("model", "h")],
]


def test_gemini_fixed_sessions_equal_a_build_from_scratch_at_every_cut() -> None:
    tail = overlay(GatewayType.gemini)
    for steps in GEMINI_SCENARIOS:
        context = Context(GatewayType.gemini)
        for kind, value in steps:
            context = gemini_apply(context, kind, value)
            assert dumped(context.request()) == dumped(oracle(context, len(context), []))
            for stable in range(len(context) + 1):
                built = context.build_incremental(stable, copy.deepcopy(tail))
                assert dumped(built) == dumped(oracle(context, stable, tail)), (steps, stable)


def test_gemini_requests_reuse_the_cached_prefix() -> None:
    """The cache really advances on Gemini, id-less calls included (it used to build every
    request from scratch): the cached turns are the very objects of the previous request."""
    context = Context(GatewayType.gemini)
    for turn in range(6):
        context = gemini_apply(context, "user", "a")
        context = gemini_apply(context, "idless", ["lookup"])
        context = gemini_apply(context, "result", "lookup")
        context = gemini_apply(context, "model", str(turn))
    first = context.request()["contents"]
    context = gemini_apply(context, "user", "b")
    second = context.request()["contents"]
    assert len(second) == len(first) + 1
    shared = sum(1 for a, b in zip(first, second, strict=False) if a is b)
    assert shared >= len(first) - 2


def test_a_boundary_refused_once_is_taken_as_soon_as_it_is_valid() -> None:
    """A boundary the cache cannot use yet (Gemini: the next item is of the same role, so the
    turns would merge) is not retried while nothing changed, and is taken once an item of
    another role follows: the cached prefix keeps up with the history."""
    context = Context(GatewayType.gemini)
    cache = context._requests
    for turn in range(30):
        context = apply(context, "user", "q")
        if turn % 3 == 0:  # two user items in a row: no boundary between them
            context = apply(context, "user", "n")
        assert dumped(context.request()) == dumped(oracle(context, len(context), []))
        assert dumped(context.request()) == dumped(oracle(context, len(context), []))
        context = apply(context, "assistant", "a")
        stable = len(context) - 1
        context.build_incremental(stable, [])
        assert cache.prefix >= stable - 2, (turn, cache.prefix, stable)
