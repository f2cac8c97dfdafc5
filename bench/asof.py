"""Benchmark: hydrangea.asof.ContextBuilder against keelgate 0.2.0's ContextBuilder.

Both libraries get the same items (a deterministic generator: about 140 characters each, a few
trusted harness items among dated untrusted outside items) and the same budgets: "ample" (both
fit everything), 90% and 50% of it, at 1,000 and 10,000 items. One measurement is the whole
job: a fresh builder, every item added, one build. Each library's best of several runs (process
CPU time, which other load on a shared machine disturbs far less than wall time; wall time is
recorded too) is reported with the ratio keelgate / hydrangea; results go to
bench/results/asof.json.

Two more measurements, with the exact o200k counter (``hydrangea.asof.OpenAITokenCounter``):

* fence cost: on what each library renders for the same 200 items, the tokens of framing per
  fenced block (the data minus the contents, per block) and the fixed cost (the notice and
  what else a build adds once), side by side;
* exact against approximate: one hydrangea build at ``--exact-items`` items (100,000 by default)
  and 90% of the full size, with the exact counter and with the approximate one (target: the
  exact build within 3x of the approximate one).

keelgate is a peer library and never a dependency of this project: it lives only in the
benchmark's own virtualenv, bench/.venv-asof (requirements in bench/requirements-asof.txt).
Run ``python bench/asof.py`` with any Python 3.11+; the script creates that virtualenv on first
use and re-runs itself inside it. ``--quick`` measures 1,000 items only.

``--scaling`` measures hydrangea alone (no keelgate, no virtualenv): ``build()`` only (the items
already added), process CPU time per item at 1,000, 10,000 and 100,000 items and a 50% budget
(of the full size), best of ``--repeats`` runs, and the ratio 100k / 1k (issue 28: at most 1.3x).
It is stored under ``"scaling"`` in bench/results/asof.json, the rest of the file kept.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
VENV = BENCH / ".venv-asof"
REQUIREMENTS = BENCH / "requirements-asof.txt"
RESULTS = BENCH / "results" / "asof.json"
AS_OF = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
SIZES = (1_000, 10_000)
# Fractions of the full size (the tokens a build takes when every item is shown). "ample" leaves
# 25% headroom so that neither library needs to cut anything.
FRACTIONS = (("ample", 1.25), ("90%", 0.9), ("50%", 0.5))
BASES = ("own", "shared")
TARGET_RATIO = 50.0

_WORDS = (
    "revenue guidance margin filing quarter analyst rate inflation supply demand order backlog",
    "shipment forecast dividend buyback outlook risk liquidity covenant lease capex segment",
    "region currency hedge tariff price volume churn cohort pipeline contract renewal audit",
)
_VOCABULARY = [w for line in _WORDS for w in line.split(" ")]


def _ensure_environment() -> None:
    """Re-run inside bench/.venv-asof (creating it first) unless keelgate is importable."""
    try:
        import keelgate.context  # noqa: F401
    except ImportError:
        pass
    else:
        return
    if os.environ.get("HYDRANGEA_BENCH_REEXEC"):
        sys.exit("keelgate is missing in bench/.venv-asof; see bench/requirements-asof.txt")
    python = VENV / "bin" / "python"
    if not python.exists():
        print(f"creating {VENV.relative_to(ROOT)} (keelgate lives only there) ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "-r", str(REQUIREMENTS)], check=True
        )
    env = dict(os.environ, HYDRANGEA_BENCH_REEXEC="1")
    os.execve(str(python), [str(python), str(Path(__file__).resolve()), *sys.argv[1:]], env)


def generate(n: int, seed: int = 20260601) -> list[dict[str, Any]]:
    """``n`` plain item descriptions, the same for every library and every run."""
    rng = random.Random(seed * 1_000_003 + n)
    specs: list[dict[str, Any]] = [
        {"trusted": True, "kind": "system", "id": "system", "priority": 1000,
         "content": "You are a careful research assistant. Cite record ids for every claim."},
        {"trusted": True, "kind": "task", "id": "task", "priority": 1000,
         "content": "Summarise what was known about the company's outlook as of the cut-off."},
    ]
    kinds = ("observation", "memory", "document")
    for k in range(n - len(specs)):
        if k % 100 == 99:  # about 1% more trusted harness instructions
            specs.append({"trusted": True, "kind": "instruction", "id": f"rule-{k}",
                          "priority": 1000, "content": _sentence(rng, 140)})
            continue
        specs.append({
            "trusted": False,
            "kind": kinds[k % 3],
            "id": f"{kinds[k % 3]}-{k}",
            "priority": rng.randrange(4),
            "published_at": AS_OF - timedelta(minutes=rng.randrange(1, 525_600)),
            "origin": f"tool:{('search', 'filings', 'memory', 'quotes')[k % 4]}",
            "content": _sentence(rng, 140),
        })
    return specs


def _sentence(rng: random.Random, length: int) -> str:
    words: list[str] = []
    size = 0
    while size < length - 12:
        word = rng.choice(_VOCABULARY)
        words.append(word)
        size += len(word) + 1
    text = " ".join(words).capitalize()
    return (text + ". " + "x" * length)[: length - 1] + "."


def _items(specs: list[dict[str, Any]], item_type: Any, kind_type: Any) -> list[Any]:
    """The items of ``specs`` built with either library's ContextItem (they share this API)."""
    items = []
    for s in specs:
        if s["trusted"]:
            items.append(item_type.harness(kind_type(s["kind"]), s["content"], item_id=s["id"],
                                           priority=s["priority"]))
        else:
            items.append(item_type.outside(
                kind_type(s["kind"]), s["content"], item_id=s["id"],
                published_at=s["published_at"], origin=s["origin"], priority=s["priority"]))
    return items


