"""Token usage as each provider reports it, read from model output before it is converted.

:func:`usage_of` reads the usage of one response (raw dict or official SDK object) into one
shape, :class:`Usage`; :class:`UsageLog` keeps one record per pushed response.
:meth:`~hydrangea.context.Context.push_back` records into its
:attr:`~hydrangea.context.Context.usage` log, because the adapters keep only the model's items.

Field names, per provider (as documented and as recorded from the live APIs):

=================  =================================  ====================================
gateway            cache read                         cache write
=================  =================================  ====================================
anthropic          ``usage.cache_read_input_tokens``  ``usage.cache_creation_input_tokens``
openai (Chat)      ``usage.prompt_tokens_details``    ``...prompt_tokens_details``
                   ``.cached_tokens``                 ``.cache_write_tokens`` (when sent)
openai_responses   ``usage.input_tokens_details``     ``...input_tokens_details``
                   ``.cached_tokens``                 ``.cache_write_tokens`` (when sent)
gemini             ``usageMetadata``                  not reported (``None``)
                   ``.cachedContentTokenCount``
=================  =================================  ====================================

:attr:`Usage.input_tokens` is always the whole prompt, cached parts included: OpenAI's and
Gemini's prompt counts already include them, Anthropic's ``input_tokens`` does not, so the
cache reads and writes are added to it. Gemini's thinking tokens count as output (they are
billed as output).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, assert_never

from hydrangea.gateway import GatewayType

__all__ = ["Usage", "UsageLog", "UsageRecord", "usage_of"]


@dataclass(frozen=True, slots=True)
class Usage:
    """The tokens one response reports, in one shape for every gateway."""

    gateway: GatewayType
    input_tokens: int
    """The whole prompt, cache reads and writes included."""
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int | None
    """``None`` where the provider does not report cache writes (Gemini; older OpenAI)."""
    raw: Mapping[str, Any] = field(compare=False, repr=False, default_factory=dict)
    """The usage block as the provider sent it."""
    applied_edits: tuple[Mapping[str, Any], ...] = field(compare=False, default=())
    """What the server's context editing cleared for this response, as it reports it
    (Anthropic ``context_management.applied_edits``: each edit's ``type`` and counts such as
    ``cleared_tool_uses``, ``cleared_thinking_turns``, ``cleared_input_tokens``)."""
    cache_diagnosis: Mapping[str, Any] | None = field(compare=False, default=None)
    """The provider's diagnosis of this request's prompt-cache reuse, as it sent it, when one
    was asked for (Anthropic ``diagnostics``, whose ``cache_miss_reason`` is ``null`` while
    the comparison is still running; OpenAI Responses ``prompt_cache_diagnostics``); ``None``
    when the response carries none. :attr:`cache_miss` reads it in one shape."""

    @property
    def cache_miss(self) -> tuple[str, int | None] | None:
        """Why the cache could not reuse the compared request's prefix, and about how many
        input tokens that cost (``None`` where the provider gives no count), from
        :attr:`cache_diagnosis`: Anthropic's ``cache_miss_reason`` type (``model_changed``,
        ``system_changed``, ``tools_changed``, ``messages_changed``,
        ``previous_message_not_found``, ``unavailable``), OpenAI's miss ``reason`` (such as
        ``input_changed``, ``context_compacted``) or its ``comparison_response_not_found`` /
        ``unavailable``. ``None``: no miss reported (a hit, no diagnosis, or still pending)."""
        diagnosis = self.cache_diagnosis
        if diagnosis is None:
            return None
        reason = diagnosis.get("cache_miss_reason")
        if isinstance(reason, Mapping):  # Anthropic
            kind = reason.get("type")
            return (kind, _int(reason, "cache_missed_input_tokens")) if isinstance(
                kind, str
            ) else None
        kind = diagnosis.get("type")  # OpenAI
        if kind == "cache_miss" and isinstance(diagnosis.get("reason"), str):
            return diagnosis["reason"], _int(diagnosis, "cache_missed_tokens")
        if kind in ("comparison_response_not_found", "unavailable"):
            return kind, None
        return None

    @property
    def compaction_tokens(self) -> tuple[int, int] | None:
        """Input and output tokens the server's compaction cost in this response, summed over
        its compaction steps (Anthropic reports each step in ``usage.iterations``); ``None``
        when the response reports none."""
        steps = self.raw.get("iterations")
        if not isinstance(steps, list):
            return None
        spent = [
            (step.get("input_tokens") or 0, step.get("output_tokens") or 0)
            for step in steps
            if isinstance(step, Mapping) and step.get("type") == "compaction"
        ]
        if not spent:
            return None
        return sum(i for i, _ in spent), sum(o for _, o in spent)

    @property
    def uncached_input_tokens(self) -> int:
        """Input tokens not read from the cache."""
        return self.input_tokens - self.cache_read_tokens

    @property
    def cache_reuse(self) -> float:
        """Share of the input read from the cache (0.0 for an empty input)."""
        return self.cache_read_tokens / self.input_tokens if self.input_tokens else 0.0


@dataclass(frozen=True, slots=True)
class UsageRecord:
    """One pushed response's usage and where its items start in the Context."""

    turn: int
    """The record's position in the log (0 for the first pushed response)."""
    index: int
    """The Context index of the response's first item."""
    usage: Usage


