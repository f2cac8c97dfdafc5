"""The append-only Context of provider-native items, and its gateway adapters."""

from hydrangea.context.context import Context
from hydrangea.context.readback import ReplyRoute, Route
from hydrangea.providers.adapter import Adapter
from hydrangea.providers.native import NativeContent
from hydrangea.providers.registry import adapter_for

__all__ = ["Adapter", "Context", "NativeContent", "ReplyRoute", "Route", "adapter_for"]
