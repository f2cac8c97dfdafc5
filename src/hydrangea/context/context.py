"""Context: the append-only sequence of provider-native items sent to one gateway."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import chain
from pathlib import Path
from typing import Any, overload

from hydrangea import _spans
from hydrangea._saved import check_format, read_text_checked, write_text_atomic
from hydrangea.context._binding import BindingGuard, BrokenReasoning, head_of
from hydrangea.context._compose import compose_request
from hydrangea.context.boundary import CompactionBoundary, Wire, remap
from hydrangea.context.readback import ReplyRoute, StableIds, for_model, messages_of, reply_of
from hydrangea.context.request_cache import RequestCache
from hydrangea.context.view import ContextView
from hydrangea.errors import (
    CompactionError,
    ContextStateError,
    InvalidItemError,
    InvalidMessageError,
    NonFiniteNumberError,
    SerializationError,
    UnencodableTextError,
)
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role
from hydrangea.providers import _json
from hydrangea.providers.adapter import Adapter, CachePolicy
from hydrangea.providers.features import RequestFeature, add_options, checked_options
from hydrangea.providers.native import (
    NativeContent,
    check_json,
    clone_sorted,
    copy_json,
    copy_json_value,
)
from hydrangea.providers.registry import adapter_for
from hydrangea.providers.streams import assemble
from hydrangea.providers.usage import UsageLog, usage_of

__all__ = ["Context"]

_log = logging.getLogger(__name__)

_FORMAT = "hydrangea.context"

_NOT_MESSAGES = (Message, str, bytes, dict)
"""What emplace_messages refuses as a whole (a tuple: a union is built at each evaluation)."""


class _Sized(Sequence[NativeContent]):
    """Stands for the request's items where only their count is read."""

    __slots__ = ("_n",)

    def __init__(self, n: int) -> None:
        self._n = n

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> NativeContent: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[NativeContent]: ...
    def __getitem__(self, index: int | slice) -> NativeContent | Sequence[NativeContent]:
        raise TypeError("the request's items are not held here")
_VERSION = 1


