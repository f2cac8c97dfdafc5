"""Benchmark: request building with id-less Gemini tool calls against the same history with ids.

Real Gemini responses carry function calls without an id; the caller answers them with
``ToolResultPart(call_id=<function name>)``. Both histories hold N model turns of one call each
(names cycle through a few tools, so pairing by name has real queues to work through), each
answered in the next user turn. The id-less history pairs by name, the other by id. Timings are
the best of R single ``Context.request()`` calls (time.perf_counter); the script prints the
side-by-side ratio and writes bench/results/pairing.json. Issue 11 asks for the ratio to stay
within 2x at N = 8,000.

Run: ``.venv/bin/python bench/pairing.py [--quick]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, ToolResultPart

RESULTS = Path(__file__).resolve().parent / "results" / "pairing.json"
TOOLS = ("search", "lookup", "weather", "clock", "fetch")


def history(calls: int, *, with_ids: bool) -> Context:
    """A Gemini Context of ``calls`` answered calls, with or without call ids."""
    context = Context(GatewayType.gemini)
    context.emplace_message(Message(role=Role.user, content="Start."))
    for n in range(calls):
        name = TOOLS[n % len(TOOLS)]
        call: dict[str, object] = {"name": name, "args": {"n": n}}
        if with_ids:
            call = {"id": f"call_{n}", **call}
        context.push_back({"role": "model", "parts": [{"function_call": call}]})
        answer = ToolResultPart(call_id=f"call_{n}" if with_ids else name, content=f"result {n}")
        context.emplace_message(Message(role=Role.user, content=(answer,)))
    return context


def best_of(context: Context, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        context.request()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    args = parser.parse_args()
    sizes = (500, 2_000) if args.quick else (500, 2_000, 8_000)
    repeats = 3 if args.quick else 5
    rows = []
    for calls in sizes:
        with_ids = history(calls, with_ids=True)
        without = history(calls, with_ids=False)
        assert len(without.request()["contents"]) == len(with_ids.request()["contents"])
        t_ids = best_of(with_ids, repeats)
        t_names = best_of(without, repeats)
        ratio = t_names / t_ids
        rows.append({"calls": calls, "with_ids_s": t_ids, "without_ids_s": t_names, "ratio": ratio})
        print(
            f"{calls:>6} calls: with ids {t_ids * 1e3:8.1f} ms, without ids "
            f"{t_names * 1e3:8.1f} ms, ratio {ratio:.2f}x"
        )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    machine = {"cpus": os.cpu_count(), "python": platform.python_version()}
    RESULTS.write_text(
        json.dumps({"benchmark": "pairing", "machine": machine, "rows": rows}, indent=2) + "\n",
        encoding="utf-8",
    )
    worst = max(row["ratio"] for row in rows)
    print(f"worst ratio {worst:.2f}x (target: within 2x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
