"""hydrangea-context: build and manage the context an agent sends to an LLM.

The public surface is re-exported here; each name lives in one module of its own.
"""

from hydrangea.context import Context, NativeContent
from hydrangea.errors import (
    ContextStateError,
    GatewayMismatchError,
    HydrangeaError,
    InvalidItemError,
    SerializationError,
    UnsupportedContentError,
)
from hydrangea.gateway import GatewayType
from hydrangea.message import ImagePart, Message, Role, TextPart, ToolCallPart, ToolResultPart

__version__ = "0.1.0"

__all__ = [
    "Context",
    "ContextStateError",
    "GatewayMismatchError",
    "GatewayType",
    "HydrangeaError",
    "ImagePart",
    "InvalidItemError",
    "Message",
    "NativeContent",
    "Role",
    "SerializationError",
    "TextPart",
    "ToolCallPart",
    "ToolResultPart",
    "UnsupportedContentError",
    "__version__",
]
