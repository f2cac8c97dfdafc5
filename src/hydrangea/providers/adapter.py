"""The contract every gateway adapter fulfils.

An adapter owns every quirk of one provider: how a :class:`~hydrangea.message.Message` becomes
native items, which native items are acceptable, how SDK response objects are read, and how a
sequence of items becomes the keyword arguments of the SDK call. The :class:`Context` itself
knows none of this.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, Protocol

from hydrangea.errors import ContextStateError, UnsupportedOptionError
from hydrangea.gateway import GatewayType
from hydrangea.message import Message
from hydrangea.providers.features import RequestFeature
from hydrangea.providers.native import NativeContent
from hydrangea.providers.pairing import CallSite, Pairing, ResultSite, pair_items

__all__ = [
    "ORPHAN_CALL_NOTICE",
    "Adapter",
    "CachePolicy",
    "CallIds",
    "PrefixTracker",
    "ToolSpec",
    "UniqueNames",
]

ToolSpec = tuple[str, str, Any]
"""A function tool as the providers declare it: name, description, JSON schema of the
arguments (a plain copy the SDK may change)."""

UniqueNames = Callable[[list[str | None], Iterable[Any]], None]
"""Refuses a tool name declared twice among its ``names`` or by an ``existing`` definition."""

CallIds = Mapping[int, str]
"""Effective ids of an item's id-less tool calls, by slot (from :meth:`Pairing.ids`)."""

ORPHAN_CALL_NOTICE = "[no result was recorded for this tool call]"
"""The content of the error result the request builders add for a tool call that has none."""


class CachePolicy(Protocol):
    """What the Context reads of a provider's prompt-cache settings (for example
    :class:`~hydrangea.providers.anthropic.AnthropicCaching`); the adapter reads the rest."""

    @property
    def enabled(self) -> bool: ...
    @property
    def model(self) -> str | None: ...


