"""Render steps written once, run by a sync or an async driver (private to ``hydrangea.coop``).

CoopContext's collection and unfold pass are generators that *yield* each area callback they
need (a :class:`Callback`) and receive its result, or have its exception thrown back in at that
point, exactly as if they had made the call themselves. :func:`drive` makes the calls (and refuses
an awaitable: a sync render cannot run an async area); :func:`adrive` makes them and awaits what
is awaitable. The ordering and fault rules live only in the steps, so ``render()`` and
``arender()`` cannot drift apart.
"""

from __future__ import annotations

import inspect
from collections.abc import Generator
from dataclasses import dataclass
from typing import TypeAlias, TypeVar

from hydrangea.context.area import AnyContextArea
from hydrangea.errors import AreaContractError

__all__ = ["Callback", "Steps", "adrive", "drive"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Callback:
    """One area callback the render steps want made: ``area.<member>(*arguments)``."""

    area: AnyContextArea
    member: str
    arguments: tuple[object, ...] = ()

    def call(self) -> object:
        return getattr(self.area, self.member)(*self.arguments)


Steps: TypeAlias = Generator[Callback, object, T]
"""Render steps: yield each callback, get its (awaited) result or exception sent back."""


def drive(steps: Steps[T]) -> T:
    """Run ``steps`` calling every callback; an area returning an awaitable is refused."""
    result: object = None
    error: BaseException | None = None
    while True:
        try:
            callback = steps.send(result) if error is None else steps.throw(error)
        except StopIteration as stop:
            value: T = stop.value
            return value
        result, error = None, None
        try:
            result = callback.call()
            if inspect.isawaitable(result):
                if inspect.iscoroutine(result):
                    result.close()
                raise AreaContractError(
                    f"{callback.area!r}.{callback.member}() is async; "
                    "use `await coop.arender()` for async areas"
                )
        except BaseException as exc:  # noqa: BLE001 - handed to the steps, which decide
            result, error = None, exc


async def adrive(steps: Steps[T]) -> T:
    """Run ``steps`` calling every callback and awaiting what it returns when awaitable."""
    result: object = None
    error: BaseException | None = None
    while True:
        try:
            callback = steps.send(result) if error is None else steps.throw(error)
        except StopIteration as stop:
            value: T = stop.value
            return value
        result, error = None, None
        try:
            result = callback.call()
            if inspect.isawaitable(result):
                result = await result
        except BaseException as exc:  # noqa: BLE001 - handed to the steps, which decide
            result, error = None, exc
