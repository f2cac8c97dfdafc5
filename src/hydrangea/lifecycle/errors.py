"""Errors raised by the lifecycle layer; all derive from HydrangeaError."""

from __future__ import annotations

from hydrangea.errors import HydrangeaError

__all__ = [
    "ComponentNotFoundError",
    "DuplicateKeyError",
    "InvalidComponentError",
    "InvalidTargetError",
    "LifecycleError",
    "PermanentComponentError",
    "UnknownSnapshotError",
]


class LifecycleError(HydrangeaError):
    """Base class of the lifecycle layer's errors."""


class InvalidComponentError(LifecycleError, ValueError):
    """A component whose schedule, key or tags make no sense (the message says which)."""


class InvalidTargetError(LifecycleError, TypeError):
    """A Lifecycle was given something that is neither a CoopContext (renderer) nor a Context."""


class DuplicateKeyError(LifecycleError, ValueError):
    """A component was added with a key that another live component already holds."""


class ComponentNotFoundError(LifecycleError, KeyError):
    """No live component holds the key that was asked for."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class PermanentComponentError(LifecycleError, RuntimeError):
    """A permanent component already in the append-only history cannot be deleted or replaced."""


class UnknownSnapshotError(LifecycleError, KeyError):
    """No snapshot has the id that was asked for; there is never a fallback to the current state."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""
