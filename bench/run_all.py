"""Run every benchmark and regenerate the report: the body of ``make bench``.

    python bench/run_all.py [--only NAME ...] [--skip NAME ...] [--timeout SECONDS]

1. Creates (or reuses) the bench virtualenv ``bench/.venv`` with the project installed in
   editable mode and ``bench/requirements.txt``; it is reinstalled when either file or
   ``pyproject.toml`` changes. The project's own ``.venv`` is never touched.
2. Runs every ``bench/*.py`` script (all but this harness and ``report.py``) with that
   virtualenv's Python, one after the other so they do not disturb each other's timings. A script
   that needs its own environment (``bench/asof.py`` keeps keelgate in ``bench/.venv-asof``)
   re-runs itself there. Each script writes ``bench/results/<name>.json``; its output goes to
   ``bench/results/logs/<name>.log``. A script that fails or runs out of time is recorded as such
   and the others still run.
3. Writes ``bench/results/run.json`` (machine, each script's status and time) and runs
   ``bench/report.py``, which regenerates ``docs/benchmarks.md`` and the plots under
   ``docs/assets/bench/``.

The whole run is meant to finish within 15 minutes on a 2-core machine; ``--timeout`` bounds
each script, and scripts are skipped once the overall deadline has passed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
import venv
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
VENV = BENCH / ".venv"
REQUIREMENTS = BENCH / "requirements.txt"
RESULTS = BENCH / "results"
LOGS = RESULTS / "logs"
NOT_BENCHMARKS = {"run_all", "report"}
OVERALL_SECONDS = 13 * 60  # scripts; the report and the install come on top

sys.path.insert(0, str(BENCH))
from cachestudy.machine import machine  # noqa: E402


def _python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _fingerprint() -> str:
    digest = hashlib.sha256()
    for path in (ROOT / "pyproject.toml", REQUIREMENTS):
        digest.update(path.read_bytes() if path.exists() else b"")
    return digest.hexdigest()


def ensure_venv() -> Path:
    """The bench virtualenv's Python, after creating or refreshing the virtualenv if needed."""
    stamp = VENV / ".bench-installed"
    wanted = _fingerprint()
    python = _python()
    if python.exists() and stamp.exists() and stamp.read_text(encoding="utf-8") == wanted:
        return python
    usable = python.exists() and subprocess.run(
        [str(python), "-m", "pip", "--version"], capture_output=True, check=False
    ).returncode == 0
    if not usable:  # missing, or left half-made by an interrupted run
        print(f"creating {VENV.relative_to(ROOT)}", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    print("installing the project and bench/requirements.txt into it", flush=True)
    command = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*command, "-e", str(ROOT), "-r", str(REQUIREMENTS)], check=True)
    stamp.write_text(wanted, encoding="utf-8")
    return python


def scripts(only: list[str], skip: list[str]) -> list[Path]:
    """The benchmark scripts to run, by name."""
    found = sorted(
        path
        for path in BENCH.glob("*.py")
        if path.stem not in NOT_BENCHMARKS and not path.stem.startswith("_")
    )
    return [p for p in found if (not only or p.stem in only) and p.stem not in skip]


def run_script(python: Path, script: Path, timeout: float) -> dict[str, Any]:
    """Run one script; return its status, time and result file."""
    LOGS.mkdir(parents=True, exist_ok=True)
    log = LOGS / f"{script.stem}.log"
    result = RESULTS / f"{script.stem}.json"
    before = result.stat().st_mtime if result.exists() else None
    started = time.perf_counter()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with log.open("w", encoding="utf-8") as out:
        try:
            done = subprocess.run(
                [str(python), str(script)],
                cwd=ROOT,
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=timeout,
                env=env,
                check=False,
            )
            status = "ok" if done.returncode == 0 else f"failed (exit {done.returncode})"
        except subprocess.TimeoutExpired:
            status = f"timed out after {timeout:.0f} s"
    elapsed = time.perf_counter() - started
    fresh = result.exists() and (before is None or result.stat().st_mtime > before)
    if status == "ok" and not fresh:
        status = "ok, but it wrote no new results file"
    return {
        "script": f"bench/{script.name}",
        "status": status,
        "seconds": round(elapsed, 1),
        "results": str(result.relative_to(ROOT)) if fresh else None,
        "log": str(log.relative_to(ROOT)),
    }


def main(argv: list[str] | None = None) -> int:
    """Install, run the scripts, write run.json, regenerate the report."""
    parser = argparse.ArgumentParser(description="Run every benchmark and regenerate the report.")
    parser.add_argument("--only", nargs="*", default=[], help="run only these scripts (names)")
    parser.add_argument("--skip", nargs="*", default=[], help="do not run these scripts")
    parser.add_argument("--timeout", type=float, default=480.0, help="seconds per script")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    when = datetime.now(UTC).isoformat(timespec="seconds")
    python = ensure_venv()
    installed = time.perf_counter() - started
    runs: list[dict[str, Any]] = []
    deadline = time.perf_counter() + OVERALL_SECONDS
    chosen = scripts(args.only, args.skip)
    for number, script in enumerate(chosen):
        # leave at least a minute for each script still to come
        left = deadline - time.perf_counter() - 60 * (len(chosen) - number - 1)
        if left < 30:
            runs.append({"script": f"bench/{script.name}", "status": "skipped (out of time)",
                         "seconds": 0.0, "results": None, "log": None})
            continue
        print(f"running bench/{script.name}", flush=True)
        run = run_script(python, script, min(args.timeout, left))
        print(f"  {run['status']} in {run['seconds']} s", flush=True)
        runs.append(run)
    RESULTS.mkdir(parents=True, exist_ok=True)
    summary = {
        "when": when,
        "machine": machine(),
        "install_seconds": round(installed, 1),
        "scripts": runs,
        "scripts_seconds": round(time.perf_counter() - started - installed, 1),
    }
    (RESULTS / "run.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    report = subprocess.run([str(python), str(BENCH / "report.py")], cwd=ROOT, check=False)
    total = time.perf_counter() - started
    print(f"make bench: {total:.0f} s in all (install {installed:.0f} s)", flush=True)
    failed = [r["script"] for r in runs if r["status"] != "ok"]
    if failed:
        print("not ok: " + ", ".join(failed), flush=True)
    return 1 if report.returncode != 0 or failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
