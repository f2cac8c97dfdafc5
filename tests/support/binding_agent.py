"""An agent loop driven through the real SDK clients against the prefix-binding emulators.

The loop is what the docs teach: a CoopContext with a ConversationArea, a Lifecycle, a
ToolLoopArea per question when tools are on, ``lifecycle.render()`` before every model call,
``push_back(response, route=...)`` after it, the same tool list on every request. Each request
the emulator received is kept, so a test can check the invariant on the wire: every request
begins with exactly what the previous one sent, followed by the model's output.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hydrangea.areas import ConversationArea, ToolLoopArea
from hydrangea.context import Context, Route
from hydrangea.context.readback import reply_of
from hydrangea.coop import CoopContext
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Lifecycle
from hydrangea.message import Message
from hydrangea.tools import tool, with_tools
from tests.support.emulators import AnthropicEmulator, GeminiEmulator, ResponsesEmulator

MODELS = {
    GatewayType.anthropic: "claude-sonnet-5-5",
    GatewayType.openai_responses: "gpt-6",
    GatewayType.gemini: "gemini-3-pro",
}

BINDING = (GatewayType.anthropic, GatewayType.openai_responses, GatewayType.gemini)


@tool
def lookup(q: str) -> str:
    """Look a word up.

    Args:
        q: The word.
    """
    return f"{q}: a flowering shrub."


TOOLS = [lookup]


def emulator_for(gateway: GatewayType, **options: Any) -> Any:
    """The emulator of ``gateway``'s binding rules (every reply carries bound reasoning)."""
    match gateway:
        case GatewayType.anthropic:
            return AnthropicEmulator(**options)
        case GatewayType.openai_responses:
            return ResponsesEmulator(**options)
        case GatewayType.gemini:
            return GeminiEmulator(**options)
        case _:
            raise AssertionError(f"no emulator for {gateway}")


def call(gateway: GatewayType, client: Any, kwargs: dict[str, Any]) -> Any:
    """One model call through the SDK with a request's keyword arguments."""
    model = MODELS[gateway]
    match gateway:
        case GatewayType.anthropic:
            return client.messages.create(model=model, max_tokens=256, **kwargs)
        case GatewayType.openai_responses:
            return client.responses.create(model=model, **kwargs)
        case GatewayType.gemini:
            return client.models.generate_content(model=model, **kwargs)
        case _:
            raise AssertionError(f"no call for {gateway}")


def reply_message(gateway: GatewayType, response: Any) -> Message:
    """``response`` read back as the one assistant Message ``push_back`` would route."""
    scratch = Context(gateway)
    scratch.push_back(response)
    return reply_of(scratch.messages())


@dataclass
class Agent:
    """One session: areas, a lifecycle, optionally tools, against one emulator."""

    gateway: GatewayType
    client: Any
    tools: bool = False
    context: Context = field(init=False)
    coop: CoopContext = field(init=False)
    conversation: ConversationArea = field(init=False)
    lifecycle: Lifecycle = field(init=False)
    calls: int = 0

    def __post_init__(self) -> None:
        self.context = Context(self.gateway)
        self.coop = CoopContext(self.context)
        self.conversation = ConversationArea()
        self.coop.register(self.conversation)
        self.lifecycle = Lifecycle(self.coop)

    def request_kwargs(self) -> dict[str, Any]:
        kwargs = self.lifecycle.render().kwargs
        return with_tools(kwargs, self.gateway, TOOLS) if self.tools else kwargs

    def ask(self, question: str, *, before_call: Callable[[Agent], None] | None = None) -> None:
        """One user turn: model calls until the model answers (tool rounds in between)."""
        self.conversation.user(question)
        loop: ToolLoopArea | None = None
        if self.tools:
            loop = ToolLoopArea(TOOLS, anchor=self.conversation)
            self.coop.register(loop)
        for _ in range(6):
            if before_call is not None:
                before_call(self)
            response = call(self.gateway, self.client, self.request_kwargs())
            self.calls += 1
            route = self.conversation if loop is None else Route(loop, self.conversation)
            self.context.push_back(response, route=route)
            if loop is None or loop.answered:
                return
        raise AssertionError("the tool loop did not end")
