"""The one tool-exchange pairing engine, shared by every gateway.

It decides, for a history of native items, which tool result answers which tool call and which
results answer nothing (orphans). Adapters only *describe* items: the tool calls an item makes
(:class:`CallSite`) and the tool results it carries (:class:`ResultSite`), through
:meth:`~hydrangea.providers.adapter.Adapter.tool_sites`. Where a result must stand in the request
(the next user turn, the run of tool messages after the call, anywhere later) is each request
builder's business; the decision of *who answers whom* is made here, once, for all four.

The rule, deterministic (same items, same pairing):

* Items are read in order. Within an item, its results are matched first (they answer calls of
  earlier items), then its calls are registered; a result never answers a call of its own item
  or of a later one.
* A result answers the earliest unanswered earlier call that it names. It names a call by the
  call's id, within the same ``kind`` (the Responses API keeps ``function_call`` and
  ``custom_tool_call`` ids apart).
* A call the provider gave no id (Gemini's ``functionCall`` usually carries none) gets a
  **stable id**: ``"<function name>#<n>"``, where ``n`` counts the id-less calls of that name
  from the start of the history (1 for the first). It depends only on the items before it, so a
  Context gives the same id to the same call every time, before and after appends, and the tail
  the collector detaches never renumbers what stays. ``#`` cannot occur in a Gemini function
  name, so a stable id never collides with a name. :meth:`Adapter.to_messages` hands this id out.
* A result whose id matches no call, or that has no id, falls back to the function *name*: it
  answers the earliest unanswered earlier **id-less** call of that name, on every gateway (an
  id-less call has nothing else to be named by). On gateways that pair by name (Gemini), the
  fallback reaches calls with an id too. So ``ToolResultPart(call_id="get_weather")`` answers
  the first open id-less ``get_weather`` call, and ``ToolResultPart(call_id="get_weather#2")``
  the second one ever made. Id-less calls come from Gemini (``functionCall`` without ``id``)
  and from Gemini's OpenAI-compatible Chat Completions endpoint (a tool call with
  ``"id": ""``, which the Chat adapter reports as id-less).
* Every call left unanswered is listed in order; every unmatched result is an orphan.

Server-side tool pairs (Anthropic ``server_tool_use`` / ``mcp_tool_use`` with their results,
Responses built-in tool items, Gemini ``tool_call`` / ``tool_response``) are not described to
the engine at all: the provider ran them and put both halves in its own output, so nothing here
can split or "repair" them.

Cost: O(n) in the number of calls and results (dict look-ups and queues; every call enters at
most three queues and leaves each once). The engine is incremental by construction:
:class:`PairingEngine` holds the state after the items fed so far, and feeding more items
continues from there, so a later change can reuse it across requests for appended items.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from hydrangea.providers.native import NativeContent

__all__ = [
    "CallSite",
    "Pairing",
    "PairingEngine",
    "ResultSite",
    "Site",
    "pair_items",
    "stable_call_id",
]

Site = tuple[int, int]
"""Where a call or result stands: (index of its item, its slot inside the item)."""


def stable_call_id(name: str, ordinal: int) -> str:
    """The stable id of the ``ordinal``-th (1-based) id-less call of function ``name``."""
    return f"{name}#{ordinal}"


@dataclass(frozen=True, slots=True)
class CallSite:
    """A tool call inside one item.

    ``slot`` is its position inside the item (a content block, a part, an entry of
    ``tool_calls``; 0 for an item that is one call). ``id`` is the provider's id, or ``None``
    when it gave none. ``kind`` separates id spaces (results pair only with calls of their kind).
    """

    slot: int
    id: str | None
    name: str
    kind: str = ""


@dataclass(frozen=True, slots=True)
class ResultSite:
    """A tool result inside one item: ``ref`` is the call id it names (or ``None``), ``name``
    the function name it names (Gemini responses may carry only a name)."""

    slot: int
    ref: str | None
    name: str | None = None
    kind: str = ""


@dataclass(frozen=True, slots=True)
class Pairing:
    """The outcome: which result answers which call, what is left open, what is an orphan.

    ``calls`` lists every call in history order with its effective id (its own id, or its
    stable id; by site from :meth:`ids`). ``answer`` maps a call's site to the site of its
    result, ``answered`` the other way round. ``unanswered`` are the sites of calls without a
    result, ``orphans`` the sites of results that answer no call. ``counted`` holds how many
    id-less calls of each function name the history made so far (``counted=`` of
    :func:`pair_items` included): what continues the stable ids after these items.
    """

    calls: tuple[tuple[Site, CallSite, str], ...]
    answer: Mapping[Site, Site]
    answered: Mapping[Site, Site]
    unanswered: tuple[Site, ...]
    orphans: frozenset[Site]
    counted: Mapping[str, int]

    def by_call_item(self) -> dict[int, tuple[list[tuple[Site, str]], list[str]]]:
        """For each item that makes calls, in history order: the sites of the results that
        answer its calls (with the call's effective id), and the ids of its unanswered calls
        (O(calls); what a request builder lays out after the item)."""
        out: dict[int, tuple[list[tuple[Site, str]], list[str]]] = {}
        for site, _, ident in self.calls:
            found, missing = out.setdefault(site[0], ([], []))
            result = self.answer.get(site)
            if result is None:
                missing.append(ident)
            else:
                found.append((result, ident))
        return out

    def split(self, end: int) -> tuple[Pairing, Pairing]:
        """The pairings of the items before ``end`` and of the items from ``end`` on (their
        sites counted from ``end``, their id-less calls counted on from the first's), for an
        ``end`` that no call is open across: every call before it answered before it.

        Items are paired in order, so the first is this pairing's state at ``end``; with no
        call left open there, no result from ``end`` on can answer an earlier call, so the
        second is what pairing those items on their own gives. O(calls + orphans), no item
        read again. :class:`ValueError` when a call before ``end`` is still open at ``end``.
        """
        head_answer: dict[Site, Site] = {}
        tail_answer: dict[Site, Site] = {}
        for asked, result in self.answer.items():
            if asked[0] >= end:
                tail_answer[(asked[0] - end, asked[1])] = (result[0] - end, result[1])
            elif result[0] < end:
                head_answer[asked] = result
            else:
                raise ValueError(f"call {asked} is answered at {result}, past the split at {end}")
        if any(site[0] < end for site in self.unanswered):
            raise ValueError(f"a call before the split at {end} is unanswered")
        head_counted = dict(self.counted)
        head_calls: list[tuple[Site, CallSite, str]] = []
        tail_calls: list[tuple[Site, CallSite, str]] = []
        for site, call, ident in self.calls:
            if site[0] < end:
                head_calls.append((site, call, ident))
                continue
            tail_calls.append(((site[0] - end, site[1]), call, ident))
            if call.id is None:  # (its ordinal was counted past the split)
                left = head_counted[call.name] - 1
                if left:
                    head_counted[call.name] = left
                else:
                    del head_counted[call.name]
        head = Pairing(
            calls=tuple(head_calls),
            answer=head_answer,
            answered={result: asked for asked, result in head_answer.items()},
            unanswered=(),
            orphans=frozenset(site for site in self.orphans if site[0] < end),
            counted=head_counted,
        )
        tail = Pairing(
            calls=tuple(tail_calls),
            answer=tail_answer,
            answered={result: asked for asked, result in tail_answer.items()},
            unanswered=tuple((site[0] - end, site[1]) for site in self.unanswered),
            orphans=frozenset((s[0] - end, s[1]) for s in self.orphans if s[0] >= end),
            counted=dict(self.counted),
        )
        return head, tail

    def ids(self) -> dict[Site, str]:
        """The effective id of the call at each call site (built on demand, O(calls))."""
        return {site: ident for site, _, ident in self.calls}

    def stable_ids(self, start: int = 0) -> dict[int, dict[int, str]]:
        """The stable ids of the id-less calls of the items from ``start`` on, by item index
        and call slot (what a reader or a builder gives those calls; O(calls))."""
        out: dict[int, dict[int, str]] = {}
        for (index, slot), call, ident in self.calls:
            if call.id is None and index >= start:
                out.setdefault(index, {})[slot] = ident
        return out


@dataclass(slots=True)
class PairingEngine:
    """Incremental pairing state: feed items in order with :meth:`add`, read :meth:`pairing`.

    ``by_name`` extends the function-name fallback to calls that have an id (Gemini); id-less
    calls can be answered by name on every gateway.
    """

    by_name: bool = False
    _calls: list[tuple[Site, CallSite, str]] = field(default_factory=list)
    _open: list[bool] = field(default_factory=list)
    # key -> the call numbers waiting under it: one int (the common case: an id used once) or a
    # deque; id keys and name keys live in separate tables, a key is the id or name itself when
    # the kind is "" and (kind, id) otherwise, so the common path allocates no key objects
    _by_id: dict[object, int | deque[int]] = field(default_factory=dict)
    _by_name: dict[object, int | deque[int]] = field(default_factory=dict)
    _ordinals: dict[str, int] = field(default_factory=dict)
    _answer: dict[Site, Site] = field(default_factory=dict)
    _answered: dict[Site, Site] = field(default_factory=dict)
    _orphans: set[Site] = field(default_factory=set)

    def add(self, index: int, calls: Iterable[CallSite], results: Iterable[ResultSite]) -> None:
        """Feed item ``index`` (its results are matched before its calls are registered)."""
        for result in results:
            self._match(index, result)
        for call in calls:
            self._register(index, call)

    def _register(self, index: int, call: CallSite) -> None:
        number = len(self._calls)
        ident = call.id
        if ident is None:
            ordinal = self._ordinals.get(call.name, 0) + 1
            self._ordinals[call.name] = ordinal
            ident = stable_call_id(call.name, ordinal)
        self._calls.append(((index, call.slot), call, ident))
        self._open.append(True)
        _enqueue(self._by_id, ident if not call.kind else (call.kind, ident), number)
        if self.by_name or call.id is None:
            _enqueue(self._by_name, call.name if not call.kind else (call.kind, call.name), number)

    def _take(self, table: dict[object, int | deque[int]], key: object) -> int | None:
        waiting = table.get(key)
        if waiting is None:
            return None
        if isinstance(waiting, int):
            del table[key]
            return waiting if self._open[waiting] else None
        while waiting:
            number = waiting.popleft()
            if self._open[number]:
                return number  # (others were answered through another of their keys)
        del table[key]
        return None

    def _match(self, index: int, result: ResultSite) -> None:
        where = (index, result.slot)
        kind = result.kind
        number = None
        if result.ref is not None:
            number = self._take(self._by_id, result.ref if not kind else (kind, result.ref))
        if number is None and self._by_name:
            named = result.ref if result.ref is not None else result.name
            if named is not None:
                number = self._take(self._by_name, named if not kind else (kind, named))
        if number is None:
            self._orphans.add(where)
            return
        self._open[number] = False
        call_site = self._calls[number][0]
        self._answer[call_site] = where
        self._answered[where] = call_site

    def pairing(self) -> Pairing:
        """The pairing of everything fed so far."""
        unanswered = tuple(
            site
            for (site, _, _), still_open in zip(self._calls, self._open, strict=True)
            if still_open
        )
        return Pairing(
            calls=tuple(self._calls),
            answer=dict(self._answer),
            answered=dict(self._answered),
            unanswered=unanswered,
            orphans=frozenset(self._orphans),
            counted=dict(self._ordinals),
        )


def _enqueue(table: dict[object, int | deque[int]], key: object, number: int) -> None:
    waiting = table.get(key)
    if waiting is None:
        table[key] = number
    elif isinstance(waiting, int):
        table[key] = deque((waiting, number))
    else:
        waiting.append(number)


def pair_items(
    items: Iterable[NativeContent],
    sites: Callable[[NativeContent], tuple[list[CallSite], list[ResultSite]]],
    *,
    by_name: bool = False,
    counted: Mapping[str, int] | None = None,
) -> Pairing:
    """Pair ``items`` whose calls and results ``sites`` describes (an adapter's ``tool_sites``).

    ``counted`` continues a history: how many id-less calls of each function name came before
    ``items``, so their stable ids go on counting from there (the request cache pairs the new
    items of a long history this way, without the items before them).
    """
    engine: PairingEngine | None = None  # made at the first call or result: most runs have none
    for index, item in enumerate(items):
        calls, results = sites(item)
        if calls or results:
            if engine is None:
                engine = PairingEngine(by_name=by_name)
                if counted:
                    engine._ordinals.update(counted)
            engine.add(index, calls, results)
    if engine is None:
        return Pairing(
            calls=(), answer={}, answered={}, unanswered=(), orphans=frozenset(),
            counted=dict(counted or {}),
        )
    return engine.pairing()
