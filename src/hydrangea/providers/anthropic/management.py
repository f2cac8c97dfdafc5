"""Anthropic context management: context editing, threshold and on-demand compaction.

Typed request options (:class:`~hydrangea.providers.features.RequestFeature`) for
``Context(GatewayType.anthropic).request(features=[...])``; the kwargs go to
``client.beta.messages.create`` (they carry ``betas=[...]``):

* :class:`ContextEditing` of :class:`ClearToolUses` and :class:`ClearThinking` edits
  (``context_management={"edits": [...]}``, beta ``context-management-2025-06-27``): the server
  clears old tool results or thinking blocks *in what it reads*; the request the client sends
  is unchanged, so the Context keeps sending its history as it is. What was cleared comes back in
  the response's ``context_management.applied_edits``.
* :class:`ThresholdCompaction` (the ``compact_20260112`` edit, beta ``compact-2026-01-12``):
  past the trigger the server summarizes the conversation and the reply starts with a
  ``compaction`` block; the Context starts later requests at that message.
* :class:`OnDemandCompaction` (``compaction={"type": "summarize"}``, beta
  ``compact-2026-09-04``): the request is a compaction request; its reply
  (``stop_reason: "compaction"``, one message) takes the place of exactly the messages it sent
  (``Context.push_compaction``). Sent without ``context_management``, as the SDK's own runner
  sends it.

Every option checks its numbers when made (:class:`~hydrangea.errors.RequestOptionError`) and the
gateway and model when applied (:class:`~hydrangea.errors.UnsupportedOptionError`, before
anything is built). Models of the Claude 2 and 3 families have none of these features.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from hydrangea.errors import RequestOptionError, UnsupportedOptionError
from hydrangea.gateway import GatewayType
from hydrangea.providers.features import check_instructions, merge_into

__all__ = [
    "MIN_COMPACTION_TRIGGER",
    "ClearThinking",
    "ClearToolUses",
    "ContextEditing",
    "OnDemandCompaction",
    "ThresholdCompaction",
]

CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"
THRESHOLD_COMPACTION_BETA = "compact-2026-01-12"
ON_DEMAND_COMPACTION_BETA = "compact-2026-09-04"

MIN_COMPACTION_TRIGGER = 50_000
"""The smallest ``trigger`` the API takes for threshold compaction (its default is 150,000)."""

_WITHOUT = ("claude-2", "claude-3", "claude-instant")
"""Model name prefixes of families that have no context management at all."""


def _check(option: str, gateway: GatewayType, model: str | None) -> None:
    if gateway is not GatewayType.anthropic:
        raise UnsupportedOptionError(
            f"{option} is an Anthropic option and this Context is for {gateway.value}: use "
            "it with Context(GatewayType.anthropic)",
            option=option, gateway=gateway.value, model=model,
        )
    if model is not None and model.startswith(_WITHOUT):
        raise UnsupportedOptionError(
            f"{model} has no {option}: use a Claude 4 or later model, or leave the option out",
            option=option, gateway=gateway.value, model=model,
        )


def _count(name: str, value: int | None, *, minimum: int = 1) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise RequestOptionError(f"{name} must be an int of at least {minimum}, got {value!r}")


@dataclass(frozen=True, slots=True)
class ClearToolUses:
    """The ``clear_tool_uses_20250919`` edit: clear the oldest tool results past a trigger."""

    trigger_input_tokens: int | None = None
    """Clear once the input reaches this many tokens (``None``: the server's default)."""
    trigger_tool_uses: int | None = None
    """... or once this many tool uses are in it (give at most one trigger)."""
    keep_tool_uses: int | None = None
    """How many of the latest tool uses to keep (``None``: the server's default)."""
    clear_at_least_tokens: int | None = None
    """Edit only when at least this many tokens would be cleared."""
    exclude_tools: tuple[str, ...] = ()
    """Tools whose uses are never cleared."""
    clear_tool_inputs: bool | tuple[str, ...] | None = None
    """Also clear the calls' inputs: all (``True``) or those of the named tools."""

    def __post_init__(self) -> None:
        if self.trigger_input_tokens is not None and self.trigger_tool_uses is not None:
            raise RequestOptionError("give one trigger: input tokens or tool uses, not both")
        _count("trigger_input_tokens", self.trigger_input_tokens)
        _count("trigger_tool_uses", self.trigger_tool_uses)
        _count("keep_tool_uses", self.keep_tool_uses, minimum=0)
        _count("clear_at_least_tokens", self.clear_at_least_tokens)
        names = [*self.exclude_tools, *(
            self.clear_tool_inputs if isinstance(self.clear_tool_inputs, tuple) else ()
        )]
        if not all(isinstance(name, str) and name for name in names):
            raise RequestOptionError("tool names must be non-empty strings")

    def edit(self) -> dict[str, Any]:
        """The edit as the API takes it."""
        edit: dict[str, Any] = {"type": "clear_tool_uses_20250919"}
        if self.trigger_input_tokens is not None:
            edit["trigger"] = {"type": "input_tokens", "value": self.trigger_input_tokens}
        if self.trigger_tool_uses is not None:
            edit["trigger"] = {"type": "tool_uses", "value": self.trigger_tool_uses}
        if self.keep_tool_uses is not None:
            edit["keep"] = {"type": "tool_uses", "value": self.keep_tool_uses}
        if self.clear_at_least_tokens is not None:
            edit["clear_at_least"] = {"type": "input_tokens", "value": self.clear_at_least_tokens}
        if self.exclude_tools:
            edit["exclude_tools"] = list(self.exclude_tools)
        if isinstance(self.clear_tool_inputs, tuple):
            edit["clear_tool_inputs"] = list(self.clear_tool_inputs)
        elif self.clear_tool_inputs is not None:
            edit["clear_tool_inputs"] = self.clear_tool_inputs
        return edit


@dataclass(frozen=True, slots=True)
class ClearThinking:
    """The ``clear_thinking_20251015`` edit: keep thinking blocks of the latest turns only."""

    keep_turns: int | Literal["all"] | None = None
    """Assistant turns whose thinking is kept (``"all"``: clear none; ``None``: the server's
    default, the last turn)."""

    def __post_init__(self) -> None:
        if self.keep_turns != "all":
            _count("keep_turns", self.keep_turns)

    def edit(self) -> dict[str, Any]:
        """The edit as the API takes it."""
        edit: dict[str, Any] = {"type": "clear_thinking_20251015"}
        if self.keep_turns == "all":
            edit["keep"] = "all"
        elif self.keep_turns is not None:
            edit["keep"] = {"type": "thinking_turns", "value": self.keep_turns}
        return edit


@dataclass(frozen=True, slots=True)
class ContextEditing:
    """Server-side context editing with these edits (thinking edits first, as the API wants)."""

    edits: tuple[ClearToolUses | ClearThinking, ...]

    def __post_init__(self) -> None:
        if not self.edits:
            raise RequestOptionError("ContextEditing needs at least one edit")
        kinds = [type(edit) for edit in self.edits]
        if len(set(kinds)) != len(kinds):
            raise RequestOptionError("give each kind of edit once")

    @property
    def swaps_head(self) -> bool:
        """False: the server edits what it reads; the reply is an ordinary one."""
        return False

    def apply(self, request: dict[str, Any], gateway: GatewayType, model: str | None) -> None:
        """Add ``context_management`` and its beta header."""
        _check("context editing", gateway, model)
        ordered = sorted(self.edits, key=lambda edit: not isinstance(edit, ClearThinking))
        merge_into(request, "betas", [CONTEXT_MANAGEMENT_BETA])
        merge_into(request, "context_management", {"edits": [e.edit() for e in ordered]})


@dataclass(frozen=True, slots=True)
class ThresholdCompaction:
    """The ``compact_20260112`` edit: the server compacts once the input passes a trigger."""

    trigger_input_tokens: int | None = None
    """Compact once the input reaches this many tokens, at least
    :data:`MIN_COMPACTION_TRIGGER` (``None``: the server's default, 150,000)."""
    instructions: str | None = None
    """Extra instructions for the summary."""
    pause_after_compaction: bool = False
    """Stop right after the compaction block (the reply holds only it)."""

    def __post_init__(self) -> None:
        _count("trigger_input_tokens", self.trigger_input_tokens, minimum=MIN_COMPACTION_TRIGGER)
        check_instructions(self.instructions)

    @property
    def swaps_head(self) -> bool:
        """False: the compaction block comes inside an ordinary reply."""
        return False

    def apply(self, request: dict[str, Any], gateway: GatewayType, model: str | None) -> None:
        """Add the compaction edit and its beta header."""
        _check("threshold compaction", gateway, model)
        edit: dict[str, Any] = {"type": "compact_20260112"}
        if self.trigger_input_tokens is not None:
            edit["trigger"] = {"type": "input_tokens", "value": self.trigger_input_tokens}
        if self.instructions is not None:
            edit["instructions"] = self.instructions
        if self.pause_after_compaction:
            edit["pause_after_compaction"] = True
        merge_into(request, "betas", [THRESHOLD_COMPACTION_BETA])
        merge_into(request, "context_management", {"edits": [edit]})


@dataclass(frozen=True, slots=True)
class OnDemandCompaction:
    """A compaction request: its summary replaces the messages it sent."""

    instructions: str | None = None
    """Replace the server's summarization prompt for this request."""

    def __post_init__(self) -> None:
        check_instructions(self.instructions)

    @property
    def swaps_head(self) -> bool:
        """True: the reply takes the place of the history this request sent."""
        return True

    def apply(self, request: dict[str, Any], gateway: GatewayType, model: str | None) -> None:
        """Add ``compaction`` and its beta header; refuse ``context_management`` beside it."""
        _check("on-demand compaction", gateway, model)
        if "context_management" in request:
            raise RequestOptionError(
                "a compaction request is sent without context_management: build it with "
                "OnDemandCompaction alone"
            )
        config: dict[str, Any] = {"type": "summarize"}
        if self.instructions is not None:
            config["instructions"] = self.instructions
        merge_into(request, "betas", [ON_DEMAND_COMPACTION_BETA])
        merge_into(request, "compaction", config)
