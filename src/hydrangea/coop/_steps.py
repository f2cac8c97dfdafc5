"""Render steps written once, run by a sync or an async driver (private to ``hydrangea.coop``).

CoopContext's collection and unfold pass are generators. They call each area callback
themselves; when a callback returns an awaitable (an async area), :func:`settle` *yields* it and
the step resumes with its result, or with its exception raised at that point, exactly as if the
call had returned or raised there. :func:`drive` runs the steps for ``render()`` and refuses an
awaitable (a sync render cannot run an async area); :func:`adrive` runs them for ``arender()``
and awaits it. The ordering and fault rules live only in the steps, so ``render()`` and
``arender()`` cannot drift apart, and a sync area costs no more than a direct call.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Generator
from typing import Any, TypeAlias, TypeVar

from hydrangea.errors import AreaContractError

__all__ = ["Steps", "adrive", "drive", "settle"]

T = TypeVar("T")

Steps: TypeAlias = Generator[Awaitable[Any], Any, T]
"""Render steps: yield the awaitables callbacks returned, get their results sent back."""

_PLAIN = frozenset({list, tuple, type(None)})
"""Result types that are never awaitable: the fast path (no ``inspect`` call)."""


def settle(result: object) -> Steps[object]:
    """``result`` itself, or (``yield from``) what it gives once the driver awaited it."""
    if type(result) in _PLAIN or not inspect.isawaitable(result):
        return result
    return (yield result)


def drive(steps: Steps[T]) -> T:
    """Run ``steps`` to the end; an awaitable from a callback is refused where it came from."""
    try:
        pending = next(steps)
        while True:
            if inspect.iscoroutine(pending):
                pending.close()
            refusal = AreaContractError(
                f"an area callback returned {pending!r}; use `await coop.arender()` for async areas"
            )
            pending = steps.throw(refusal)
    except StopIteration as stop:
        value: T = stop.value
        return value


async def adrive(steps: Steps[T]) -> T:
    """Run ``steps`` to the end, awaiting each awaitable a callback returned."""
    try:
        pending = next(steps)
        while True:
            try:
                result = await pending
            except BaseException as exc:  # noqa: BLE001 - raised in the steps, which decide
                pending = steps.throw(exc)
            else:
                pending = steps.send(result)
    except StopIteration as stop:
        value: T = stop.value
        return value
