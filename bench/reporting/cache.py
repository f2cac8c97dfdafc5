"""The cache-study section of the report (``bench/results/cache.json``)."""

from __future__ import annotations

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


def cache_section(page: Page, data: dict[str, Any] | None, missing: str | None) -> None:
    """Tables, targets and plots of the cache study."""
    page.add("## Cache efficiency: the library against common context strategies", "")
    if data is None:
        page.add(f"*{missing}* (`python bench/cache.py` writes `bench/results/cache.json`).", "")
        return
    config = data.get("config", {}) if isinstance(data.get("config"), dict) else {}
    session = data.get("session", {}) if isinstance(data.get("session"), dict) else {}
    rows = [r for r in data.get("strategies", []) if isinstance(r, dict)]
    page.add(
        f"One deterministic synthetic session of a tool-using coding agent (seed "
        f"{config.get('seed', '?')}, {session.get('turns', '?')} turns, "
        f"{session.get('facts', '?')} planted facts; a system prompt of about 1,500 tokens, tool "
        "outputs and retrieved documents of 200 to 5,000 tokens, user requests, answers and tool "
        "calls, reminders with lifecycles) is fed to every strategy, which must keep each request "
        f"within {fmt(config.get('budget'))} tokens. Requests are built for the "
        f"`{data.get('gateway', '?')}` gateway by the library's adapter and counted with "
        f"`{data.get('counter', '?')}` on the JSON text of each message. The library's strategy "
        f"ran on its {data.get('library_pieces', '?')} pieces (CoopContext, "
        "CompactingConversation, Lifecycle).",
        "",
        f"Cache model: a request reuses the longest run of leading messages identical to the "
        f"previous request's ({config.get('prefix_granularity', 'message')} granularity), and "
        f"only if it is at least {fmt(config.get('min_cacheable_tokens', 1024))} tokens. Reused "
        f"tokens are billed at {config.get('cache_read_price', 0.1)}x the base input price, every "
        f"other input token is written to the cache at {config.get('cache_write_price', 1.25)}x; "
        "billed cost is in base-price input tokens. The *physical limit* is the share of all "
        "input that is not new that turn (new events, new reminder versions): nothing new can "
        "come from a cache. *Information kept* is the share of the facts found verbatim in the "
        "final request or in a record that a summary pointer in it names.",
        "",
        "Summarizing strategies have a knob that sets how much history they carry (the library's "
        "compaction threshold, the summarizer's period), and cost follows it; each is therefore "
        "shown at its cheapest setting of the sweep below. The in-place strategy is the library's "
        "own pipeline with the reminders written into the history where they first appeared "
        "instead of the tail overlay, so it differs from the library in that alone.",
        "",
    )
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
    _targets(page, data, rows)
    _plots(page, data, rows)
    sweep = [r for r in data.get("sweep", []) if isinstance(r, dict)]
    if sweep:
        page.add("Sweep of the knobs (the main table uses each family's cheapest row):", "")
        page.add(
            *table(
                ["strategy", "mean tokens", "peak", "billed", "x library", "cache reuse",
                 "limit", "info kept", "checkpoints"],
                [
                    [_label(r), r.get("mean_tokens"), r.get("peak_tokens"), r.get("billed"),
                     _times(r.get("billed_vs_library")), _pct(r.get("reuse_share")),
                     _pct(r.get("reuse_limit")), _pct(r.get("info_kept")), r.get("checkpoints")]
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
            f"(`bench/cachestudy/library.py`, a shorter digest without fences) reuses "
            f"{_pct(check.get('reuse_share'))} of its input against a limit of "
            f"{_pct(check.get('reuse_limit'))}, billed {_times(check.get('billed_vs_library'))} "
            "the library.",
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
    cheaper = [
        r for r in rows[1:] if (number(r.get("billed_vs_library")) or 2.0) < 1.0
    ]
    page.add(
        f"- Cache reuse against the physical limit: the library reuses "
        f"{_pct(library.get('reuse_share'))} of its input, "
        f"{'–' if gap is None else f'{gap:.1f}'} percentage points under its limit of "
        f"{_pct(library.get('reuse_limit'))} (target: within 5): "
        f"**{'met' if gap is not None and gap <= 5 else 'not met'}**.",
    )
    if not cheaper:
        page.add("- Billed cost: the library's is the lowest of all strategies: **met**.", "")
        return
    names = "; ".join(
        f"{_label(r)} at {_times(r.get('billed_vs_library'))}, keeping "
        f"{_pct(r.get('info_kept'))} of the facts"
        for r in cheaper
    )
    page.add(
        f"- Billed cost: **not met**, cheaper than the library: {names} (the library keeps "
        f"{_pct(library.get('info_kept'))}). The library's requests are larger because every "
        "checkpoint leaves a summary whose facts and pointers stay in the cached prefix for the "
        "rest of the session; a capped summary without pointers is smaller and forgets.",
    )
    carried = number(library.get("summary_tokens_at_end"))
    if carried is not None:
        page.add(
            f"- The library's last request carries {carried:,.0f} tokens of promoted summaries "
            f"({library.get('checkpoints', '?')} checkpoints): rollups merge old summaries into "
            "one, but every fact and pointer is kept, so the index still grows with the session "
            "and sets the floor of its request size. Reading it from the cache alone costs more "
            "than the gap to strategies that forget.",
        )
    found = data.get("targets")
    targets: dict[str, Any] = found if isinstance(found, dict) else {}
    same_size = number(targets.get("library_vs_summarize_at_same_size"))
    if same_size is not None:
        page.add(
            f"- At the same mean request size as the library's (interpolated on its sweep), "
            f"summarize-and-replace would bill {_times(1 / same_size)} the library: the "
            "library's cost per token carried is "
            f"{'lower' if same_size < 1 else 'not lower'}; it costs more in total because it "
            "carries more.",
        )
    page.add("")


def _plots(page: Page, data: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    def cost(plt: Any) -> None:
        names = [_label(r) for r in rows]
        billed = [float(r["billed_vs_library"]) for r in rows]
        bars = plt.barh(names[::-1], billed[::-1], color="#6a8fbf")
        for bar, row in zip(bars, rows[::-1], strict=True):
            plt.text(bar.get_width(), bar.get_y() + bar.get_height() / 2,
                     f"  {bar.get_width():.2f}x, info {_pct(row.get('info_kept'))}",
                     va="center", fontsize=8)
        plt.xlim(0, max(billed) * 1.35)
        plt.xlabel("billed input cost, relative to the library")
        plt.title("Billed cost with prompt caching, one 300-turn session")

    def turns(plt: Any) -> None:
        styles = ["-", "-", "-", "--", ":"]
        for panel, (key, title) in enumerate(
            (("input", "input tokens per request"),
             ("uncached", "tokens not read from the cache (written)")),
            start=1,
        ):
            plt.subplot(2, 1, panel)
            for n, row in enumerate(rows):
                per_turn = row["per_turn"]
                values = per_turn["input"]
                if key == "uncached":
                    values = [a - b for a, b in zip(values, per_turn["reused"], strict=True)]
                plt.plot(values, label=_label(row), linewidth=0.9,
                         linestyle=styles[n % len(styles)])
            plt.ylabel(title, fontsize=8)
            if panel == 1:
                plt.title("Per turn: request size, and the part billed as cache writes")
                plt.legend(fontsize=7)
        plt.xlabel("turn")

    def billed(plt: Any) -> None:
        for row in rows:
            total = 0.0
            series = []
            for value in row["per_turn"]["billed"]:
                total += float(value)
                series.append(total)
            plt.plot(series, label=_label(row), linewidth=1.0)
        plt.yscale("log")
        plt.xlabel("turn")
        plt.ylabel("cumulative billed cost (base-price tokens, log)")
        plt.title("Cumulative billed cost")
        plt.legend(fontsize=7)

    def frontier(plt: Any) -> None:
        families: dict[str, list[tuple[float, float]]] = {}
        for row in data.get("sweep", []):
            if not isinstance(row, dict):
                continue
            name = str(row.get("name", "?"))
            family = "summarize and replace (every N turns)" if name.startswith("summar") else name
            families.setdefault(family, []).append(
                (float(row["mean_tokens"]), float(row["billed"]))
            )
        for family, points in families.items():
            points.sort()
            plt.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=family)
        plt.xlabel("mean request size (tokens)")
        plt.ylabel("billed cost (base-price tokens)")
        plt.title("Cost against the history carried (sweep of the knobs)")
        plt.legend(fontsize=7)

    page.figure("cache_cost", "billed cost per strategy", cost)
    page.figure("cache_turns", "request size and uncached tokens per turn", turns, (8, 7))
    page.figure("cache_billed", "cumulative billed cost", billed)
    if data.get("sweep"):
        page.figure("cache_frontier", "cost against mean request size", frontier)
