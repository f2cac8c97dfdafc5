"""Native replies built from neutral messages, for the golden sessions."""

from __future__ import annotations

from typing import Any

from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, TextPart, ToolCallPart, ToolResultPart


def native(gateway: GatewayType, message: Message) -> list[Any]:
    """The native items ``message`` becomes on ``gateway``."""
    scratch = Context(gateway)
    scratch.emplace_message(message)
    return list(scratch[:])


def say(gateway: GatewayType, text: str) -> list[Any]:
    """A native assistant reply of ``text``."""
    return native(gateway, Message(role=Role.assistant, content=text))


def calls(gateway: GatewayType, *calls: tuple[str, str, dict[str, Any]]) -> list[Any]:
    """A native assistant turn of text and the given ``(id, name, arguments)`` calls."""
    parts: tuple[TextPart | ToolCallPart, ...] = (
        TextPart(text="Let me look."),
        *(ToolCallPart(id=i, name=n, arguments=a) for i, n, a in calls),
    )
    return native(gateway, Message(role=Role.assistant, content=parts))


def results(*results: tuple[str, str]) -> Message:
    """A user turn answering the given ``(call id, content)`` results."""
    return Message(
        role=Role.user, content=tuple(ToolResultPart(call_id=i, content=c) for i, c in results)
    )
