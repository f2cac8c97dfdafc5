"""The session stores section of the benchmark report (bench/stores.py)."""

from __future__ import annotations

from typing import Any

from reporting.common import Page, number, table

__all__ = ["stores_section"]


def stores_section(page: Page, data: dict[str, Any] | None, missing: str | None) -> None:
    """Save cost per turn early and late in a session, and concurrent throughput, per store."""
    page.add("## Session stores: incremental saves and concurrent workers", "")
    if data is None:
        page.add(f"*{missing}* (`python bench/stores.py` writes `bench/results/stores.json`).",
                 "")
        return
    if isinstance(data.get("benchmark"), str):
        page.add(str(data["benchmark"]), "")
    costs = data.get("save_cost")
    if isinstance(costs, dict) and costs:
        rows = []
        for store, c in costs.items():
            if not isinstance(c, dict):
                continue
            rows.append([
                store, c.get("save_ms_turn_10"), c.get("save_ms_turn_1000"), c.get("ratio"),
                "yes" if c.get("within_1_5x") else "no",
                c.get("rewrite_ms_turn_10"), c.get("rewrite_ms_turn_1000"),
                c.get("rewrite_ratio"),
            ])
        page.add(*table(
            ["store", "save ms, turn 10", "save ms, turn 1,000", "ratio", "within 1.5x",
             "rewrite ms, turn 10", "rewrite ms, turn 1,000", "rewrite ratio"], rows))
    flows = [r for r in data.get("throughput", []) if isinstance(r, dict)]
    if flows:
        page.add(*table(
            ["store", "workers", "sessions", "saves/s", "conflicts"],
            [[r.get("store"), r.get("workers"), r.get("sessions"),
              number(r.get("saves_per_s")), r.get("conflicts")] for r in flows]))
