"""The prefix-binding guard: what each reply's reasoning was produced under (private).

Anthropic's preserved-thinking models and OpenAI's reasoning models bind the reasoning of a
reply to the exact request that produced it: the top-level instructions and tools and every
earlier item. The Context keeps the rule as its contract (every request begins with exactly
what the previous one sent, then the model's output); this guard is how it knows, in O(new
items) a turn, that no request breaks it:

* each request the Context builds is noted as ``(stable, tail, head)``: its items are the
  Context's first ``stable`` items followed by ``tail``; ``head`` fingerprints the caller's
  top-level instructions and tools when the Context saw them (``None``: not seen);
* when output carrying bound reasoning is pushed at index ``i``, the guard compares the noted
  request with the history in front of ``i``. Equal (the usual case: ``tail`` empty and
  ``stable == i``), the binding holds for good, because the history before ``i`` never changes
  (a detach takes ``i`` with it). Different, the binding is broken from the first differing
  position on, and is remembered;
* a later request that would carry a broken binding, or that changes the head the live
  bindings were produced under, is refused (:class:`~hydrangea.errors.PrefixBindingError`)
  unless the caller chose to drop broken reasoning (``Context(..., broken_reasoning="drop")``).

Requests built for another model (``request(model=...)``) leave reasoning of other models out
by design; replies to them are not checked.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from hydrangea.errors import ContextStateError, PrefixBindingError
from hydrangea.providers.adapter import Adapter
from hydrangea.providers.native import NativeContent

__all__ = ["BindingGuard", "BrokenReasoning", "head_of"]

BrokenReasoning = Literal["error", "drop"]
"""What a request does with reasoning whose prefix changed: refuse (``"error"``, the default)
or leave it out consistently, as the providers' drop mode does (``"drop"``)."""

_HEAD_KEYS = ("system", "instructions", "tools", "config")


def head_of(options: Mapping[str, Any]) -> str:
    """A fingerprint of the caller's top-level instructions and tools in ``options`` (cache
    markers left out, as the providers leave them out of the comparison); leaving them out is
    a head too (the empty one), so dropping the tools later is a change like any other."""
    head = {key: _unmarked(options[key]) for key in _HEAD_KEYS if key in options}
    try:
        return json.dumps(head, sort_keys=True, default=repr)
    except (TypeError, ValueError) as exc:
        raise ContextStateError(f"the request's instructions or tools are not JSON: {exc}") from exc


def _unmarked(value: object) -> object:
    if isinstance(value, Mapping):
        return {k: _unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list | tuple):
        return [_unmarked(v) for v in value]
    if hasattr(value, "model_dump"):  # an SDK or pydantic object given as an option
        return _unmarked(value.model_dump(mode="json", exclude_none=True))
    return value


@dataclass(slots=True)
class _Broken:
    item: int  # the index of the pushed item whose reasoning is bound
    position: int  # the first index where its request differs from the history
    cause: str


