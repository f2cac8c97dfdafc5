"""The provider-native strategies of the cache study (bench/cachestudy/native.py).

Every test runs a tiny hand-made session with a counter that makes each request unit 10 tokens
(100 for a tool output), so that each figure below is worked out by hand in the comments from
the provider's documented rule, never taken from the code's output. The pricing is flat (every
input token at the base price, nothing read from a cache) unless a test says otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.cachestudy.accounting import Request
from bench.cachestudy.binding import Binding
from bench.cachestudy.native import (
    PLACEHOLDER,
    AnthropicEditing,
    AnthropicOnDemand,
    AnthropicThreshold,
    NativeStrategy,
    ResponsesCompact,
    ResponsesThreshold,
    cleared,
)
from bench.cachestudy.native_study import cost_calls
from bench.cachestudy.providers import OpenAIRules
from bench.cachestudy.render import Renderer
from bench.cachestudy.transcript import Transcript, Turn
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, ToolCallPart, ToolResultPart

KEPT = "FACT-001-kept"
"""Planted in the task's first sentence: an extractive digest keeps it."""
LOST = "FACT-002-lost"
"""Planted after the first sentence of the first user request: only the verbatim text has it."""


@dataclass(frozen=True, slots=True)
class Flat:
    """10 tokens a unit; 100 for a unit holding a tool output (marked BIG); times ``scale``."""

    scale: int = 1

    def count(self, text: str) -> int:
        return (100 if "BIG" in text else 10) * self.scale


@dataclass(slots=True)
class FlatRules:
    """Every input token at the base price; no cache."""

    name: str = "flat"
    binding: Binding = Binding.none
    read_price: float = 0.1
    write_price: float = 1.0

    def reset(self) -> None:
        """Nothing to forget."""

    def cost(self, request: Request) -> tuple[int, int, float]:
        size = sum(unit.tokens for unit in request)
        return 0, size, float(size)


def _user(text: str) -> Message:
    return Message(role=Role.user, content=text)


def _reply(name: str) -> Message:
    return Message(role=Role.assistant, content=f"{name} answered.")


def _chat() -> Transcript:
    """Turn 0: the task; turns 1-3: a reply, then a user request (no tools, no reminders)."""
    turns = [Turn(0, (_user(f"task {KEPT}. more"),), (), ())]
    for n in (1, 2, 3):
        request = _user(f"request {n}. detail {LOST}" if n == 1 else f"request {n}.")
        turns.append(Turn(n, (_reply(f"a{n}"), request), (), ()))
    return Transcript(0, "sys", tuple(turns))


def _tools() -> Transcript:
    """Turn 0: the task; turns 1-3: a reply calling a tool, then its output (100 tokens)."""
    turns = [Turn(0, (_user("task."),), (), ())]
    for n in (1, 2, 3):
        call = ToolCallPart(id=f"c{n}", name="read", arguments={"n": n})
        reply = Message(role=Role.assistant, content=[call])
        output = f"BIG output {n}. FACT-10{n}-tool"
        result = ToolResultPart(call_id=f"c{n}", content=output)
        turns.append(Turn(n, (reply, Message(role=Role.user, content=[result])), (), ()))
    return Transcript(0, "sys", tuple(turns))


def _run(
    strategy: NativeStrategy, transcript: Transcript, output_price: float, rules: object = None
) -> tuple[list[float], list[int], dict[str, float]]:
    calls = [strategy.step(turn) for turn in transcript.turns]
    fresh = [0] * len(calls)
    costs, passes = cost_calls(rules or FlatRules(), calls, fresh, output_price)  # type: ignore[arg-type]
    return [c.billed for c in costs], [c.input_tokens for c in costs], passes


def _final(strategy: NativeStrategy) -> str:
    return "\n".join(unit.text for unit in strategy.final())


def test_anthropic_threshold_compaction_bills_both_iterations_and_starts_at_the_block() -> None:
    # (units of 10,000 tokens: the API's smallest trigger is 50,000)
    renderer = Renderer(Flat(1_000), GatewayType.anthropic)
    strategy = AnthropicThreshold(renderer, "sys", 1_000_000, trigger=60_000)
    billed, sizes, passes = _run(strategy, _chat(), output_price=5.0)
    k = 1_000
    # In thousands: t0: sys, task = 20. t1: sys, task, a1, r1 = 40 < 60 (the trigger).
    # t2: sys, task, a1, r1, a2, r2 = 60, the trigger reached: the compaction iteration reads
    #     60 and writes a 10-token summary (x5 = 50), then the message iteration reads sys and
    #     the summary = 20.
    # t3: sys, [compaction, a3] (two blocks), r3 = 40 < 60: nothing before the block is sent.
    assert billed == [20 * k, 40 * k, (60 + 50 + 20) * k, 40 * k]
    assert sizes == [20 * k, 40 * k, 20 * k, 40 * k]
    assert passes == {"compaction_passes": 1, "compaction_billed": 110 * k,
                      "compaction_output_tokens": 10 * k}
    assert '"type":"compaction"' in strategy.last[1].text
    final = _final(strategy)  # the digest: first sentences of task, a1, r1, a2, r2
    assert KEPT in final and LOST not in final and "request 2." in final


