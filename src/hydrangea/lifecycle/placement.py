"""Where the overlay goes: the insertion point for "before the newest item", per gateway.

Placing a component must keep the request valid: it never goes between a tool call and its
results (nor between an OpenAI Responses reasoning item and the item it belongs to). If the
newest item is part of such an exchange, "before the newest item" means before the whole
exchange. The rule is deterministic: the same history gives the same insertion point.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, assert_never

from hydrangea.context.native import NativeContent
from hydrangea.gateway import GatewayType

__all__ = ["before_newest", "is_tool_call", "is_tool_result"]


def _blocks(item: NativeContent, key: str) -> list[Any]:
    value = item.get(key)
    return value if isinstance(value, list) else []


def _has_block(blocks: list[Any], names: tuple[str, ...]) -> bool:
    for block in blocks:
        if isinstance(block, dict) and (
            block.get("type") in names or any(n in block for n in names)
        ):
            return True
    return False


def is_tool_call(gateway: GatewayType, item: NativeContent) -> bool:
    """True if ``item`` asks for tool results (or, for Responses, must be followed by its item)."""
    match gateway:
        case GatewayType.openai:
            return item.get("role") == "assistant" and bool(item.get("tool_calls"))
        case GatewayType.openai_responses:
            kind = item.get("type")
            return isinstance(kind, str) and (kind.endswith("_call") or kind == "reasoning")
        case GatewayType.anthropic:
            return item.get("role") == "assistant" and _has_block(
                _blocks(item, "content"), ("tool_use", "server_tool_use")
            )
        case GatewayType.gemini:
            return _has_block(_blocks(item, "parts"), ("functionCall", "function_call"))
        case _:
            assert_never(gateway)


def is_tool_result(gateway: GatewayType, item: NativeContent) -> bool:
    """True if ``item`` answers a tool call made by an earlier item."""
    match gateway:
        case GatewayType.openai:
            return item.get("role") in ("tool", "function")
        case GatewayType.openai_responses:
            kind = item.get("type")
            return isinstance(kind, str) and kind.endswith("_output")
        case GatewayType.anthropic:
            return item.get("role") == "user" and _has_block(
                _blocks(item, "content"), ("tool_result",)
            )
        case GatewayType.gemini:
            return _has_block(_blocks(item, "parts"), ("functionResponse", "function_response"))
        case _:
            assert_never(gateway)


def before_newest(gateway: GatewayType, history: Sequence[NativeContent]) -> int:
    """The index at which "before the newest item" components are inserted.

    ``len(history) - 1`` normally; earlier when that point would split a tool exchange; 0 for
    an empty history. The walk is bounded by the length of the final exchange.
    """
    index = len(history) - 1
    if index <= 0:
        return 0
    while index > 0 and (
        is_tool_call(gateway, history[index - 1]) or is_tool_result(gateway, history[index])
    ):
        index -= 1
    return index
