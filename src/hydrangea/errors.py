"""The library's exception hierarchy. Every error raised on purpose derives from HydrangeaError."""

from __future__ import annotations

__all__ = [
    "ContextStateError",
    "GatewayMismatchError",
    "HydrangeaError",
    "InvalidItemError",
    "SerializationError",
    "UnsupportedContentError",
]


class HydrangeaError(Exception):
    """Base class of every error the library raises on purpose."""


class InvalidItemError(HydrangeaError, ValueError):
    """A provider-native item that the Context's gateway cannot accept. Nothing was appended."""


class GatewayMismatchError(InvalidItemError):
    """An item or SDK object that belongs to another gateway than the Context's."""


class UnsupportedContentError(HydrangeaError, ValueError):
    """A Message whose content the gateway cannot express. Nothing was appended."""


class SerializationError(HydrangeaError, ValueError):
    """A saved Context (or session) that cannot be read back."""


class ContextStateError(HydrangeaError, RuntimeError):
    """An operation that is not allowed in the current state (for example a re-entrant render)."""
