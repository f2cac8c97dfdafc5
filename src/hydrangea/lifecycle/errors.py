"""The errors of ``hydrangea.lifecycle``, re-exported from :mod:`hydrangea.errors`."""

from __future__ import annotations

from hydrangea.errors import (
    ComponentNotFoundError,
    DuplicateKeyError,
    InvalidComponentError,
    InvalidTargetError,
    LifecycleError,
    PermanentComponentError,
    UnknownSnapshotError,
)

__all__ = [
    "ComponentNotFoundError",
    "DuplicateKeyError",
    "InvalidComponentError",
    "InvalidTargetError",
    "LifecycleError",
    "PermanentComponentError",
    "UnknownSnapshotError",
]
