"""Shared helpers for the ready-made area tests: a Context with a system prompt, and a fake
model turn that appends a reply the way a harness does (outside any area)."""

from __future__ import annotations

import json

from hydrangea.asof import ApproxTokenCounter
from hydrangea.context import Context, NativeContent
from hydrangea.context.area import AreaLifeState, ContextAreaImplementation
from hydrangea.coop import CoopContext
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, TextPart, ToolCallPart

SYSTEM = "You are a careful assistant."


def coop_with_system(gateway: GatewayType = GatewayType.openai) -> tuple[Context, CoopContext]:
    """A Context holding only a system prompt (outside every area), and its CoopContext."""
    context = Context(gateway)
    context.emplace_message(Message(role=Role.system, content=SYSTEM))
    return context, CoopContext(context)


def answer(context: Context, text: str) -> Message:
    """Append a model answer to ``context`` as a harness would, and return it as a Message."""
    message = Message(role=Role.assistant, content=(TextPart(text=text),))
    context.emplace_message(message)
    return message


def call_tool(context: Context, call_id: str, name: str, **arguments: object) -> Message:
    """Append a model reply that calls one tool, and return it as a Message."""
    message = Message(
        role=Role.assistant,
        content=(ToolCallPart(id=call_id, name=name, arguments=dict(arguments)),),
    )
    context.emplace_message(message)
    return message


def life(area: ContextAreaImplementation) -> AreaLifeState:
    """The area's life state (a function call, so type checkers do not narrow it)."""
    return area.life_state


def texts(items: object) -> str:
    """Everything in ``items`` as one JSON string (for "is this text anywhere" checks)."""
    return json.dumps(items, ensure_ascii=False)


def json_tokens(items: tuple[NativeContent, ...]) -> int:
    """Oracle for an area's observed size: approximate tokens of each item's compact JSON."""
    counter = ApproxTokenCounter()
    return sum(
        counter.count(json.dumps(item, ensure_ascii=False, separators=(",", ":")))
        for item in items
    )
