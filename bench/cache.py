"""Cache-efficiency study: this library against three common context strategies, per provider.

Runs the deterministic 300-turn session of ``bench/cachestudy`` through every strategy under each
provider's documented cache rules (Anthropic, OpenAI, Gemini; see ``bench/cachestudy/providers.py``)
and writes ``bench/results/cache.json``; prints one comparison table per provider. See
``bench/cachestudy/__init__.py`` for what each module does and ``docs/en/benchmarks.md`` for the
report.

    python bench/cache.py [--seed N] [--turns N] [--provider NAME ...] [--out PATH]
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
from cachestudy.study import PROVIDERS, StudyConfig, run_study  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Run the study for each provider, write the JSON, print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=StudyConfig().seed)
    parser.add_argument("--turns", type=int, default=StudyConfig().turns)
    parser.add_argument("--provider", action="append", choices=sorted(PROVIDERS))
    parser.add_argument("--out", type=Path, default=HERE / "results" / "cache.json")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    results: dict[str, object] = {"study": "cache", "providers": {}}
    for provider in args.provider or list(PROVIDERS):
        begun = time.perf_counter()
        data = run_study(StudyConfig(seed=args.seed, turns=args.turns), provider=provider)
        data["elapsed_s"] = round(time.perf_counter() - begun, 2)
        results["providers"][provider] = data  # type: ignore[index]
        print(f"== {provider} ({data['elapsed_s']} s)")
        for row in data["strategies"]:
            print(
                f"{row['name'] + ' (' + row['setting'] + ')':70} {row['reuse_share']:6.1%} "
                f"{row['reuse_limit']:6.1%} {row['gap_to_limit_pp']:5.1f} {row['billed']:11,.0f} "
                f"{row['billed_vs_library']:5.2f} {row['mean_tokens']:7,.0f} "
                f"{row['info_kept']:6.1%}"
            )
        print("targets:", json.dumps(data["targets"]))
    results["elapsed_s"] = round(time.perf_counter() - started, 2)
    results["machine"] = machine()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out} in {results['elapsed_s']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
