"""Rendering a strategy's conversation into the request whose messages are counted.

Every strategy is measured on the same wire shape: OpenAI Chat Completions, as the library's own
adapter builds it (tool results as ``tool`` messages, orphan halves of tool pairs repaired).
Each request message is rendered as compact JSON, and the token counter is applied to that text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from hydrangea.context import NativeContent
from hydrangea.context.registry import adapter_for
from hydrangea.gateway import GatewayType
from hydrangea.message import Message

from .accounting import Request, RequestMessage
from .tokens import TokenCounter

__all__ = ["GATEWAY", "Renderer"]

GATEWAY = GatewayType.openai
"""The gateway every strategy's requests are built for."""


class Renderer:
    """Converts messages to native items (memoized) and builds counted requests."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self.adapter = adapter_for(GATEWAY)
        self._native: dict[int, tuple[Message, list[NativeContent]]] = {}

    def native(self, message: Message) -> list[NativeContent]:
        """The native items of ``message`` (the same list for the same message object)."""
        hit = self._native.get(id(message))
        if hit is None or hit[0] is not message:
            hit = (message, self.adapter.from_message(message))
            self._native[id(message)] = hit
        return hit[1]

    def text(self, item: object) -> str:
        """The rendered text of one request message."""
        return json.dumps(item, ensure_ascii=False, separators=(",", ":"))

    def tokens(self, message: Message) -> int:
        """Tokens of ``message`` rendered on its own."""
        return sum(self.counter.count(self.text(item)) for item in self.native(message))

    def request(self, items: Sequence[NativeContent]) -> Request:
        """The counted messages of the request the adapter builds for ``items``."""
        kwargs = self.adapter.build_request(items)
        messages = kwargs["messages"]
        out: list[RequestMessage] = []
        for message in messages:
            text = self.text(message)
            out.append(RequestMessage(text, self.counter.count(text)))
        return tuple(out)

    def request_of(self, messages: Sequence[Message]) -> Request:
        """The counted request for generic messages."""
        items: list[NativeContent] = []
        for message in messages:
            items.extend(self.native(message))
        return self.request(items)
