"""Run every strategy on the same session and gather the results.

Two pairs of knobs decide how much history a summarizing strategy carries, and so its cost: the
library's compaction threshold and summary rollup size, and summarize-and-replace's period and
summary size cap. Picking one value for each would decide the comparison, so the study sweeps both
grids and compares each strategy at its own cheapest setting; the sweep itself (cost against mean
context size) is reported too. The library runs as two strategies, one per lifecycle resend
policy (:class:`~hydrangea.lifecycle.session.Resend`: each episode, or when changed), each swept.
The in-place strategy uses the settings chosen for the library's default policy (resend each
episode), so that it differs from the library only in where reminders live.

Every row of the comparison also carries the reminders' own share of the input and of the bill,
and the binding consequence under the provider's rules (:mod:`.binding`): requests that would be
rejected (Anthropic) or lose reasoning (OpenAI) because the strategy rewrote what a bound reply
was produced under.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from hydrangea.areas.recall import HeadlineSummarizer, recall_tool
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle.session import Resend
from hydrangea.message import Message, Role

from .accounting import (
    Request,
    StrategyTotals,
    TurnCost,
    cost_turns,
    totals,
)
from .baselines import InPlaceReminders, SlidingWindow, SummarizeReplace
from .binding import BindingCount, count_broken
from .library import LibraryModel
from .native_study import NATIVE_NOTES, NativeRun, checkpoint_turns, native_results
from .providers import AnthropicRules, GeminiRules, OpenAIRules, ProviderRules, cost_turns_with
from .render import Renderer
from .strategy import BudgetExceededError, Strategy, reminder_message
from .summaries import reachable_texts
from .tokens import TokenCounter, counter_name, default_counter
from .transcript import Transcript, generate

__all__ = [
    "PROVIDERS",
    "LibrarySetting",
    "StrategyResult",
    "StudyConfig",
    "SummarySetting",
    "information_kept",
    "interpolate",
    "new_tokens",
    "run_strategy",
    "run_study",
]


@dataclass(frozen=True, slots=True)
class StudyConfig:
    """The session and the settings swept."""

    seed: int = 7
    turns: int = 300
    budget: int = 60_000
    thresholds: tuple[int, ...] = (2_500, 5_000, 10_000)
    rollups: tuple[int | None, ...] = (None, 3_000)
    recall_rollups: tuple[int, ...] = (500, 1_500)
    summarize_every: tuple[int, ...] = (3, 5, 8, 10, 15)
    summary_caps: tuple[int, ...] = (750, 1_500, 3_000)
    other_seeds: tuple[int, ...] = (8,)


PROVIDERS: dict[str, tuple[GatewayType, Callable[[], ProviderRules]]] = {
    "anthropic": (GatewayType.anthropic, AnthropicRules),
    "openai": (GatewayType.openai, OpenAIRules),
    "gemini": (GatewayType.gemini, GeminiRules),
}
"""Each provider's wire shape and cache rules (see :mod:`.providers`)."""

RECALL_NAME = "hydrangea + recall tool, headline summaries, checkpoints in tool loops"


@dataclass(frozen=True, slots=True)
class LibrarySetting:
    """The library's knobs: the compaction threshold and the rollup size (None: no rollup)."""

    threshold: int
    rollup: int | None = None
    in_loops: bool = False
    resend: Resend = Resend.each_episode

    @property
    def label(self) -> str:
        """How the setting is shown in tables."""
        rollup = "no rollup" if self.rollup is None else f"rollup {self.rollup}"
        loops = ", in loops" if self.in_loops else ""
        return f"threshold {self.threshold}, {rollup}{loops}"


@dataclass(frozen=True, slots=True)
class SummarySetting:
    """Summarize-and-replace's knobs: the period in turns and the summary size cap."""

    every: int
    cap: int = 3_000

    @property
    def label(self) -> str:
        """How the setting is shown in tables."""
        return f"every {self.every} turns, cap {self.cap}"


@dataclass(frozen=True, slots=True)
class StrategyResult:
    """One strategy's costs and what it kept."""

    name: str
    setting: str
    turns: tuple[TurnCost, ...]
    totals: StrategyTotals
    facts_kept: int
    facts_total: int
    extra: dict[str, Any] = field(default_factory=dict)
    binding: BindingCount | None = None
    """Broken bindings under the provider's rules (None: not counted, or no provider rules)."""

    @property
    def info_kept(self) -> float:
        """Share of the session's facts still reachable from the final request."""
        return self.facts_kept / self.facts_total if self.facts_total else 1.0


