"""hydrangea-context: build and manage the context an agent sends to an LLM.

The most used names are re-exported here; each lives in one module of its own:

* `hydrangea.message` and `hydrangea.gateway`: provider-neutral messages, providers;
* `hydrangea.context`: the append-only `Context` and its gateway adapters;
* `hydrangea.context.area` and `hydrangea.coop`: the Area contract and `CoopContext` with its
  collector;
* `hydrangea.lifecycle`: components with ttl, cadence and stages in the tail overlay;
* `hydrangea.asof`: as-of context assembly (trust fencing, budgets, compaction);
* `hydrangea.areas`: ready-made areas;
* `hydrangea.errors`: every exception the library raises on purpose.

The package root is lazy: a name is imported from its module the first time it is read, so
``import hydrangea.message`` loads the message module and little else.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from hydrangea import _moved
from hydrangea._version import __version__

_moved.install()

_EXPORTS: dict[str, str] = {
    "AreaFlowState": "hydrangea.context.area",
    "AreaLifeState": "hydrangea.context.area",
    "AsOfArea": "hydrangea.areas",
    "CompactingConversation": "hydrangea.areas",
    "CompactionArea": "hydrangea.areas",
    "Component": "hydrangea.lifecycle",
    "Context": "hydrangea.context",
    "ContextAreaImplementation": "hydrangea.context.area",
    "ContextStateError": "hydrangea.errors",
    "ConversationArea": "hydrangea.areas",
    "CoopContext": "hydrangea.coop",
    "EffectRange": "hydrangea.coop",
    "GatewayMismatchError": "hydrangea.errors",
    "GatewayType": "hydrangea.gateway",
    "HydrangeaError": "hydrangea.errors",
    "ImagePart": "hydrangea.message",
    "InvalidItemError": "hydrangea.errors",
    "Lifecycle": "hydrangea.lifecycle",
    "Message": "hydrangea.message",
    "NativeContent": "hydrangea.context",
    "OneShotNoticeArea": "hydrangea.areas",
    "Placement": "hydrangea.lifecycle",
    "Role": "hydrangea.message",
    "SerializationError": "hydrangea.errors",
    "Stage": "hydrangea.lifecycle",
    "TextPart": "hydrangea.message",
    "ToolCallPart": "hydrangea.message",
    "ToolLoopArea": "hydrangea.areas",
    "ToolResultPart": "hydrangea.message",
    "UnsupportedContentError": "hydrangea.errors",
}

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

if TYPE_CHECKING:
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
    from hydrangea.message import (
        ImagePart,
        Message,
        Role,
        TextPart,
        ToolCallPart,
        ToolResultPart,
    )


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hydrangea' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
