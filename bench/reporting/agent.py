"""The section for bench/agent.py: an agent-shaped turn (tool call every turn) on every gateway,
beside pydantic-ai, LangChain and the Agents SDK, and over each SDK's own request work."""

from __future__ import annotations

from typing import Any

from .common import Page, fmt, number, table

__all__ = ["agent_section"]

CONTEXT_ALONE = "hydrangea Context"


def agent_section(page: Page, data: dict[str, Any] | None, missing: str | None) -> None:
    """Per-turn time by turn count, the peer ratios, the share of the SDK floor, memory."""
    page.add("## Agent turn: a tool call every turn, side by side with peers", "")
    if data is None:
        page.add(f"*{missing}* (`python bench/agent.py` writes `bench/results/agent.json`).", "")
        return
    rows = [r for r in data.get("rows", []) if isinstance(r, dict)]
    points = [p for p in data.get("points", []) if isinstance(p, int)]
    page.add(
        "Each turn: a user message, the model's tool call and the tool's result (200-2,000 "
        "characters each), then one request; hydrangea runs the full stack (CoopContext, "
        "ConversationArea, Lifecycle, a `@tool`). Peers map the same history to the provider's "
        "request; the SDK floor is the SDK's own `create()` of hydrangea's request against an "
        "instant in-process `httpx.MockTransport`. Median process CPU time per turn of the "
        "turns ending at each count, all libraries interleaved in one process, each timed job "
        "started from the same cache state (the CPU caches filled with unrelated data first, so "
        "no figure depends on whose work ran before it).",
        "",
    )
    ours = {r.get("gateway"): r for r in rows if r.get("library") == "hydrangea"}
    headers = ["gateway", *[f"µs t{p}" for p in points], "last / t10", "incremental requests",
               *[f"% of SDK t{p}" for p in points]]
    floors = {r.get("gateway"): r for r in rows if r.get("library") == "SDK floor"}
    body = []
    for gateway, row in sorted(ours.items()):
        floor = floors.get(gateway, {})
        body.append([gateway, *[row.get(f"us_t{p}") for p in points], row.get("t_last_over_t10"),
                     f"{row.get('incremental')} / {row.get('from_scratch')} whole",
                     *[floor.get(f"hydrangea_pct_t{p}") for p in points]])
    page.add("**hydrangea**, the full stack", "", *table(headers, body))
    alone = {r.get("gateway"): r for r in rows if r.get("library") == CONTEXT_ALONE}
    if alone:
        headers = ["gateway", *[f"µs t{p}" for p in points], "last / t10",
                   "incremental requests", *[f"share of full t{p}" for p in points]]
        page.add(
            "**hydrangea, the Context alone** (the turn's messages emplaced and "
            "`Context.request()`: the like-for-like of a peer's mapping, without the area, the "
            "lifecycle and the tool run)", "",
            *table(headers, [
                [gateway, *[row.get(f"us_t{p}") for p in points], row.get("t_last_over_t10"),
                 f"{row.get('incremental')} / {row.get('from_scratch')} whole",
                 *[row.get(f"share_of_full_t{p}") for p in points]]
                for gateway, row in sorted(alone.items())]))
    peers = [r for r in rows if r.get("library") not in ("hydrangea", "SDK floor", CONTEXT_ALONE)]
    headers = ["peer / hydrangea per turn", "gateway", *[f"t{p}" for p in points],
               *([f"t{p} (Context alone)" for p in points] if alone else [])]
    page.add("**Peers** (ratio above 1: the peer's turn costs more; against the full stack, "
             "then against the Context alone)", "",
             *table(headers, [[r.get("library"), r.get("gateway"),
                               *[r.get(f"ratio_t{p}") for p in points],
                               *([r.get(f"ratio_context_t{p}") for p in points] if alone else [])]
                              for r in peers]))
    memory = [m for m in data.get("memory", []) if isinstance(m, dict)]
    if memory:
        page.add("**Memory** (tracemalloc, a whole session, no request held)", "",
                 *table(["gateway", "turns", "retained MB", "items' compact JSON MB", "ratio"],
                        [[m.get("gateway"), m.get("turns"),
                          fmt((number(m.get("retained_bytes")) or 0) / 1e6),
                          fmt((number(m.get("json_bytes")) or 0) / 1e6), m.get("ratio")]
                         for m in memory]))
    if data.get("skipped"):
        page.notes.append(f"bench/agent.py left out: {data['skipped']}")

    def draw(plt: Any) -> None:
        for row in rows:
            xs = [p for p in points if number(row.get(f"us_t{p}")) is not None]
            ys = [number(row.get(f"us_t{p}")) for p in xs]
            style = "-" if row.get("library") in ("hydrangea", CONTEXT_ALONE) else (
                ":" if row.get("library") == "SDK floor" else "--")
            plt.plot(xs, ys, style, marker="o", markersize=3,
                     label=f"{row.get('library')} ({row.get('gateway')})")
        plt.xscale("log")
        plt.yscale("log")
        plt.xlabel("turn")
        plt.ylabel("µs per turn (CPU)")
        plt.legend(fontsize=6, ncol=2)

    page.figure("agent_turns", "Per-turn time by turn count", draw, size=(9, 5.5))
