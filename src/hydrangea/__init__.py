"""hydrangea-context: build and manage the context an agent sends to an LLM.

The most used names are re-exported here; each lives in one module of its own:

* :mod:`hydrangea.message` and :mod:`hydrangea.gateway`: provider-neutral messages, providers;
* :mod:`hydrangea.context`: the append-only :class:`Context` and its gateway adapters;
* :mod:`hydrangea.context.area` and :mod:`hydrangea.coop`: the Area contract and
  :class:`CoopContext` with its collector;
* :mod:`hydrangea.lifecycle`: components with ttl, cadence and stages in the tail overlay;
* :mod:`hydrangea.asof`: as-of context assembly (trust fencing, budgets, compaction);
* :mod:`hydrangea.areas`: ready-made areas.
"""

from hydrangea.areas import (
    AsOfArea,
    CompactingConversation,
    CompactionArea,
    ConversationArea,
    OneShotNoticeArea,
    ToolLoopArea,
)
from hydrangea.context import Context, NativeContent
from hydrangea.context.area import AreaFlowState, AreaLifeState, ContextAreaImplementation
from hydrangea.coop import CoopContext, EffectRange
from hydrangea.errors import (
    ContextStateError,
    GatewayMismatchError,
    HydrangeaError,
    InvalidItemError,
    SerializationError,
    UnsupportedContentError,
)
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle, Placement, Stage
from hydrangea.message import ImagePart, Message, Role, TextPart, ToolCallPart, ToolResultPart

__version__ = "0.1.0"

__all__ = [
    "AreaFlowState",
    "AreaLifeState",
    "AsOfArea",
    "CompactingConversation",
    "CompactionArea",
    "Component",
    "Context",
    "ContextAreaImplementation",
    "ContextStateError",
    "ConversationArea",
    "CoopContext",
    "EffectRange",
    "GatewayMismatchError",
    "GatewayType",
    "HydrangeaError",
    "ImagePart",
    "InvalidItemError",
    "Lifecycle",
    "Message",
    "NativeContent",
    "OneShotNoticeArea",
    "Placement",
    "Role",
    "SerializationError",
    "Stage",
    "TextPart",
    "ToolCallPart",
    "ToolLoopArea",
    "ToolResultPart",
    "UnsupportedContentError",
    "__version__",
]
