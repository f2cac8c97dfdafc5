"""Provider-native context management in the study: the provider compacts or edits, not us.

Each strategy drives a real :class:`~hydrangea.context.Context` with the library's own request
options (``Context.request(features=[...])``, ``push_back``, ``push_compaction``), and a
scripted stand-in for the provider (no network) answers under that provider's documented rule
only. What is counted is what the provider *reads* on each call, priced by the provider's cache
rules (:mod:`.providers`); a compaction pass is one more call in the same turn, billed on the
input it reads plus its summary as output tokens (:data:`OUTPUT_PRICE`, in base input prices).

* :class:`AnthropicThreshold` -- ``compact_20260112`` with a trigger (at least 50,000 input
  tokens, build-with-claude/compaction-threshold): a request reaching the trigger is read in full
  by a compaction iteration, then answered on the system prompt and the summary (the two
  ``usage.iterations``); the reply starts with the ``compaction`` block, and the Context starts
  later requests at it.
* :class:`AnthropicOnDemand` -- a compaction request (``OnDemandCompaction``) at the turns where
  the library's own conversation checkpoints; its ``stop_reason: "compaction"`` reply replaces
  what it sent (``push_compaction``).
* :class:`AnthropicEditing` -- ``clear_tool_uses_20250919``: the client sends its whole history;
  past the trigger the server reads every tool result but the latest ``keep`` replaced by a
  placeholder (only if at least ``clear_at_least`` tokens go), which invalidates the cache from
  the first newly cleared result on (build-with-claude/context-editing, "Context editing and
  prompt caching"). Nothing summarizes what was cleared.
* :class:`ResponsesThreshold` -- ``context_management`` ``compact_threshold``: a request crossing
  it is read in full, then a compaction pass appends an encrypted ``compaction`` item after the
  reply (the order of the recorded body); later requests start at that item.
* :class:`ResponsesCompact` -- ``/responses/compact`` at the library's checkpoint turns: the
  window (the user messages, then one ``compaction`` item) replaces what the request sent.

A provider summary is opaque, so it is modelled by the study's extractive digest
(:func:`.summaries.digest`, one first sentence per message replaced, no pointers: the provider
keeps no record store), and its size is that digest's token count (the encrypted item too).
"Facts kept" is then the same digest check as for every strategy, on what the provider reads
last, with each encrypted item read as that digest. Gemini has no provider compaction.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hydrangea.context import Context, NativeContent
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, ToolResultPart
from hydrangea.providers.anthropic import ContextEditing, OnDemandCompaction, ThresholdCompaction
from hydrangea.providers.anthropic.caching import strip_cache_control
from hydrangea.providers.anthropic.management import ClearToolUses
from hydrangea.providers.features import RequestFeature
from hydrangea.providers.openai import ResponsesCompact as CompactOption
from hydrangea.providers.openai import ResponsesCompaction

from .accounting import Request, RequestMessage
from .render import Renderer
from .strategy import check_budget, reminder_messages
from .summaries import Digest, first_sentence, message_text
from .transcript import Turn

__all__ = [
    "OUTPUT_PRICE",
    "AnthropicEditing",
    "AnthropicOnDemand",
    "AnthropicThreshold",
    "BoundaryMismatchError",
    "Call",
    "NativeStrategy",
    "ResponsesCompact",
    "ResponsesThreshold",
]

OUTPUT_PRICE = {"anthropic": 5.0, "openai": 8.0}
"""Output over input list price: Claude Sonnet 4.5 ($3 / $15 per MTok), GPT-5 ($1.25 / $10)."""

MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-5"}
PLACEHOLDER = "[tool result cleared]"


@dataclass(frozen=True, slots=True)
class Call:
    """One call the provider bills this turn: what it reads, and the output tokens it writes
    (the summary of a compaction pass; ordinary replies are the same for every strategy)."""

    read: Request
    output_tokens: int = 0
    compaction: bool = False


class BoundaryMismatchError(RuntimeError):
    """The Context sent something else than the provider's rule keeps (a library defect)."""


