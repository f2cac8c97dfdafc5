"""The cache-study section of the report (``bench/results/cache.json``)."""

from __future__ import annotations

import textwrap
from typing import Any

from .common import Page, fmt, number, table

__all__ = ["cache_section"]



def _pct(value: object) -> str:
    share = number(value)
    return "–" if share is None else f"{100 * share:.1f}%"


def _times(value: object) -> str:
    ratio = number(value)
    return "–" if ratio is None else f"{ratio:.2f}x"


def _pp(value: object) -> str:
    points = number(value)
    return "–" if points is None else f"{points:.1f}"


def _label(row: dict[str, Any]) -> str:
    name = str(row.get("name", "?"))
    setting = row.get("setting")
    return f"{name} ({setting})" if setting else name


_TITLES = {"anthropic": "Anthropic", "openai": "OpenAI", "gemini": "Gemini"}


def cache_section(page: Page, data: dict[str, Any] | None, missing: str | None) -> None:
    """Tables, targets and plots of the cache study, one subsection per provider."""
    page.add("## Cache efficiency: the library against common context strategies", "")
    if data is None:
        page.add(f"*{missing}* (`python bench/cache.py` writes `bench/results/cache.json`).", "")
        return
    found = data.get("providers")
    providers: dict[str, Any] = (
        found if isinstance(found, dict) else {str(data.get("provider", "openai")): data}
    )
    first = next((p for p in providers.values() if isinstance(p, dict)), {})
    config = first.get("config", {}) if isinstance(first.get("config"), dict) else {}
    session = first.get("session", {}) if isinstance(first.get("session"), dict) else {}
    page.add(
        f"One deterministic synthetic session of a tool-using coding agent (seed "
        f"{config.get('seed', '?')}, {session.get('turns', '?')} turns, "
        f"{session.get('facts', '?')} planted facts; a system prompt of about 1,500 tokens, tool "
        "outputs and retrieved documents of 200 to 5,000 tokens, user requests, answers and tool "
        "calls, reminders with lifecycles) is fed to every strategy, which must keep each request "
        f"within {fmt(config.get('budget'))} tokens. Each provider's requests are built in its "
        "own wire shape by the library's adapter, counted with "
        f"`{first.get('counter', '?')}` on the JSON text of each unit (a message; a content "
        "block on Anthropic; a part on Gemini), and billed under that provider's documented "
        "cache rules (`bench/cachestudy/providers.py`):",
        "",
        "- **Anthropic**: only what a `cache_control` breakpoint marks is cached, at most 4 a "
        "request; a breakpoint reads an entry an earlier request wrote at one of its breakpoints "
        "only among the 20 blocks ending at it; nothing under 1,024 tokens; reads 0.1x, writes "
        "(from the read point to the last breakpoint) 1.25x, the rest 1x. The library places "
        "its own breakpoints; the other strategies get the common recipe (the end of the system "
        "prompt and the last block before their reminders).",
        "- **OpenAI**: automatic above 1,024 tokens, hits counted in 128-token steps; reads 0.1x, "
        "no write premium.",
        "- **Gemini**: implicit caching above the model's minimum (1,024, 2.5 Flash); 90% off "
        "reads, no write premium.",
        "",
        "Reuse is the longest prefix of whole units an earlier request of the session left in "
        "the cache. The *physical limit* is the share of all input that is not new that turn "
        "(nothing new can come from a cache). *Information kept* is the share of the planted "
        "facts found verbatim in the final request or in a record reachable from a pointer in it "
        "(following the pointers in the records it returns, as a model with the recall tool "
        "would). Each summarizing family is shown at its cheapest setting of the sweep.",
        "",
    )
    for name, result in providers.items():
        if isinstance(result, dict):
            _provider(page, name, result)


def _provider(page: Page, name: str, data: dict[str, Any]) -> None:
    rows = [r for r in data.get("strategies", []) if isinstance(r, dict)]
    page.add(f"### {_TITLES.get(name, name)} rules", "")
    page.add(
        *table(
            ["strategy", "cache reuse", "physical limit", "gap (pp)", "billed", "x library",
             "peak", "mean", "info kept"],
            [
                [_label(r), _pct(r.get("reuse_share")), _pct(r.get("reuse_limit")),
                 _pp(r.get("gap_to_limit_pp")), r.get("billed"), _times(r.get("billed_vs_library")),
                 r.get("peak_tokens"), r.get("mean_tokens"), _pct(r.get("info_kept"))]
                for r in rows
            ],
        )
    )
    _native(page, data, rows)
    _targets(page, data, rows)
    _plots(page, name, rows)
    sweep = [r for r in data.get("sweep", []) if isinstance(r, dict)]
    if sweep:
        page.add("Sweep of the knobs (the table above uses each family's cheapest row):", "")
        page.add(
            *table(
                ["strategy", "mean tokens", "billed", "x library", "cache reuse", "limit",
                 "info kept"],
                [
                    [_label(r), r.get("mean_tokens"), r.get("billed"),
                     _times(r.get("billed_vs_library")), _pct(r.get("reuse_share")),
                     _pct(r.get("reuse_limit")), _pct(r.get("info_kept"))]
                    for r in sweep
                ],
            )
        )
    for bad in data.get("infeasible", []) or []:
        if isinstance(bad, dict):
            page.add(f"- over the budget, left out: {bad.get('setting')}: {bad.get('error')}")
    _seeds(page, data)
    check = data.get("cross_check")
    if isinstance(check, dict):
        page.add(
            "",
            f"Cross-check: the same policy modelled locally in a few lines "
            f"(`bench/cachestudy/library.py`) reuses {_pct(check.get('reuse_share'))} of its "
            f"input against a limit of {_pct(check.get('reuse_limit'))}, billed "
            f"{_times(check.get('billed_vs_library'))} the library.",
            "",
        )


