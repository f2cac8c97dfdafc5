"""Two source trees of hydrangea side by side: the agent-shaped turn of ``bench/agent.py``.

For a change that must not move the figures (a restructuring), the same full-stack turn
(``agent.Hydrangea``: a user message, the model's tool call, the tool's result, one lifecycle
request) runs from two ``src`` folders, each in its own interpreter, alternated ``--rounds``
times (A B A B ...), so machine noise falls on both. Each run reports the median process CPU time
per turn of the turns ending at 10, 100 and 1,000; the result is the ratio B / A per gateway and
point (median over rounds).

Run: ``python bench/trees.py OLD_SRC NEW_SRC [--rounds 3] [--turns 1000]``. Results:
``bench/results/trees.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results" / "trees.json"
GATEWAYS = ("openai", "openai_responses", "anthropic", "gemini")
POINTS = (10, 100, 1_000)
WINDOW = 5

_CHILD = """
import gc, json, statistics, sys, time
sys.path.insert(0, {bench!r})
from agent import Hydrangea
turns, points, window = {turns}, {points}, {window}
out = {{}}
for gateway in {gateways}:
    h = Hydrangea(gateway)
    got = {{}}
    samples = []
    for turn in range(1, turns + 1):
        if any(p - window < turn <= p for p in points):
            if turn - 1 in [p - window for p in points]:
                gc.collect(); gc.freeze()
            t = time.process_time(); h.turn(turn); samples.append(time.process_time() - t)
            if turn in points:
                got[turn] = statistics.median(samples) * 1e3; samples = []
        else:
            h.turn(turn)
    out[gateway] = got
print(json.dumps(out))
"""


def one(src: str, turns: int) -> dict[str, dict[str, float]]:
    code = _CHILD.format(
        bench=str(BENCH), turns=turns, points=tuple(p for p in POINTS if p <= turns),
        window=WINDOW, gateways=GATEWAYS,
    )
    env = {**os.environ, "PYTHONPATH": src}
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    result: dict[str, dict[str, float]] = json.loads(run.stdout.splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--turns", type=int, default=1_000)
    args = parser.parse_args()
    runs: dict[str, list[dict[str, dict[str, float]]]] = {"old": [], "new": []}
    for _ in range(args.rounds):
        runs["old"].append(one(args.old, args.turns))
        runs["new"].append(one(args.new, args.turns))
    table: dict[str, Any] = {}
    for gateway in GATEWAYS:
        table[gateway] = {}
        for point in (str(p) for p in POINTS if p <= args.turns):
            old = statistics.median(r[gateway][point] for r in runs["old"])
            new = statistics.median(r[gateway][point] for r in runs["new"])
            table[gateway][point] = {"old_ms": old, "new_ms": new, "new_over_old": new / old}
    RESULTS.write_text(json.dumps({"rounds": args.rounds, "table": table}, indent=1) + "\n")
    for gateway, row in table.items():
        cells = "  ".join(f"t{p}: {v['new_over_old']:.2f}x" for p, v in row.items())
        print(f"{gateway:18} {cells}")


if __name__ == "__main__":
    main()
