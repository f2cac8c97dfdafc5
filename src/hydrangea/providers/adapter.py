"""The contract every gateway adapter fulfils.

An adapter owns every quirk of one provider: how a :class:`~hydrangea.message.Message` becomes
native items, which native items are acceptable, how SDK response objects are read, and how a
sequence of items becomes the keyword arguments of the SDK call. The :class:`Context` itself
knows none of this.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from hydrangea.gateway import GatewayType
from hydrangea.message import Message
from hydrangea.providers.native import NativeContent
from hydrangea.providers.pairing import CallSite, Pairing, ResultSite, pair_items

__all__ = ["ORPHAN_CALL_NOTICE", "Adapter", "CallIds"]

CallIds = Mapping[int, str]
"""Effective ids of an item's id-less tool calls, by slot (from :meth:`Pairing.ids`)."""

ORPHAN_CALL_NOTICE = "[no result was recorded for this tool call]"
"""The content of the error result the request builders add for a tool call that has none."""


class Adapter(ABC):
    """Conversion and validation for one gateway. Stateless; one shared instance per gateway."""

    gateway: ClassVar[GatewayType]
    history_key: ClassVar[str]
    """The request keyword that carries the conversation (``messages``, ``input``, ``contents``)."""
    pairs_by_name: ClassVar[bool] = False
    """Whether a tool result may name a call that has an id by its function name (Gemini)."""
    has_idless_calls: ClassVar[bool] = False
    """Whether this gateway's output can hold tool calls without an id (Gemini; Chat Completions
    from Gemini's OpenAI-compatible endpoint, ``"id": ""``): they read back with stable ids."""
    system_messages: bool = False
    """Whether a later system item may go as a mid-conversation system message, placed by the
    messages around it (Anthropic with ``Context(..., system_messages=True)``)."""

    @abstractmethod
    def from_message(self, message: Message) -> list[NativeContent]:
        """Convert ``message`` into one or more native items (not yet validated)."""

    @abstractmethod
    def from_output(self, output: object) -> list[NativeContent]:
        """Read model output: a native dict, a list of them, or the official SDK's response object.

        SDK types are recognised by duck typing or lazy imports only; this module never imports
        an SDK at import time. Reasoning state is kept byte-identical.
        """

    def from_pushed(self, output: list[Any] | dict[str, Any]) -> list[NativeContent]:
        """:meth:`from_output` then :meth:`canonical` of each item, for JSON the Context
        checked and copied itself (``push_back`` of a dict or a list); the items are the
        adapter's to keep. Built-in adapters skip what that copy already guarantees."""
        return [self.canonical(item) for item in self.from_output(output)]

    def canonical(self, item: NativeContent) -> NativeContent:
        """The one stored form of a provider item (the default: the item as it is).

        Applied to everything that is not built from a Message (``push_back``, ``extend``,
        loading), so the SDK object and the raw dict of one response store the same bytes.
        """
        return item

    @abstractmethod
    def validate(self, item: NativeContent) -> None:
        """Strict check of a caller-authored item (what :meth:`from_message` makes).

        Raise :class:`~hydrangea.errors.InvalidItemError` if the gateway cannot take ``item``.
        """

    @abstractmethod
    def check_output(self, item: NativeContent) -> None:
        """Lenient check of provider output (what ``push_back`` and loading store).

        Only the fields the library relies on are checked (role, the tool-pairing fields,
        reasoning fields), each with an ``isinstance`` check; block and item types it does not
        know are kept as they are. Raises :class:`~hydrangea.errors.InvalidItemError`
        (:class:`~hydrangea.errors.GatewayMismatchError` for another gateway's shape).
        """

    @abstractmethod
    def tool_sites(self, item: NativeContent) -> tuple[list[CallSite], list[ResultSite]]:
        """The client-side tool calls ``item`` makes and the tool results it carries, for the
        pairing engine (:mod:`hydrangea.providers.pairing`). Server-side tool pairs are left out."""

    def pairing(self, items: Sequence[NativeContent]) -> Pairing:
        """Which result answers which call in ``items`` (see :mod:`hydrangea.providers.pairing`)."""
        return pair_items(items, self.tool_sites, by_name=self.pairs_by_name)

    @abstractmethod
    def to_messages(self, item: NativeContent, ids: CallIds | None = None) -> list[Message]:
        """Read ``item`` back as generic Messages: text, tool calls, tool results.

        Parts with no generic equivalent (reasoning state, server-side tools, audio, ...) are
        left out; an item holding nothing else gives ``[]``. ``ids`` gives the stable ids of
        id-less calls (Gemini) by slot; :meth:`Context.messages` passes the ones the pairing
        engine assigned. Without it, such calls are numbered within the item.
        """

    def output_model(self, output: object) -> str | None:
        """The model that produced ``output`` (a response body or SDK object), if it says."""
        for key in ("model", "modelVersion", "model_version"):
            value = output.get(key) if isinstance(output, dict) else getattr(output, key, None)
            if isinstance(value, str) and value:
                return value
        return None

    def check_push(self, history: Sequence[NativeContent], output: object) -> None:
        """Raise if ``output`` cannot follow ``history`` (the Context's items) at all, before
        anything is read. The default accepts everything; the Responses adapter refuses a
        compacted window after a conversation
        (:class:`~hydrangea.errors.CompactionPlacementError`)."""
        return

    def for_other_model(self, item: NativeContent) -> NativeContent | None:
        """``item`` as sent to a model other than the one that produced it: reasoning state
        tied to its model removed or converted (see "Model switching" in the providers guide).
        ``None`` leaves the item out of the request. The default keeps the item unchanged."""
        return item

    def ends_open(self, segment: Sequence[NativeContent]) -> bool:
        """True if how the end of ``segment`` is sent depends on the items after it, so a
        request cache may not end a cached prefix there. The default is ``False``."""
        return False

    def binds_prefix(self, item: NativeContent) -> bool:
        """True if ``item`` carries reasoning the provider binds to the request that produced
        it: sent back after any change before it, it is rejected or silently dropped (see
        "Prefix binding" in the docs). Anthropic ``thinking`` / ``redacted_thinking`` blocks
        and OpenAI Responses ``reasoning`` items do; the default is ``False`` (Gemini binds a
        thought signature only to its own part, which the Context keeps byte-identical)."""
        return False

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
