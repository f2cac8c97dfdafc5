"""A turn of a tool loop costs O(new items) on every gateway (issue 28).

Random agent sessions: each turn a user message, then model steps that make parallel tool calls
(Gemini's without ids, answered by stable id or by name), some beside a server-side tool pair and
a server-side compaction item (Anthropic, Responses), answered one result at a time in any order
with a request after every result (so most requests end in a call still open), lifecycle-style
requests with overlay runs and with a stable part ending earlier, and collections that cut the
newest step away. After every request:

* the request equals the gateway's builder run from scratch on the same items (the oracle of
  ``tests.test_request_cache``), and
* it was built on the cache's prefix (``RequestCache.incremental`` counts it) from no more items
  than those since the previous turn began, plus the tail: the cost does not grow with the
  history (before the fix, the boundary one item before the end was an open call, refused, and
  every request was built whole).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, assert_never

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, ToolResultPart
from hydrangea.providers.anthropic.adapter import AnthropicAdapter
from hydrangea.providers.anthropic.caching import AnthropicCaching, cached_anthropic_kwargs
from hydrangea.providers.gemini.adapter import GeminiAdapter
from hydrangea.providers.native import NativeContent
from tests.test_request_cache import ALL, dumped, latest_compaction, oracle


def model_step(
    gateway: GatewayType, names: list[str], *, server: bool, idless: bool
) -> tuple[dict[str, Any], list[str]]:
    """A model output making one call per name (beside a server tool pair if ``server``), and
    the references its results use (Gemini id-less calls: the name or its stable id)."""
    refs = [n if not idless else (n if len(n) % 2 else f"{n}#1") for n in names]
    match gateway:
        case GatewayType.anthropic:
            content: list[dict[str, Any]] = [{"type": "text", "text": "on it"}]
            if server:  # a server-side compaction block and a server tool pair
                content += [
                    {"type": "compaction", "content": f"summary before {names[0]}"},
                    {"type": "server_tool_use", "id": f"srv_{names[0]}", "name": "web_search",
                     "input": {"query": "q"}},
                    {"type": "web_search_tool_result", "tool_use_id": f"srv_{names[0]}",
                     "content": []},
                ]
            content += [{"type": "tool_use", "id": n, "name": "f", "input": {"q": n}}
                        for n in names]
            return {"role": "assistant", "content": content}, refs
        case GatewayType.openai:
            calls = [{"id": n, "type": "function",
                      "function": {"name": "f", "arguments": '{"q":1}'}} for n in names]
            return {"role": "assistant", "content": None, "tool_calls": calls}, refs
        case GatewayType.openai_responses:
            output: list[dict[str, Any]] = [
                {"type": "reasoning", "id": f"rs_{names[0]}", "summary": [],
                 "encrypted_content": "enc"},
            ]
            if server:  # a server tool call and a server-side compaction item
                output.append({"type": "compaction", "id": f"cmp_{names[0]}",
                               "encrypted_content": "enc"})
                output.append({"type": "web_search_call", "id": f"ws_{names[0]}",
                               "status": "completed",
                               "action": {"type": "search", "query": "q"}})
            output += [{"type": "function_call", "id": f"fc_{n}", "call_id": n, "name": "f",
                        "arguments": "{}", "status": "completed"} for n in names]
            return {"id": "resp", "object": "response", "model": "m", "output": output}, refs
        case GatewayType.gemini:
            parts: list[dict[str, Any]] = [{"text": "on it", "thoughtSignature": "c2ln"}]
            if server:
                parts += [
                    {"executableCode": {"language": "PYTHON", "code": "1"}},
                    {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1"}},
                ]
            for n in names:
                call: dict[str, Any] = {"name": n, "args": {}}
                if not idless:
                    call["id"] = n
                parts.append({"functionCall": call})
            return {"candidates": [{"content": {"role": "model", "parts": parts}}]}, refs
        case unreachable:
            assert_never(unreachable)


def pool(gateway: GatewayType) -> list[tuple[NativeContent, ...]]:
    """Overlay runs: notes of both roles and a closed tool exchange (a lifecycle's components)."""
    probe = Context(gateway)
    runs = [
        [Message(role=Role.user, content="[note] a")],
        [Message(role=Role.assistant, content="[note] b")],
        [Message(role=Role.user, content="[note] c"), Message(role=Role.assistant, content="d")],
    ]
    out = []
    for run in runs:
        begin = len(probe)
        probe.emplace_messages(run)
        out.append(tuple(probe[begin:]))
    return out


def reminder_turn(context: Context, t: int) -> None:
    """Turn ``t`` of a tool loop that ends in a reminder: a user task, the model's call, its
    result, then a user reminder (sent once, then detached by the caller)."""
    context.emplace_message(Message(role=Role.user, content=f"task {t}"))
    body, refs = model_step(context.gateway, [f"c{t}"], server=False, idless=False)
    context.push_back(body)
    context.emplace_message(Message(role=Role.user, content=(
        ToolResultPart(call_id=refs[0], content="r"),)))
    context.emplace_message(Message(role=Role.user, content=f"reminder {t}"))


@dataclass
class Session:
    context: Context
    runs: list[tuple[NativeContent, ...]]
    turns: list[int] = field(default_factory=list)  # where each turn began
    requests: int = 0
    cache: object = None  # the request cache the last request was built on

    def check(self, picks: list[int], cut: int = 0) -> None:
        """One request (with overlay runs ``picks``), checked against the oracle and costed;
        then one for the first ``cut`` items only (a lifecycle's stable part ends earlier)."""
        context = self.context
        # (a compaction boundary moved: the Context started a new request cache)
        fresh = self.cache is not None and context._requests is not self.cache
        before = 0 if fresh else context._requests.incremental
        if picks:
            runs = [self.runs[n] for n in picks]
            tail = [item for run in runs for item in run]
            built = context.build_incremental(len(context), tail, overlay=[len(r) for r in runs])
            assert dumped(built) == dumped(oracle(context, len(context), copy.deepcopy(tail)))
        else:
            tail = []
            assert dumped(context.request()) == dumped(oracle(context, len(context), []))
        self.requests += 1
        cache = self.cache = context._requests
        latest = latest_compaction(context)
        if fresh or (latest is not None and cache.prefix == 0):
            # the first requests after a compaction build what they still send: the prefix
            # cache starts over at it (and cannot close before calls the compaction's own
            # message holds); the cost is what follows the compaction, never the history
            assert cache.from_scratch + cache.incremental >= 1
            bound = len(context) - (latest_compaction(context) or 0) + len(tail)
            assert cache.built_items <= bound, (cache.built_items, bound, len(context))
        elif len(self.turns) >= 2 and self.requests > 1:
            assert cache.incremental == before + 1, "the request was built whole"
            bound = len(context) - self.turns[-2] + len(tail)
            assert cache.built_items <= bound, (cache.built_items, bound, len(context))
        if cut and max(0, len(context) - cut) > (-1 if latest is None else latest):
            # (a request of a history before the latest compaction is refused: not sent)
            stable = max(0, len(context) - cut)
            runs = [self.runs[n] for n in picks] or [self.runs[0]]
            tail = [item for run in runs for item in run]
            built = context.build_incremental(stable, tail, overlay=[len(r) for r in runs])
            assert dumped(built) == dumped(oracle(context, stable, copy.deepcopy(tail)))
        if picks or cut:
            context.request()  # what is sent (and answered next) is the history itself


turn = st.lists(  # the model steps of one turn: calls, server tool, results' order, overlays
    st.tuples(
        st.integers(1, 3),
        st.booleans(),
        st.permutations(range(3)),
        st.lists(st.lists(st.integers(0, 2), max_size=3), min_size=4, max_size=4),
        st.booleans(),
        st.lists(st.integers(0, 12), min_size=4, max_size=4),
    ),
    min_size=1,
    max_size=2,
)


@given(
    gateway=st.sampled_from(ALL),
    turns=st.lists(turn, min_size=3, max_size=5),
    idless=st.booleans(),
    cuts=st.lists(st.booleans(), min_size=8, max_size=8),
)
def test_every_request_of_a_tool_loop_is_built_on_the_cache_and_equals_a_fresh_build(
    gateway: GatewayType,
    turns: list[list[tuple[int, bool, list[int], list[list[int]], bool, list[int]]]],
    idless: bool,
    cuts: list[bool],
) -> None:
    idless = idless and gateway is GatewayType.gemini
    session = Session(Context(gateway), pool(gateway))
    context = session.context
    for t, (steps, cut) in enumerate(zip(turns, cuts, strict=False)):
        session.turns.append(len(context))
        context.emplace_message(Message(role=Role.user, content=f"task {t} " + "x" * t))
        context.request()  # the request the model answers with the first step
        for s, (count, server, order, picks, collect, cuts_back) in enumerate(steps):
            names = [f"t{t}s{s}c{n}" for n in range(count)]
            body, refs = model_step(gateway, names, server=server, idless=idless)
            begin = len(context)
            context.push_back(body)
            session.check(picks[0], cuts_back[0])
            for k, n in enumerate(o for o in order if o < count):
                result = ToolResultPart(call_id=refs[n], content=f"result {n}")
                context.emplace_message(Message(role=Role.user, content=(result,)))
                session.check(picks[k + 1], cuts_back[k + 1])
            if collect and cut and s == len(steps) - 1 and s > 0:
                context.detach_tail(begin)  # the collector cuts the newest step away
                session.check([])


def test_anthropic_breakpoints_of_a_request_ending_inside_the_cached_prefix_are_fresh() -> None:
    """A request whose stable part ends inside the cached prefix gets the breakpoints placed
    from scratch: a count kept at a boundary for requests built on the whole prefix does not
    hold for a request built on an earlier checkpoint (found by the property above)."""
    session = Session(Context(GatewayType.anthropic), pool(GatewayType.anthropic))
    context = session.context
    plan = [[(0, 0)], [(0, 0)], [(3, 0), (0, 6)]]  # per step: cuts before / after the result
    for t, steps in enumerate(plan):
        session.turns.append(len(context))
        context.emplace_message(Message(role=Role.user, content=f"task {t} " + "x" * t))
        for s, (before, after) in enumerate(steps):
            body, refs = model_step(GatewayType.anthropic, [f"t{t}s{s}"], server=False,
                                    idless=False)
            context.push_back(body)
            session.check([], before)
            context.emplace_message(Message(role=Role.user, content=(
                ToolResultPart(call_id=refs[0], content="r"),)))
            session.check([1] if s else [], after)


def test_in_a_tool_loop_the_cached_prefix_stops_right_before_the_open_call() -> None:
    """User, call, request, result, request, turn after turn: the cache's boundary is the
    position right before the newest call (the last closed one before an open call), and each
    request builds only the items after it."""
    for gateway in ALL:
        context = Context(gateway)
        cache = context._requests
        for t in range(40):
            context.emplace_message(Message(role=Role.user, content=f"task {t}"))
            call_at = len(context)
            context.request()  # the request the model answers with the call
            body, refs = model_step(gateway, [f"c{t}"], server=False, idless=False)
            context.push_back(body)
            context.request()
            if t:
                assert cache.prefix == call_at, (gateway, t, cache.prefix, call_at)
                assert cache.built_items == len(context) - call_at, (gateway, t)
            context.emplace_message(Message(role=Role.user, content=(
                ToolResultPart(call_id=refs[0], content="r"),)))
            assert dumped(context.request()) == dumped(oracle(context, len(context), []))
            assert cache.built_items <= len(context) - call_at, (gateway, t)


def test_anthropic_a_detached_last_item_keeps_the_rest_of_the_prefix_cached(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A reminder sent once at a request's end and detached before the next (a ttl=1 lifecycle
    component the model did not bind) cuts the cache back only past itself: each turn's builder
    calls take a bounded number of items however long the history (before, the cut reached the
    start and every turn rebuilt the whole history)."""
    given_items: list[int] = []
    build = AnthropicAdapter.build_request

    def counting(self: AnthropicAdapter, items: Any) -> dict[str, Any]:
        given_items.append(len(items))
        return build(self, items)

    monkeypatch.setattr(AnthropicAdapter, "build_request", counting)
    context = Context(GatewayType.anthropic)
    for t in range(30):
        given_items.clear()
        reminder_turn(context, t)
        sent = context.request()
        cost = sum(given_items)  # (before the oracle's own build)
        assert dumped(sent) == dumped(oracle(context, len(context), []))
        context.detach_tail(len(context) - 1)
        if t > 1:
            assert cost <= 12, (t, given_items)
    assert dumped(context.request()) == dumped(oracle(context, len(context), []))


@pytest.mark.parametrize(
    "gateway", [g for g in ALL if g is not GatewayType.gemini]  # (Gemini merges turns)
)
def test_a_closed_request_builds_each_new_item_once(
    gateway: GatewayType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """User, request, call, result, request, turn after turn: on a gateway that merges no
    turns the builder is handed each item once over the turn's two requests, the one-word seam
    anchors aside (before, the cached prefix stopped one item before a request's end, so the
    result was built twice: in that request's tail, and again in the next turn)."""
    context = Context(gateway)
    adapter_type = type(context._requests._adapter)
    anchor = context._requests._adapter.seam_anchor([{"role": "user"}])
    build = adapter_type.build_request
    given_items: list[int] = []

    def counting(self: Any, items: Any) -> dict[str, Any]:
        items = list(items)
        given_items.append(sum(1 for item in items if item != anchor))
        return build(self, items)

    monkeypatch.setattr(adapter_type, "build_request", counting)
    for t in range(12):
        given_items.clear()
        begin = len(context)
        context.emplace_message(Message(role=Role.user, content=f"task {t}"))
        context.request()  # the request the model answers with the call
        body, refs = model_step(gateway, [f"c{t}"], server=False, idless=False)
        context.push_back(body)
        context.emplace_message(Message(role=Role.user, content=(
            ToolResultPart(call_id=refs[0], content="r"),)))
        sent = context.request()
        cost = sum(given_items)  # (before the oracle's own build)
        assert dumped(sent) == dumped(oracle(context, len(context), [])), (gateway, t)
        if t:
            assert cost == len(context) - begin, (gateway, t, given_items)


def test_anthropic_a_detached_last_item_keeps_the_prefix_token_count() -> None:
    """The placement counts the prefix's tokens once per block while it grows: a reminder
    detached after each request (below the cached prefix) keeps the counts of the blocks
    before it, so a turn counts only its own blocks however long the history (before, each
    detach emptied the placement's memo and every request counted the prefix from its
    start), and each request still equals a fresh placement."""
    counted: list[str] = []

    class Counting:
        def count(self, text: str) -> int:
            counted.append(text)
            return len(text)

    caching = AnthropicCaching(counter=Counting(), min_tokens=10**9)  # (never enough: all count)
    context = Context(GatewayType.anthropic)
    for t in range(30):
        reminder_turn(context, t)
        counted.clear()
        sent = context.request(caching=caching)
        cost = len(counted)
        fresh = cached_anthropic_kwargs(context.adapter, list(context), caching=caching)
        assert dumped(sent) == dumped(fresh), t
        context.detach_tail(len(context) - 1)
        if t > 1:
            assert cost <= 8, (t, cost)
        cache = context._requests  # (what it keeps beside the counts does not grow)
        assert len(cache.memo.get("last", ())) + len(cache._shared) <= 8, t


def test_gemini_a_boundary_the_next_turn_merges_into_is_not_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A reminder after each tool result (a user turn that merges into the result's user
    turn) keeps the boundary after the result out of reach: the cache sees that from the items
    (``Adapter.merges_with``) and does not build the segment up to it only to refuse it: each
    item that stays is built at most twice, in the tail of one request and when the cache takes
    it in (before, the refused segment was built too: 11 items a turn for 3 kept, now 6)."""
    given_items: list[int] = []
    build = GeminiAdapter.build_counted

    def counting(self: GeminiAdapter, items: Any, pairing_of: Any) -> dict[str, Any]:
        given_items.append(len(items) - 1)  # (the seam anchor aside)
        return build(self, items, pairing_of)

    monkeypatch.setattr(GeminiAdapter, "build_counted", counting)
    context = Context(GatewayType.gemini)
    for t in range(20):
        given_items.clear()
        begin = len(context)
        reminder_turn(context, t)
        sent = context.request()
        cost = sum(given_items)  # (before the oracle's own build)
        assert dumped(sent) == dumped(oracle(context, len(context), [])), t
        context.detach_tail(len(context) - 1)
        if t > 1:
            assert cost <= 2 * (len(context) - begin), (t, given_items)
