"""Rendering a strategy's conversation into the request whose units are counted.

Every strategy is measured on the wire shape of the provider whose rules are applied, as the
library's own adapter builds it (orphan halves of tool pairs repaired):

* ``openai`` (Chat Completions): one unit per message;
* ``gemini``: the system instruction, then one unit per part of each content (the implicit
  cache matches token prefixes, and the builder merges consecutive turns of one role, so a
  content-level unit would hide a prefix shared up to the last part);
* ``anthropic``: one unit per content block (tools, system blocks, message blocks), because
  breakpoints sit on blocks. Strategies that do not place breakpoints themselves get the common
  recipe, told where their volatile tail starts: one breakpoint on the end of the system
  prompt and one on the last block before the reminders (the API's automatic caching would
  mark the last block, reminders included, and never hit).

Each unit is rendered as compact JSON (``cache_control`` markers left out, so moving a marker
changes nothing, as on the provider) and the token counter is applied to that text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from hydrangea.context import NativeContent
from hydrangea.gateway import GatewayType
from hydrangea.message import Message
from hydrangea.providers.anthropic.caching import cached_anthropic_kwargs, strip_cache_control
from hydrangea.providers.registry import adapter_for

from .accounting import Request, RequestMessage
from .tokens import TokenCounter

__all__ = ["GATEWAY", "Renderer"]

GATEWAY = GatewayType.openai
"""The default gateway (the OpenAI-rules study and the accounting tests)."""


class Renderer:
    """Converts messages to native items (memoized) and builds counted requests."""

    def __init__(
        self,
        counter: TokenCounter,
        gateway: GatewayType = GATEWAY,
        tools: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        self.counter = counter
        self.gateway = gateway
        self.adapter = adapter_for(gateway)
        self.tools = [dict(tool) for tool in tools]
        self._native: dict[int, tuple[Message, list[NativeContent]]] = {}

    def native(self, message: Message) -> list[NativeContent]:
        """The native items of ``message`` (the same list for the same message object)."""
        hit = self._native.get(id(message))
        if hit is None or hit[0] is not message:
            hit = (message, self.adapter.from_message(message))
            self._native[id(message)] = hit
        return hit[1]

    def text(self, item: object) -> str:
        """The rendered text of one request unit."""
        return json.dumps(item, ensure_ascii=False, separators=(",", ":"))

    def tokens(self, message: Message) -> int:
        """Tokens of ``message`` rendered on its own."""
        return sum(self.counter.count(self.text(item)) for item in self.native(message))

    def request(self, items: Sequence[NativeContent], tail: int = 0) -> Request:
        """The counted units of the request the adapter builds for ``items``.

        On Anthropic, breakpoints go on the end of the system prompt and on the last block
        before the ``tail`` items (the strategy's reminders, which change every turn).
        """
        if self.gateway is not GatewayType.anthropic:
            return self.units(self.adapter.build_request(items))
        kwargs = cached_anthropic_kwargs(self.adapter, items, stable_items=len(items) - tail)
        return self.units(kwargs)

    def units(self, kwargs: Mapping[str, Any]) -> Request:
        """The counted units of built keyword arguments (breakpoints as the kwargs carry them)."""
        out: list[RequestMessage] = []

        def add(value: object) -> None:
            marked = isinstance(value, dict) and "cache_control" in value
            text = self.text(strip_cache_control(value))
            out.append(RequestMessage(text, self.counter.count(text), marked))

        match self.gateway:
            case GatewayType.anthropic:
                tools = kwargs.get("tools") or self.tools
                for tool in tools:
                    add(tool)
                for block in kwargs.get("system") or ():
                    add(block)
                for message in kwargs["messages"]:
                    content = message["content"]
                    blocks = content if isinstance(content, list) else [content]
                    for n, block in enumerate(blocks):
                        add({"role": message["role"], "n": n, **block}
                            if isinstance(block, dict) else [message["role"], block])
            case GatewayType.gemini:
                if self.tools:
                    add({"tools": self.tools})
                config = kwargs.get("config") or {}
                system = config.get("system_instruction") or kwargs.get("system_instruction")
                if system:
                    add({"system_instruction": system})
                for content in kwargs["contents"]:  # parts: the cache matches token prefixes
                    for n, part in enumerate(content.get("parts") or [{}]):
                        add({"role": content.get("role"), "n": n, **part})
            case GatewayType.openai | GatewayType.openai_responses:
                if self.tools:
                    add({"tools": self.tools})
                for message in kwargs.get("messages", kwargs.get("input", [])):
                    add(message)
        return tuple(out)

    def request_of(self, messages: Sequence[Message], tail: int = 0) -> Request:
        """The counted request for generic messages; the last ``tail`` change every turn."""
        items: list[NativeContent] = []
        tail_items = 0
        for n, message in enumerate(messages):
            native = self.native(message)
            items.extend(native)
            if n >= len(messages) - tail:
                tail_items += len(native)
        return self.request(items, tail_items)
