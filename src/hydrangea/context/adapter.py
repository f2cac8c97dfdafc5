"""The contract every gateway adapter fulfils.

An adapter owns every quirk of one provider: how a :class:`~hydrangea.message.Message` becomes
native items, which native items are acceptable, how SDK response objects are read, and how a
sequence of items becomes the keyword arguments of the SDK call. The :class:`Context` itself
knows none of this.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from hydrangea.context.native import NativeContent
from hydrangea.gateway import GatewayType
from hydrangea.message import Message

__all__ = ["ORPHAN_CALL_NOTICE", "Adapter"]

ORPHAN_CALL_NOTICE = "[no result was recorded for this tool call]"
"""The content of the error result the request builders add for a tool call that has none."""


class Adapter(ABC):
    """Conversion and validation for one gateway. Stateless; one shared instance per gateway."""

    gateway: ClassVar[GatewayType]

    @abstractmethod
    def from_message(self, message: Message) -> list[NativeContent]:
        """Convert ``message`` into one or more native items (not yet validated)."""

    @abstractmethod
    def from_output(self, output: object) -> list[NativeContent]:
        """Read model output: a native dict, a list of them, or the official SDK's response object.

        SDK types are recognised by duck typing or lazy imports only; this module never imports
        an SDK at import time. Reasoning state is kept byte-identical.
        """

    @abstractmethod
    def validate(self, item: NativeContent) -> None:
        """Raise :class:`~hydrangea.errors.InvalidItemError` if the gateway cannot take ``item``."""

    @abstractmethod
    def build_request(self, items: Sequence[NativeContent]) -> dict[str, Any]:
        """The keyword arguments of the SDK call for ``items`` (model and options excluded).

        Deterministic: the same items give equal output. Orphan tool calls get an error result
        reading :data:`ORPHAN_CALL_NOTICE`; orphan tool results are turned into plain text, so
        the request never holds half a tool pair.
        """

    @abstractmethod
    def opens_exchange(self, item: NativeContent) -> bool:
        """True if ``item`` must stay directly before the item that follows it.

        That is a tool call (it asks for results in the next items) and, for the OpenAI
        Responses API, a ``reasoning`` item (it must be followed by the item it led to). Nothing
        may be inserted right after such an item; placement uses this to keep overlays out of a
        tool exchange.
        """

    @abstractmethod
    def closes_exchange(self, item: NativeContent) -> bool:
        """True if ``item`` answers a tool call made by an earlier item (a tool result).

        Nothing may be inserted right before such an item.
        """

    def item_text(self, item: NativeContent) -> str:
        """The human-readable text of an item, for token counting and summaries."""
        chunks: list[str] = []
        _collect_text(item, chunks)
        return "\n".join(chunks)


_TEXT_KEYS = frozenset({"text", "content", "output", "arguments", "refusal"})


def _collect_text(value: object, out: list[str], key: str | None = None) -> None:
    if isinstance(value, str):
        if key in _TEXT_KEYS:
            out.append(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            if k in {"signature", "encrypted_content", "thought_signature", "data"}:
                continue
            _collect_text(v, out, k)
    elif isinstance(value, list):
        for v in value:
            _collect_text(v, out, key)