def new_tokens(transcript: Transcript, renderer: Renderer) -> list[int]:
    """Per turn, the tokens that are new that turn: its events, the reminder versions not shown
    in the previous turn, and in turn 0 the system prompt."""
    out: list[int] = []
    previous: set[tuple[str, str]] = set()
    for turn in transcript.turns:
        count = sum(renderer.tokens(message) for message in turn.events)
        if turn.index == 0:
            count += renderer.tokens(Message(role=Role.system, content=transcript.system_prompt))
        for reminder in turn.reminders:
            if (reminder.key, reminder.text) not in previous:
                count += renderer.tokens(reminder_message(reminder))
        previous = {(r.key, r.text) for r in turn.reminders}
        out.append(count)
    return out


def information_kept(facts: Sequence[str], final: Request, strategy: Strategy) -> int:
    """How many facts are in the final request, or in a record a pointer in it leads to."""
    final_text = "\n".join(message.text for message in final)
    texts = reachable_texts(final_text, strategy.records())
    return sum(1 for fact in facts if any(fact in text for text in texts))


def run_strategy(
    strategy: Strategy,
    transcript: Transcript,
    fresh: Sequence[int],
    setting: str = "",
    rules: ProviderRules | None = None,
    *,
    bindings: bool = False,
) -> StrategyResult:
    """Feed the session to ``strategy`` turn by turn and account for its requests, under
    ``rules`` (default: the provider-neutral model of :mod:`.accounting`); with ``bindings``,
    also count the requests that break a binding under those rules."""
    requests = [strategy.step(turn) for turn in transcript.turns]
    binding: BindingCount | None = None
    if rules is None:
        costs = cost_turns(requests, fresh)
    else:
        costs = cost_turns_with(rules, requests, fresh)
        if bindings:
            binding = count_broken(rules.binding, requests, transcript)
    facts = transcript.facts
    kept = information_kept(facts, requests[-1], strategy)
    extra: dict[str, Any] = {}
    checkpoints = getattr(strategy, "checkpoints", None)
    if checkpoints is None:
        checkpoints = getattr(getattr(strategy, "history", None), "checkpoints", None)
    if isinstance(checkpoints, int):
        extra["checkpoints"] = checkpoints
    rollups = getattr(strategy, "rollups", None)
    if isinstance(rollups, int):
        extra["rollups"] = rollups
    summary_tokens = getattr(strategy, "summary_tokens", None)
    if isinstance(summary_tokens, int):
        extra["summary_tokens_at_end"] = summary_tokens
    return StrategyResult(
        strategy.name, setting, tuple(costs), totals(costs), kept, len(facts), extra, binding
    )


def real_library_available() -> bool:
    """Whether the library's coop, areas and lifecycle packages are installed."""
    return all(
        importlib.util.find_spec(name) is not None
        for name in ("hydrangea.coop", "hydrangea.areas", "hydrangea.lifecycle")
    )


def _library(
    transcript: Transcript, renderer: Renderer, budget: int, setting: LibrarySetting, *,
    recall: bool = False,
) -> Strategy:
    if not real_library_available():
        return LibraryModel(
            transcript, renderer, budget, threshold=setting.threshold, rollup=setting.rollup,
            resend=setting.resend.value,
        )
    from .real_library import LibraryStrategy

    if recall:
        tooled = Renderer(renderer.counter, renderer.gateway, [recall_tool(renderer.gateway)])
        return LibraryStrategy(
            transcript, tooled, budget, threshold=setting.threshold, rollup=setting.rollup,
            summarizer=HeadlineSummarizer(), rollup_detail="headlines",
            name=f"{RECALL_NAME} (resend {setting.resend.value.replace('_', ' ')})",
            in_loops=setting.in_loops, resend=setting.resend,
        )
    return LibraryStrategy(
        transcript, renderer, budget, threshold=setting.threshold, rollup=setting.rollup,
        resend=setting.resend,
    )


def _in_place(
    transcript: Transcript, renderer: Renderer, budget: int, setting: LibrarySetting
) -> Strategy:
    if real_library_available():
        from .real_library import LibraryStrategy

        return LibraryStrategy(
            transcript, renderer, budget, threshold=setting.threshold, rollup=setting.rollup,
            in_place=True,
        )
    return InPlaceReminders(
        transcript, renderer, budget, threshold=setting.threshold, rollup=setting.rollup
    )


