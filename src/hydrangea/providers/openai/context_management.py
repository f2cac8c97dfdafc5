"""OpenAI Responses context management: server compaction, ``/responses/compact``, truncation.

Three typed request options (:class:`~hydrangea.providers.features.RequestFeature`), for
``Context(GatewayType.openai_responses).request(features=[...])``:

* :class:`ResponsesCompaction` asks for server-side compaction,
  ``context_management=[{"type": "compaction", "compact_threshold": N}]``: when the rendered
  input crosses ``N`` tokens the server compacts and the response's ``output`` holds an
  encrypted ``compaction`` item. OpenAI's compaction guide: "After appending output items to the
  previous input items, you can drop items that came before the most recent compaction item
  [...]. The latest compaction item carries the necessary context to continue the
  conversation." The Responses adapter's :meth:`compaction_start` makes that item the start of
  later requests. A ``configuration_update`` item needs nothing of its own: "When the
  conversation contains earlier configuration_update items, the API emits one fresh
  configuration_update immediately after the compaction item", so the updates before the
  compaction are dropped with everything else there and the fresh one is sent as it came.
* :class:`ResponsesCompact` makes the request one for the standalone endpoint,
  ``client.responses.compact(**kwargs)`` (``swaps_head``): its reply, a ``response.compaction``
  window (the user messages, then one ``compaction`` item), takes the place of the history the
  request sent (the adapter's ``swapped_head``). ``compact`` takes ``model``, ``input``,
  ``instructions``, ``previous_response_id``, ``prompt_cache_key``, ``prompt_cache_options``,
  ``prompt_cache_retention``, ``service_tier`` and ``image``: pass no other keyword (``tools``,
  ``context_management`` ...) to that ``request()``.
* :class:`ResponsesTruncation` sets ``truncation``. ``"auto"`` lets the API drop items from the
  beginning of the conversation when the input exceeds the context window, silently: what was
  sent would no longer be what the model saw. It is refused unless the caller says so with
  ``drops_history=True``; ``"disabled"`` (the API's default: a 400 instead) needs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from hydrangea.errors import RequestOptionError, UnsupportedOptionError
from hydrangea.gateway import GatewayType
from hydrangea.providers.features import check_instructions, merge_into

__all__ = ["ResponsesCompact", "ResponsesCompaction", "ResponsesTruncation"]


def _responses_only(option: str, gateway: GatewayType, model: str | None) -> None:
    if gateway is not GatewayType.openai_responses:
        raise UnsupportedOptionError(
            f"{option} is an OpenAI Responses option and this Context is for "
            f"{gateway.value}: use it with Context(GatewayType.openai_responses)",
            option=option,
            gateway=gateway.value,
            model=model,
        )


@dataclass(frozen=True, slots=True)
class ResponsesCompaction:
    """Server-side compaction once the rendered input crosses ``threshold`` tokens."""

    threshold: int
    """``compact_threshold``: the rendered token count at which the server compacts."""

    def __post_init__(self) -> None:
        if isinstance(self.threshold, bool) or not isinstance(self.threshold, int):
            raise RequestOptionError(
                f"compact_threshold must be an int, got {type(self.threshold).__name__}"
            )
        if self.threshold <= 0:
            raise RequestOptionError(
                f"compact_threshold must be a positive token count, got {self.threshold}"
            )

    @property
    def swaps_head(self) -> bool:
        """False: the compaction item comes inside an ordinary response."""
        return False

    def apply(self, request: dict[str, Any], gateway: GatewayType, model: str | None) -> None:
        """Add ``context_management`` (Responses only)."""
        _responses_only("context_management", gateway, model)
        merge_into(
            request,
            "context_management",
            [{"type": "compaction", "compact_threshold": self.threshold}],
        )


@dataclass(frozen=True, slots=True)
class ResponsesCompact:
    """The request is for ``client.responses.compact``; its window replaces what it sent."""

    instructions: str | None = None
    """``instructions`` for the compaction pass only (``None``: none sent)."""

    def __post_init__(self) -> None:
        check_instructions(self.instructions)

    @property
    def swaps_head(self) -> bool:
        """True: the ``response.compaction`` window replaces the history this request sent."""
        return True

    def apply(self, request: dict[str, Any], gateway: GatewayType, model: str | None) -> None:
        """Check the gateway and that a model is named (``compact`` requires one); add
        ``instructions`` if set."""
        _responses_only("responses.compact", gateway, model)
        if model is None:
            raise UnsupportedOptionError(
                "client.responses.compact requires a model: pass request(model=...) with "
                "the compaction request",
                option="responses.compact",
                gateway=gateway.value,
                model=model,
            )
        if self.instructions is not None:
            merge_into(request, "instructions", self.instructions)


@dataclass(frozen=True, slots=True)
class ResponsesTruncation:
    """``truncation``; ``"auto"`` only with ``drops_history=True`` (module docstring)."""

    mode: Literal["auto", "disabled"]
    drops_history: bool = False
    """Set it to accept that ``"auto"`` drops the conversation's start without telling."""

    def __post_init__(self) -> None:
        if self.mode not in ("auto", "disabled"):
            raise RequestOptionError(
                f"truncation must be 'auto' or 'disabled', got {self.mode!r}"
            )
        if self.mode == "auto" and not self.drops_history:
            raise RequestOptionError(
                "truncation='auto' silently drops items from the start of the input when it "
                "exceeds the context window, so the model no longer sees what was sent; use "
                "ResponsesCompaction or ResponsesCompact to shorten a session, or pass "
                "ResponsesTruncation('auto', drops_history=True) to accept the loss"
            )

    @property
    def swaps_head(self) -> bool:
        """False."""
        return False

    def apply(self, request: dict[str, Any], gateway: GatewayType, model: str | None) -> None:
        """Add ``truncation`` (Responses only)."""
        _responses_only("truncation", gateway, model)
        merge_into(request, "truncation", self.mode)