class NativeStrategy:
    """What the native strategies share: a Context, the live messages, the carried facts."""

    name = "provider native"

    def __init__(self, gateway: GatewayType, renderer: Renderer, system: str, budget: int) -> None:
        self.renderer = renderer
        self.budget = budget
        self.context = Context(gateway)
        self.context.emplace_message(Message(role=Role.system, content=system))
        self.live: list[Message] = []
        """The messages a compaction would replace (since the last one)."""
        self.facts: list[str] = []
        self.encrypted: dict[str, tuple[str, int]] = {}
        """Encrypted item content -> (the digest it stands for, its token count)."""
        self.compactions = 0
        self.last: Request = ()
        self.kept: list[NativeContent] | None = None
        """After a compaction: what the provider's rule keeps, then every item appended."""
        alone = Context(gateway)
        alone.emplace_message(Message(role=Role.system, content=system))
        self.system = renderer.units(alone.request(model=MODELS[self.provider]))
        """The system prompt's units: every request the provider reads starts with them."""

    def step(self, turn: Turn) -> list[Call]:
        """The provider calls of this turn, the model's read last."""
        raise NotImplementedError

    def records(self) -> Mapping[str, str] | None:
        """No records: a provider summary points nowhere."""
        return None

    def final(self) -> Request:
        """What the provider read last, each encrypted item read as the digest it models."""
        out = []
        for unit in self.last:
            hit = next((v for k, v in self.encrypted.items() if k in unit.text), None)
            out.append(unit if hit is None else RequestMessage(hit[0], unit.tokens))
        return tuple(out)

    # -- helpers ---------------------------------------------------------------------------

    def push_user(self, message: Message) -> None:
        self.context.emplace_message(message)
        self.live.append(message)
        if self.kept is not None:
            self.kept.extend(self.renderer.native(message))

    def push_reply(self, native: list[NativeContent], message: Message) -> None:
        self.context.push_back(native)
        self.live.append(message)
        if self.kept is not None:
            self.kept.extend(native)

    def check_sent(self, kwargs: Mapping[str, Any]) -> None:
        """After a compaction, the Context must send what the provider's rule keeps (and what
        came since), after the system prompt, as the adapter builds it (a tool result whose
        call went with the compaction is repaired the same way as anywhere);
        :class:`BoundaryMismatchError` otherwise."""
        if self.kept is None:
            return
        items = kwargs.get("messages", kwargs.get("input", []))
        sent = [
            strip_cache_control(i) for i in items if i.get("role") not in ("system", "developer")
        ]
        built = self.renderer.adapter.build_request(self.kept)  # (orphan halves repaired)
        kept = built.get("messages", built.get("input", []))
        if sent != [strip_cache_control(i) for i in kept]:
            raise BoundaryMismatchError(
                f"{self.name}: after compaction {self.compactions} the Context sent "
                f"{len(sent)} items where the provider's rule keeps {len(self.kept)}"
            )

    def summary(self, replaced: Sequence[Message]) -> str:
        """The digest of the previous summary's facts and the replaced messages."""
        self.facts.extend(first_sentence(message_text(m)) for m in replaced)
        self.compactions += 1
        return Digest(0, self.compactions, tuple(self.facts), ()).render()

    def request(self, turn: Turn, features: Sequence[RequestFeature] = ()) -> tuple[
        dict[str, Any], Request
    ]:
        """The Context's request with the turn's reminders at its tail, and its units."""
        kwargs = self.context.request(features=features, model=MODELS[self.provider])
        self.check_sent(kwargs)
        tail = [i for m in reminder_messages(turn.reminders) for i in self.renderer.native(m)]
        key = "messages" if "messages" in kwargs else "input"
        kwargs[key] = [*kwargs[key], *tail]
        return kwargs, self.with_system(self.units(kwargs))

    def with_system(self, units: Request) -> Request:
        """``units``, checked to start with the system prompt: a compaction replaces messages,
        never the system prompt, and the Context sends it on after every boundary
        (:class:`BoundaryMismatchError` otherwise)."""
        head = [unit.text for unit in self.system]
        if [unit.text for unit in units[: len(head)]] != head:
            raise BoundaryMismatchError(
                f"{self.name}: after compaction {self.compactions} the request does not start "
                "with the system prompt"
            )
        return units

    def units(self, kwargs: Mapping[str, Any]) -> Request:
        """Counted units; an encrypted item counts as the digest it stands for."""
        out = []
        for unit in self.renderer.units(kwargs):
            hit = next((v for k, v in self.encrypted.items() if k in unit.text), None)
            out.append(unit if hit is None else RequestMessage(unit.text, hit[1], unit.breakpoint))
        return tuple(out)

    @property
    def provider(self) -> str:
        return "anthropic" if self.context.gateway is GatewayType.anthropic else "openai"

    def tokens(self, text: str) -> int:
        return self.renderer.counter.count(text)

    def read(self, units: Request) -> Request:
        self.last = check_budget(self.name, units, self.budget)
        return self.last