class PrefixTracker:
    """What a provider keeps beside a request cache's cached messages, updated as the cache
    takes messages in and cuts them off. This default keeps nothing; Anthropic keeps the
    messages' content blocks for its breakpoint placement
    (:class:`~hydrangea.providers.anthropic.blocks.PrefixBlocks`)."""

    __slots__ = ()

    @property
    def size(self) -> int:
        """How many units (Anthropic: content blocks) the tracked messages hold."""
        return 0

    def reset(self, messages: Sequence[object]) -> None:
        """The cached messages are now ``messages`` (the cache's own list)."""

    def cut(self, messages: int, size: int) -> None:
        """The cache kept its first ``messages`` messages (``size`` units)."""

    def add(self, index: int, message: object) -> None:
        """Message ``index`` was appended to the cached messages."""

    def view(
        self, built: dict[str, Any], messages_from: int, size: int
    ) -> tuple[Sequence[Any], tuple[int, ...]]:
        """What :meth:`Adapter.breakpoint_request` reads of the request ``built``, whose first
        ``messages_from`` messages (``size`` units) are the tracked ones: its units and the
        positions of the caller's own markers. The default tracks none."""
        return (), ()


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
    gen_ai_system: ClassVar[str]
    """The provider's name in the GenAI semantic conventions (``gen_ai.system``)."""
    merges_turns: ClassVar[bool] = False
    """Whether the builder merges consecutive items of one role into one turn (Gemini), so a
    request cache must judge a boundary with the item after it and may have to rebuild the
    cached last turn for a request whose tail merges into it."""
    places_breakpoints: ClassVar[bool] = False
    """Whether requests for the whole Context carry cache breakpoints the library places
    (Anthropic): the request cache then tracks the prefix for :meth:`breakpoint_request`, and
    may end its cached prefix at the request's last item (the builder merges nothing across
    items, so the items' own request is a prefix of every longer one's)."""

    # -- hooks of the request cache and the Context (defaults: no provider rule) ----------------

    def tool_declarations(self, tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
        """The value of the request's tools for function tools (name, description, JSON
        schema of the arguments), in this provider's shape. The default is Anthropic's."""
        return [
            {"name": name, "description": text, "input_schema": schema}
            for name, text, schema in tools
        ]

    def tool_name(self, definition: Mapping[str, Any]) -> str | None:
        """The name a tool definition of this provider declares."""
        name = definition.get("name")
        return name if isinstance(name, str) else None

    def add_tools(
        self, kwargs: dict[str, Any], definitions: list[dict[str, Any]], unique: UniqueNames
    ) -> None:
        """Add :meth:`tool_declarations`'s ``definitions`` to the request ``kwargs``, after
        the tools already there. ``unique(names, existing)`` refuses a name declared twice
        among ``names`` or already declared by an ``existing`` definition. The default
        appends to ``tools``."""
        existing = list(kwargs.get("tools") or ())
        unique([self.tool_name(d) for d in definitions], existing)
        kwargs["tools"] = [*existing, *definitions]

    def with_system_messages(self) -> Adapter:
        """This gateway's adapter sending later system items as mid-conversation system
        messages (``Context(..., system_messages=True)``). Only Anthropic has them."""
        raise ContextStateError(
            "system_messages is for Anthropic models that take mid-conversation system "
            f"messages; {self.gateway.value} sends a later system item in its own way"
        )

    def seam_anchor(self, before: Sequence[Any]) -> NativeContent:
        """A one-word item whose request is one turn, built in front of new items after the
        cached messages ``before`` so that nothing at their start is taken for the
        conversation's start (see :mod:`hydrangea.context.request_cache`). The default is a
        user message."""
        return {"role": "user", "content": "."}

    def open_after(self, item: NativeContent) -> bool:
        """True if a request cache may not end a cached prefix right after ``item`` because
        how it is sent depends on the item after it (Responses: a reasoning item)."""
        return False

    def build_counted(
        self,
        items: Sequence[NativeContent],
        pairing_of: Callable[[Sequence[NativeContent]], Pairing],
    ) -> dict[str, Any]:
        """:meth:`build_request` with the pairing of ``items`` taken from ``pairing_of`` (which
        carries the id-less call counts of a cached prefix on): for adapters that
        :attr:`pairs_by_name`."""
        raise NotImplementedError(f"{type(self).__name__} does not count id-less calls")

    def closes_turn(self, last: Any, following: NativeContent) -> bool:
        """Whether a cached prefix whose built messages end in ``last`` (``None``: none) may
        end before ``following``: always, unless the builder :attr:`merges_turns`."""
        return True

    def merges_with(self, item: NativeContent, following: NativeContent) -> bool:
        """True if ``following`` surely merges into the turn ``item`` is sent in, so that
        :meth:`closes_turn` would refuse a cached prefix ending at ``item`` (asked before
        that prefix is built; ``False`` when unsure). The default: never."""
        return False

    def prefix_tracker(self, messages: Sequence[object]) -> PrefixTracker:
        """What the request cache keeps beside its cached ``messages`` for this provider."""
        return PrefixTracker()

    def keep_memo(self, memo: dict[str, Any], messages: int, size: int) -> None:
        """A request cache cut its prefix back to its first ``messages`` messages (``size``
        units of :meth:`prefix_tracker`): leave in ``memo``, what :meth:`breakpoint_request`
        memoized of the prefix, only what still holds for the prefix kept. The default
        forgets it all."""
        memo.clear()

    def places_breakpoints_for(self, caching: CachePolicy | None) -> bool:
        """Whether a request for the whole Context with ``caching`` carries breakpoints the
        library places (the request cache then hands :meth:`breakpoint_request` its plan). The
        default: :attr:`places_breakpoints`, unless ``caching`` opts out. A policy made for
        another gateway (its ``gateway`` attribute) is refused."""
        owner = getattr(caching, "gateway", None)
        if owner is not None and owner is not self.gateway:
            raise UnsupportedOptionError(
                f"{type(caching).__name__} is for {owner.value} and this Context is for "
                f"{self.gateway.value}: use it with Context(GatewayType.{owner.name})",
                option=type(caching).__name__, gateway=self.gateway.value,
                model=caching.model if caching is not None else None,
            )
        return self.places_breakpoints and (caching is None or caching.enabled)

    def breakpoint_request(
        self,
        items: Sequence[NativeContent],
        *,
        caching: CachePolicy | None = None,
        **plan: Any,
    ) -> dict[str, Any]:
        """The request for ``items`` with the breakpoints this provider places (when it
        :meth:`places_breakpoints_for` ``caching``); ``plan`` is what the request cache knows
        of the prefix. The default builds the plain request."""
        self.places_breakpoints_for(caching)
        return self.build_request(items)

    def merge_option(self, built: Mapping[str, Any], key: str, value: object) -> object:
        """The value a caller's request option ``key`` takes in the request ``built``. The
        default is the caller's value; Anthropic puts a ``system`` option before the Context's
        system blocks, Gemini the Context's system parts into a ``config``."""
        return value

    @abstractmethod
    def from_message(self, message: Message) -> list[NativeContent]:
        """Convert ``message`` into one or more native items (not yet validated)."""

    def name_results(
        self, items: list[NativeContent], newest_first: Iterable[NativeContent]
    ) -> None:
        """Give each tool result of ``items`` (just made by :meth:`from_message`, changed in
        place) that does not name its tool its call's name, the call found by id among the
        items before them (``newest_first``, a few dozen looked at, at most). Only Gemini's
        results carry their call's name; the default changes nothing."""
        _ = items, newest_first

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

    def compaction_start(self, item: NativeContent) -> NativeContent | None:
        """If ``item`` (pushed output, as stored) holds a compaction the provider continues
        from (an Anthropic ``compaction`` block inside a reply, a Responses ``compaction``
        item), the item as later requests send it; the provider ignores what came before it,
        so those requests start there. ``None`` (the default): an ordinary item."""
        return None

    def native_compaction(self, threshold_tokens: int) -> RequestFeature | None:
        """The request option that has the provider compact the conversation on the server
        once its input reaches ``threshold_tokens`` (the compaction then comes inside a
        reply: :meth:`compaction_start`); ``None`` (the default): the provider has none, and
        :class:`~hydrangea.areas.CompactingConversation` compacts with the library's own."""
        return None

    def swapped_head(self, output: object) -> list[NativeContent] | None:
        """If ``output`` (pushed output: an SDK object or the checked JSON body) is the reply to
        a head-swap compaction request (Anthropic ``stop_reason: "compaction"``, a Responses
        ``response.compaction`` window), the native items that take the place of the history
        that request sent; ``None`` (the default): an ordinary reply."""
        return None

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
