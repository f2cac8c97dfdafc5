"""The Context Area contract: the states an area exposes and the members CoopContext calls.

An area is any object with the six members of :class:`ContextAreaImplementation`; it does not
inherit from a library class. :class:`~hydrangea.coop.CoopContext` reads its two states and calls
its four methods at well-defined moments (see ``docs/en/areas.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Protocol

from hydrangea.context.native import NativeContent
from hydrangea.message import Message

__all__ = ["AreaFlowState", "AreaLifeState", "ContextAreaImplementation"]


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
