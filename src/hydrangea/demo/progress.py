"""A progress bar for long demo runs (on stderr, so ``--json`` output stays clean)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from hydrangea.demo.report import RequestFacts

__all__ = ["LONG_RUN_TURNS", "progress_for"]

LONG_RUN_TURNS = 20
"""Runs with more turns than this show a progress bar."""


@contextmanager
def progress_for(
    turns: int, *, enabled: bool = True
) -> Iterator[Callable[[RequestFacts], None] | None]:
    """Yield a per-request callback that advances a bar of ``turns`` turns, or ``None`` for
    short runs (and when not ``enabled``)."""
    if not enabled or turns <= LONG_RUN_TURNS:
        yield None
        return
    progress = Progress(
        TextColumn("[bold]demo session"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("turns · request {task.fields[tokens]} tokens, {task.fields[share]} cached"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = progress.add_task("session", total=turns, tokens=0, share="0%")

    def advance(facts: RequestFacts) -> None:
        progress.update(
            task,
            completed=facts.turn - 1,
            tokens=facts.tokens,
            share=f"{facts.reuse_share:.0%}",
        )

    with progress:
        yield advance
        progress.update(task, completed=turns)