def _native(page: Page, data: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    """The provider-native rows' compaction passes, and how they were modelled."""
    native = [r for r in rows if r.get("family") == "provider native"]
    notes = data.get("native_notes")
    if not native or not isinstance(notes, str):
        return
    page.add(
        *table(
            ["provider-native strategy", "compactions", "their bill", "share of billed",
             "summary output tokens"],
            [
                [_label(r), r.get("provider_compactions"), r.get("compaction_billed"),
                 _pct((number(r.get("compaction_billed")) or 0.0) / (number(r.get("billed")) or 1)),
                 r.get("compaction_output_tokens")]
                for r in native
            ],
        )
    )
    page.add(
        notes + " Every request after a compaction is checked to start with the system prompt "
        "(a compaction replaces messages, never the system prompt).",
        "",
    )


def _seeds(page: Page, data: dict[str, Any]) -> None:
    seeds = [s for s in data.get("other_seeds", []) or [] if isinstance(s, dict)]
    if not seeds:
        return
    page.add("", "The same settings on other seeds (other sessions of the same shape):", "")
    page.add(*table(
        ["seed", "strategy", "cache reuse", "physical limit", "gap (pp)", "x library",
         "info kept"],
        [[seed.get("seed"), _label(r), _pct(r.get("reuse_share")), _pct(r.get("reuse_limit")),
          _pp(r.get("gap_to_limit_pp")), _times(r.get("billed_vs_library")),
          _pct(r.get("info_kept"))]
         for seed in seeds for r in seed.get("strategies", []) if isinstance(r, dict)],
    ))


def _targets(page: Page, data: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    library = rows[0]
    gap = number(library.get("gap_to_limit_pp"))
    page.add(
        f"- Cache reuse against the physical limit: the library reuses "
        f"{_pct(library.get('reuse_share'))} of its input, "
        f"{'–' if gap is None else f'{gap:.1f}'} percentage points under its limit of "
        f"{_pct(library.get('reuse_limit'))} (target: within 5): "
        f"**{'met' if gap is not None and gap <= 5 else 'not met'}**.",
    )
    found = data.get("targets")
    targets: dict[str, Any] = found if isinstance(found, dict) else {}
    ratio = number(targets.get("recall_billed_vs_summarize"))
    recall = [r for r in rows if str(r.get("name", "")).startswith("hydrangea + recall")]
    summary = [r for r in rows if r.get("name") == "summarize and replace"]
    if ratio is not None and recall and summary:
        met = bool(targets.get("recall_target_met"))
        page.add(
            f"- Billed cost with every fact reachable: {_label(recall[0])} bills "
            f"{_times(ratio)} what {_label(summary[0])} bills (which keeps "
            f"{_pct(summary[0].get('info_kept'))} of the facts), keeping "
            f"{_pct(recall[0].get('info_kept'))} reachable (target: at most 1.00x with 100%): "
            f"**{'met' if met else 'not met'}**. Its own cache reuse is "
            f"{_pct(recall[0].get('reuse_share'))}, {_pp(recall[0].get('gap_to_limit_pp'))} "
            f"percentage points under its limit of {_pct(recall[0].get('reuse_limit'))}: its "
            "requests are small, so the summary region rewritten at each rollup (a tail cut) "
            "weighs more.",
        )
    carried = number(library.get("summary_tokens_at_end"))
    if carried is not None:
        page.add(
            f"- The default library's last request carries {carried:,.0f} tokens of promoted "
            f"summaries ({library.get('checkpoints', '?')} checkpoints); with headline rollups "
            f"the recall setting carries "
            f"{fmt(recall[0].get('summary_tokens_at_end')) if recall else '–'}.",
        )
    page.add("")


def _short(row: dict[str, Any]) -> str:
    """A bar label that fits beside the bars: the strategy's name on one line (long names cut
    at a comma or wrapped), its setting on the next."""
    name = str(row.get("name", "?")).split(",")[0]
    lines = textwrap.wrap(name, 30) or ["?"]
    setting = row.get("setting")
    if setting:
        lines.extend(textwrap.wrap(f"({setting})", 30))
    return "\n".join(lines)


def _plots(page: Page, name: str, rows: list[dict[str, Any]]) -> None:
    def cost(plt: Any) -> None:
        labels = [_short(r) for r in rows][::-1]
        billed = [float(r["billed_vs_library"]) for r in rows][::-1]
        colors = ["#3b6ea5" if str(r.get("name", "")).startswith("hydrangea") else "#b0b7c3"
                  for r in rows][::-1]
        positions = range(len(rows))
        bars = plt.barh(positions, billed, color=colors, height=0.6)
        plt.yticks(positions, labels, fontsize=8)
        for bar, row in zip(bars, rows[::-1], strict=True):
            plt.text(bar.get_width(), bar.get_y() + bar.get_height() / 2,
                     f"  {bar.get_width():.2f}x, info kept {_pct(row.get('info_kept'))}",
                     va="center", fontsize=8)
        plt.axvline(1.0, color="#444444", linewidth=0.8, linestyle=":")
        plt.xlim(0, max(billed) * 1.45)
        plt.xlabel("billed input cost, relative to the library (1.00x = the library)")
        plt.title(f"Billed input cost under {_TITLES.get(name, name)}'s cache rules")

    if rows:
        page.figure(f"cache_cost_{name}", f"billed cost per strategy, {name} rules", cost,
                    size=(8, 1.2 + 0.75 * len(rows)))
