"""The provider-native strategies of :mod:`.native` in the study, under their own provider only.

Anthropic gets threshold compaction, context editing and on-demand compaction; OpenAI gets the
Responses compaction (``compact_threshold``) and ``/responses/compact`` (rendered on the
Responses wire shape, priced by the same OpenAI cache rules); Gemini has none. The on-demand
forms compact at the turns where the library's own conversation checkpointed (its chosen
setting, resend each episode); the threshold forms sweep their trigger, and context editing its
trigger and ``keep``, each family shown at its cheapest feasible setting like every other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from hydrangea.gateway import GatewayType

from .accounting import TurnCost, is_reminder
from .native import (
    OUTPUT_PRICE,
    AnthropicEditing,
    AnthropicOnDemand,
    AnthropicThreshold,
    Call,
    NativeStrategy,
    ResponsesCompact,
    ResponsesThreshold,
)
from .providers import ProviderRules, unit_costs
from .render import Renderer
from .strategy import BudgetExceededError, Strategy
from .tokens import TokenCounter
from .transcript import Transcript

__all__ = [
    "NATIVE_NOTES", "NativeConfig", "NativeRun", "checkpoint_turns", "cost_calls", "native_results",
]

NATIVE_NOTES = (
    "Provider-native rows: a scripted stand-in applies the provider's documented rule to the "
    "requests the library's Context builds with its own options (no network); the bench checks "
    "after every compaction that the Context sends what the rule keeps. A provider summary is "
    "opaque: it is modelled by the study's extractive digest (one first sentence per message "
    "replaced, no pointers), at that digest's size, so 'info kept' is the same digest check as "
    "for the other rows and says nothing of a real provider summary's quality. A compaction pass "
    "is billed as one more call: the input it reads under the cache rules, plus the summary as "
    "output tokens at the output/input list-price ratio (5x Anthropic, 8x OpenAI); its cost is "
    "in 'billed', and the size and reuse columns describe what the model reads to answer. "
    "Context editing is modelled statelessly: each request's full history is edited anew. The "
    "library's own summaries are extractive and cost no model call."
)


@dataclass(frozen=True, slots=True)
class NativeConfig:
    """The settings swept (Anthropic's compaction trigger is at least 50,000 tokens)."""

    anthropic_triggers: tuple[int, ...] = (50_000, 55_000)
    editing: tuple[tuple[int, int], ...] = ((30_000, 3), (30_000, 8), (45_000, 3), (45_000, 8))
    clear_at_least: int = 5_000
    responses_thresholds: tuple[int, ...] = (10_000, 20_000, 40_000)


def checkpoint_turns(make: Callable[[], Strategy], transcript: Transcript) -> frozenset[int]:
    """The turns at which the library's strategy made a compaction checkpoint."""
    strategy = make()
    turns: set[int] = set()
    before = 0
    for turn in transcript.turns:
        strategy.step(turn)
        now = getattr(strategy, "checkpoints", 0)
        if now > before:
            turns.add(turn.index)
        before = now
    return frozenset(turns)


def cost_calls(
    rules: ProviderRules, calls: Sequence[Sequence[Call]], new: Sequence[int], output_price: float
) -> tuple[list[TurnCost], dict[str, float]]:
    """Each turn's cost: the model's read is the turn's request (size, reuse, reminders);
    every call of the turn, compaction passes included, is in its bill."""
    rules.reset()
    out: list[TurnCost] = []
    passes = {"compaction_passes": 0.0, "compaction_billed": 0.0, "compaction_output_tokens": 0.0}
    for turn_calls, arrived in zip(calls, new, strict=True):
        billed = 0.0
        read = 0
        shares: list[float] = []
        for call in turn_calls:
            got, written, cost = rules.cost(call.read)
            cost += call.output_tokens * output_price
            billed += cost
            if call.compaction:
                passes["compaction_passes"] += 1
                passes["compaction_billed"] += cost
                passes["compaction_output_tokens"] += call.output_tokens
            else:
                read, shares = got, unit_costs(rules, call.read, got, written)
        main = turn_calls[-1].read
        size = sum(u.tokens for u in main)
        fresh = min(arrived, size)
        marked = [n for n, unit in enumerate(main) if is_reminder(unit)]
        out.append(TurnCost(
            size, min(read, size - fresh), fresh, billed,
            sum(main[n].tokens for n in marked), sum(shares[n] for n in marked),
        ))
    return out, passes


@dataclass(frozen=True, slots=True)
class NativeRun:
    """One native strategy's per-turn costs and what it kept."""

    strategy: NativeStrategy
    setting: str
    costs: list[TurnCost]
    extra: dict[str, Any]
    kept: int


def _run(
    strategy: NativeStrategy, setting: str, transcript: Transcript, fresh: Sequence[int],
    rules: ProviderRules, provider: str,
) -> NativeRun:
    calls = [strategy.step(turn) for turn in transcript.turns]
    costs, passes = cost_calls(rules, calls, fresh, OUTPUT_PRICE[provider])
    final = "\n".join(unit.text for unit in strategy.final())
    kept = sum(1 for fact in transcript.facts if fact in final)
    extra: dict[str, Any] = {**passes, "family": "provider native",
                             "provider_compactions": strategy.compactions}
    return NativeRun(strategy, setting, costs, extra, kept)


def native_results(
    provider: str,
    transcript: Transcript,
    counter: TokenCounter,
    budget: int,
    rules: Callable[[], ProviderRules],
    at: frozenset[int],
    fresh_of: Callable[[Renderer], list[int]],
    config: NativeConfig | None = None,
) -> tuple[list[NativeRun], list[NativeRun], list[dict[str, str]]]:
    """The chosen runs, the sweep and the infeasible settings of ``provider``'s native
    strategies (none for Gemini)."""
    config = config or NativeConfig()
    system = transcript.system_prompt
    families: list[list[tuple[str, Callable[[Renderer], NativeStrategy]]]] = []
    gateway: GatewayType
    if provider == "anthropic":
        gateway = GatewayType.anthropic
        families = [
            [(f"trigger {t}", partial(AnthropicThreshold, system=system, budget=budget, trigger=t))
             for t in config.anthropic_triggers],
            [(f"trigger {t}, keep {k}, clear at least {config.clear_at_least}",
              partial(AnthropicEditing, system=system, budget=budget, trigger=t, keep=k,
                      clear_at_least=config.clear_at_least))
             for t, k in config.editing],
            [("at the library's checkpoints",
              lambda r: AnthropicOnDemand(r, system, budget, at=at))],
        ]
    elif provider == "openai":
        gateway = GatewayType.openai_responses
        families = [
            [(f"compact_threshold {t}",
              partial(ResponsesThreshold, system=system, budget=budget, threshold=t))
             for t in config.responses_thresholds],
            [("at the library's checkpoints",
              lambda r: ResponsesCompact(r, system, budget, at=at))],
        ]
    else:
        return [], [], []
    renderer = Renderer(counter, gateway)
    fresh = fresh_of(renderer)
    chosen: list[NativeRun] = []
    sweep: list[NativeRun] = []
    infeasible: list[dict[str, str]] = []
    for family in families:
        runs = []
        for setting, make in family:
            try:
                runs.append(_run(make(renderer), setting, transcript, fresh, rules(), provider))
            except BudgetExceededError as exc:
                infeasible.append({"setting": setting, "error": str(exc)})
        if runs:
            chosen.append(min(runs, key=lambda run: sum(c.billed for c in run.costs)))
            sweep.extend(runs)
    return chosen, sweep, infeasible
