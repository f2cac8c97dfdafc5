"""OpenAI explicit prompt caching (GPT-5.6 and later): breakpoints where the stable prefix ends.

From GPT-5.6 on, the Responses API takes ``prompt_cache_options={"mode": ..., "ttl": ...}`` at
the top of a request and ``prompt_cache_breakpoint={"mode": "explicit"}`` on an input content
part (``input_text``, ``input_image``, ``input_file``). What the API documents (the SDK's
``PromptCacheOptions`` and ``PromptCacheBreakpoint``):

* a breakpoint "marks the exact end of a reusable prompt prefix" (not rounded to a token
  block); a prefix is matched exactly at a breakpoint written earlier, among the latest 80 of
  the conversation, "without a content-block lookback limit";
* one request writes at most four breakpoints: with ``mode="explicit"`` the latest four marked
  ones, with ``"implicit"`` (the default) one the API places itself plus the latest three marked
  ones; ``"explicit"`` without any mark caches nothing;
* ``ttl`` (``"30m"``, the default, or ``"12h"``) is the shortest lifetime of what the request
  writes; written tokens are reported in ``usage.input_tokens_details.cache_write_tokens``
  (:attr:`~hydrangea.providers.usage.Usage.cache_write_tokens`) and billed at 1.25x;
* older models refuse both options.

:class:`OpenAIExplicitCaching` is the policy (``Context.request(caching=...)``, a lifecycle's
``caching``), checked against its model when it is made. :func:`place_breakpoints` marks a
built request, as Anthropic's placement does (:mod:`hydrangea.providers.anthropic.caching`): the
**anchor** on the last markable part of the stable history, always; a **cut guard** before the
newest place a later collection may cut the history; the **head** on the end of the leading
system and developer messages; older cut guards while writes remain. Nothing is placed after the
stable history. Since a later request reads any earlier breakpoint's prefix without a lookback
limit, no bridges are needed: a moved anchor still reads what the previous one wrote.

A mark is where a prefix ends, not part of it: the items the Context holds are never changed
(marked parts, and the lists and items holding them, are copies), and an item sent marked once
and unmarked next time is the same prefix. A message whose content is a string is marked as the
one ``input_text`` part that string stands for. A tool output sent as a string is not marked
(its list form is not documented as the same prefix); the anchor then goes on the last markable
part before it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, MutableSequence, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, get_args

from hydrangea.errors import CachingError, RequestOptionError, UnsupportedOptionError
from hydrangea.gateway import GatewayType
from hydrangea.providers._prefix import shared_entries
from hydrangea.providers.features import merge_into

__all__ = [
    "MAX_WRITES",
    "CacheComparison",
    "ExplicitCacheMode",
    "ExplicitCacheTTL",
    "OpenAIExplicitCaching",
    "Position",
    "breakpoint_positions",
    "explicit_request",
    "place_breakpoints",
    "supports_explicit_caching",
]

MAX_WRITES = 4
"""The most cache breakpoints one request writes (the implicit one included)."""

ExplicitCacheMode = Literal["explicit", "implicit"]
"""``"explicit"``: only marked parts are cached; ``"implicit"``: the API adds one of its own."""
ExplicitCacheTTL = Literal["30m", "12h"]
"""The shortest lifetimes the API offers for what a request writes (``"30m"`` is the default)."""

Position = tuple[int, int]
"""A content part of a request: (index in ``input``, index in the item's parts); a string
content is part 0."""

_OPTION = "prompt_cache_options"
_MARK = "prompt_cache_breakpoint"
_MODEL = re.compile(r"(?:openai/)?(?:ft:)?gpt-(\d+)(?:\.(\d+))?(?![\d.])")
_FIRST = (5, 6)
_MARKABLE_PARTS = frozenset({"input_text", "input_image", "input_file"})
_INPUT_ROLES = frozenset({"user", "system", "developer"})
_HEAD_ROLES = frozenset({"system", "developer"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})


def supports_explicit_caching(model: str) -> bool:
    """Whether ``model`` takes ``prompt_cache_options`` and breakpoints: ``gpt-5.6`` and later
    (``gpt-5.6-sol``, ``gpt-5.7``, ``gpt-6`` ..., an ``openai/`` or ``ft:`` prefix allowed)."""
    found = _MODEL.match(model.strip().lower())
    if found is None:
        return False
    return (int(found.group(1)), int(found.group(2) or 0)) >= _FIRST


def _check_model(option: str, model: str | None, name_it: str, *, otherwise: str = "") -> None:
    """Refuse ``option`` unless ``model`` is GPT-5.6 or later (``name_it``: where the caller
    names the model; ``otherwise``: what to do instead)."""
    gateway = GatewayType.openai_responses.value
    if model is None:
        raise UnsupportedOptionError(
            f"{option} is offered by gpt-5.6 and later models only: pass model= to {name_it} "
            "so it can be checked before anything is sent",
            option=option, gateway=gateway, model=None,
        )
    if not supports_explicit_caching(model):
        raise UnsupportedOptionError(
            f"{model!r} does not take {option} (explicit prompt caching and its diagnostics "
            f"are for gpt-5.6 and later){otherwise}",
            option=option, gateway=gateway, model=model,
        )


@dataclass(frozen=True, slots=True)
class CacheComparison:
    """Prompt-cache diagnostics on the Responses API (GPT-5.6 or later): compare this request
    with response ``response_id`` (``prompt_cache_options.comparison_response_id``); the
    response's ``prompt_cache_diagnostics`` says whether the cache reused that prefix and, if
    not, why and about how many tokens it missed
    (:attr:`~hydrangea.providers.usage.Usage.cache_miss`). A request feature
    (``Context.request(features=[...], model=...)``), gated by the request's model."""

    response_id: str

    def __post_init__(self) -> None:
        if not isinstance(self.response_id, str) or not self.response_id.strip():
            raise RequestOptionError(
                f"response_id must be the id of a response to compare with, got "
                f"{self.response_id!r}"
            )

    @property
    def swaps_head(self) -> bool:
        """False: an ordinary request."""
        return False

    def apply(self, request: dict[str, Any], gateway: GatewayType, model: str | None) -> None:
        """Add ``prompt_cache_options.comparison_response_id`` (Responses, GPT-5.6+)."""
        option = f"{_OPTION}.comparison_response_id"
        if gateway is not GatewayType.openai_responses:
            raise UnsupportedOptionError(
                f"{option} is a Responses API option; this Context is for {gateway.value}",
                option=option, gateway=gateway.value, model=model,
            )
        _check_model(option, model, "request(model=...)")
        merge_into(request, _OPTION, {"comparison_response_id": self.response_id})


@dataclass(frozen=True, slots=True)
class OpenAIExplicitCaching:
    """Explicit prompt caching on the Responses API, for ``model`` (GPT-5.6 or later).

    Made for a model that does not take it, or without a model, it raises
    :class:`~hydrangea.errors.UnsupportedOptionError` (nothing is built or sent). ``mode`` and
    ``ttl`` go into ``prompt_cache_options`` (``ttl=None`` leaves the API's default, 30
    minutes); ``enabled=False`` sends neither options nor marks: the request is the plain one.
    """

    gateway: ClassVar[GatewayType] = GatewayType.openai_responses
    """The one gateway that takes this policy."""

    model: str | None
    """The model the requests are for; checked here."""
    mode: ExplicitCacheMode = "explicit"
    ttl: ExplicitCacheTTL | None = None
    enabled: bool = True

    def __post_init__(self) -> None:
        if self.mode not in get_args(ExplicitCacheMode):
            raise CachingError(
                f"mode must be one of {get_args(ExplicitCacheMode)}, got {self.mode!r}"
            )
        if self.ttl is not None and self.ttl not in get_args(ExplicitCacheTTL):
            raise CachingError(
                f"ttl must be one of {get_args(ExplicitCacheTTL)} or None, got {self.ttl!r}"
            )
        _check_model(
            _OPTION, self.model, "OpenAIExplicitCaching (the model the requests are for)",
            otherwise=": use OpenAICaching (prompt_cache_key) with this model, or a gpt-5.6 "
            "model",
        )

    @property
    def max_writes(self) -> int:
        """How many breakpoints the library may place: 4, or 3 beside the implicit one."""
        return MAX_WRITES if self.mode == "explicit" else MAX_WRITES - 1

    @property
    def options(self) -> dict[str, str]:
        """The ``prompt_cache_options`` value sent."""
        if self.ttl is None:
            return {"mode": self.mode}
        return {"mode": self.mode, "ttl": self.ttl}


def _parts(entry: object) -> Sequence[Any] | str | None:
    """The content parts of a request entry that may carry a mark (a string content stands
    for one text part), or ``None``."""
    if not isinstance(entry, dict):
        return None
    kind = entry.get("type", "message")
    if kind == "message" and entry.get("role") in _INPUT_ROLES:
        content = entry.get("content")
    elif kind in _OUTPUTS and isinstance(entry.get("output"), list):
        content = entry["output"]
    else:
        return None
    return content if isinstance(content, str | list) else None


def _markable(part: object) -> bool:
    if isinstance(part, str):
        return bool(part)
    if not isinstance(part, dict) or part.get("type") not in _MARKABLE_PARTS:
        return False
    return part.get("type") != "input_text" or bool(part.get("text"))


def _last_markable(entries: Sequence[Any], start: int, stop: int) -> Position | None:
    for index in range(stop - 1, start - 1, -1):
        parts = _parts(entries[index])
        if isinstance(parts, str):
            if _markable(parts):
                return index, 0
        elif parts is not None:
            for inner in range(len(parts) - 1, -1, -1):
                if _markable(parts[inner]):
                    return index, inner
    return None


def breakpoint_positions(request: Mapping[str, Any]) -> tuple[Position, ...]:
    """Positions of the parts of ``request["input"]`` that carry ``prompt_cache_breakpoint``."""
    found: list[Position] = []
    for index, entry in enumerate(request.get("input") or ()):
        parts = _parts(entry)
        if isinstance(parts, list):
            found.extend(
                (index, inner)
                for inner, part in enumerate(parts)
                if isinstance(part, dict) and _MARK in part
            )
    return tuple(found)


def place_breakpoints(
    request: dict[str, Any],
    policy: OpenAIExplicitCaching,
    *,
    stable: int | None = None,
    cuts: Sequence[int] = (),
    memo: dict[str, Any] | None = None,
) -> tuple[Position, ...]:
    """Mark the built ``request`` (``{"input": [...], ...}``, its ``input`` list the caller's)
    and add ``prompt_cache_options``; return the placed positions, ascending.

    ``stable`` is how many leading ``input`` entries are the stable history (``None``: all);
    ``cuts`` entry counts where a later collection may cut it, newest first. At most
    :attr:`OpenAIExplicitCaching.max_writes` marks are placed. Marks the request already
    carries (the caller's own, in items it stored) are kept as they are and not looked for: the
    API writes the latest four of all, and the anchor is the latest mark of the stable history
    (finding the caller's would cost a pass over the whole request on every turn). Entries are
    replaced by marked copies; nothing reachable from the original entries is changed.

    ``memo`` (a request cache's, emptied when its prefix changes) keeps where the anchor was
    found, so the search covers the entries appended since: in a tool loop whose outputs are
    strings the anchor stays on a user message far behind, and a turn does not pay for the
    distance.
    """
    if not policy.enabled:
        return ()
    entries: MutableSequence[Any] = request.get("input") or []
    end = len(entries) if stable is None else stable
    if not 0 <= end <= len(entries):
        raise CachingError(f"stable {end} outside 0..{len(entries)}")
    chosen: set[Position] = set()
    placed: list[Position] = []

    def add(position: Position | None) -> None:
        if position is not None and position not in chosen and len(chosen) < policy.max_writes:
            chosen.add(position)
            placed.append(position)

    head_end = 0
    while head_end < end and _is_head(entries[head_end]):
        head_end += 1
    guards = [_last_markable(entries, 0, cut) for cut in cuts if 0 < cut <= end]
    add(_anchor(entries, end, memo))
    if guards:
        add(guards[0])
    add(_last_markable(entries, 0, head_end))
    for guard in guards[1:]:
        add(guard)
    for index, inner in placed:
        entries[index] = _marked(entries[index], inner)
    request[_OPTION] = policy.options
    return tuple(sorted(placed))


def _anchor(entries: Sequence[Any], end: int, memo: dict[str, Any] | None) -> Position | None:
    """The last markable part before entry ``end``, continued from ``memo``'s while the
    entries it checked still end with the same entry (the history is append-only; what can
    change at its end, an orphan call's notice or a left-out reasoning item, changes that)."""
    if memo is None:
        return _last_markable(entries, 0, end)
    start, found = 0, None
    hit = memo.get("openai_anchor")
    if hit is not None:
        checked, last, position, value = hit
        if 0 < checked <= end and entries[checked - 1] == last and (
            position is None or entries[position[0]] == value
        ):
            start, found = checked, position
    newer = _last_markable(entries, start, end)
    anchor = found if newer is None else newer
    if end > 0:
        value = None if anchor is None else entries[anchor[0]]
        memo["openai_anchor"] = (end, entries[end - 1], anchor, value)
    return anchor


def _is_head(entry: object) -> bool:
    return (
        isinstance(entry, dict)
        and entry.get("type", "message") == "message"
        and entry.get("role") in _HEAD_ROLES
    )


def _marked(entry: dict[str, Any], inner: int) -> dict[str, Any]:
    """A copy of ``entry`` whose part ``inner`` carries the mark."""
    mark = {"mode": "explicit"}
    key = "content" if entry.get("type", "message") == "message" else "output"
    value = entry[key]
    if isinstance(value, str):
        return {**entry, key: [{"type": "input_text", "text": value, _MARK: mark}]}
    parts = list(value)
    if _MARK not in parts[inner]:  # (a mark of the caller's stays as it is)
        parts[inner] = {**parts[inner], _MARK: mark}
    return {**entry, key: parts}


def explicit_request(
    build: Callable[[Sequence[Any]], dict[str, Any]],
    items: Sequence[Any],
    policy: OpenAIExplicitCaching,
    *,
    stable_items: int | None = None,
    cut_items: Sequence[int] = (),
    built: dict[str, Any] | None = None,
    shared_of: Callable[[int], int] | None = None,
    memo: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The request for ``items`` (``build(items)``, or ``built``: the caller's own) with the
    breakpoints of ``policy`` placed.

    ``stable_items`` and ``cut_items`` are item counts (see :func:`place_breakpoints`); each
    becomes the number of leading ``input`` entries the request of the items before it shares
    with this one: ``shared_of(count)`` when given (the request cache knows it), else by
    building that shorter request. ``memo``: see :func:`place_breakpoints`.
    """
    kwargs = build(items) if built is None else built
    if not policy.enabled:
        return kwargs
    entries = kwargs.get("input") or []
    total = len(items)
    stable = total if stable_items is None else stable_items
    if not 0 <= stable <= total:
        raise CachingError(f"stable_items {stable} outside 0..{total}")

    def shared(boundary: int) -> int:
        return shared_entries(build, items, entries, "input", boundary, shared_of=shared_of)

    cuts = [shared(n) for n in cut_items[:MAX_WRITES] if 0 < n <= stable]
    place_breakpoints(kwargs, policy, stable=shared(stable), cuts=cuts, memo=memo)
    return kwargs
