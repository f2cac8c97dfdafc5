"""Worker processes for the linearizability test: each appends turns to sessions through
:class:`~hydrangea.integrations.openai_agents.HydrangeaSession`, with faults injected, and logs
every operation's start, outcome and times to its own file (one line each, flushed, so a
killed worker's log holds everything up to the kill).

Log lines are JSON: ``{"op": label, "session": s, "start": t0, "end": t1, "outcome": o}`` where
``outcome`` is ``"ok"`` (acknowledged), ``"failed"`` (known not written) or ``"unknown"`` (the
outcome was lost: a commit whose answer was dropped, a cancelled task); a ``"start"`` line comes
first, so an operation cut short by a kill is a start without an end. Times are
``time.monotonic()``, one clock for every process of the machine.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from typing import Any

from hydrangea.errors import SessionConflictError, StoreError, StoreUnavailableError
from hydrangea.integrations.openai_agents import HydrangeaSession
from hydrangea.stores import AsyncPostgresSessionStore, PostgresSessionStore, SqliteSessionStore


class InjectedRefusal(StoreError):
    """A fault raised before the store was asked to write: known not written."""


class FaultyStore:
    """A store whose saves fail now and then: before writing (known), or after the write
    committed with the answer lost (unknown), as a dropped connection does."""

    def __init__(self, store: Any, rng: random.Random, dsn: str | None) -> None:
        self.store, self.rng, self.dsn = store, rng, dsn

    def save(self, session: Any) -> int:
        roll = self.rng.random()
        if roll < 0.08:
            raise InjectedRefusal("injected: refused before writing")
        if roll < 0.12 and self.dsn is not None:
            _drop_others(self.dsn)  # real dropped connections, in other workers
        version = int(self.store.save(session))
        if roll > 0.92:
            raise StoreUnavailableError("injected: the connection dropped during COMMIT")
        return version

    def create(self, session_id: str, value: Any) -> Any:
        return self.store.create(session_id, value)

    def load(self, session_id: str, kind: Any) -> Any:
        return self.store.load(session_id, kind)


class AsyncFaultyStore:
    """:class:`FaultyStore` around an async store (a cancelled task really stops it)."""

    def __init__(self, store: Any, rng: random.Random, dsn: str) -> None:
        self.store, self.rng, self.dsn = store, rng, dsn

    async def save(self, session: Any) -> int:
        roll = self.rng.random()
        if roll < 0.08:
            raise InjectedRefusal("injected: refused before writing")
        if roll < 0.12:
            await asyncio.to_thread(_drop_others, self.dsn)
        version = int(await self.store.save(session))
        if roll > 0.92:
            raise StoreUnavailableError("injected: the connection dropped during COMMIT")
        return version

    async def create(self, session_id: str, value: Any) -> Any:
        return await self.store.create(session_id, value)

    async def load(self, session_id: str, kind: Any) -> Any:
        return await self.store.load(session_id, kind)


def _drop_others(dsn: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
                     "pid <> pg_backend_pid() AND datname = current_database() AND "
                     "state = 'idle in transaction'")


def run_worker(kind: str, where: str, worker: int, sessions: int, ops: int, log: str,
               start: Any) -> None:
    """Append ``ops`` turns, each to a random one of ``sessions`` sessions, logging each."""
    rng = random.Random(worker * 7919 + 13)
    start.wait(120)
    with open(log, "a", encoding="utf-8") as out:
        def write(record: dict[str, Any]) -> None:
            out.write(json.dumps(record) + "\n")
            out.flush()

        if kind == "postgres-async":
            asyncio.run(_async_worker(where, worker, sessions, ops, rng, write))
            return
        store: Any = (SqliteSessionStore(where, timeout=60) if kind == "sqlite"
                      else PostgresSessionStore(where, max_size=2, timeout=60))
        faulty = FaultyStore(store, rng, where if kind == "postgres" else None)
        asyncio.run(_operations(faulty, worker, sessions, ops, rng, write))
        store.close()


async def _async_worker(where: str, worker: int, sessions: int, ops: int,
                        rng: random.Random, write: Any) -> None:
    store = await AsyncPostgresSessionStore.open(where, max_size=2, timeout=60)
    try:
        await _operations(AsyncFaultyStore(store, rng, where), worker, sessions, ops, rng,
                          write)
    finally:
        await store.close()


async def _operations(faulty: FaultyStore | AsyncFaultyStore, worker: int, sessions: int, ops: int,
                      rng: random.Random, write: Any) -> None:
    mine: dict[int, list[str]] = {}
    objects: dict[int, HydrangeaSession] = {}
    for number in range(ops):
        target = rng.randrange(sessions)
        label = f"w{worker}-{number}"
        began = time.monotonic()
        write({"op": label, "session": target, "start": began, "outcome": "start"})
        if target not in objects:  # one object per session, kept, as an application does
            objects[target] = HydrangeaSession(f"s{target}", faulty,  # type: ignore[arg-type]
                                               retries=200)
        session = objects[target]
        outcome = "ok"
        try:
            call = session.add_items([{"role": "user", "content": label}])
            if rng.random() < 0.05:  # a cancelled task: its thread may still commit
                await asyncio.wait_for(call, timeout=rng.uniform(0, 0.004))
            else:
                await call
        except TimeoutError:
            outcome = "unknown"
        except (InjectedRefusal, SessionConflictError):
            outcome = "failed"
        except StoreUnavailableError:
            outcome = "unknown"
        write({"op": label, "session": target, "start": began, "end": time.monotonic(),
               "outcome": outcome})
        if outcome == "ok":
            mine.setdefault(target, []).append(label)
        if rng.random() < 0.2:  # read your writes, in order
            try:
                seen = [str(i.get("content")) for i in await session.get_items()]
            except StoreUnavailableError:
                continue  # a real drop hit the read: nothing to check
            acked = mine.get(target, [])
            positions = [seen.index(a) if a in seen else -1 for a in acked]
            if -1 in positions or positions != sorted(positions):
                write({"op": label, "outcome": "violation", "seen": seen, "acked": acked})
