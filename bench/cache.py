"""Cache-efficiency study: this library against three common context strategies.

Runs the deterministic 300-turn session of ``bench/cachestudy`` through every strategy and writes
``bench/results/cache.json``; prints the comparison table. See ``bench/cachestudy/__init__.py``
for what each module does and ``docs/benchmarks.md`` for the report.

    python bench/cache.py [--seed N] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from cachestudy.machine import machine  # noqa: E402
from cachestudy.study import StudyConfig, run_study  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Run the study, write the JSON, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=StudyConfig().seed)
    parser.add_argument("--turns", type=int, default=StudyConfig().turns)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "cache.json")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    results = run_study(StudyConfig(seed=args.seed, turns=args.turns))
    results["elapsed_s"] = round(time.perf_counter() - started, 2)
    results["machine"] = machine()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    header = (
        f"{'strategy':56} {'reuse':>6} {'limit':>6} {'gap pp':>6} {'billed':>11} "
        f"{'x lib':>6} {'peak':>7} {'mean':>7} {'info':>6}"
    )
    print(header)
    for row in results["strategies"]:
        print(
            f"{row['name'] + ' (' + row['setting'] + ')':56} {row['reuse_share']:6.1%} "
            f"{row['reuse_limit']:6.1%} {row['gap_to_limit_pp']:6.1f} {row['billed']:11,.0f} "
            f"{row['billed_vs_library']:6.2f} {row['peak_tokens']:7,} {row['mean_tokens']:7,.0f} "
            f"{row['info_kept']:6.1%}"
        )
    print("targets:", json.dumps(results["targets"]))
    print(f"wrote {args.out} in {results['elapsed_s']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
