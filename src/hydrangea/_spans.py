"""The library's spans: which calls open one, and the attributes computed for each.

Imported by the modules it decorates, so it imports none of them: what it reads of a Context, a
CoopContext, a Lifecycle or a request is written down as the Protocols below, which those classes
meet (the layer test keeps this module out of any import circle).

:mod:`hydrangea.tracing` is the mechanism; this module is the one place that knows what a
render, a collection and a request report, so each call site carries one decorator (or, for
the collection, one call) and nothing else. Every function here runs only while a span records.

Spans:

* ``hydrangea.coop.render``: :meth:`CoopContext.render` / ``arender``;
* ``hydrangea.coop.collection``: a collection that removed areas (child of the render);
* ``hydrangea.lifecycle.render``: :meth:`Lifecycle.render` / ``arender`` (parent of the
  CoopContext's render);
* ``hydrangea.request``: :meth:`Context.request` and :attr:`LifecycleRequest.kwargs` (the
  incremental builder they both use is inside it).

Predicted cache reuse compares a request with the previous request built from the same Context
(kept for the 32 Contexts that built one most recently, while a span records): the estimated
tokens of the leading part both sent, the most a provider's prefix cache can serve. Reported
reuse is what the last response pushed to that Context said it read from the cache
(:mod:`hydrangea.providers.usage`). Token estimates are four characters of the request's JSON a
token, each message estimated once while it stays in the request.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from hydrangea.gateway import GatewayType
from hydrangea.providers.adapter import Adapter, CachePolicy
from hydrangea.providers.anthropic.caching import strip_cache_control
from hydrangea.providers.registry import adapter_for
from hydrangea.providers.usage import Usage, UsageLog
from hydrangea.tracing import (
    AttributeValue,
    content_attribute,
    gen_ai_system,
    record,
    settings,
    traced,
)

if TYPE_CHECKING:
    from hydrangea.coop.view import CollectionRecord  # (it imports nothing that imports this)

__all__ = ["collection", "context_request", "coop_render", "lifecycle_render", "lifecycle_request"]


class Context(Protocol):
    """What a span reads of a :class:`~hydrangea.context.Context`."""

    def __len__(self) -> int: ...
    @property
    def gateway(self) -> GatewayType: ...
    @property
    def usage(self) -> UsageLog: ...
    @property
    def detaches(self) -> int: ...
    def detached_from(self, since: int) -> int | None: ...


class CoopContext(Protocol):
    """What a span reads of a :class:`~hydrangea.coop.CoopContext`."""

    @property
    def context(self) -> Context: ...
    @property
    def renders(self) -> int: ...
    @property
    def last_collection(self) -> CollectionRecord | None: ...


class Lifecycle(Protocol):
    """What a span reads of a :class:`~hydrangea.lifecycle.Lifecycle`."""

    @property
    def context(self) -> Context: ...


class _Overlay(Protocol):
    @property
    def items(self) -> Sequence[object]: ...


class _HistoryView(Protocol):
    @property
    def length(self) -> int: ...


class LifecycleRequest(Protocol):
    """What a span reads of a lifecycle's request (``hydrangea.lifecycle.LifecycleRequest``)."""

    @property
    def episode(self) -> int: ...
    @property
    def before(self) -> Sequence[_Overlay]: ...
    @property
    def after(self) -> Sequence[_Overlay]: ...
    @property
    def stable(self) -> int: ...
    @property
    def in_history(self) -> bool: ...
    @property
    def context(self) -> Context | None: ...
    @property
    def adapter(self) -> Adapter: ...
    @property
    def history_view(self) -> _HistoryView: ...
    @property
    def caching(self) -> CachePolicy | None: ...

_Attributes = dict[str, AttributeValue | None]

_REMEMBERED = 32
"""How many Contexts' previous requests are kept for the predicted reuse."""


def _system(gateway: GatewayType) -> _Attributes:
    name = gen_ai_system(gateway)
    return {"gen_ai.system": name, "gen_ai.provider.name": name}


# -- what a render changed ---------------------------------------------------------------------


def _mark(context: Context) -> tuple[int, int]:
    return len(context), context.detaches


def _changes(context: Context, mark: tuple[int, int]) -> _Attributes:
    """Items appended and detached since ``mark`` (a detach, then appends: the usual order)."""
    length, detaches = mark
    lowest = context.detached_from(detaches)
    kept = length if lowest is None else min(lowest, length)
    return {
        "hydrangea.items.appended": len(context) - kept,
        "hydrangea.items.detached": length - kept,
        "hydrangea.context.items": len(context),
    }