def _summarize(
    transcript: Transcript, renderer: Renderer, budget: int, setting: SummarySetting
) -> Strategy:
    return SummarizeReplace(
        transcript, renderer, budget, every=setting.every, summary_cap=setting.cap
    )


def run_study(
    config: StudyConfig | None = None,
    counter: TokenCounter | None = None,
    provider: str = "openai",
) -> dict[str, Any]:
    """Run the sweep and the comparison under one provider's rules; return JSON-ready results."""
    config = config or StudyConfig()
    counter = counter or default_counter()
    gateway, make_rules = PROVIDERS[provider]
    transcript = generate(config.seed, config.turns)
    renderer = Renderer(counter, gateway)
    fresh = new_tokens(transcript, renderer)
    budget = config.budget
    infeasible: list[dict[str, str]] = []

    def run(make: Callable[[], Strategy], setting: str, bindings: bool = False) -> StrategyResult:
        return run_strategy(make(), transcript, fresh, setting, make_rules(), bindings=bindings)

    def sweep(
        settings: Sequence[Any], make: Callable[[Any], Callable[[], Strategy]], prefix: str = ""
    ) -> list[tuple[Any, StrategyResult]]:
        out: list[tuple[Any, StrategyResult]] = []
        for setting in settings:
            try:
                out.append((setting, run(make(setting), setting.label)))
            except BudgetExceededError as exc:
                infeasible.append({"setting": prefix + setting.label, "error": str(exc)})
        return out

    library_sweeps = {
        resend: sweep(
            [
                LibrarySetting(t, r, resend=resend)
                for t in config.thresholds
                for r in config.rollups
            ],
            lambda s: lambda: _library(transcript, renderer, budget, s),
        )
        for resend in Resend
    }
    library_sweep = library_sweeps[Resend.each_episode]
    recall_sweep: list[tuple[Any, StrategyResult]] = []
    if real_library_available():
        recall_sweep = sweep(
            [
                LibrarySetting(t, r, in_loops=True, resend=resend)
                for resend in Resend
                for t in config.thresholds
                for r in config.recall_rollups
            ],
            lambda s: lambda: _library(transcript, renderer, budget, s, recall=True),
            prefix="recall ",
        )
    summary_sweep = sweep(
        [SummarySetting(e, c) for e in config.summarize_every for c in config.summary_caps],
        lambda s: lambda: _summarize(transcript, renderer, budget, s),
    )
    if not all(library_sweeps.values()) or not summary_sweep:
        raise BudgetExceededError(f"no feasible setting: {infeasible}")

    def cheapest(pairs: Sequence[tuple[Any, StrategyResult]]) -> Any:
        return min(pairs, key=lambda pair: pair[1].totals.billed)[0]

    chosen = cheapest(library_sweep)
    changed = cheapest(library_sweeps[Resend.when_changed])
    every = cheapest(summary_sweep)
    main = [  # run again with the binding count (the sweep's runs skip it)
        run(lambda: _library(transcript, renderer, budget, chosen), chosen.label, True),
        run(lambda: _library(transcript, renderer, budget, changed), changed.label, True),
        run(lambda: SlidingWindow(transcript, renderer, budget), "trim to fit", True),
        run(lambda: _summarize(transcript, renderer, budget, every), every.label, True),
        run(lambda: _in_place(transcript, renderer, budget, chosen), chosen.label, True),
    ]
    if recall_sweep:
        best = cheapest(recall_sweep)
        main.append(run(
            lambda: _library(transcript, renderer, budget, best, recall=True), best.label, True
        ))
    def model(setting: LibrarySetting) -> Callable[[], Strategy]:
        return lambda: LibraryModel(
            transcript, renderer, budget, threshold=setting.threshold, rollup=setting.rollup,
            resend=setting.resend.value,
        )

    checks = [run(model(s), s.label, True) for s in (chosen, changed)]
    every_result = [*library_sweep, *library_sweeps[Resend.when_changed], *recall_sweep,
                    *summary_sweep]
    seeds = [
        _other_seed(seed, config, counter, provider, (chosen, changed), every)
        for seed in config.other_seeds
    ]
    out = _to_json(
        config, counter, transcript, main, [r for _, r in every_result], checks, infeasible
    )
    native, native_sweep, native_infeasible = _native(
        provider, config, counter, transcript, make_rules,
        checkpoint_turns(lambda: _library(transcript, renderer, budget, chosen), transcript),
    )
    if native:
        out["strategies"].extend(_row(r, main[0], per_turn=True) for r in native)
        out["sweep"].extend(_row(r, main[0], per_turn=False) for r in native_sweep)
        out["infeasible"].extend(native_infeasible)
        out["native_notes"] = NATIVE_NOTES
    out["provider"] = provider
    out["gateway"] = gateway.value
    out["rules"] = _rules_json(make_rules())
    out["other_seeds"] = seeds
    out["chosen"] = {
        "library": {"threshold": chosen.threshold, "rollup": chosen.rollup},
        "library_when_changed": {"threshold": changed.threshold, "rollup": changed.rollup},
        "summarize_and_replace": {"every": every.every, "cap": every.cap},
    }
    return out


