"""Seeded-fault check for hydrangea.coop: do the coop tests kill each deliberate fault?

Each fault is a small source edit. For every fault the script copies ``src/hydrangea`` and the
coop tests into a fresh temporary directory, applies the edit there, runs the coop tests against
that copy (``PYTHONPATH`` puts it first), and reports ``killed`` (some test failed) or
``survived``. The real source tree is never modified.

Usage: ``.venv/bin/python tools/mutate_coop.py [-k NAME] [--list]``. Exit status 1 when a fault
survives.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COOP = "src/hydrangea/coop"


@dataclass(frozen=True)
class Fault:
    name: str
    path: str
    old: str
    new: str


FAULTS = (
    Fault(
        "detach-off-by-one",
        f"{COOP}/coop_context.py",
        "self._context.detach_tail(plan.start)",
        "self._context.detach_tail(plan.start + 1)",
    ),
    Fault(
        "plan-start-off-by-one",
        f"{COOP}/collector.py",
        "    if low is not None:\n        start = low\n",
        "    if low is not None:\n        start = low + 1\n",
    ),
    Fault(
        "strict-overlap-in-planner",
        f"{COOP}/collector.py",
        "ranged.effect_range.latest < low:",
        "ranged.effect_range.latest <= low:",
    ),
    Fault(
        "strict-overlap-in-effect-range",
        f"{COOP}/effect_range.py",
        "return self.earliest <= other.latest and other.earliest <= self.latest",
        "return self.earliest < other.latest and other.earliest < self.latest",
    ),
    Fault(
        "gc-prologue-interleaved-with-promote",
        f"{COOP}/coop_context.py",
        "        for entry in plan.areas:\n            for message in",
        "        for entry in plan.areas:\n            entry.area.gc_prologue()\n"
        "            for message in",
    ),
    Fault(
        "retained-area-does-not-block",
        f"{COOP}/collector.py",
        "        if not is_retired(ranged.key):",
        "        if False and not is_retired(ranged.key):",
    ),
    Fault(
        "retained-area-skipped-not-stopping",
        f"{COOP}/collector.py",
        "            low = None\n            break\n",
        "            low = None\n            continue\n",
    ),
    Fault(
        "cursor-not-repaired",
        f"{COOP}/coop_context.py",
        "self._cursor = repair_cursor(self._cursor, flags)",
        "self._cursor = min(self._cursor, max(0, len(flags) - sum(flags) - 1))",
    ),
    Fault(
        "cursor-moves-to-previous-survivor",
        f"{COOP}/collector.py",
        "index = (index + 1) % size",
        "index = (index - 1) % size",
    ),
    Fault(
        "cursor-reset-to-ring-start",
        f"{COOP}/coop_context.py",
        "self._cursor = repair_cursor(self._cursor, flags)",
        "self._cursor = 0",
    ),
    Fault(
        "observe-slice-misses-latest",
        f"{COOP}/coop_context.py",
        "self._context.view(rng.earliest, rng.latest + 1)",
        "self._context.view(rng.earliest, rng.latest)",
    ),
    Fault(
        "observe-slice-starts-late",
        f"{COOP}/coop_context.py",
        "self._context.view(rng.earliest, rng.latest + 1)",
        "self._context.view(rng.earliest + 1, rng.latest + 1)",
    ),
    Fault(
        "observe-gets-whole-tail",
        f"{COOP}/coop_context.py",
        "self._context.view(rng.earliest, rng.latest + 1)",
        "self._context.view(rng.earliest, len(self._context))",
    ),
    Fault(
        "observe-view-copies-the-range",
        f"{COOP}/coop_context.py",
        "self._context.view(rng.earliest, rng.latest + 1)",
        "self._context[rng.earliest : rng.latest + 1]",
    ),
    Fault(
        "retirement-not-final",
        f"{COOP}/coop_context.py",
        "                if self.retired:",
        "                if False:",
    ),
    Fault(
        "empty-render-creates-range",
        f"{COOP}/coop_context.py",
        "if after > before:",
        "if after >= before and after > 0:",
    ),
    Fault(
        "never-rendered-retired-area-leaks",
        f"{COOP}/coop_context.py",
        "doomed = [*plan.areas, *never_rendered]",
        "doomed = [*plan.areas]",
    ),
    Fault(
        "promote-order-descending",
        f"{COOP}/collector.py",
        "taken.sort(key=lambda r: (r.effect_range.latest, r.order))",
        "taken.sort(key=lambda r: (r.effect_range.latest, r.order), reverse=True)",
    ),
    Fault(
        "exclusive-does-not-end-pass",
        f"{COOP}/coop_context.py",
        "            if self._visit(entry) is AreaFlowState.exclusive:\n                return\n",
        "            self._visit(entry)\n",
    ),
    Fault(
        "full-pass-leaves-cursor-on-last",
        f"{COOP}/coop_context.py",
        "                return\n        self._cursor = start\n",
        "                return\n",
    ),
    Fault(
        "gc-errors-swallowed",
        f"{COOP}/coop_context.py",
        "                if errors:\n                    raise",
        "                if False:\n                    raise",
    ),
    Fault(
        "reentrant-render-allowed",
        f"{COOP}/coop_context.py",
        "        if self._render_thread == me:\n            raise",
        "        if False:\n            raise",
    ),
)


def _copy_tree(dest: Path) -> None:
    shutil.copytree(ROOT / "src" / "hydrangea", dest / "src" / "hydrangea")
    tests = dest / "tests"
    (tests / "support").mkdir(parents=True)
    for name in ("__init__.py", "conftest.py"):
        shutil.copy(ROOT / "tests" / name, tests / name)
    shutil.copy(ROOT / "tests" / "support" / "__init__.py", tests / "support" / "__init__.py")
    for path in (ROOT / "tests" / "support").glob("coop_*.py"):
        shutil.copy(path, tests / "support" / path.name)
    for path in (ROOT / "tests").glob("test_coop_*.py"):
        shutil.copy(path, tests / path.name)


def run_fault(fault: Fault | None, target: str = "tests") -> tuple[bool, str]:
    """Run the coop tests against a copy with ``fault`` applied; (tests passed, summary)."""
    with tempfile.TemporaryDirectory(prefix="coop-mutant-") as tmp:
        dest = Path(tmp)
        _copy_tree(dest)
        if fault is not None:
            edited = dest / fault.path
            source = edited.read_text(encoding="utf-8")
            if source.count(fault.old) != 1:
                raise SystemExit(f"fault {fault.name}: the edit site is not unique or is missing")
            edited.write_text(source.replace(fault.old, fault.new), encoding="utf-8")
        env = dict(
            os.environ,
            PYTHONPATH=f"{dest / 'src'}{os.pathsep}{dest}",
            COOP_MUTANT_RUN="1",  # the stateful test skips shrinking: a verdict is all we need
        )
        check = subprocess.run(
            [sys.executable, "-c", "import hydrangea; print(hydrangea.__file__)"],
            env=env, cwd=dest, capture_output=True, text=True, check=True,
        )
        if not check.stdout.strip().startswith(str(dest)):
            raise SystemExit(f"the copy was not imported: {check.stdout.strip()}")
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
             "-k", "not mypy", "--timeout=60", target],
            env=env, cwd=dest, capture_output=True, text=True, check=False,
        )
        lines = [line for line in run.stdout.splitlines() if line.startswith("FAILED")]
        summary = lines[0] if lines else run.stdout.strip().splitlines()[-1]
        return run.returncode == 0, summary


def say(line: str) -> None:
    """Write one line of the report to standard output."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", help="run only faults whose name contains this")
    parser.add_argument("--list", action="store_true", help="list the faults and exit")
    parser.add_argument(
        "--only",
        default="tests",
        help="test path to run inside the copy (default: all coop tests), "
        "e.g. tests/test_coop_stateful.py to see what the oracle test alone kills",
    )
    args = parser.parse_args()
    faults = [f for f in FAULTS if args.k is None or args.k in f.name]
    if args.list:
        for fault in faults:
            say(fault.name)
        return 0
    ok, summary = run_fault(None, args.only)
    say(f"baseline (no fault): {'pass' if ok else 'FAIL'}  {summary}")
    if not ok:
        return 2
    survivors = []
    for fault in faults:
        started = time.perf_counter()
        passed, summary = run_fault(fault, args.only)
        verdict = "SURVIVED" if passed else "killed"
        if passed:
            survivors.append(fault.name)
        say(f"{verdict:9} {fault.name:40} {time.perf_counter() - started:5.1f}s  {summary}")
    say(f"{len(faults) - len(survivors)}/{len(faults)} killed; survivors: {survivors or 'none'}")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
