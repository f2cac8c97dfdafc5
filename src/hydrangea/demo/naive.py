"""What a naive agent loop would have sent, paid and lost in the demo's session.

The naive loop is the one people write without the library: one list of messages sent whole on
every call; each retrieved document pasted in as plain text (no as-of check, no fence); every
reply and tool result appended; the reminders of the moment written into the system prompt.
:func:`naive_loop` runs it over the same scenario and the same scripted replies, builds each
request in the gateway's wire shape (a plain :class:`~hydrangea.context.Context` used as a list,
rebuilt for every call) and measures it exactly as the session measures its own requests.
With ``budget``, the loop does what such loops do when a request grows too large: it drops the
oldest whole turns until the request fits.

:func:`loop_cost` measures any list of requests the same way, so the library's session and the
naive loops are compared by one yardstick: tokens sent, the prefix the previous request leaves
in a provider cache (billed at :data:`CACHE_READ` of the input price), documents from after the
session's ``as_of`` that reached the model, an injection that reached it as plain text, and the
earlier turns the last request neither shows nor points to.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hydrangea.asof import ApproxTokenCounter
from hydrangea.context.context import Context
from hydrangea.demo import scenario
from hydrangea.demo.report import cache_order_text, reuse
from hydrangea.demo.scripted import ScriptedModel
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, ToolCallPart, ToolResultPart

__all__ = ["CACHE_READ", "LoopCost", "loop_cost", "naive_loop"]

CACHE_READ = 0.1
"""The price of a cached input token relative to an uncached one (Anthropic and OpenAI reads)."""

_MAX_CALLS = 6


@dataclass(frozen=True, slots=True)
class LoopCost:
    """One loop's requests over the session, measured."""

    label: str
    requests: int
    tokens: int
    """Input tokens of all requests together."""
    peak: int
    """The largest request."""
    reused: int
    """Tokens that were a prefix of the previous request (what a provider cache can serve)."""
    billed: int
    """Input tokens as billed: reused ones at :data:`CACHE_READ`, the rest in full."""
    future_documents: int
    """Documents published after ``as_of`` whose text reached the model."""
    injection_unfenced: bool
    """Whether the planted injection reached the model as plain text."""
    turns_lost: int
    """Earlier user turns the last request neither shows nor points to (a record id)."""


def _json_fragment(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


def loop_cost(
    label: str, gateway: GatewayType, requests: Sequence[dict[str, Any]], turns: int
) -> LoopCost:
    """Measure ``requests`` (the kwargs of each call, in order) of a ``turns``-turn session."""
    counter = ApproxTokenCounter()
    previous: str | None = None
    tokens = peak = reused = 0
    texts: list[str] = []
    for kwargs in requests:
        text = cache_order_text(gateway, kwargs)
        total, shared = reuse(previous, text, counter)
        previous = text
        tokens, peak, reused = tokens + total, max(peak, total), reused + shared
        texts.append(json.dumps(kwargs, ensure_ascii=False))
    future = [
        d for d in scenario.turn_spec(1).documents if d.published_at > scenario.AS_OF
    ]
    last = texts[-1] if texts else ""
    lost = sum(
        1
        for turn in range(1, turns)
        if _json_fragment(scenario.turn_spec(turn).user) not in last
        and f"turn-{turn}/user" not in last
    )
    return LoopCost(
        label=label,
        requests=len(requests),
        tokens=tokens,
        peak=peak,
        reused=reused,
        billed=round(reused * CACHE_READ + (tokens - reused)),
        future_documents=sum(
            any(_json_fragment(d.content) in text for text in texts) for d in future
        ),
        injection_unfenced=any(_json_fragment(scenario.INJECTION) in text for text in texts),
        turns_lost=lost,
    )


def _request(
    gateway: GatewayType, history: Sequence[Message | object], reminders: Sequence[str]
) -> dict[str, Any]:
    context = Context(gateway)
    system = "\n\n".join([scenario.SYSTEM_PROMPT, *reminders])
    context.emplace_message(Message(role=Role.system, content=system))
    for entry in history:
        if isinstance(entry, Message):
            context.emplace_message(entry)
        else:
            context.push_back(entry)
    return context.request()


def _fit(
    gateway: GatewayType,
    turns: list[list[Message | object]],
    reminders: Sequence[str],
    budget: int | None,
) -> dict[str, Any]:
    """The request of ``turns`` (oldest first), dropping the oldest whole turns to fit."""
    counter = ApproxTokenCounter()
    while True:
        kwargs = _request(gateway, [e for turn in turns for e in turn], reminders)
        size = counter.count(cache_order_text(gateway, kwargs))
        if budget is None or size <= budget or len(turns) <= 1:
            return kwargs
        del turns[0]


def naive_loop(
    gateway: GatewayType,
    turns: int,
    reminders_by_request: Sequence[Sequence[str]],
    budget: int | None = None,
) -> list[dict[str, Any]]:
    """The requests the naive loop sends over ``turns`` turns (see the module documentation).

    ``reminders_by_request`` gives the reminder texts in force at each call (the session's own
    schedule), so both loops carry the same reminders.
    """
    model = ScriptedModel(gateway)
    kept: list[list[Message | object]] = []
    requests: list[dict[str, Any]] = []
    for number in range(1, turns + 1):
        spec = scenario.turn_spec(number)
        question = spec.user
        if spec.documents:
            pasted = "\n\n".join(f"[{d.item_id}] {d.content}" for d in spec.documents)
            question = f"{question}\n\nSearch results:\n{pasted}"
        kept.append([Message(role=Role.user, content=question)])
        for call in range(1, _MAX_CALLS + 1):
            index = len(requests)
            reminders = reminders_by_request[index] if index < len(reminders_by_request) else ()
            kwargs = _fit(gateway, kept, reminders, budget)
            requests.append(kwargs)
            reply = model.reply(spec, call, kwargs)
            kept[-1].append(reply.output)
            assert reply.message is not None  # the scripted model always gives one
            calls = [p for p in reply.message.parts if isinstance(p, ToolCallPart)]
            if not calls:
                break
            results = tuple(
                ToolResultPart(
                    call_id=c.id, content=str(scenario.TOOLS[c.name](c.arguments))
                )
                for c in calls
            )
            kept[-1].append(Message(role=Role.user, content=results))
    return requests
