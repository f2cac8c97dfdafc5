"""The Context Area contract: the states an area exposes and the members CoopContext calls.

An area is any object with the six members of :class:`ContextAreaImplementation`; it does not
inherit from a library class. :class:`~hydrangea.coop.CoopContext` reads its two states and calls
its four methods at well-defined moments (see ``docs/en/areas.md``).

:class:`AsyncContextAreaImplementation` is the same contract with the four methods as coroutines,
for areas that await I/O; ``CoopContext.arender()`` awaits them (and calls sync areas as before).
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from enum import StrEnum
from typing import Protocol

from hydrangea.message import Message
from hydrangea.providers.native import NativeContent

__all__ = [
    "AnyContextArea",
    "AreaFlowState",
    "AreaLifeState",
    "AsyncContextAreaImplementation",
    "ContextAreaImplementation",
]


class AreaLifeState(StrEnum):
    """Whether an area still takes part, or is finished and may be collected.

    The intended transition is one way: ``retain`` to ``retired``, then removal by the collector.
    """

    retain = "retain"
    """The area may still observe and render."""
    retired = "retired"
    """The area renders no more and is eligible for collection."""


class AreaFlowState(StrEnum):
    """What happens to the cursor after the area rendered."""

    exclusive = "exclusive"
    """Keep the cursor on this area and end the current pass."""
    yielded = "yielded"
    """Move the cursor on and let the next area take part in the same pass."""


class ContextAreaImplementation(Protocol):
    """The structural contract of a Context Area.

    The two states are read-only properties here, so an area may expose them either as plain
    attributes or as ``@property``. Instances must be hashable (identity hashing, the default for
    ordinary classes, is what CoopContext expects).
    """

    @property
    def life_state(self) -> AreaLifeState:
        """Read during collection and before rendering."""
        ...

    @property
    def flow_state(self) -> AreaFlowState:
        """Read after every successful :meth:`render`."""
        ...

    def observe(self, context: Sequence[NativeContent]) -> None:
        """Look at a read-only snapshot of the area's EffectRange before a repeated render."""
        ...

    def render(self) -> list[Message]:
        """Return the messages to append now; an empty list appends nothing."""
        ...

    def promote(self) -> tuple[Message, ...]:
        """Return the messages that must survive once the area's tail is reclaimed."""
        ...

    def gc_prologue(self) -> None:
        """Last notification before the area's tail is detached and the area removed."""
        ...


class AsyncContextAreaImplementation(Protocol):
    """The Context Area contract with coroutine methods, for ``await coop.arender()``.

    The states are the same read-only properties as in :class:`ContextAreaImplementation`; the
    four methods are ``async def`` and are awaited at the same moments, in the same order, with
    the same fault handling. A sync ``CoopContext.render()`` refuses an area whose method returns
    an awaitable, with :class:`~hydrangea.coop.AreaContractError`.
    """

    @property
    def life_state(self) -> AreaLifeState:
        """Read during collection and before rendering."""
        ...

    @property
    def flow_state(self) -> AreaFlowState:
        """Read after every successful :meth:`render`."""
        ...

    async def observe(self, context: Sequence[NativeContent]) -> None:
        """Look at a read-only snapshot of the area's EffectRange before a repeated render."""
        ...

    async def render(self) -> list[Message]:
        """Return the messages to append now; an empty list appends nothing."""
        ...

    async def promote(self) -> tuple[Message, ...]:
        """Return the messages that must survive once the area's tail is reclaimed."""
        ...

    async def gc_prologue(self) -> None:
        """Last notification before the area's tail is detached and the area removed."""
        ...


class AnyContextArea(Protocol):
    """A sync or an async area: what ``CoopContext.register()`` accepts and snapshots show.

    Each method may return its result directly (a :class:`ContextAreaImplementation`) or an
    awaitable of it (an :class:`AsyncContextAreaImplementation`); both satisfy this protocol.
    """

    @property
    def life_state(self) -> AreaLifeState:
        """Read during collection and before rendering."""
        ...

    @property
    def flow_state(self) -> AreaFlowState:
        """Read after every successful render."""
        ...

    def observe(self, context: Sequence[NativeContent]) -> Awaitable[None] | None:
        """See :meth:`ContextAreaImplementation.observe`."""
        ...

    def render(self) -> Awaitable[list[Message]] | list[Message]:
        """See :meth:`ContextAreaImplementation.render`."""
        ...

    def promote(self) -> Awaitable[tuple[Message, ...]] | tuple[Message, ...]:
        """See :meth:`ContextAreaImplementation.promote`."""
        ...

    def gc_prologue(self) -> Awaitable[None] | None:
        """See :meth:`ContextAreaImplementation.gc_prologue`."""
        ...