def _hydrangea_items(specs: list[dict[str, Any]]) -> list[Any]:
    from hydrangea.asof import ContextItem, ItemKind

    return _items(specs, ContextItem, ItemKind)


def _keelgate_items(specs: list[dict[str, Any]]) -> list[Any]:
    from keelgate.context import ContextItem, ItemKind

    return _items(specs, ContextItem, ItemKind)


def run_hydrangea(items: list[Any], budget: int, keep: bool = False) -> dict[str, Any]:
    from hydrangea.asof import ContextBuilder

    builder = ContextBuilder(as_of=AS_OF, token_budget=budget)
    for item in items:
        builder.add(item)
    built = builder.build()
    return {"tokens": built.tokens, "shown": len(built.items),
            "compacted": sum(len(c.source_ids) for c in built.compactions),
            "dropped": len(built.dropped), **({"built": built} if keep else {})}


def run_keelgate(
    items: list[Any], budget: int, loop: asyncio.AbstractEventLoop, keep: bool = False
) -> dict[str, Any]:
    from keelgate.context import ContextBuilder

    builder = ContextBuilder(as_of=AS_OF, token_budget=budget)
    for item in items:
        builder.add(item)
    built = loop.run_until_complete(builder.build())
    return {"tokens": built.tokens, "shown": len(built.items),
            "compacted": sum(len(c.source_ids) for c in built.compactions),
            "dropped": len(built.dropped), **({"built": built} if keep else {})}


def fence_costs(n: int = 200) -> dict[str, Any]:
    """Per-block and fixed framing tokens of both libraries' renderings, counted with o200k."""
    from keelgate.context import UNTRUSTED_NOTICE

    from hydrangea.asof import OpenAITokenCounter, unfence

    counter = OpenAITokenCounter("o200k_base")
    count = counter.count
    specs = [s for s in generate(n + 2) if not s["trusted"]]
    contents = sum(count(s["content"]) for s in specs)
    ours = run_hydrangea(_hydrangea_items(specs), 10**9, keep=True)["built"]
    (data,) = [m.text for m in ours.messages]
    first, last = data.index("\n\n¤") + 2, data.rindex("\n\n¤") + 2
    fixed_ours = count(data[:first]) + count(data[last:])
    assert len(unfence(data)) == len(specs)
    per_ours = (count(data) - fixed_ours - contents) / len(specs)
    loop = asyncio.new_event_loop()
    theirs = run_keelgate(_keelgate_items(specs), 10**9, loop, keep=True)["built"]
    loop.close()
    fenced = theirs.messages[-1].content
    per_theirs = (count(fenced) - contents) / len(specs)
    fixed_theirs = count("\n\n" + UNTRUSTED_NOTICE)
    return {"blocks": len(specs), "counter": "o200k_base (exact)",
            "per_block": {"hydrangea": per_ours, "keelgate": per_theirs},
            "fixed": {"hydrangea": fixed_ours, "keelgate": fixed_theirs},
            "targets": {"per_block": 20, "fixed": 60}}


