"""Errors raised by :class:`~hydrangea.coop.CoopContext`."""

from __future__ import annotations

from hydrangea.errors import HydrangeaError

__all__ = [
    "AreaContractError",
    "DuplicateAreaError",
    "GcPrologueError",
    "InvalidEffectRangeError",
]


class AreaContractError(HydrangeaError, TypeError):
    """An object that does not fulfil the Context Area contract.

    Raised by ``register()`` for a missing or non-callable member or an unhashable object, and
    during ``render()`` for a state that is not an :class:`AreaLifeState` /
    :class:`AreaFlowState` or a callback result of the wrong type.
    """


class DuplicateAreaError(HydrangeaError, ValueError):
    """The same area instance was registered while it is still registered."""


class GcPrologueError(ExceptionGroup[Exception], HydrangeaError):
    """One or more ``gc_prologue()`` callbacks raised during a collection.

    The collection was completed all the same (tail detached, promoted messages appended, areas
    removed); the exceptions are carried in :attr:`exceptions`, in the order the callbacks ran,
    each with a note naming its area. Catch it as ``GcPrologueError`` or with ``except*`` (a partial
    ``except*`` match hands on a plain ``ExceptionGroup``).
    """


class InvalidEffectRangeError(HydrangeaError, ValueError):
    """An EffectRange whose bounds are not ``0 <= earliest <= latest``."""