class UsageLog:
    """Usage of every pushed response, in push order. Safe to read from another thread."""

    __slots__ = ("_lock", "_records")

    def __init__(self) -> None:
        self._records: list[UsageRecord] = []
        self._lock = threading.Lock()

    def record(self, usage: Usage, index: int) -> UsageRecord:
        """Append ``usage`` for a response whose items start at ``index``."""
        with self._lock:
            entry = UsageRecord(len(self._records), index, usage)
            self._records.append(entry)
            return entry

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[UsageRecord]:
        return iter(tuple(self._records))

    def __getitem__(self, turn: int) -> UsageRecord:
        return self._records[turn]

    @property
    def last(self) -> UsageRecord | None:
        """The latest record, or ``None`` before the first."""
        return self._records[-1] if self._records else None

    def totals(self) -> dict[str, int]:
        """Sums of input, output, cache-read and cache-write tokens (unreported writes: 0)."""
        records = tuple(self._records)
        return {
            "input_tokens": sum(r.usage.input_tokens for r in records),
            "output_tokens": sum(r.usage.output_tokens for r in records),
            "cache_read_tokens": sum(r.usage.cache_read_tokens for r in records),
            "cache_write_tokens": sum(r.usage.cache_write_tokens or 0 for r in records),
        }

    def cache_reuse(self) -> float:
        """Share of all recorded input read from the cache."""
        totals = self.totals()
        read, total = totals["cache_read_tokens"], totals["input_tokens"]
        return read / total if total else 0.0


def _as_mapping(output: object) -> Mapping[str, Any] | None:
    """The response as a mapping: a dict as it is, an SDK object through its JSON dump."""
    if isinstance(output, Mapping):
        return output
    dump = getattr(output, "model_dump", None)
    if callable(dump):
        try:
            dumped = dump(mode="json", by_alias=False, exclude_none=True, warnings=False)
        except TypeError:
            dumped = dump()
        return dumped if isinstance(dumped, Mapping) else None
    return None


def _int(block: Mapping[str, Any], *names: str) -> int | None:
    for name in names:
        value = block.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _details(block: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = block.get(name)
    return value if isinstance(value, Mapping) else {}


def _diagnosis(body: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    value = body.get(name)
    return dict(value) if isinstance(value, Mapping) else None


def usage_of(gateway: GatewayType, output: object) -> Usage | None:
    """The usage ``output`` reports, or ``None`` when it carries none (a bare item, a list).

    ``output`` is what :meth:`~hydrangea.context.Context.push_back` takes:
    a raw response dict or an official SDK response object.
    """
    body = _as_mapping(output)
    if body is None:
        return None
    match gateway:
        case GatewayType.anthropic:
            return _anthropic(body)
        case GatewayType.openai:
            return _openai(body, gateway, "prompt_tokens", "completion_tokens",
                           "prompt_tokens_details")
        case GatewayType.openai_responses:
            return _openai(body, gateway, "input_tokens", "output_tokens",
                           "input_tokens_details")
        case GatewayType.gemini:
            return _gemini(body)
        case _:
            assert_never(gateway)


def _anthropic(body: Mapping[str, Any]) -> Usage | None:
    usage = body.get("usage")
    if not isinstance(usage, Mapping):
        return None
    uncached = _int(usage, "input_tokens") or 0
    read = _int(usage, "cache_read_input_tokens") or 0
    write = _int(usage, "cache_creation_input_tokens") or 0
    managed = _details(body, "context_management").get("applied_edits")
    edits = tuple(
        dict(edit) for edit in (managed if isinstance(managed, list) else [])
        if isinstance(edit, Mapping)
    )
    return Usage(
        GatewayType.anthropic, uncached + read + write, _int(usage, "output_tokens") or 0,
        read, write, dict(usage), edits, _diagnosis(body, "diagnostics"),
    )


def _openai(
    body: Mapping[str, Any], gateway: GatewayType, prompt: str, completion: str, details: str
) -> Usage | None:
    usage = body.get("usage")
    if not isinstance(usage, Mapping):
        return None
    detail = _details(usage, details)
    return Usage(
        gateway, _int(usage, prompt) or 0, _int(usage, completion) or 0,
        _int(detail, "cached_tokens") or 0, _int(detail, "cache_write_tokens"), dict(usage),
        cache_diagnosis=_diagnosis(body, "prompt_cache_diagnostics"),
    )


def _gemini(body: Mapping[str, Any]) -> Usage | None:
    usage = body.get("usageMetadata", body.get("usage_metadata"))
    if not isinstance(usage, Mapping):
        return None
    prompt = _int(usage, "promptTokenCount", "prompt_token_count") or 0
    tool_prompt = _int(usage, "toolUsePromptTokenCount", "tool_use_prompt_token_count") or 0
    output = _int(usage, "candidatesTokenCount", "candidates_token_count") or 0
    thoughts = _int(usage, "thoughtsTokenCount", "thoughts_token_count") or 0
    cached = _int(usage, "cachedContentTokenCount", "cached_content_token_count") or 0
    return Usage(
        GatewayType.gemini, prompt + tool_prompt, output + thoughts, cached, None, dict(usage)
    )