class Context(Sequence[NativeContent]):
    """An append-only list of native items for one gateway.

    Items enter through :meth:`emplace_message` (a generic :class:`~hydrangea.message.Message`,
    converted by the gateway's adapter and checked strictly) or :meth:`push_back` (model output,
    as a native dict or the official SDK's response object, kept as the provider sent it and
    checked only where the library relies on it). Every append is checked first and is all or
    nothing. Each item remembers the model that produced it (:meth:`model_of`).
    Reading is by ``len()``, index, iteration and slicing (a slice is an immutable tuple).
    Only the collector removes items, and only from the tail (:meth:`detach_tail`).

    Reading hands out the stored items themselves (no copy, so reading stays cheap): like the
    sequence an area's ``observe()`` receives, they must be treated as read-only. Mutating one
    in place would change the cached prefix and every snapshot that shares it.

    **What was sent is history.** Every request begins with exactly what the previous request
    sent, followed by the model's output; only the collector's tail cut removes items, and it
    takes every later reasoning block with it. The providers bind a reply's reasoning to the
    request that produced it, so the Context notes, for each pushed reply that carries such
    reasoning, whether that request is what the history holds in front of it, and refuses to
    build a request that would send it under a changed prefix or with changed instructions or
    tools (:class:`~hydrangea.errors.PrefixBindingError`, before anything is sent). With
    ``broken_reasoning="drop"`` such reasoning is left out instead, consistently.

    Anthropic: ``system_messages=True``, for models that take mid-conversation system messages,
    sends a system item after the first non-system one as a ``role: "system"`` message where
    the API allows one (right after a user message, last or before the reply), and as
    ``"[system] ..."`` user text elsewhere; without it, always as that text.
    """

    __slots__ = (
        "_adapter",
        "_binding",
        "_detach_starts",
        "_gateway",
        "_ids",
        "_ids_seen",
        "_items",
        "_model_names",
        "_models",
        "_models_seen",
        "_requests",
        "_sent",
        "_usage",
        "_wire",
    )

    def __init__(
        self,
        gateway: GatewayType,
        items: Iterable[NativeContent] = (),
        *,
        broken_reasoning: BrokenReasoning = "error",
        system_messages: bool = False,
    ) -> None:
        self._gateway = GatewayType(gateway)
        self._adapter = adapter_for(self._gateway)
        if system_messages:
            self._adapter = self._adapter.with_system_messages()
        self._binding = BindingGuard(self._adapter, broken_reasoning)
        self._items: list[NativeContent] = []
        self._models: list[str | None] = []
        self._detach_starts: list[int] = []
        self._usage = UsageLog()
        self._requests = RequestCache(self._adapter)
        self._ids = StableIds(self._adapter)  # Gemini's stable call ids, counted once per item
        self._ids_seen = 0  # the detach count the tally has caught up with
        self._sent = 0
        self._model_names: set[str] = set()
        self._models_seen = 0  # how many leading entries of _models _model_names took in
        self._wire = Wire(self._items)
        self.extend(items)
        self._sent = len(self._items)  # what a Context starts from is history

    # -- reading -----------------------------------------------------------------------------

    @property
    def gateway(self) -> GatewayType:
        """The gateway whose wire shape the items have."""
        return self._gateway

    @property
    def adapter(self) -> Adapter:
        """The gateway's adapter (conversion, validation, request building)."""
        return self._adapter

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> NativeContent: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[NativeContent, ...]: ...
    def __getitem__(self, index: int | slice) -> NativeContent | tuple[NativeContent, ...]:
        if isinstance(index, slice):
            return tuple(self._items[index])
        return self._items[index]

    def __iter__(self) -> Iterator[NativeContent]:
        return iter(tuple(self._items))

    def view(self, start: int, stop: int) -> ContextView:
        """A read-only window on items ``[start, stop)``, made in O(1) (see ContextView)."""
        return ContextView(self._items, start, stop, self._detach_count)

    @property
    def usage(self) -> UsageLog:
        """The token usage of every response pushed with :meth:`push_back` (not saved)."""
        return self._usage

    def _detach_count(self) -> int:
        return len(self._detach_starts)

    @property
    def detaches(self) -> int:
        """How many times items were detached from the tail (detaches of nothing not counted)."""
        return len(self._detach_starts)

    def detached_from(self, since: int) -> int | None:
        """The lowest index detached after the first ``since`` detaches, or ``None`` if none was.

        Lets an observer that remembered :attr:`detaches` learn, in O(detaches since), from where
        the items it had seen may have changed; everything before that index is untouched.
        """
        later = self._detach_starts[since:]
        return min(later) if later else None

    @property
    def sent(self) -> int:
        """How many leading items a built request or a pushed reply already covers.

        Those items are history in the providers' sense: a reply's reasoning is bound to them
        (see "Prefix binding" in the docs), so nothing may ever be placed in front of them. Items
        from ``sent`` on were never in a request; only a detach lowers it.
        """
        return self._sent

    def _mark_sent(self, length: int) -> None:
        self._sent = max(self._sent, length)

    def move_unsent(self, start: int, items: Sequence[NativeContent]) -> None:
        """Insert ``items`` (checked as :meth:`extend` checks) at ``start``, in front of items no
        request has covered yet (``start >= sent``); all or nothing.

        For a lifecycle's ``before`` components. It is a detach of ``[start:]`` followed by
        the append of ``items`` and the detached items (each keeping the model that produced
        it), so every observer of detaches (request caches, history logs) stays exact.
        """
        if not self._sent <= start <= len(self._items):
            raise ContextStateError(
                f"items can only be placed among the unsent ones (index {self._sent} to "
                f"{len(self._items)}), not at {start}: what a request or reply covered is history"
            )
        staged = self._staged_output(items)
        models = self._models[start:]
        moved = self.detach_tail(start)
        self._append(staged, None)
        self._items.extend(moved)
        self._models.extend(models)
        self._wire.appended(moved)

    def __repr__(self) -> str:
        return f"Context({self._gateway.value!r}, {len(self._items)} items)"

    # -- appending ---------------------------------------------------------------------------

    def emplace_message(self, message: Message) -> None:
        """Convert ``message`` through the gateway's adapter and append the result."""
        self.emplace_messages((message,))

    def emplace_messages(self, messages: Iterable[Message]) -> None:
        """Convert and append several messages, all or nothing.

        Anything that is not a :class:`~hydrangea.message.Message` (a dict, a string ...) raises
        :class:`~hydrangea.errors.InvalidMessageError` (a ``TypeError``); build the Message
        first, or append a native item with :meth:`push_back`.
        """
        if isinstance(messages, _NOT_MESSAGES):
            raise InvalidMessageError(
                "emplace_messages takes an iterable of Message objects, got a single "
                f"{type(messages).__name__}"
            )
        converted: list[NativeContent] = []
        adapter = self._adapter
        for index, message in enumerate(messages):
            if not isinstance(message, Message):
                raise InvalidMessageError(
                    f"message {index}: expected a hydrangea Message, got "
                    f"{type(message).__name__} (use Message(role=..., content=...), or "
                    "push_back() for a provider-native dict)"
                )
            items = adapter.from_message(message)
            if message.role is Role.user and not isinstance(message.content, str):
                # (Gemini: results named after their calls)
                adapter.name_results(items, chain(reversed(converted), reversed(self._items)))
            converted.extend(items)
        staged = []
        for item in converted:
            copied = copy_json(item, sort_keys=True)
            self._adapter.validate(copied)
            staged.append(copied)
        self._append(staged, None)

    def push_back(
        self, item: object, *, model: str | None = None, route: ReplyRoute | None = None
    ) -> None:
        """Append model output: a native dict, a list of them, or an official SDK response.

        What the provider sent is kept as it sent it, known block type or not; reasoning state
        (thinking signatures, encrypted reasoning, thought signatures) is byte-identical.
        ``model`` records the model that produced it (default: the model the response names);
        see :meth:`request`. ``route`` (an area, or anything with ``route(reply)``) receives the
        output read back as one assistant :class:`~hydrangea.message.Message`
        (:meth:`messages`), so the Context and the area hold the same reply. All or nothing: if
        ``route`` raises, the items are taken out again and the exception propagates. The usage
        the response reports (tokens in and out, cache reads and writes) is recorded in
        :attr:`usage`.

        Raw JSON (a dict or a list) is checked by :func:`~hydrangea.providers.native.copy_json`'s
        walk before the adapter reads it, so an adapter never meets nesting past
        :data:`~hydrangea.providers.native.MAX_DEPTH`, a non-JSON value or unencodable text.
        """
        if isinstance(item, dict | list):  # checked and copied once: what is read out is ours
            body: list[Any] | dict[str, Any] = copy_json_value(item, "the pushed output")
            if self._wire.pending is not None and self._swap(body):
                return
            self._adapter.check_push(self._items, body)
            staged = self._staged_pushed(self._adapter.from_pushed(body))
            item = body
        else:
            if self._wire.pending is not None and self._swap(item):
                return
            self._adapter.check_push(self._items, item)
            staged = self._staged_output(self._adapter.from_output(item))
        produced_by = model if model is not None else self._adapter.output_model(item)
        reported = usage_of(self._gateway, item)
        start = len(self._items)
        self._append(staged, produced_by)
        if route is not None:
            try:
                route.route(reply_of(self._messages(start)))
            except BaseException:
                del self._items[start:]
                del self._models[start:]
                self._ids.truncate(start)
                raise
        self._mark_sent(len(self._items))
        self._binding.pushed(self._wire.sent, self._wire.to_wire(start))
        if reported is not None:
            self._usage.record(reported, start)
        head = self._adapter.swapped_head(item)
        if head is None:
            self._find_boundaries(start)
        else:  # a compaction reply no request of ours asked for: requests start with it
            old = self._wire.boundary
            summary = tuple(self._staged_output(head))
            self._wire.add(CompactionBoundary(
                "in_reply", len(self._items), summary, start, self._system_lead(start, summary)
            ))
            self._rebased(old)

    def push_compaction(self, output: object) -> None:
        """Swap in the reply to the pending head-swap compaction request.

        The request was built with a compaction feature whose ``swaps_head`` is true (Anthropic
        on-demand compaction, OpenAI ``/responses/compact``); the Context noted how many items
        it sent. Its summary now takes the place of exactly those items in every later request;
        every item appended since stays after it, and the compacted items stay readable here
        (:attr:`compactions`). :meth:`push_back` does the same when handed such a reply while
        the request is pending.

        A reply without a summary (any other ``stop_reason``) raises
        :class:`~hydrangea.errors.CompactionError`: the history is kept whole and the request
        is no longer pending (send a new one, or go on without). So does a call with no
        compaction request pending.
        """
        if self._wire.pending is None:
            raise CompactionError(
                "no compaction request is pending: build one with request(features=[...]) "
                "naming the provider's compaction request, send it, then push its reply"
            )
        body = copy_json_value(output, "the compaction reply") if isinstance(
            output, dict | list
        ) else output
        if not self._swap(body):
            self._wire.pending = None
            raise CompactionError(
                "the compaction request came back without a summary (the provider's reply is "
                "not a compaction): the history is kept whole; send a new compaction request "
                "or go on without one"
            )

    @property
    def compactions(self) -> tuple[CompactionBoundary, ...]:
        """The provider compactions this Context continues across, oldest first; requests
        start at the last one (see :mod:`hydrangea.context.boundary`). The items a compaction
        left out of requests stay in the Context under their indices."""
        return tuple(self._wire.boundaries)

    @property
    def compaction_pending(self) -> bool:
        """Whether a head-swap compaction request was built and its reply not pushed yet."""
        return self._wire.pending is not None

    def _swap(self, output: object) -> bool:
        """Swap the pending compaction's summary in if ``output`` is one (``False``: it is
        not). All or nothing."""
        head = self._adapter.swapped_head(output)
        if head is None:
            return False
        covered = self._wire.pending
        assert covered is not None
        current = self._wire.boundary
        if current is not None and covered < current.start:
            self._wire.pending = None
            raise CompactionError(
                f"the compaction request covered the first {covered} items, but a later "
                f"compaction already starts requests at item {current.start}: its summary "
                "is out of date and was not swapped in"
            )
        staged = self._staged_output(head)
        reported = usage_of(self._gateway, output)
        self._wire.pending = None
        self._wire.add(CompactionBoundary(
            "swap", covered, tuple(staged), None, self._system_lead(covered, staged)
        ))
        self._rebased(current)
        if reported is not None:
            self._usage.record(reported, len(self._items))
        _log.debug("swapped a compaction summary in for the first %d items", covered)
        return True

    def _find_boundaries(self, start: int) -> None:
        """Note the compactions inside the items appended from ``start`` on."""
        adapter = self._adapter
        for index in range(start, len(self._items)):
            item = self._items[index]
            form = adapter.compaction_start(item)
            if form is None:
                continue
            lead = self._system_lead(index)
            if form is item or form == item:
                boundary = CompactionBoundary("in_reply", index, (), index, lead)
            else:
                boundary = CompactionBoundary("in_reply", index + 1, (form,), index, lead)
            old = self._wire.boundary
            self._wire.add(boundary)
            self._rebased(old)

    def _system_lead(self, limit: int, head: Sequence[NativeContent] = ()) -> int:
        """How many of the first ``limit`` items are the Context's leading system items, sent
        on after a compaction (it summarizes the conversation, not the system prompt); none
        when the compaction's ``head`` already begins with them."""
        items = self._items
        lead = 0
        while lead < limit and items[lead].get("role") in ("system", "developer"):
            lead += 1
        if lead and len(head) >= lead and all(
            _bare(head[i]) == _bare(items[i]) for i in range(lead)
        ):
            return 0
        return lead

    def _rebased(self, old: CompactionBoundary | None) -> None:
        """Requests start somewhere else than after ``old``: the guard's notes follow the
        items into the new sent form, the request cache starts over."""
        self._binding.rebase(remap(old, self._wire.boundary))
        self._requests = RequestCache(self._adapter)
        self._requests.sync(None, self.detaches)

    def push_stream(
        self,
        events: Iterable[object],
        *,
        model: str | None = None,
        route: ReplyRoute | None = None,
    ) -> None:
        """Append a complete streamed response: its raw events or chunks, in the order they came.

        Stores exactly the item the same response would give unstreamed (see
        :mod:`hydrangea.providers.streams`); ``model`` and ``route`` as in :meth:`push_back`. A
        partial or out-of-order stream raises :class:`~hydrangea.errors.IncompleteStreamError`
        and nothing is appended.
        """
        self.push_back(assemble(self._gateway, events), model=model, route=route)

    def extend(self, items: Iterable[NativeContent]) -> None:
        """Append native items (provider output or saved items); all or nothing.

        Each item is copied in one walk that checks its JSON shape (string keys, finite
        numbers, JSON types only, nesting at most :data:`~hydrangea.providers.native.MAX_DEPTH`
        deep) and its text (no lone surrogate: :class:`~hydrangea.errors.UnencodableTextError`),
        then put in the gateway's canonical form and checked as model output is
        (:meth:`Adapter.check_output`); use :meth:`emplace_message` for what you author.
        """
        self._append(self._staged_output(items), None)

    def _staged_output(self, items: Iterable[NativeContent]) -> list[NativeContent]:
        """Items checked, canonical and key-sorted, independent of the caller."""
        staged: list[NativeContent] = []
        for index, item in enumerate(items):
            own = copy_json(item, f"native item {index}")
            copied = copy_json(self._adapter.canonical(own), sort_keys=True)
            self._adapter.check_output(copied)
            staged.append(copied)
        return staged

    def _staged_pushed(self, items: list[NativeContent]) -> list[NativeContent]:
        """:meth:`_staged_output` of what ``Adapter.from_pushed`` read out of JSON this Context
        checked and copied itself: canonical already, so only key-sorted (a fresh tree) and
        checked as output."""
        staged: list[NativeContent] = []
        for index, item in enumerate(items):
            if type(item) is dict:
                copied = clone_sorted(item)
            else:
                copied = copy_json(item, f"native item {index}", sort_keys=True)
            self._adapter.check_output(copied)
            staged.append(copied)
        return staged

    def _append(self, staged: list[NativeContent], model: str | None) -> None:
        self._items.extend(staged)
        self._models.extend([model] * len(staged))
        self._wire.appended(staged)

    def model_of(self, index: int) -> str | None:
        """The model that produced item ``index`` (``None`` when not known: caller-authored
        items, or output pushed without a model name)."""
        return self._models[index]

    def messages(self, start: int = 0) -> list[Message]:
        """Items ``start`` onward read back as generic Messages (see ``Adapter.to_messages``).

        Id-less tool calls carry the stable id the pairing engine gives them over the whole
        history (``"<function name>#<n>"``); a ``ToolResultPart`` with that id answers that call.
        """
        return self._messages(start)

    def _messages(self, start: int) -> list[Message]:
        if not (self._adapter.pairs_by_name or self._adapter.has_idless_calls):
            return messages_of(self._adapter, self._items, start)
        detached = self.detached_from(self._ids_seen)
        self._ids_seen = self.detaches
        if detached is not None:
            self._ids.truncate(detached)
        return messages_of(self._adapter, self._items, start, self._ids)

    def detach_tail(self, start: int) -> tuple[NativeContent, ...]:
        """Remove and return the items from ``start`` to the end. Reserved for the collector."""
        if not 0 <= start <= len(self._items):
            raise IndexError(f"detach start {start} is outside 0..{len(self._items)}")
        detached = tuple(self._items[start:])
        if detached:
            wire = self._wire
            kept = wire.boundary
            at = wire.to_wire(start) if wire.covers(start) else len(kept.head) if kept else 0
            del self._items[start:]
            del self._models[start:]
            self._detach_starts.append(start)
            self._sent = min(self._sent, start)
            self._models_seen = min(self._models_seen, start)
            if wire.detached(start):  # (the latest compaction went with the items)
                self._binding.detached(at)
                self._rebased(kept)
            else:
                self._binding.detached(at)
                if wire.sent is not self._items:  # (the cache follows the sent form)
                    self._requests.sync(wire.to_wire(start), self.detaches)
        _log.debug("detached %d items from index %d", len(detached), start)
        return detached

    # -- requests ----------------------------------------------------------------------------

    @_spans.context_request
    def request(
        self,
        items: Sequence[NativeContent] | None = None,
        *,
        model: str | None = None,
        caching: CachePolicy | None = None,
        features: Sequence[RequestFeature] = (),
        **options: Any,
    ) -> dict[str, Any]:
        """Keyword arguments for the gateway's SDK call.

        ``items`` defaults to the whole Context; lifecycles pass the history plus their overlay.
        On Anthropic, the request for the whole Context carries cache breakpoints (see
        :mod:`hydrangea.providers.anthropic.caching`; ``caching`` sets them or opts out); for other
        ``items`` the stable part is unknown and none are placed.

        With ``model``, the request is for that model: it is included as ``model``, and items
        another model produced lose the reasoning state tied to that model
        (:meth:`Adapter.for_other_model`; "Model switching" in the providers guide). Any other
        keyword (``config=``, ``system=``, ``tools=``, ``max_tokens=`` ...) is merged in
        (:mod:`hydrangea.context._compose`), so the result goes to the SDK call as it is.

        ``features`` are typed provider options (context editing, server compaction, explicit
        caching: :mod:`hydrangea.providers.features`), each checked against the gateway and
        ``model`` before anything is built, then merged in.
        """
        asked = checked_options(features, self._gateway, model)  # (first: a refusal
        swaps = any(feature.swaps_head for feature in features)  # changes nothing)
        if swaps:
            self._check_compaction_request(items)
        places = self._adapter.places_breakpoints_for(caching)  # (before anything changes)
        wire = self._wire
        # (nothing here came from another model: the usual request)
        same = model is not None and self._produced_models() <= {model}
        other = None if same else model
        source: Sequence[NativeContent] = wire.sent if items is None else wire.sent_form(items)
        head = head_of(options)
        dropping = other is None and self._binding.check(wire.sent, len(source), head)
        if items is None:
            self._mark_sent(len(self._items))  # (after the check: a refusal changes nothing)
        if dropping:
            source = self._as_sent(source)
        if other is not None:
            produced = {
                id(item): made
                for item, made in zip(self._items, self._models, strict=True)
                if made is not None
            }
            if produced:
                source = for_model(self._adapter, source, produced, other)
        if dropping:  # (rare: built from scratch, the dropped reasoning left out)
            built = self._adapter.breakpoint_request(source, caching=caching)
        elif items is None and other is None:
            built = self._incremental(
                len(wire.sent), (), (), caching, places, overlay=(), cuts=()
            )
        elif items is None:
            built = self._adapter.breakpoint_request(source, caching=caching)
        else:
            built = self._adapter.build_request(source)
        if swaps:
            wire.pending = len(self._items)  # (a side request: no reply will be bound to it)
        elif other is not None:
            self._binding.built_elsewhere()
        elif items is None:
            self._binding.built(len(wire.sent), (), head)
        else:
            self._binding.built(0, tuple(source), head)
        kwargs = compose_request(self._adapter, built, options)
        add_options(kwargs, asked, model)
        return kwargs

    def _check_compaction_request(self, items: Sequence[NativeContent] | None) -> None:
        if items is not None:
            raise ContextStateError(
                "a compaction request is built for the whole Context (items=None): its summary "
                "takes the place of exactly what it sent"
            )
        if self._wire.pending is not None:
            raise CompactionError(
                f"a compaction request for the first {self._wire.pending} items is pending: "
                "push its reply (push_compaction) before starting another"
            )

    def _produced_models(self) -> set[str]:
        """The models that produced this Context's items, or some detached since (kept up to
        date in O(new items); a model it names that no item has left only costs a request
        built from scratch)."""
        models = self._model_names
        models.update(m for m in self._models[self._models_seen :] if m is not None)
        self._models_seen = len(self._models)
        return models

    def build_incremental(
        self,
        stable: int,
        tail: Sequence[NativeContent],
        *,
        earlier: Sequence[int] = (),
        caching: CachePolicy | None = None,
        overlay: Sequence[int] = (),
        cuts: Sequence[int] = (),
    ) -> dict[str, Any]:
        """The builder's request for the first ``stable`` items followed by ``tail``.

        Built from this Context's request cache (:mod:`hydrangea.context.request_cache`): the
        cost is the items since the last closed prefix plus ``tail``, not the history. On
        Anthropic, breakpoints are placed (``stable`` is the stable history, ``earlier`` the
        previous requests' ones, ``cuts`` where a later collection may cut the history)
        unless ``caching`` opts out. The top-level dict and lists are the caller's (a history
        list nothing references any more and nobody changed is brought up to date for a later
        request instead of copied: :mod:`hydrangea.providers._lent`); the message dicts are
        shared with other requests (read-only). ``tail`` may start with runs of
        ``overlay[0]``, ``overlay[1]`` ... items that later requests repeat (a lifecycle's
        components: the same objects, never mutated); their messages are kept between
        requests while they stay the same. Requests of one Context built from several
        threads are built one after the other (the cache is one structure).
        """
        if not 0 <= stable <= len(self._items):
            raise IndexError(f"stable {stable} is outside 0..{len(self._items)}")
        wire = self._wire
        if not wire.covers(stable):
            raise ContextStateError(
                f"a request of the first {stable} items would start before the provider "
                f"compaction at item {wire.boundary.start if wire.boundary else 0}: what it "
                "compacted is no longer sent; build requests of the history since"
            )
        places = self._adapter.places_breakpoints_for(caching)  # (before anything changes)
        sent = wire.to_wire(stable)
        dropping = self._binding.check(wire.sent, sent + len(tail), None)
        self._mark_sent(stable)
        self._binding.built(sent, tuple(tail) if tail else (), None)
        if dropping:
            source = [*self._as_sent(wire.sent[:sent]), *tail]
            return self._adapter.breakpoint_request(source, caching=caching)
        if wire.sent is not self._items:  # (counts of items before the compaction: gone)
            earlier = [wire.to_wire(n) for n in earlier if wire.covers(n)]
            cuts = [wire.to_wire(n) for n in cuts if wire.covers(n)]
        return self._incremental(
            sent, tail, earlier, caching, places, overlay=overlay, cuts=cuts
        )

    def _incremental(
        self,
        stable: int,
        tail: Sequence[NativeContent],
        earlier: Sequence[int],
        caching: CachePolicy | None,
        places: bool,
        *,
        overlay: Sequence[int],
        cuts: Sequence[int],
    ) -> dict[str, Any]:
        """The request cache's request for the sent form's first ``stable`` items and
        ``tail`` (counts in the sent form: :mod:`hydrangea.context.boundary`), with the
        breakpoints ``caching`` places when ``places`` (the adapter's
        ``places_breakpoints_for(caching)``)."""
        source = self._wire.sent
        cache = self._requests
        with cache.lock:
            if source is self._items:
                cache.sync(self.detached_from(cache.seen), self.detaches)
            if not places:
                return cache.hand_out(cache.build(source, stable, tail, overlay))
            built, blocks, kept = cache.build_with_blocks(source, stable, tail, overlay)
            return cache.hand_out(self._adapter.breakpoint_request(
                _Sized(stable + len(tail)), stable_items=stable,
                earlier_items=earlier, caching=caching, built=built, blocks=(blocks, kept),
                memo=cache.memo, cut_items=cuts,
                shared_of=lambda boundary: cache.shared_messages(source, boundary, built),
            ))

    def _as_sent(self, source: Sequence[NativeContent]) -> list[NativeContent]:
        """``source`` as requests send it under the drop policy: the Context's own items whose
        reasoning is bound to a changed prefix without that reasoning (what the providers' own
        drop mode would leave out), consistently in every later request."""
        out: list[NativeContent] = []
        items = self._wire.sent
        for index, item in enumerate(source):
            if index < len(items) and item is items[index]:
                sent = self._binding.sent_form(index, item)
                if sent is not None:
                    out.append(sent)
            else:
                out.append(item)
        return out

    # -- persistence -------------------------------------------------------------------------

    def to_json(self) -> str:
        """Serialize to JSON; :meth:`from_json` of the result gives an identical Context.

        The text is always the standard library's ``json.dumps(..., ensure_ascii=False,
        separators=(",", ":"))``; with the ``fast-json`` extra orjson writes the same bytes faster.
        The models that produced items are saved beside them (``"models"``, by index).
        """
        document: dict[str, Any] = {
            "format": _FORMAT,
            "version": _VERSION,
            "gateway": self._gateway.value,
            "items": self._items,
        }
        models = {str(i): made for i, made in enumerate(self._models) if made is not None}
        if models:
            document["models"] = models
        if self._adapter.system_messages:
            document["system_messages"] = True
        document.update(self.compaction_state())

        return _json.dumps(document)

    @classmethod
    def from_json(cls, text: str) -> Context:
        """Read a Context written by :meth:`to_json`; items are validated as on append."""
        if not isinstance(text, str):
            raise SerializationError(f"a saved Context is JSON text, got {type(text).__name__}")
        try:
            document = _json.loads(text)
        except NonFiniteNumberError as exc:
            raise SerializationError(f"saved Context holds an invalid item: {exc}") from exc
        except ValueError as exc:  # json.JSONDecodeError
            raise SerializationError(f"not a saved Context: invalid JSON ({exc})") from exc
        except RecursionError as exc:  # the C parser's own bound, far past MAX_DEPTH
            raise SerializationError("not a saved Context: JSON nested too deeply") from exc
        document = check_format(document, _FORMAT, _VERSION, "a saved Context")
        try:
            gateway = GatewayType(document["gateway"])
        except (KeyError, ValueError) as exc:
            raise SerializationError(f"saved Context has no valid gateway: {exc}") from exc
        items = document.get("items")
        if not isinstance(items, list):
            raise SerializationError("saved Context has no 'items' list")
        models = document.get("models", {})
        if not isinstance(models, dict) or not all(
            isinstance(made, str) and key.isdigit() and int(key) < len(items)
            for key, made in models.items()
        ):
            raise SerializationError("saved Context has an invalid 'models' table")
        system_messages = document.get("system_messages", False)
        if system_messages is not True and system_messages is not False:
            raise SerializationError(
                f"saved Context has an invalid 'system_messages' flag: {system_messages!r}"
            )
        try:
            context = cls._from_parsed(gateway, items, system_messages)
        except (InvalidItemError, UnencodableTextError) as exc:
            raise SerializationError(f"saved Context holds an invalid item: {exc}") from exc
        for key, made in models.items():
            context._models[int(key)] = made
        context.restore_compactions(document)
        return context

    def compaction_state(self) -> dict[str, Any]:
        """What :attr:`compactions` and :attr:`compaction_pending` hold (the boundaries, the
        pending request), as JSON values: empty when there is none. Boundaries are found in
        pushed replies only, never in items given to :meth:`extend` or read from a file.
        A saved Context carries it; so do the stores."""
        state: dict[str, Any] = {}
        saved = [b.saved() for b in self._wire.boundaries]
        if saved:
            state["compactions"] = saved
        if self._wire.pending is not None:
            state["compaction_pending"] = self._wire.pending
        return state

    def restore_compactions(self, state: Mapping[str, Any]) -> None:
        """Take :meth:`compaction_state` back (into a Context rebuilt from the same items);
        :class:`~hydrangea.errors.SerializationError` if it does not fit them."""
        if not isinstance(state, Mapping):
            raise SerializationError(f"saved compactions are not an object: {state!r}")
        self._restore_swaps(state.get("compactions", []), state.get("compaction_pending"))

    def _restore_swaps(self, saved: object, pending: object) -> None:
        """Put the saved boundaries back, in order."""
        if not isinstance(saved, list):
            raise SerializationError("saved Context has an invalid 'compactions' list")
        if pending is not None and not (
            type(pending) is int and 0 <= pending <= len(self._items)
        ):
            raise SerializationError(
                f"saved Context has an invalid 'compaction_pending': {pending!r}"
            )
        restored = [
            CompactionBoundary.from_saved(
                entry, len(self._items), self._staged_output, f"saved compaction {n}"
            )
            for n, entry in enumerate(saved)
        ]
        if restored:
            self._wire.boundaries.extend(restored[:-1])
            self._wire.add(restored[-1])
        self._wire.pending = pending if isinstance(pending, int) else None

    @classmethod
    def _from_parsed(
        cls, gateway: GatewayType, items: list[Any], system_messages: bool = False
    ) -> Context:
        """A Context that takes ownership of ``items``, freshly parsed JSON nobody else holds.

        Checked as :meth:`extend` checks, without its defensive copy: parsed JSON is
        already plain JSON values (finite numbers: the parser refused the others) and shared
        with no caller. :func:`~hydrangea.providers.native.check_json` still walks each item,
        because parsed JSON can hold lone surrogates (``"\\ud800"``) and deep nesting.
        """
        context = cls(gateway, system_messages=system_messages)
        adapter = context._adapter
        for index, parsed in enumerate(items):
            check_json(parsed, f"native item {index}")
            items[index] = canonical = adapter.canonical(parsed)
            adapter.check_output(canonical)
        context._items = items
        context._models = [None] * len(items)
        context._sent = len(items)  # a saved history was sent: nothing goes in front of it
        context._wire = Wire(items)
        return context

    def save(self, path: str | Path) -> None:
        """Write :meth:`to_json` to ``path`` (UTF-8), atomically.

        The text goes to a temporary file in the same folder, is flushed to disk, and is then
        renamed over ``path``: a save that fails (or a crash in the middle) leaves the previous
        file as it was.
        """
        write_text_atomic(path, self.to_json(), "the Context")

    @classmethod
    def load(cls, path: str | Path) -> Context:
        """Read a Context saved with :meth:`save`; :class:`SerializationError` if it is not one."""
        return cls.from_json(read_text_checked(path, "Context"))


def _bare(item: NativeContent) -> dict[str, Any]:
    """``item`` without the keys a provider adds when it hands an item back (``id``,
    ``status``), to tell whether a compaction's head repeats the system prompt."""
    return {k: v for k, v in item.items() if k not in ("id", "status")}
