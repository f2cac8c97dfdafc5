"""Linearizability of HydrangeaSession appends, on PostgreSQL (sync and async stores) and
SQLite, under faults.

Worker processes (8 x 50 sessions under the ``ci`` hypothesis profile, fewer by default) append
uniquely labelled turns through the Agents SDK session, with faults injected: saves refused
before writing, commits whose answer is lost, real connections dropped (PostgreSQL), cancelled
tasks, conflicts (every worker writes every session) and one worker SIGKILLed midway. Each
logs its operations (see :mod:`tests.support.lin_workers`).

The checker reads the final sessions through the store (not the session class) and knows
nothing of either: every acknowledged turn is there exactly once; a turn known not written is
not; a turn whose outcome was lost (or cut by the kill) is there at most once; nothing is there
that no worker started; and the order agrees with real time: of two turns that are both there,
one that ended before the other started comes first.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from hydrangea.context import Context
from hydrangea.stores import PostgresSessionStore, SqliteSessionStore
from tests.support.lin_workers import run_worker

DEEP = os.environ.get("HYPOTHESIS_PROFILE") == "ci"
WORKERS = 8 if DEEP else 4
SESSIONS = 50 if DEEP else 8
OPS = 150 if DEEP else 30
INF = float("inf")


@pytest.fixture(params=["postgres", "postgres-async", "sqlite"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    kind = str(request.param)
    if kind.startswith("postgres"):
        return kind, str(request.getfixturevalue("postgres_dsn"))
    return kind, str(tmp_path / "sessions.db")


def _read_logs(paths: list[Path]) -> tuple[dict[str, dict[str, Any]], list[Any]]:
    ops: dict[str, dict[str, Any]] = {}
    violations: list[Any] = []
    for path in paths:
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record["outcome"] == "violation":
                violations.append(record)
            elif record["outcome"] == "start":
                ops[record["op"]] = {**record, "outcome": "unknown", "end": INF}
            else:
                ops[record["op"]] = record
    return ops, violations


def check_history(ops: dict[str, dict[str, Any]], stored: dict[int, list[str]]) -> None:
    """The checker: ``stored`` (session -> labels in order) against the logged operations."""
    seen: set[str] = set()
    for session, labels in stored.items():
        for label in labels:
            assert label in ops, f"{label} in s{session}: no worker started it"
            assert ops[label]["session"] == session, f"{label} landed in the wrong session"
            assert label not in seen, f"{label} stored twice"
            seen.add(label)
            assert ops[label]["outcome"] != "failed", f"{label} was refused yet is stored"
        # An operation whose outcome was lost may take effect after it returned (a cancelled
        # task's thread still commits): only an acknowledgement bounds when it took effect.
        timed = [(ops[label]["start"], ops[label]["end"] if ops[label]["outcome"] == "ok"
                  else INF, label) for label in labels]
        for position, (_, end, label) in enumerate(timed):
            for start_after, _, later in timed[:position]:
                assert not start_after > end, (
                    f"s{session}: {later} started after {label} ended, yet comes first")
    for label, op in ops.items():
        if op["outcome"] == "ok":
            assert label in seen, f"acknowledged {label} is missing"


def _stored(kind: str, where: str) -> dict[int, list[str]]:
    store: Any = (SqliteSessionStore(where) if kind == "sqlite"
                  else PostgresSessionStore(where))
    found: dict[int, list[str]] = {}
    for info in store.list_sessions():
        context = store.load(info.session_id, Context).value
        found[int(info.session_id[1:])] = [str(item["content"]) for item in context]
    store.close()
    return found


def test_appends_are_linearizable_under_faults(
    backend: tuple[str, str], tmp_path: Path
) -> None:
    kind, where = backend
    if kind == "sqlite":
        SqliteSessionStore(where).close()  # the schema, before the fleet starts
    spawn = multiprocessing.get_context("forkserver")
    spawn.set_forkserver_preload(["tests.support.lin_workers"])
    start = spawn.Event()
    logs = [tmp_path / f"w{w}.log" for w in range(WORKERS)]
    procs = [spawn.Process(target=run_worker,
                           args=(kind, where, w, SESSIONS, OPS, str(logs[w]), start))
             for w in range(WORKERS)]
    for proc in procs:
        proc.start()
    time.sleep(0.3)
    start.set()
    victim = procs[0]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (
            not logs[0].exists() or logs[0].read_text().count("\n") < OPS // 2):
        time.sleep(0.01)
    assert victim.pid is not None
    os.kill(victim.pid, signal.SIGKILL)
    for proc in procs:
        proc.join(240)
    assert [p.exitcode for p in procs] == [-signal.SIGKILL] + [0] * (WORKERS - 1)
    ops, violations = _read_logs(logs)
    assert violations == [], "a worker did not read its own acknowledged turns in order"
    outcomes = [op["outcome"] for op in ops.values()]
    print(f"{kind}: {sorted(Counter(outcomes).items())}")
    assert outcomes.count("ok") > WORKERS * OPS // 3
    assert outcomes.count("failed") > 0 and outcomes.count("unknown") > 0  # faults happened
    check_history(ops, _stored(kind, where))


# -- the checker itself ----------------------------------------------------------------------


def _op(session: int, start: float, end: float, outcome: str = "ok") -> dict[str, Any]:
    return {"session": session, "start": start, "end": end, "outcome": outcome}


def test_the_checker_refuses_what_is_not_linearizable() -> None:
    ops = {"a": _op(0, 0, 1), "b": _op(0, 2, 3), "c": _op(0, 0, 0.5, "unknown"),
           "d": _op(1, 0, 1, "failed")}
    check_history(ops, {0: ["a", "b"], 1: []})
    check_history(ops, {0: ["a", "c", "b"], 1: []})  # an unknown outcome may be in, anywhere
    for bad in ({0: ["b", "a"]},          # real-time order broken
                {0: ["a"]},               # acknowledged b lost
                {0: ["a", "b", "a"]},     # stored twice
                {0: ["a", "b"], 1: ["d"]},  # a refused turn visible
                {0: ["a", "b", "z"]},     # never started
                {0: ["a"], 1: ["b"]}):    # wrong session
        with pytest.raises(AssertionError):
            check_history(ops, bad)