def exact_against_approximate(n: int, repeats: int) -> dict[str, Any]:
    """One build at 90% of the full size with each counter; CPU seconds of the whole job."""
    from hydrangea.asof import ApproxTokenCounter, ContextBuilder, OpenAITokenCounter

    items = _hydrangea_items(generate(n))
    out: dict[str, Any] = {"items": n, "budget": "90% of the full size (own counter)"}
    for name, counter in (("approximate", ApproxTokenCounter()),
                          ("exact", OpenAITokenCounter("o200k_base"))):
        full = ContextBuilder(as_of=AS_OF, token_budget=10**12, counter=counter)
        for item in items:
            full.add(item)
        budget = int(full.build().tokens * 0.9)

        def job(counter: Any = counter, budget: int = budget) -> dict[str, Any]:
            builder = ContextBuilder(as_of=AS_OF, token_budget=budget, counter=counter)
            for item in items:
                builder.add(item)
            built = builder.build()
            return {"tokens": built.tokens, "budget": budget, "dropped": len(built.dropped)}

        cpu, wall, result = best_of(job, repeats=repeats, slow=20.0)
        out[name] = {"cpu_seconds": cpu, "wall_seconds": wall, **result}
    out["ratio_exact_over_approximate"] = out["exact"]["cpu_seconds"] / out["approximate"][
        "cpu_seconds"]
    return out


def best_of(
    job: Callable[[], dict[str, Any]], *, repeats: int, slow: float
) -> tuple[float, float, dict[str, Any]]:
    """Best process CPU time and best wall time over ``repeats`` runs (a single run once one
    takes over ``slow`` seconds). CPU time is the headline: on a shared machine it is far less
    disturbed by other processes than wall time."""
    best_cpu = best_wall = float("inf")
    outcome: dict[str, Any] = {}
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        outcome = job()
        best_cpu = min(best_cpu, time.process_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - wall)
        if best_wall > slow:
            break
    return best_cpu, best_wall, outcome


SCALING_SIZES = (1_000, 10_000, 100_000)
TARGET_SCALING = 1.3


def build_only(items: list[Any], budget: int) -> dict[str, Any]:
    """One fresh builder with ``items`` added; returns the CPU seconds of ``build()`` alone."""
    from hydrangea.asof import ContextBuilder

    builder = ContextBuilder(as_of=AS_OF, token_budget=budget)
    for item in items:
        builder.add(item)
    cpu = time.process_time()
    built = builder.build()
    return {"cpu_seconds": time.process_time() - cpu, "shown": len(built.items)}