def _coop_after(result: Context, mark: tuple[int, int], coop: CoopContext) -> _Attributes:
    last = coop.last_collection
    return {
        **_system(result.gateway),
        **_changes(result, mark),
        "hydrangea.coop.renders": coop.renders,
        "hydrangea.coop.collected": last is not None and last.render == coop.renders,
    }


coop_render = traced(
    "hydrangea.coop.render", _coop_after, before=lambda coop: _mark(coop.context)
)
"""Decorates ``CoopContext.render`` and ``arender``."""


def collection(started: int, done: CollectionRecord | None, errors: int) -> None:
    """The span of a collection that began at ``started`` (:func:`~hydrangea.tracing.now`)."""
    if done is None:
        return
    record(
        "hydrangea.coop.collection",
        started,
        {
            "hydrangea.items.detached": done.detached,
            "hydrangea.items.promoted": done.promoted,
            "hydrangea.coop.areas_removed": len(done.areas),
            "hydrangea.coop.detach_start": done.start,
            "hydrangea.coop.gc_prologue_errors": errors,
        },
    )


def _lifecycle_after(
    result: LifecycleRequest, mark: tuple[int, int], lifecycle: Lifecycle
) -> _Attributes:
    context = lifecycle.context
    return {
        **_system(context.gateway),
        **_changes(context, mark),
        "hydrangea.lifecycle.episode": result.episode,
        "hydrangea.lifecycle.overlay_components": len(result.before) + len(result.after),
        "hydrangea.request.stable_items": result.stable,
    }


lifecycle_render = traced(
    "hydrangea.lifecycle.render", _lifecycle_after, before=lambda lc: _mark(lc.context)
)
"""Decorates ``Lifecycle.render`` and ``arender``."""


# -- requests ----------------------------------------------------------------------------------