class AnthropicThreshold(NativeStrategy):
    """Threshold compaction (``compact_20260112``) with an input-token trigger."""

    def __init__(self, renderer: Renderer, system: str, budget: int, *, trigger: int) -> None:
        super().__init__(GatewayType.anthropic, renderer, system, budget)
        self.name = "Anthropic threshold compaction"
        self.option = ThresholdCompaction(trigger_input_tokens=trigger)
        self.trigger = trigger
        self.pending: str | None = None

    def step(self, turn: Turn) -> list[Call]:
        for message in turn.events:
            if message.role is not Role.assistant:
                self.push_user(message)
                continue
            native = self.renderer.native(message)
            if self.pending is not None:  # the reply to the request that compacted
                blocks = [{"type": "compaction", "content": self.pending}]
                native = [{**native[0], "content": [*blocks, *native[0]["content"]]}]
                self.pending = None
                self.live = []
                self.kept = []  # the rule: requests start at the message of the block
            self.push_reply(native, message)
        _, units = self.request(turn, [self.option])
        if sum(u.tokens for u in units) < self.trigger:
            return [Call(self.read(units))]
        self.pending = self.summary([*self.live, *reminder_messages(turn.reminders)])
        summary = json.dumps({"type": "compaction", "content": self.pending})
        after = (*self.system, RequestMessage(summary, self.tokens(summary)))
        return [Call(units, self.tokens(self.pending), True), Call(self.read(after))]


class _AtTurns(NativeStrategy):
    """A head-swap compaction request at given turns: after the turn's first reply, before what
    follows it (the background form); :meth:`compact` sends it."""

    at: frozenset[int]

    def step(self, turn: Turn) -> list[Call]:
        calls = []
        for n, message in enumerate(turn.events):
            if message.role is Role.assistant:
                self.push_reply(self.renderer.native(message), message)
            else:
                self.push_user(message)
            if n == 0 and turn.index in self.at:  # after the reply, before what follows it
                calls.append(self.compact())
        _, units = self.request(turn)
        calls.append(Call(self.read(units)))
        return calls

    def compact(self) -> Call:
        """Send the compaction request; push the stand-in's reply to it."""
        raise NotImplementedError


class AnthropicOnDemand(_AtTurns):
    """On-demand compaction requests at given turns."""

    def __init__(
        self, renderer: Renderer, system: str, budget: int, *, at: frozenset[int]
    ) -> None:
        super().__init__(GatewayType.anthropic, renderer, system, budget)
        self.name = "Anthropic on-demand compaction"
        self.at = at

    def compact(self) -> Call:
        """Send the compaction request; push the stand-in's reply to it."""
        kwargs = self.context.request(features=[OnDemandCompaction()], model=MODELS["anthropic"])
        summary = self.summary(self.live)
        self.live = []
        block = {"role": "assistant", "content": [{"type": "compaction", "content": summary}]}
        self.context.push_compaction({"type": "message", "stop_reason": "compaction", **block})
        self.kept = [block]  # the rule: the summary in place of what the request sent
        return Call(self.with_system(self.units(kwargs)), self.tokens(summary), True)


class AnthropicEditing(NativeStrategy):
    """Tool-result clearing (``clear_tool_uses_20250919``), applied by the stand-in server."""

    def __init__(
        self, renderer: Renderer, system: str, budget: int, *, trigger: int, keep: int,
        clear_at_least: int | None = None,
    ) -> None:
        super().__init__(GatewayType.anthropic, renderer, system, budget)
        self.name = "Anthropic context editing (clear tool uses)"
        self.option = ContextEditing((ClearToolUses(
            trigger_input_tokens=trigger, keep_tool_uses=keep,
            clear_at_least_tokens=clear_at_least,
        ),))
        self.trigger, self.keep, self.at_least = trigger, keep, clear_at_least or 0
        self.placeholder = self.tokens(PLACEHOLDER)

    def step(self, turn: Turn) -> list[Call]:
        for message in turn.events:
            if message.role is Role.assistant:
                self.context.push_back(self.renderer.native(message))
            else:
                self.context.emplace_message(message)
        kwargs, units = self.request(turn, [self.option])
        if kwargs["context_management"]["edits"][0]["type"] != "clear_tool_uses_20250919":
            raise AssertionError("the request does not carry the edit")
        return [Call(self.read(cleared(units, self.trigger, self.keep, self.at_least,
                                       self.placeholder)))]


