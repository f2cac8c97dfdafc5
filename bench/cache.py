"""Cache-efficiency study: this library against three common context strategies, per provider.

Runs the deterministic 300-turn session of ``bench/cachestudy`` through every strategy under each
provider's documented cache rules (Anthropic, OpenAI, Gemini; see ``bench/cachestudy/providers.py``)
and writes ``bench/results/cache.json``; prints one comparison table per provider (with each
strategy's broken bindings: requests rejected on Anthropic, reasoning items dropped on OpenAI).
Providers run in parallel processes (``--jobs``, default 2). See
``bench/cachestudy/__init__.py`` for what each module does and ``docs/en/benchmarks.md`` for the
report.

    python bench/cache.py [--seed N] [--turns N] [--provider NAME ...] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from cachestudy.machine import machine  # noqa: E402
from cachestudy.study import PROVIDERS, StudyConfig, run_study  # noqa: E402


def _one(provider: str, seed: int, turns: int) -> dict[str, Any]:
    begun = time.perf_counter()
    data = run_study(StudyConfig(seed=seed, turns=turns), provider=provider)
    data["elapsed_s"] = round(time.perf_counter() - begun, 2)
    return data


def main(argv: list[str] | None = None) -> int:
    """Run the study for each provider, write the JSON, print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=StudyConfig().seed)
    parser.add_argument("--turns", type=int, default=StudyConfig().turns)
    parser.add_argument("--provider", action="append", choices=sorted(PROVIDERS))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "cache.json")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    results: dict[str, object] = {"study": "cache", "providers": {}}
    providers = args.provider or list(PROVIDERS)
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        runs = [pool.submit(_one, p, args.seed, args.turns) for p in providers]
        for provider, run in zip(providers, runs, strict=True):
            data = run.result()
            results["providers"][provider] = data  # type: ignore[index]
            _print(provider, data)
    results["jobs"] = args.jobs
    results["elapsed_s"] = round(time.perf_counter() - started, 2)
    results["machine"] = machine()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out} in {results['elapsed_s']} s")
    return 0


def _print(provider: str, data: dict[str, Any]) -> None:
    print(f"== {provider} ({data['elapsed_s']} s)")
    for row in data["strategies"]:
        binding = row.get("binding") or {}
        print(
            f"{row['name'] + ' (' + row['setting'] + ')':70} {row['reuse_share']:6.1%} "
            f"{row['reuse_limit']:6.1%} {row['gap_to_limit_pp']:5.1f} {row['billed']:11,.0f} "
            f"{row['billed_vs_library']:5.2f} {row['mean_tokens']:7,.0f} "
            f"{row['info_kept']:6.1%} reminders {row['reminder_billed_share']:5.1%} "
            f"broken {binding.get('requests_broken')}/{binding.get('reasoning_items_broken')}"
        )
    print("targets:", json.dumps(data["targets"]))


if __name__ == "__main__":
    raise SystemExit(main())