def _native(
    provider: str,
    config: StudyConfig,
    counter: TokenCounter,
    transcript: Transcript,
    make_rules: Callable[[], ProviderRules],
    at: frozenset[int],
) -> tuple[list[StrategyResult], list[StrategyResult], list[dict[str, str]]]:
    """The provider-native strategies (:mod:`.native_study`) as results of the comparison."""

    def result(run: NativeRun) -> StrategyResult:
        facts = len(transcript.facts)
        return StrategyResult(
            run.strategy.name, run.setting, tuple(run.costs), totals(run.costs), run.kept,
            facts, run.extra,
        )

    chosen, sweep, infeasible = native_results(
        provider, transcript, counter, config.budget, make_rules, at,
        lambda renderer: new_tokens(transcript, renderer),
    )
    return [result(r) for r in chosen], [result(r) for r in sweep], infeasible


def _rules_json(rules: ProviderRules) -> dict[str, Any]:
    fields = getattr(rules, "__dataclass_fields__", {})
    out = {name: getattr(rules, name) for name in fields if not name.startswith("_")}
    out["binding"] = str(rules.binding)
    return out


def _other_seed(
    seed: int,
    config: StudyConfig,
    counter: TokenCounter,
    provider: str,
    chosen: tuple[LibrarySetting, LibrarySetting],
    every: SummarySetting,
) -> dict[str, Any]:
    """The library (both resend policies), summarize-and-replace and in-place at the chosen
    settings on another seed."""
    gateway, make_rules = PROVIDERS[provider]
    transcript = generate(seed, config.turns)
    renderer = Renderer(counter, gateway)
    fresh = new_tokens(transcript, renderer)
    budget = config.budget
    each, changed = chosen
    strategies = [
        (_library(transcript, renderer, budget, each), each.label),
        (_library(transcript, renderer, budget, changed), changed.label),
        (_summarize(transcript, renderer, budget, every), every.label),
        (_in_place(transcript, renderer, budget, each), each.label),
    ]
    results = [
        run_strategy(strategy, transcript, fresh, label, make_rules(), bindings=True)
        for strategy, label in strategies
    ]
    return {"seed": seed, "strategies": [_row(r, results[0], per_turn=False) for r in results]}


def _recall_targets(main: Sequence[StrategyResult]) -> dict[str, Any]:
    """Whether the recall setting bills at most summarize-and-replace's cheapest and keeps all."""
    recall = [r for r in main if r.name.startswith(RECALL_NAME)]
    summary = [r for r in main if r.name == "summarize and replace"]
    if not recall or not summary:
        return {}
    best, rival = recall[0], summary[0]
    return {
        "recall_billed_vs_summarize": best.totals.billed / rival.totals.billed,
        "recall_at_most_summarize": best.totals.billed <= rival.totals.billed,
        "recall_info_kept": best.info_kept,
        "recall_target_met": best.totals.billed <= rival.totals.billed and best.info_kept == 1.0,
    }


def interpolate(points: Sequence[tuple[float, float]], x: float) -> float | None:
    """Linear interpolation of ``y`` at ``x`` over ``(x, y)`` points; None outside their range."""
    ordered = sorted(points)
    for (x0, y0), (x1, y1) in pairwise(ordered):
        if x0 <= x <= x1:
            return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return None