def test_anthropic_on_demand_compaction_replaces_what_it_sent() -> None:
    renderer = Renderer(Flat(), GatewayType.anthropic)
    strategy = AnthropicOnDemand(renderer, "sys", 1_000, at=frozenset({2}))
    billed, sizes, passes = _run(strategy, _chat(), output_price=5.0)
    # t2: after a2 arrives, the compaction request sends sys, task, a1, r1, a2 = 50 and its
    #     summary is 10 output tokens (x5); then r2 follows the summary: sys, summary, r2 = 30.
    # t3: sys, summary, r2, a3, r3 = 50.
    assert billed == [20, 40, 50 + 50 + 30, 50]
    assert sizes == [20, 40, 30, 50]
    assert passes["compaction_passes"] == 1 and passes["compaction_output_tokens"] == 10
    final = _final(strategy)
    assert KEPT in final and LOST not in final


def test_anthropic_context_editing_clears_all_but_the_latest_tool_results() -> None:
    renderer = Renderer(Flat(), GatewayType.anthropic)
    strategy = AnthropicEditing(renderer, "sys", 1_000, trigger=250, keep=1)
    billed, sizes, passes = _run(strategy, _tools(), output_price=5.0)
    # Units: sys 10, task 10; each turn adds a tool_use block (10) and its result (100).
    # t1: 20 + 110 = 130. t2: 240 < 250, nothing cleared.
    # t3: 350 >= 250: results 1 and 2 become 10-token placeholders: 350 - 2 * 90 = 170.
    assert billed == sizes == [20, 130, 240, 170]
    assert passes["compaction_passes"] == 0
    final = _final(strategy)
    assert "FACT-103-tool" in final and "FACT-101-tool" not in final
    assert final.count(PLACEHOLDER) == 2


def test_clear_at_least_leaves_the_request_whole_when_too_little_would_go() -> None:
    renderer = Renderer(Flat(), GatewayType.anthropic)
    strategy = AnthropicEditing(renderer, "sys", 1_000, trigger=200, keep=1, clear_at_least=150)
    billed, _, _ = _run(strategy, _tools(), output_price=5.0)
    # t2: 240 >= 200 but clearing result 1 frees 90 < 150: read whole. t3: frees 180: 170.
    assert billed == [20, 130, 240, 170]
    units = strategy.last
    assert cleared(units, 0, 0, 10**6, 10) == units  # nothing cleared is read unchanged


def test_responses_threshold_compaction_item_comes_after_the_reply() -> None:
    renderer = Renderer(Flat(), GatewayType.openai_responses)
    strategy = ResponsesThreshold(renderer, "sys", 1_000, threshold=40)
    billed, sizes, passes = _run(strategy, _chat(), output_price=8.0)
    # t1: sys, task, a1, r1 = 40 >= 40: read in full; the compaction item follows the reply.
    # t2: the pass (input 40, a 10-token item x8 = 80) is billed with the reply a2; the Context
    #     then starts at the item: sys, item (10), r2 = 30.
    # t3: sys, item, r2, a3, r3 = 50 >= 40 (its own pass would come with a4, after the end).
    assert billed == [20, 40, 40 + 80 + 30, 50]
    assert sizes == [20, 40, 30, 50]
    assert passes["compaction_passes"] == 1
    final = _final(strategy)  # the item read as the digest of task, a1, r1, a2
    assert KEPT in final and "a2 answered." in final and LOST not in final


def test_responses_compact_window_keeps_user_messages_and_reads_the_cache() -> None:
    renderer = Renderer(Flat(), GatewayType.openai_responses)
    strategy = ResponsesCompact(renderer, "sys", 1_000, at=frozenset({2}))
    rules = OpenAIRules(min_tokens=1, step=1)
    billed, sizes, _ = _run(strategy, _chat(), output_price=8.0, rules=rules)
    # Automatic prefix cache, reads at 0.1x.
    # t0: sys, task = 20, nothing cached: 20.
    # t1: sys, task, a1, r1: the first 20 read: 2 + 20 = 22.
    # t2: the compact request sys, task, a1, r1, a2 reads 40: 4 + 10 + 8 * 10 (its item) = 94;
    #     the window is task, r1, item; then r2: sys, task, r1, item, r2 reads sys, task:
    #     2 + 30 = 32.
    # t3: sys, task, r1, item, r2, a3, r3: the first 50 read: 5 + 20 = 25.
    assert [round(b, 6) for b in billed] == [20, 22, 94 + 32, 25]
    assert sizes == [20, 40, 50, 70]
    final = _final(strategy)
    assert LOST in final and KEPT in final  # the user messages are kept verbatim