def cleared(
    units: Request, trigger: int, keep: int, at_least: int, placeholder: int
) -> Request:
    """What the server reads under ``clear_tool_uses``: past ``trigger`` input tokens, every
    tool result but the latest ``keep`` becomes a placeholder, if that clears ``at_least``."""
    if sum(u.tokens for u in units) < trigger:
        return units
    results = [n for n, u in enumerate(units) if '"type":"tool_result"' in u.text]
    old = results[: max(len(results) - keep, 0)]
    if sum(units[n].tokens - placeholder for n in old) < at_least:
        return units
    out = list(units)
    for n in old:
        digest = hashlib.sha256(units[n].text.encode()).hexdigest()[:12]
        out[n] = RequestMessage(f"{PLACEHOLDER} {digest}", placeholder, units[n].breakpoint)
    return tuple(out)


def _encrypted(summary: str) -> str:
    return "enc-" + hashlib.sha256(summary.encode()).hexdigest()


class ResponsesThreshold(NativeStrategy):
    """Responses server compaction (``compact_threshold``)."""

    def __init__(self, renderer: Renderer, system: str, budget: int, *, threshold: int) -> None:
        super().__init__(GatewayType.openai_responses, renderer, system, budget)
        self.name = "OpenAI Responses compaction (compact_threshold)"
        self.option = ResponsesCompaction(threshold)
        self.threshold = threshold
        self.pending: Request | None = None

    def step(self, turn: Turn) -> list[Call]:
        calls: list[Call] = []
        for message in turn.events:
            if message.role is not Role.assistant:
                self.push_user(message)
                continue
            native = list(self.renderer.native(message))
            item: NativeContent | None = None
            if self.pending is not None:  # the output: the reply, then the compaction item
                summary = self.summary([*self.live, message])  # (the pass reads the reply)
                key = _encrypted(summary)
                self.encrypted[key] = (summary, self.tokens(summary))
                item = {"type": "compaction", "id": f"cmp_{self.compactions}",
                        "encrypted_content": key}
                native.append(item)
                calls.append(Call(self.pending, self.tokens(summary), True))
                self.pending = None
            self.push_reply(native, message)
            if item is not None:  # the rule: drop what came before the latest compaction item
                self.live, self.kept = [], [item]
        _, units = self.request(turn, [self.option])
        calls.append(Call(self.read(units)))
        if sum(u.tokens for u in units) >= self.threshold:
            self.pending = units  # compacted once the reply is written (billed with it)
        return calls


class ResponsesCompact(_AtTurns):
    """``/responses/compact`` at given turns."""

    def __init__(
        self, renderer: Renderer, system: str, budget: int, *, at: frozenset[int]
    ) -> None:
        super().__init__(GatewayType.openai_responses, renderer, system, budget)
        self.name = "OpenAI /responses/compact"
        self.at = at

    def compact(self) -> Call:
        """Send the compaction request; push the stand-in's reply to it."""
        kwargs = self.context.request(features=[CompactOption()], model=MODELS["openai"])
        users = [
            item for item in kwargs["input"]
            if item.get("role") == "user" and item.get("type", "message") == "message"
        ]
        summary = self.summary([m for m in self.live if not _user_message(m)])
        self.live = [m for m in self.live if _user_message(m)]
        key = _encrypted(summary)
        self.encrypted[key] = (summary, self.tokens(summary))
        window = [*users, {"type": "compaction", "id": f"cmp_{self.compactions}",
                           "encrypted_content": key}]
        self.context.push_compaction({"object": "response.compaction", "output": window})
        self.kept = window  # the rule: the window in place of what the request sent
        return Call(self.with_system(self.units(kwargs)), self.tokens(summary), True)


def _user_message(message: Message) -> bool:
    """A user message the compact window keeps (tool results are ``function_call_output``)."""
    return message.role is Role.user and not any(
        isinstance(part, ToolResultPart) for part in message.parts
    )
