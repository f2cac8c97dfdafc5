"""The spec's import path for :class:`~hydrangea.coop.CoopContext` (a re-export)."""

from hydrangea.coop import CoopContext

__all__ = ["CoopContext"]
