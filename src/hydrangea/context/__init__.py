"""The append-only Context of provider-native items, and its gateway adapters."""

from hydrangea.context.adapter import Adapter
from hydrangea.context.context import Context
from hydrangea.context.native import NativeContent
from hydrangea.context.readback import ReplyRoute, Route
from hydrangea.context.registry import adapter_for

__all__ = ["Adapter", "Context", "NativeContent", "ReplyRoute", "Route", "adapter_for"]