def _row(result: StrategyResult, library: StrategyResult, per_turn: bool) -> dict[str, Any]:
    t = result.totals
    row: dict[str, Any] = {
        "name": result.name,
        "setting": result.setting,
        "input_tokens": t.input_tokens,
        "reused_tokens": t.reused_tokens,
        "new_tokens": t.new_tokens,
        "reuse_share": t.reuse_share,
        "new_share": t.new_share,
        "reuse_limit": t.reuse_limit,
        "gap_to_limit_pp": 100 * (t.reuse_limit - t.reuse_share),
        "billed": t.billed,
        "billed_vs_library": t.billed / library.totals.billed,
        "peak_tokens": t.peak_tokens,
        "mean_tokens": t.mean_tokens,
        "facts_kept": result.facts_kept,
        "facts_total": result.facts_total,
        "info_kept": result.info_kept,
        "reminder_tokens": t.reminder_tokens,
        "reminder_share": t.reminder_tokens / t.input_tokens if t.input_tokens else 0.0,
        "reminder_billed": t.reminder_billed,
        "reminder_billed_share": t.reminder_billed / t.billed if t.billed else 0.0,
        **result.extra,
    }
    binding = result.binding
    if binding is not None:
        row["binding"] = {
            "rule": str(binding.binding),
            "requests_broken": binding.requests_broken,
            "reasoning_items_broken": binding.items_broken,
            "requests_rejected": binding.requests_rejected,
            "reasoning_items_dropped": binding.reasoning_dropped,
            "first_broken_turn": binding.first_broken,
        }
    if per_turn:
        row["per_turn"] = {
            "input": [c.input_tokens for c in result.turns],
            "reused": [c.reused_tokens for c in result.turns],
            "new": [c.new_tokens for c in result.turns],
            "billed": [round(c.billed, 2) for c in result.turns],
        }
    return row


def _to_json(
    config: StudyConfig,
    counter: TokenCounter,
    transcript: Transcript,
    main: Sequence[StrategyResult],
    sweep: Sequence[StrategyResult],
    checks: Sequence[StrategyResult],
    infeasible: Sequence[dict[str, str]],
) -> dict[str, Any]:
    library = main[0]
    gap = 100 * (library.totals.reuse_limit - library.totals.reuse_share)
    changed = main[1]
    summary = next(r for r in main if r.name == "summarize and replace")
    cap = summary.setting.rsplit(" ", 1)[-1]  # the cheapest summarizing row's cap
    summarizing = [  # its period sweep at that cap: one curve of cost against size
        r for r in sweep if r.name == "summarize and replace" and r.setting.endswith(f"cap {cap}")
    ]
    matched = interpolate(
        [(r.totals.mean_tokens, r.totals.billed) for r in summarizing], library.totals.mean_tokens
    )
    return {
        "study": "cache",
        "gateway": "",
        "counter": counter_name(counter),
        "library_pieces": "real" if real_library_available() else "local model",
        "config": {
            "seed": config.seed,
            "other_seeds": list(config.other_seeds),
            "turns": config.turns,
            "budget": config.budget,
            "thresholds": list(config.thresholds),
            "rollups": list(config.rollups),
            "summarize_every": list(config.summarize_every),
            "summary_caps": list(config.summary_caps),
            "prefix_granularity": "message",
            "recall_rollups": list(config.recall_rollups),
            "resend_policies": [policy.value for policy in Resend],
            "replies_carry_bound_reasoning": True,
        },
        "session": {
            "turns": len(transcript.turns),
            "facts": len(transcript.facts),
            "new_tokens_total": library.totals.new_tokens,
        },
        "strategies": [_row(result, library, per_turn=True) for result in main],
        "sweep": [_row(result, library, per_turn=False) for result in sweep],
        "infeasible": list(infeasible),
        "cross_check": _row(checks[0], library, per_turn=False),
        "cross_check_when_changed": _row(checks[1], library, per_turn=False),
        "targets": {
            "library_gap_to_limit_pp": gap,
            "library_within_5pp": gap <= 5.0,
            "when_changed_gap_to_limit_pp": 100 * (
                changed.totals.reuse_limit - changed.totals.reuse_share
            ),
            "when_changed_billed_vs_each_episode": changed.totals.billed / library.totals.billed,
            "library_breaks_no_binding": all(
                r.binding is not None and r.binding.requests_broken == 0 for r in main[:2]
            ),
            **_recall_targets(main),
            "library_cheapest": all(
                library.totals.billed < other.totals.billed for other in main[1:]
            ),
            "summarize_billed_at_library_mean_size": matched,
            "library_vs_summarize_at_same_size": (
                library.totals.billed / matched if matched else None
            ),
        },
    }
