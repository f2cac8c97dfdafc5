"""The pairing engine against a naive quadratic oracle, over random histories on every gateway.

The oracle reads the native items itself (not through the adapters' ``tool_sites``) and applies
the documented rule literally: in history order, each result takes the first earlier,
unanswered call of its kind whose id (the provider's, or the stable ``"<name>#<n>"`` of an
id-less call) equals the id it names; on Gemini, failing that, the first earlier unanswered call
whose function name equals the name it gives (its id, or its ``name`` when it has no id).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import adapter_for
from hydrangea.gateway import GatewayType

NAMES = ("alpha", "beta", "gamma")
IDS = ("a", "b", "c", "alpha", "beta#1", "alpha#2", "gamma#1")


@dataclass
class Call:
    site: tuple[int, int]
    ident: str | None
    name: str
    kind: str


@dataclass
class Result:
    site: tuple[int, int]
    ref: str | None
    name: str | None
    kind: str


calls_turn = st.lists(
    st.tuples(st.one_of(st.none(), st.sampled_from(IDS)), st.sampled_from(NAMES), st.booleans()),
    min_size=1,
    max_size=4,
)
results_turn = st.lists(
    st.tuples(
        st.one_of(st.none(), st.sampled_from(IDS + NAMES)),
        st.one_of(st.none(), st.sampled_from(NAMES)),
        st.booleans(),
    ),
    min_size=1,
    max_size=4,
)
histories = st.lists(
    st.one_of(st.tuples(st.just("calls"), calls_turn), st.tuples(st.just("results"), results_turn)),
    max_size=14,
)


def native(gateway: GatewayType, history: list[tuple[str, list[Any]]]) -> list[dict[str, Any]]:
    """The history as native items of ``gateway`` (ids filled in where the gateway needs one)."""
    items: list[dict[str, Any]] = []
    for step, entries in history:
        if gateway is GatewayType.anthropic:
            if step == "calls":
                blocks = [
                    {"type": "tool_use", "id": ident or name, "name": name, "input": {}}
                    for ident, name, _ in entries
                ]
                items.append({"role": "assistant", "content": blocks})
            else:
                blocks = [
                    {"type": "tool_result", "tool_use_id": ref or name or "x", "content": "r"}
                    for ref, name, _ in entries
                ]
                items.append({"role": "user", "content": blocks})
        elif gateway is GatewayType.openai:
            if step == "calls":
                tool_calls = [
                    {
                        "id": ident or name,
                        "type": "function",
                        "function": {"name": name, "arguments": "{}"},
                    }
                    for ident, name, _ in entries
                ]
                items.append({"role": "assistant", "tool_calls": tool_calls})
            else:
                items.extend(
                    {"role": "tool", "tool_call_id": ref or name or "x", "content": "r"}
                    for ref, name, _ in entries
                )
        elif gateway is GatewayType.openai_responses:
            for first, second, custom in entries:
                kind = "custom_tool_call" if custom else "function_call"
                if step == "calls":
                    body = {"input": ""} if custom else {"arguments": "{}"}
                    items.append({"type": kind, "call_id": first or second, "name": second, **body})
                else:
                    items.append(
                        {"type": kind + "_output", "call_id": first or second or "x", "output": "r"}
                    )
        else:
            if step == "calls":
                parts = []
                for ident, name, _ in entries:
                    call: dict[str, Any] = {"name": name, "args": {}}
                    if ident is not None:
                        call["id"] = ident
                    parts.append({"function_call": call})
                items.append({"role": "model", "parts": parts})
            else:
                parts = []
                for ref, name, _ in entries:
                    response: dict[str, Any] = {"response": {"output": "r"}}
                    if ref is not None:
                        response["id"] = ref
                    if name is not None or ref is None:
                        response["name"] = name or "alpha"
                    parts.append({"function_response": response})
                items.append({"role": "user", "parts": parts})
    return items


def extract(gateway: GatewayType, items: list[dict[str, Any]]) -> tuple[list[Call], list[Result]]:
    calls: list[Call] = []
    results: list[Result] = []
    for i, item in enumerate(items):
        if gateway is GatewayType.anthropic:
            for s, block in enumerate(item["content"]):
                if block["type"] == "tool_use":
                    calls.append(Call((i, s), block["id"], block["name"], ""))
                else:
                    results.append(Result((i, s), block["tool_use_id"], None, ""))
        elif gateway is GatewayType.openai:
            if item["role"] == "tool":
                results.append(Result((i, 0), item["tool_call_id"], None, ""))
            for s, call in enumerate(item.get("tool_calls", [])):
                calls.append(Call((i, s), call["id"], call["function"]["name"], ""))
        elif gateway is GatewayType.openai_responses:
            kind = item["type"]
            if kind.endswith("_output"):
                results.append(Result((i, 0), item["call_id"], None, kind[: -len("_output")]))
            else:
                calls.append(Call((i, 0), item["call_id"], item["name"], kind))
        else:
            for s, part in enumerate(item["parts"]):
                if "function_call" in part:
                    fc = part["function_call"]
                    calls.append(Call((i, s), fc.get("id"), fc["name"], ""))
                else:
                    fr = part["function_response"]
                    results.append(Result((i, s), fr.get("id"), fr.get("name"), ""))
    return calls, results


def oracle(
    gateway: GatewayType, items: list[dict[str, Any]]
) -> tuple[dict[tuple[int, int], tuple[int, int]], set[tuple[int, int]], set[tuple[int, int]]]:
    calls, results = extract(gateway, items)
    effective: list[str] = []
    for n, call in enumerate(calls):
        if call.ident is not None:
            effective.append(call.ident)
        else:
            same = sum(1 for c in calls[:n] if c.ident is None and c.name == call.name)
            effective.append(f"{call.name}#{same + 1}")
    taken: set[int] = set()
    answer: dict[tuple[int, int], tuple[int, int]] = {}
    orphans: set[tuple[int, int]] = set()
    for result in results:
        earlier = [
            n
            for n, call in enumerate(calls)
            if call.site[0] < result.site[0] and n not in taken and call.kind == result.kind
        ]
        chosen = next((n for n in earlier if effective[n] == result.ref), None)
        if chosen is None and gateway is GatewayType.gemini:
            named = result.ref if result.ref is not None else result.name
            chosen = next((n for n in earlier if calls[n].name == named), None)
        if chosen is None:
            orphans.add(result.site)
        else:
            taken.add(chosen)
            answer[calls[chosen].site] = result.site
    unanswered = {call.site for n, call in enumerate(calls) if n not in taken}
    return answer, orphans, unanswered


@given(history=histories, gateway=st.sampled_from(list(GatewayType)))
def test_the_engine_agrees_with_the_naive_oracle(
    history: list[tuple[str, list[Any]]], gateway: GatewayType
) -> None:
    items = native(gateway, history)
    pairing = adapter_for(gateway).pairing(items)
    answer, orphans, unanswered = oracle(gateway, items)
    assert dict(pairing.answer) == answer
    assert set(pairing.orphans) == orphans
    assert set(pairing.unanswered) == unanswered
    assert {result: call for call, result in answer.items()} == dict(pairing.answered)


@given(history=histories)
def test_feeding_more_items_continues_from_the_same_state(
    history: list[tuple[str, list[Any]]],
) -> None:
    """The engine's state after item i is what a fresh run on the first i items gives."""
    items = native(GatewayType.gemini, history)
    adapter = adapter_for(GatewayType.gemini)
    for cut in range(len(items) + 1):
        head = adapter.pairing(items[:cut])
        whole = adapter.pairing(items)
        assert set(head.ids().items()) <= set(whole.ids().items())


