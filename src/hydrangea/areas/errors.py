"""The errors of ``hydrangea.areas``, re-exported from :mod:`hydrangea.errors`."""

from __future__ import annotations

from hydrangea.errors import (
    AreaUsageError,
    ToolError,
)

__all__ = [
    "AreaUsageError",
    "ToolError",
]