def scaling(repeats: int) -> dict[str, Any]:
    """build() CPU time per item at each of SCALING_SIZES, 50% of the full size."""
    rows: list[dict[str, Any]] = []
    for n in SCALING_SIZES:
        items = _hydrangea_items(generate(n))
        budget = int(run_hydrangea(items, 10**12)["tokens"] * 0.5)
        runs = [build_only(items, budget) for _ in range(repeats)]
        best = min(r["cpu_seconds"] for r in runs)
        rows.append({"items": n, "token_budget": budget, "build_cpu_seconds": best,
                     "us_per_item": best / n * 1e6, "shown": runs[0]["shown"]})
        print(f"{n:>7} items, 50%: build {best * 1e3:9.1f} ms cpu = "
              f"{best / n * 1e6:6.2f} us/item", flush=True)
    ratio = rows[-1]["us_per_item"] / rows[0]["us_per_item"]
    verdict = "met" if ratio <= TARGET_SCALING else "MISSED"
    print(f"per-item ratio 100k/1k: {ratio:.2f}x (target <= {TARGET_SCALING}x: {verdict})")
    return {"what": "build() CPU seconds per item, items already added, 50% budget, best of runs",
            "when": datetime.now(UTC).isoformat(timespec="seconds"),
            "rows": rows, "ratio_100k_over_1k": ratio, "target": TARGET_SCALING}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="1,000 items only")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--exact-items", type=int, default=100_000,
                        help="items of the exact-against-approximate build (0: skip it)")
    parser.add_argument("--scaling", action="store_true",
                        help="hydrangea build() per item at 1k/10k/100k only (no keelgate)")
    args = parser.parse_args()
    if args.scaling:
        sys.path.insert(0, str(ROOT / "src"))
        stored = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        stored["scaling"] = scaling(args.repeats)
        RESULTS.write_text(json.dumps(stored, indent=2) + "\n")
        print(f"wrote {RESULTS.relative_to(ROOT)}")
        return
    _ensure_environment()
    sys.path.insert(0, str(ROOT / "src"))
    from keelgate.context import ApproxTokenCounter as KeelCounter

    from hydrangea.asof import ApproxTokenCounter

    probe = "x" * 1234
    assert KeelCounter().count(probe) == ApproxTokenCounter().count(probe)  # same counter

    fences = fence_costs()
    print("fence cost, o200k tokens: per block hydrangea {:.1f} / keelgate {:.1f}; fixed "
          "hydrangea {} / keelgate {}".format(fences["per_block"]["hydrangea"],
                                              fences["per_block"]["keelgate"],
                                              fences["fixed"]["hydrangea"],
                                              fences["fixed"]["keelgate"]), flush=True)
    exact = exact_against_approximate(args.exact_items, 1) if args.exact_items else None
    if exact is not None:
        print(f"exact vs approximate counter, {exact['items']} items at 90%: "
              f"{exact['exact']['cpu_seconds']:.2f}s / {exact['approximate']['cpu_seconds']:.2f}s"
              f" = {exact['ratio_exact_over_approximate']:.2f}x (target <= 3x)", flush=True)
    loop = asyncio.new_event_loop()
    rows: list[dict[str, Any]] = []
    sizes = SIZES[:1] if args.quick else SIZES
    print(f"{'items':>6} {'budget':>6} {'basis':>6} {'hyd budget':>10} {'keel budget':>11} "
          f"{'hyd cpu ms':>12} {'keel cpu ms':>12} {'ratio':>8}  "
          "hydrangea shown/compacted/dropped")
    for n in sizes:
        specs = generate(n)
        ours, theirs = _hydrangea_items(specs), _keelgate_items(specs)
        need_ours = run_hydrangea(ours, 10**12)["tokens"]
        need_theirs = run_keelgate(theirs, 10**12, loop)["tokens"]
        for label, fraction in FRACTIONS:
            for basis in BASES:
                if basis == "own":  # each library gets this fraction of its own full size
                    b_ours, b_theirs = int(need_ours * fraction), int(need_theirs * fraction)
                else:  # both get the same number of tokens
                    b_ours = b_theirs = int(max(need_ours, need_theirs) * fraction)
                t_ours, w_ours, ours_out = best_of(
                    partial(run_hydrangea, ours, b_ours), repeats=args.repeats, slow=30.0
                )
                t_theirs, w_theirs, theirs_out = best_of(
                    partial(run_keelgate, theirs, b_theirs, loop), repeats=args.repeats, slow=10.0
                )
                ratio = t_theirs / t_ours
                rows.append({
                    "items": n, "budget_label": label, "budget_basis": basis,
                    "full_size_tokens": {"hydrangea": need_ours, "keelgate": need_theirs},
                    "token_budget": {"hydrangea": b_ours, "keelgate": b_theirs},
                    "hydrangea_cpu_seconds": t_ours, "keelgate_cpu_seconds": t_theirs,
                    "hydrangea_wall_seconds": w_ours, "keelgate_wall_seconds": w_theirs,
                    "ratio_keelgate_over_hydrangea": ratio,
                    "wall_ratio_keelgate_over_hydrangea": w_theirs / w_ours,
                    "hydrangea": ours_out, "keelgate": theirs_out,
                })
                print(f"{n:>6} {label:>6} {basis:>6} {b_ours:>10} {b_theirs:>11} "
                      f"{t_ours * 1e3:>12.1f} {t_theirs * 1e3:>12.1f} {ratio:>7.1f}x  "
                      f"{ours_out['shown']}/{ours_out['compacted']}/{ours_out['dropped']}",
                      flush=True)
    loop.close()
    for row in rows:
        if row["items"] == 10_000 and row["budget_label"] == "50%":
            ratio = row["ratio_keelgate_over_hydrangea"]
            verdict = "met" if ratio >= TARGET_RATIO else "MISSED"
            print(f"target >= {TARGET_RATIO:.0f}x at 10,000 items / 50% budget "
                  f"({row['budget_basis']} basis): {ratio:.1f}x ({verdict})")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        "benchmark": "asof ContextBuilder: fresh builder, add all items, one build; best of runs",
        "ratio": "keelgate CPU seconds / hydrangea CPU seconds (process time); wall times too",
        "budget_bases": {
            "own": "each library gets the fraction of its own full (everything shown) size",
            "shared": "both get the same token count: the fraction of the larger full size",
        },
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version()},
        "keelgate_version": _version("keelgate"),
        "target_ratio_at_10000_items_50pct": TARGET_RATIO,
        "fence_cost": fences,
        "exact_against_approximate": exact,
        "rows": rows,
    }, indent=2) + "\n")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


if __name__ == "__main__":
    main()