@given(history=histories, gateway=st.sampled_from(list(GatewayType)))
def test_a_pairing_splits_where_no_call_is_open_as_the_oracle_pairs_each_side(
    history: list[tuple[str, list[Any]]], gateway: GatewayType
) -> None:
    """``Pairing.split(end)``, at every end no call is open across (by the oracle: each call
    before it answered before it), is the oracle's pairing of the items before ``end`` and the
    whole history's from ``end`` on, counted from ``end``; the id-less calls are counted per
    name from the native items; at any other end it refuses."""
    items = native(gateway, history)
    pairing = adapter_for(gateway).pairing(items)
    answer, orphans, unanswered = oracle(gateway, items)
    calls, _ = extract(gateway, items)
    for end in range(len(items) + 1):
        open_across = any(c[0] < end for c in unanswered) or any(
            c[0] < end <= r[0] for c, r in answer.items()
        )
        if open_across:
            with pytest.raises(ValueError, match="split"):
                pairing.split(end)
            continue
        head, tail = pairing.split(end)
        head_answer, head_orphans, head_unanswered = oracle(gateway, items[:end])
        assert dict(head.answer) == head_answer
        assert set(head.orphans) == head_orphans
        assert set(head.unanswered) == head_unanswered == set()
        assert dict(head.answered) == {r: c for c, r in head_answer.items()}
        assert dict(tail.answer) == {
            (c[0] - end, c[1]): (r[0] - end, r[1]) for c, r in answer.items() if c[0] >= end
        }
        assert dict(tail.answered) == {r: c for c, r in tail.answer.items()}
        assert set(tail.orphans) == {(s[0] - end, s[1]) for s in orphans if s[0] >= end}
        assert set(tail.unanswered) == {(s[0] - end, s[1]) for s in unanswered}
        idless: dict[str, int] = {}
        for call in calls:
            if call.ident is None and call.site[0] < end:
                idless[call.name] = idless.get(call.name, 0) + 1
        assert dict(head.counted) == idless
        assert dict(tail.counted) == dict(pairing.counted)
        assert [site for site, _, _ in head.calls] == [c.site for c in calls if c.site[0] < end]
        assert [(site[0] + end, site[1]) for site, _, _ in tail.calls] == [
            c.site for c in calls if c.site[0] >= end
        ]
