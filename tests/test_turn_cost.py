"""The agent turn's shortcuts (issue 16) give what the plain computations give.

* Gemini's stable call ids counted once per item (``Context.messages``, ``push_back(route=)``)
  equal a pairing of the whole history (``messages_of`` without a tally), after every step of a
  random session with id-less calls, detaches, reloads and a route that fails.
* Overlay runs whose messages are kept between requests (``build_incremental(overlay=...)``)
  give the request the builder makes from scratch, while the overlay changes from request to
  request and holds tool exchanges, open calls and system turns.
* ``push_back`` of raw JSON, checked and copied in one walk, stores what the former three
  walks stored (copy, canonical form of a copy, key-sorted copy).
* The lifecycle's per-entry plans show each component exactly in the episodes its schedule
  names (written out here by the rule, not by the library's scheduling functions).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.context.readback import messages_of
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle
from hydrangea.message import Message, Role, ToolCallPart, ToolResultPart
from hydrangea.providers.native import NativeContent, copy_json, copy_json_value
from tests.test_conformance import response
from tests.test_request_cache import ALL, apply, dumped, oracle, step


class _Refuses:
    def route(self, reply: Message) -> None:
        raise RuntimeError("no")


class _Takes:
    def __init__(self) -> None:
        self.replies: list[Message] = []

    def route(self, reply: Message) -> None:
        self.replies.append(reply)


def _plain_messages(context: Context, start: int) -> list[Message]:
    return messages_of(context.adapter, list(context), start)


@given(
    steps=st.lists(step, max_size=25),
    starts=st.lists(st.integers(0, 30), min_size=25, max_size=25),
    fail=st.lists(st.booleans(), min_size=25, max_size=25),
)
def test_stable_ids_counted_once_equal_a_pairing_of_the_whole_history(
    steps: list[tuple[str, Any]], starts: list[int], fail: list[bool]
) -> None:
    context = Context(GatewayType.gemini)
    for (kind, value), start, refuse in zip(steps, starts, fail, strict=False):
        if kind == "reply":
            if refuse:
                before = context.to_json()
                with pytest.raises(RuntimeError):
                    context.push_back(response(GatewayType.gemini), route=_Refuses())
                assert context.to_json() == before
            taker = _Takes()
            begin = len(context)
            context.push_back(response(GatewayType.gemini), route=taker)
            expected = _plain_messages(context, begin)
            assert taker.replies[0].parts == tuple(
                part for m in expected if m.role is Role.assistant for part in m.parts
            )
        else:
            context = apply(context, kind, value)
        for cut in (0, min(start, len(context)), max(0, len(context) - 1)):
            assert context.messages(cut) == _plain_messages(context, cut), (steps, cut)


def _pool(gateway: GatewayType) -> list[tuple[NativeContent, ...]]:
    """Components' items: text turns, a closed tool exchange, an open call, a system turn."""
    probe = Context(gateway)
    runs: list[list[Message]] = [
        [Message(role=Role.user, content="note a")],
        [Message(role=Role.user, content="note b")],
        [Message(role=Role.system, content="rule")],
        [Message(role=Role.assistant, content="said")],
        [
            Message(role=Role.assistant, content=(ToolCallPart(id="k1", name="f", arguments={}),)),
            Message(role=Role.user, content=(ToolResultPart(call_id="k1", content="r"),)),
        ],
        [Message(role=Role.assistant, content=(ToolCallPart(id="k2", name="f", arguments={}),))],
        [Message(role=Role.user, content=(ToolResultPart(call_id="c1", content="late"),))],
    ]
    out = []
    for run in runs:
        begin = len(probe)
        probe.emplace_messages(run)
        out.append(tuple(probe[begin:]))
    return out


@given(
    gateway=st.sampled_from(ALL),
    steps=st.lists(step, max_size=15),
    overlays=st.lists(st.lists(st.integers(0, 6), max_size=5), min_size=15, max_size=15),
    after=st.lists(st.booleans(), min_size=15, max_size=15),
)
def test_kept_overlay_runs_give_the_request_built_from_scratch(
    gateway: GatewayType,
    steps: list[tuple[str, Any]],
    overlays: list[list[int]],
    after: list[bool],
) -> None:
    pool = _pool(gateway)  # the same objects in every request, as a lifecycle's components
    context = Context(gateway)
    for (kind, value), picks, at_end in zip(steps, overlays, after, strict=False):
        context = apply(context, kind, value)
        context.request()
        runs = [pool[n] for n in picks]
        tail = [item for run in runs for item in run]
        stable = len(context)
        if not at_end and stable:  # "before the newest item": the newest follows the overlay
            stable -= 1
            tail.extend(context[stable:])
        for _ in range(2):  # the second request finds the runs kept
            built = context.build_incremental(stable, tail, overlay=[len(r) for r in runs])
            assert dumped(built) == dumped(oracle(context, stable, copy.deepcopy(tail)))
        context.request()  # what is sent (and answered next) is the history itself


def _three_walks(context: Context, raw: object) -> list[NativeContent]:
    adapter = context.adapter
    items = adapter.from_output(copy_json_value(raw, "x"))
    return [copy_json(adapter.canonical(copy_json(i)), sort_keys=True) for i in items]