def _estimate(value: object) -> int:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return -(-len(text) // 4)


def _same(before: object, now: object) -> bool:
    """Whether two parts of a request are the same to a prefix cache (markers aside)."""
    return before is now or before == now or (
        strip_cache_control(before) == strip_cache_control(now)
    )


def _markers(message: object) -> int:
    """Anthropic: the blocks of ``message`` that carry a ``cache_control`` breakpoint."""
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return 0
    return sum(1 for block in content if isinstance(block, dict) and "cache_control" in block)


def _head_markers(head: Mapping[str, Any]) -> int:
    blocks = [*(head.get("tools") or ())]
    system = head.get("system")
    if isinstance(system, list):
        blocks.extend(system)
    return sum(1 for block in blocks if isinstance(block, dict) and "cache_control" in block)


@dataclass(frozen=True, slots=True)
class _Sent:
    """A Context's previous request: its head and messages, the running token sums of the
    messages and each message's breakpoints."""

    context: object  # held, so its id is not reused while it is remembered
    head: dict[str, Any]
    head_tokens: int
    messages: list[Any]
    sums: list[int]
    markers: list[int]


@dataclass(frozen=True, slots=True)
class _Reuse:
    tokens: int
    predicted: int
    markers: int


_SENT: OrderedDict[int, _Sent] = OrderedDict()
_SENT_LOCK = threading.Lock()


def _reuse(
    context: Context | None, kwargs: Mapping[str, Any], key: str, *, anthropic: bool
) -> _Reuse:
    """The request's estimated tokens, those of the leading part the previous request built
    from ``context`` also sent (0 for the first), and (``anthropic``) its breakpoints;
    remembers this request as the previous one. Costs O(messages) identity checks plus the
    messages not seen before."""
    raw = kwargs.get(key)
    messages: list[Any] = list(raw) if isinstance(raw, list) else []
    head = {k: v for k, v in kwargs.items() if k != key}
    with _SENT_LOCK:
        sent = None if context is None else _SENT.get(id(context))
    same_head = sent is not None and _same(sent.head, head)
    head_tokens = sent.head_tokens if sent is not None and same_head else _estimate(head)
    shared = 0
    if sent is not None and same_head:
        for before, now in zip(sent.messages, messages, strict=False):
            if before is not now and not _same(before, now):
                break
            shared += 1
    sums = sent.sums[:shared] if sent is not None else []
    total = sums[-1] if sums else 0
    for message in messages[shared:]:
        total += _estimate(message)
        sums.append(total)
    markers: list[int] = []
    if anthropic:
        old, counted = (sent.messages, sent.markers) if sent is not None else ([], [])
        markers = [
            counted[n] if n < len(old) and old[n] is message else _markers(message)
            for n, message in enumerate(messages)
        ]
    predicted = head_tokens + (sums[shared - 1] if shared else 0) if same_head else 0
    if context is not None:
        with _SENT_LOCK:
            _SENT[id(context)] = _Sent(context, head, head_tokens, messages, sums, markers)
            _SENT.move_to_end(id(context))
            while len(_SENT) > _REMEMBERED:
                _SENT.popitem(last=False)
    breakpoints = _head_markers(head) + sum(markers) if anthropic else 0
    return _Reuse(head_tokens + total, predicted, breakpoints)


def _request_attributes(
    kwargs: dict[str, Any],
    context: Context | None,
    gateway: GatewayType,
    *,
    items: int,
    stable: int | None,
    model: str | None,
) -> _Attributes:
    adapter = adapter_for(gateway)
    key = adapter.history_key
    reuse = _reuse(context, kwargs, key, anthropic=adapter.places_breakpoints)
    tokens, predicted = reuse.tokens, reuse.predicted
    named = kwargs.get("model")
    attributes: _Attributes = {
        "gen_ai.operation.name": "chat",
        **_system(gateway),
        "gen_ai.request.model": named if isinstance(named, str) else model,
        "hydrangea.request.items": items,
        "hydrangea.request.stable_items": stable,
        "hydrangea.request.messages": len(kwargs.get(key) or ()),
        "hydrangea.tokens.estimated": tokens,
        "hydrangea.cache.predicted_reuse_tokens": predicted,
        "hydrangea.cache.predicted_reuse": predicted / tokens if tokens else 0.0,
    }
    if adapter.places_breakpoints:
        attributes["hydrangea.cache.breakpoints"] = reuse.markers
    last = None if context is None else context.usage.last
    if last is not None:
        usage = last.usage
        attributes.update({
            "hydrangea.cache.reported_input_tokens": usage.input_tokens,
            "hydrangea.cache.reported_read_tokens": usage.cache_read_tokens,
            "hydrangea.cache.reported_write_tokens": usage.cache_write_tokens,
            "hydrangea.cache.reported_reuse": usage.cache_reuse,
        })
        attributes.update(_managed(usage))
    if settings().capture_content:
        attributes["hydrangea.request.content"] = content_attribute(
            json.dumps(kwargs, ensure_ascii=False, separators=(",", ":"), default=str)
        )
    return attributes


def _managed(usage: Usage) -> _Attributes:
    """What the server did to the previous request's context: compaction cost, edits applied,
    the cache miss it diagnosed."""
    out: _Attributes = {}
    spent = usage.compaction_tokens
    if spent is not None:
        out["hydrangea.compaction.input_tokens"], out["hydrangea.compaction.output_tokens"] = spent
    if usage.applied_edits:
        out["hydrangea.context_management.applied_edits"] = ",".join(
            str(edit.get("type")) for edit in usage.applied_edits
        )
    miss = usage.cache_miss
    if miss is not None:
        out["hydrangea.cache.miss_reason"] = miss[0]
        if miss[1] is not None:
            out["hydrangea.cache.missed_tokens"] = miss[1]
    return out


def _caching_model(caching: CachePolicy | None) -> str | None:
    return None if caching is None else caching.model


def _context_request(
    result: dict[str, Any],
    context: Context,
    items: Sequence[Any] | None = None,
    *,
    model: str | None = None,
    caching: CachePolicy | None = None,
    **options: Any,
) -> _Attributes:
    whole = items is None
    return _request_attributes(
        result, context, context.gateway,
        items=len(context) if whole else len(items or ()),
        stable=len(context) if whole else None,
        model=model or _caching_model(caching),
    )


context_request = traced("hydrangea.request", _context_request)
"""Decorates ``Context.request``."""


def _lifecycle_request(result: dict[str, Any], request: LifecycleRequest) -> _Attributes:
    overlay = 0 if request.in_history else sum(
        len(entry.items) for entry in (*request.before, *request.after)
    )  # (components sent are history; only a version-0.1 request holds them apart)
    attributes = _request_attributes(
        result, request.context, request.adapter.gateway,
        items=request.history_view.length + overlay,
        stable=request.stable,
        model=_caching_model(request.caching),
    )
    attributes["hydrangea.lifecycle.episode"] = request.episode
    attributes["hydrangea.lifecycle.overlay_components"] = len(request.before) + len(
        request.after
    )
    return attributes


lifecycle_request = traced("hydrangea.request", _lifecycle_request)
"""Decorates ``LifecycleRequest.kwargs``."""
