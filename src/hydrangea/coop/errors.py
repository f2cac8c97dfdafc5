"""The errors of ``hydrangea.coop``, re-exported from :mod:`hydrangea.errors`."""

from __future__ import annotations

from hydrangea.errors import (
    AreaContractError,
    DuplicateAreaError,
    GcPrologueError,
    InvalidEffectRangeError,
)

__all__ = [
    "AreaContractError",
    "DuplicateAreaError",
    "GcPrologueError",
    "InvalidEffectRangeError",
]
