"""Worker processes for the multi-process store tests (forked from a forkserver).

:func:`append_turns` appends one turn to each session, reloading and retrying on every
conflict, and reports what it got acknowledged. :func:`append_forever` appends big turns to
one session and reports, on a pipe, when each save starts and when it was acknowledged, so the
test can SIGKILL it in the middle of a save.
"""

from __future__ import annotations

from typing import Any

from hydrangea.context import Context
from hydrangea.errors import SessionConflictError
from hydrangea.stores import PostgresSessionStore, SqliteSessionStore


def open_store(kind: str, where: str) -> SqliteSessionStore | PostgresSessionStore:
    """A store of ``kind`` ("sqlite" or "postgres") on ``where``."""
    if kind == "sqlite":
        return SqliteSessionStore(where, timeout=60)
    return PostgresSessionStore(where, max_size=1, timeout=60)


def label(worker: int, session: int) -> str:
    """The text of worker ``worker``'s turn in session ``session``."""
    return f"w{worker}-s{session}"


def append_turns(
    kind: str, where: str, worker: int, sessions: int, start: Any, results: Any
) -> None:
    """Append one turn to every session: all workers start on session 0 at once (a race that
    must produce conflicts), then each goes round the others from its own starting point."""
    store = open_store(kind, where)
    acknowledged: list[str] = []
    conflicts = 0
    start.wait(120)
    try:
        rest = list(range(1, sessions))
        shift = (worker * 6) % len(rest) if rest else 0
        for session in [0, *rest[shift:], *rest[:shift]]:
            while True:
                held = store.load(f"s{session}", Context)
                text = label(worker, session)
                _turn(held.value, text)
                try:
                    store.save(held)
                except SessionConflictError:
                    conflicts += 1
                    continue
                acknowledged.append(text)
                break
    finally:
        store.close()
    results.put((worker, acknowledged, conflicts))


def _turn(context: Context, text: str, size: int = 1) -> None:
    from hydrangea.message import Message, Role

    for part in range(size):
        context.emplace_message(Message(role=Role.user, content=f"user {text} {part}"))
        context.push_back({"role": "assistant", "content": f"reply {text} {part}"})


def append_forever(
    kind: str, where: str, session: str, size: int, pipe: Any, prefix: str
) -> None:
    """Append turns of ``size`` exchanges to ``session`` until killed, reporting each save."""
    store = open_store(kind, where)
    held = store.load(session, Context)
    number = 0
    while True:
        number += 1
        _turn(held.value, f"{prefix}t{number}", size)
        pipe.send(("saving", number))
        store.save(held)
        pipe.send(("acknowledged", number))