class BindingGuard:
    """The bindings of one Context's pushed reasoning (see the module docstring)."""

    __slots__ = ("_adapter", "_bound", "_broken", "_head", "_last", "_stripped", "policy")

    def __init__(self, adapter: Adapter, policy: BrokenReasoning) -> None:
        if policy not in ("error", "drop"):
            raise ContextStateError(
                f"broken_reasoning must be 'error' or 'drop', got {policy!r}"
            )
        self._adapter = adapter
        self.policy: BrokenReasoning = policy
        self._broken: list[_Broken] = []
        self._bound: list[int] = []  # every item carrying bound reasoning, in order
        self._stripped: dict[int, NativeContent | None] = {}  # drop policy: as sent (broken)
        self._head: str | None = None  # the head the live bindings were produced under
        self._last: tuple[int, Sequence[NativeContent], str | None] | None = None

    def built(self, stable: int, tail: Sequence[NativeContent], head: str | None) -> None:
        """A request of the Context's first ``stable`` items and ``tail`` was built."""
        self._last = (stable, tail, head)

    def built_elsewhere(self) -> None:
        """A request whose content this guard does not follow (another model's) was built."""
        self._last = None

    def pushed(self, history: Sequence[NativeContent], start: int) -> None:
        """Output was appended at ``start``; note its bindings if it carries bound reasoning."""
        adapter = self._adapter
        bound = [i for i in range(start, len(history)) if adapter.binds_prefix(history[i])]
        if not bound:
            return
        self._bound.extend(bound)
        last = self._last
        if last is None:
            return
        stable, tail, head = last
        if head is not None:
            self._head = head
        position = _first_difference(self.sent_form, history, start, stable, tail)
        if position is not None:
            cause = (
                f"the request that produced it sent {stable + len(tail)} items, the history "
                f"in front of it holds {start}; they differ from index {position} (an item "
                "shown in that request and not kept, or changed since)"
            )
            for item in bound:
                self._broken.append(_Broken(item, position, cause))

    def sent_form(self, index: int, item: NativeContent) -> NativeContent | None:
        """``item`` (the history's ``index``) as requests send it: without its reasoning when
        the drop policy left that reasoning out (``None``: left out whole)."""
        return self._stripped.get(index, item) if self._stripped else item

    def rebase(self, moved: Callable[[int], int | None]) -> None:
        """The sent form changed at a provider compaction: ``moved`` maps an index of the old
        sent form to the new one (``None``: compacted away). Bindings of the kept items stay as
        they were (the provider's summary keeps their reasoning valid); a binding broken at a
        position the compaction removed is healed with it."""
        self._bound = [m for m in map(moved, self._bound) if m is not None]
        broken: list[_Broken] = []
        for entry in self._broken:
            item, position = moved(entry.item), moved(entry.position)
            if item is not None and position is not None:
                broken.append(_Broken(item, position, entry.cause))
        self._broken = broken
        self._stripped = {
            m: form for i, form in self._stripped.items() if (m := moved(i)) is not None
        }
        last = self._last
        if last is not None:
            stable, tail, head = last
            mapped = 0 if stable == 0 else moved(stable - 1)
            self._last = None if mapped is None else (mapped + (stable > 0), tail, head)

    def detached(self, start: int) -> None:
        """Items from ``start`` on were detached: their bindings went with them."""
        while self._broken and self._broken[-1].item >= start:
            self._broken.pop()
        while self._bound and self._bound[-1] >= start:
            self._bound.pop()
        for index in [i for i in self._stripped if i >= start]:
            del self._stripped[index]
        if start == 0:
            self._head = None

    def check(
        self, history: Sequence[NativeContent], length: int, head: str | None
    ) -> bool:
        """Before a request of the first ``length`` items (``history`` is the Context's) with
        ``head`` is built: raise if it would carry a broken binding or change the live
        bindings' head; under the drop policy note what to leave out instead and return
        ``True`` when something is (read it back with :meth:`sent_form`)."""
        if head is not None and self._head is not None and head != self._head:
            if self.policy == "error":
                raise PrefixBindingError(
                    "the request's system instructions or tools differ from those the earlier "
                    "replies' reasoning was produced under: keep system and tools byte-identical "
                    "for the whole session and put an update in a new message at the end",
                    position=0,
                    item=self._bound[0] if self._bound else 0,
                )
            cause = "the system instructions or tools changed"
            known = {b.item for b in self._broken}
            self._broken.extend(_Broken(i, 0, cause) for i in self._bound if i not in known)
            self._broken.sort(key=lambda b: b.item)
            self._head = head
        for broken in self._broken:
            if broken.item >= length:
                break
            if self.policy == "error":
                raise PrefixBindingError(
                    f"item {broken.item} carries reasoning bound to the request that produced "
                    f"it, and {broken.cause}: the provider would reject this request or drop "
                    "the reasoning. Keep what was sent where it was, or build the Context with "
                    "broken_reasoning='drop'",
                    position=broken.position,
                    item=broken.item,
                )
            if broken.item not in self._stripped:
                self._stripped[broken.item] = self._adapter.for_other_model(history[broken.item])
        return any(index < length for index in self._stripped)


def _first_difference(
    sent_form: Callable[[int, NativeContent], NativeContent | None],
    history: Sequence[NativeContent],
    start: int,
    stable: int,
    tail: Sequence[NativeContent],
) -> int | None:
    """Where ``history[:start]`` (as requests send it) and ``history[:stable] + tail`` first
    differ (``None``: equal). ``tail`` holds items as they were sent (the drop policy's)."""
    if stable > start:
        return start
    for offset, item in enumerate(tail):
        at = stable + offset
        if at >= start or sent_form(at, history[at]) != item:
            return at
    end = stable + len(tail)
    return None if end == start else end
