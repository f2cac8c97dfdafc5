"""Small drivers that run a plain session through a real SDK client against an emulator.

Each keeps the wire history as plain JSON (what the SDK sent) and appends the model's output
exactly as returned, so a test can replay it, edit it, or add a reminder and take it out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from google.genai import types as gtypes

ANTHROPIC_MODEL = "claude-sonnet-5-5"
RESPONSES_MODEL = "gpt-6"
GEMINI_MODEL = "gemini-3-pro"


@dataclass
class AnthropicSession:
    """A Messages conversation: ``system``, ``tools``, ``messages`` as sent on the wire."""

    client: Any
    system: Any = "You are terse."
    tools: list[dict[str, Any]] = field(
        default_factory=lambda: [
            {"name": "lookup", "description": "Look a word up.", "input_schema": {"type": "object"}}
        ]
    )
    messages: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def call(self, messages: list[dict[str, Any]] | None = None, **overrides: Any) -> Any:
        """Send ``messages`` (default: the history) and return the SDK's message."""
        kwargs: dict[str, Any] = {
            "model": ANTHROPIC_MODEL,
            "max_tokens": 256,
            "system": self.system,
            "tools": self.tools,
            "messages": self.messages if messages is None else messages,
            **self.extra,
            **overrides,
        }
        return self.client.messages.create(**kwargs)

    def turn(self, user: Any) -> Any:
        """Append a user message (text or blocks), call, append the reply exactly; answer
        every tool call of the reply with a tool_result in the next user message."""
        self.messages.append({"role": "user", "content": user})
        return self.take(self.call())

    def take(self, reply: Any) -> Any:
        """Append ``reply``'s content as the next assistant message."""
        self.messages.append(
            {
                "role": "assistant",
                "content": [b.model_dump(exclude_none=True) for b in reply.content],
            }
        )
        return reply

    def results_for(self, reply: Any) -> list[dict[str, Any]]:
        """tool_result blocks answering every tool_use of ``reply``."""
        return [
            {"type": "tool_result", "tool_use_id": b.id, "content": f"result of {b.name}"}
            for b in reply.content
            if b.type == "tool_use"
        ]


@dataclass
class ResponsesSession:
    """A Responses conversation kept as ``input`` items (no ``previous_response_id``)."""

    client: Any
    instructions: str = "You are terse."
    tools: list[dict[str, Any]] = field(
        default_factory=lambda: [
            {
                "type": "function",
                "name": "lookup",
                "parameters": {"type": "object"},
                "strict": False,
            }
        ]
    )
    items: list[Any] = field(default_factory=list)

    def call(self, items: list[Any] | None = None, **overrides: Any) -> Any:
        """Send ``items`` (default: the history) and return the SDK's response."""
        kwargs: dict[str, Any] = {
            "model": RESPONSES_MODEL,
            "instructions": self.instructions,
            "tools": self.tools,
            "input": self.items if items is None else items,
            **overrides,
        }
        return self.client.responses.create(**kwargs)

    def turn(self, *new: Any) -> Any:
        """Append ``new`` items (a str is a user message), call, append the output exactly."""
        self.items.extend({"role": "user", "content": n} if isinstance(n, str) else n for n in new)
        reply = self.call()
        self.items.extend(o.model_dump(exclude_none=True) for o in reply.output)
        return reply

    @staticmethod
    def outputs_for(reply: Any) -> list[dict[str, Any]]:
        """function_call_output items answering every function_call of ``reply``."""
        return [
            {"type": "function_call_output", "call_id": o.call_id, "output": f"result of {o.name}"}
            for o in reply.output
            if o.type == "function_call"
        ]


@dataclass
class GeminiSession:
    """A generateContent conversation kept as ``types.Content`` values."""

    client: Any
    contents: list[gtypes.Content] = field(default_factory=list)

    def call(self, contents: list[gtypes.Content] | None = None) -> Any:
        """Send ``contents`` (default: the history) and return the SDK's response."""
        return self.client.models.generate_content(
            model=GEMINI_MODEL, contents=self.contents if contents is None else contents
        )

    def turn(self, *parts: gtypes.Part) -> Any:
        """Append a user content of ``parts``, call, append the model's content exactly."""
        self.contents.append(gtypes.Content(role="user", parts=list(parts)))
        reply = self.call()
        self.contents.append(reply.candidates[0].content)
        return reply

    @staticmethod
    def responses_for(reply: Any) -> list[gtypes.Part]:
        """functionResponse parts answering every functionCall of ``reply``."""
        return [
            gtypes.Part(
                function_response=gtypes.FunctionResponse(
                    name=p.function_call.name, response={"r": "ok"}
                )
            )
            for p in reply.candidates[0].content.parts
            if p.function_call is not None
        ]