@pytest.mark.parametrize("gateway", ALL)
@pytest.mark.parametrize("unknown", [False, True])
def test_one_walk_push_back_stores_what_three_walks_stored(
    gateway: GatewayType, unknown: bool
) -> None:
    raw = response(gateway, unknown=unknown)
    context = Context(gateway)
    context.push_back(copy.deepcopy(raw))
    expected = _three_walks(context, raw)
    assert [json.dumps(item) for item in context] == [json.dumps(item) for item in expected]
    raw_again = copy.deepcopy(raw)
    context.push_back(raw_again)
    json.loads(json.dumps(raw_again))  # still plain JSON
    saved = context.to_json()
    raw_again.clear()
    assert context.to_json() == saved


@given(
    schedules=st.lists(
        st.tuples(st.integers(1, 4), st.one_of(st.none(), st.integers(1, 5))),
        min_size=1,
        max_size=6,
    ),
    restart=st.integers(0, 12),
)
def test_components_show_in_the_episodes_their_schedule_names(
    schedules: list[tuple[int, int | None]], restart: int
) -> None:
    lifecycle = Lifecycle(Context(GatewayType.openai))
    lifecycle.context.emplace_message(Message(role=Role.user, content="hi"))
    for n, (ttl, cadence) in enumerate(schedules):
        lifecycle.add(Component(f"c{n}", key=f"k{n}", ttl=ttl, cadence=cadence))
    starts = {f"k{n}": 0 for n in range(len(schedules))}
    for episode in range(15):
        if episode == restart and "k0" in lifecycle:
            lifecycle.update("k0", restart=True)
            starts["k0"] = episode
        request = lifecycle.render()
        shown = set()
        for n, (ttl, cadence) in enumerate(schedules):
            k = episode - starts[f"k{n}"]
            visible = k < ttl if cadence is None else k % cadence < ttl
            if visible:
                shown.add(f"k{n}")
        assert set(request.overlay_keys) == shown, (episode, schedules)


def test_stable_ids_after_a_detach_and_a_route_taken_back_count_only_what_stays() -> None:
    context = Context(GatewayType.gemini)
    context.emplace_message(Message(role=Role.user, content="go"))
    context.push_back(response(GatewayType.gemini))
    context.push_back(response(GatewayType.gemini))
    assert context.messages(2)[0].parts[-1] == ToolCallPart(id="lookup#2", name="lookup",
                                                           arguments={"q": None})
    context.detach_tail(2)
    other = {"role": "model", "parts": [{"function_call": {"name": "other", "args": {}}}]}
    with pytest.raises(RuntimeError):
        context.push_back(other, route=_Refuses())
    taker = _Takes()
    context.push_back(response(GatewayType.gemini), route=taker)
    call = taker.replies[0].parts[-1]
    assert isinstance(call, ToolCallPart) and call.id == "lookup#2"
    for start in range(len(context) + 1):
        assert context.messages(start) == _plain_messages(context, start)


def test_caller_breakpoints_in_the_cached_prefix_are_placed_as_from_scratch() -> None:
    context = Context(GatewayType.anthropic)
    marked = {"type": "text", "text": "pinned", "cache_control": {"type": "ephemeral"}}
    context.extend([{"role": "user", "content": [marked]}])
    for n in range(12):
        context.push_back({"role": "assistant", "content": [{"type": "text", "text": f"a{n}"}]})
        context.emplace_message(Message(role=Role.user, content=f"u{n} " + "word " * 400))
        for stable in (len(context) - 1, len(context)):
            tail = list(context[stable:])
            built = context.build_incremental(stable, tail, overlay=[len(tail)])
            assert dumped(built) == dumped(oracle(context, stable, tail)), (n, stable)
        assert dumped(context.request()) == dumped(oracle(context, len(context), []))


@pytest.mark.parametrize("gateway", ALL)
def test_kept_overlay_runs_merge_into_the_turn_before_them_as_the_builder_merges(
    gateway: GatewayType,
) -> None:
    context = Context(gateway)
    for n in range(3):
        context.emplace_message(Message(role=Role.user, content=f"u{n}"))
        context.emplace_message(Message(role=Role.assistant, content=f"a{n}"))
    context.emplace_message(Message(role=Role.user, content="newest"))
    notes = [run for run in _pool(gateway) if len(run) == 1][:4]
    for picks in ([0], [0, 1], [2, 0], [3, 1], [0]):
        for stable in (len(context) - 1, len(context)):
            runs = [notes[n] for n in picks]
            tail = [item for run in runs for item in run] + list(context[stable:])
            for _ in range(2):
                built = context.build_incremental(stable, tail, overlay=[len(r) for r in runs])
                assert dumped(built) == dumped(oracle(context, stable, copy.deepcopy(tail)))


def test_stable_ids_of_id_less_chat_calls_equal_a_pairing_of_the_whole_history() -> None:
    context = Context(GatewayType.openai)
    assert context.adapter.has_idless_calls  # ("id": "" is an id-less call on Chat Completions)
    call = {"id": "", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    context.emplace_message(Message(role=Role.user, content="go"))
    for n in range(4):
        context.push_back({"role": "assistant", "content": None, "tool_calls": [call, call]})
        if n == 1:
            context.detach_tail(len(context) - 1)
    for start in range(len(context) + 1):
        assert context.messages(start) == _plain_messages(context, start), start
