"""Errors raised by the ready-made areas."""

from __future__ import annotations

from hydrangea.errors import HydrangeaError

__all__ = ["AreaUsageError", "ToolError"]


class AreaUsageError(HydrangeaError, ValueError):
    """An area was handed something it cannot take (a reply of the wrong role, an empty turn,
    a non-positive threshold). The area is unchanged."""


class ToolError(HydrangeaError):
    """Raised by a tool given to :class:`~hydrangea.areas.ToolLoopArea` to report a failure.

    The loop turns it into an error tool result for the model; any other exception escapes.
    """
