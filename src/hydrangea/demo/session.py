"""The demo's agent session: areas, an as-of retrieval, a tool loop, compaction and reminders.

:func:`run_session` drives one session turn by turn against a model (the offline
:class:`~hydrangea.demo.scripted.ScriptedModel`, or a live provider) and returns a
:class:`~hydrangea.demo.report.DemoReport` of what happened. It prints nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from hydrangea.areas import AsOfArea, CompactingConversation, OneShotNoticeArea, ToolLoopArea
from hydrangea.asof import ApproxTokenCounter, ContextBuilder, ContextItem, ItemKind
from hydrangea.asof.fence import unfence
from hydrangea.context.area import AnyContextArea, AreaLifeState, ContextAreaImplementation
from hydrangea.context.context import Context
from hydrangea.coop import CoopContext
from hydrangea.demo import scenario
from hydrangea.demo.naive import LoopCost, loop_cost, naive_loop
from hydrangea.demo.report import (
    CompactionFacts,
    DemoReport,
    Event,
    FencedFacts,
    ReasoningFacts,
    RejectionFacts,
    RequestFacts,
    RetrievalFacts,
    TurnFacts,
    cache_order_text,
    reuse,
)
from hydrangea.demo.scripted import ModelReply
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component
from hydrangea.lifecycle.session import Lifecycle
from hydrangea.message import Message, Role, TextPart, ToolCallPart

if TYPE_CHECKING:
    from hydrangea.stores import SessionStore, StoredSession

__all__ = ["DEFAULT_THRESHOLD", "DemoModel", "SessionOptions", "run_session"]

DEFAULT_THRESHOLD = 900
"""Conversation size (approximate tokens) at which a segment is compacted."""

RETRIEVAL_BUDGET = 600
"""Token budget of the as-of build."""

MAX_CALLS_PER_TURN = 6


class DemoModel(Protocol):
    """What the session needs from a model."""

    @property
    def name(self) -> str:
        """A label for the report."""
        ...

    def reply(self, spec: scenario.TurnSpec, call: int, kwargs: dict[str, Any]) -> ModelReply:
        """Answer the request ``kwargs`` (call ``call`` of ``spec``'s turn)."""
        ...


@dataclass(frozen=True, slots=True)
class SessionOptions:
    """How to run the session."""

    gateway: GatewayType
    turns: int = 10
    threshold_tokens: int = DEFAULT_THRESHOLD
    tools: bool = True
    live: bool = False
    save_to: Path | None = None
    """Where to save the lifecycle session at the end (for ``hydrangea explore``)."""
    store: SessionStore | None = None
    """A session store to save the lifecycle session to after every turn (incrementally)."""
    session_id: str = "demo"
    """The session's id in :attr:`store`."""


class _Tracker:
    """Names the areas and turns their state changes into events."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._labels: dict[int, str] = {}
        self._areas: dict[int, AnyContextArea] = {}
        self._retired: set[int] = set()

    def label(self, area: AnyContextArea) -> str:
        return self._labels.get(id(area), type(area).__name__)

    def registered(self, area: ContextAreaImplementation, label: str, turn: int) -> None:
        self._labels[id(area)] = label
        self._areas[id(area)] = area
        self.events.append(Event(turn, None, "registered", label, type(area).__name__))

    def sweep(self, turn: int, request: int | None) -> None:
        for key, area in self._areas.items():
            if key not in self._retired and area.life_state is AreaLifeState.retired:
                self._retired.add(key)
                self.events.append(Event(turn, request, "retired", self._labels[key]))

    def collected(self, turn: int, request: int, areas: tuple[AnyContextArea, ...],
                  detached: int, promoted: int) -> None:
        for area in areas:
            self.events.append(
                Event(turn, request, "collected", self.label(area),
                      f"tail of {detached} items detached, {promoted} promoted")
            )
            self._areas.pop(id(area), None)


def _routed_message(context: Context, before: int, reply: ModelReply) -> Message:
    if reply.message is not None:
        return reply.message
    text = "\n".join(context.adapter.item_text(item) for item in context[before:])
    return Message(role=Role.assistant, content=(TextPart(text=text or "(no text)"),))


def _contains_field(value: object, name: str, expected: str) -> bool:
    if isinstance(value, dict):
        return any(
            (k == name and v == expected) or _contains_field(v, name, expected)
            for k, v in value.items()
        )
    if isinstance(value, list):
        return any(_contains_field(v, name, expected) for v in value)
    return False


def _build_retrieval(
    spec: scenario.TurnSpec, records: Any
) -> tuple[Any, tuple[RejectionFacts, ...]]:
    builder = ContextBuilder(
        as_of=scenario.AS_OF, token_budget=RETRIEVAL_BUDGET, records=records
    )
    for document in spec.documents:
        builder.try_add(
            ContextItem.outside(
                ItemKind.DOCUMENT,
                document.content,
                item_id=document.item_id,
                published_at=document.published_at,
                origin=document.origin,
            )
        )
    built = builder.build()
    rejections = tuple(
        RejectionFacts(
            r.item_id,
            r.reason.value,
            None if r.published_at is None else r.published_at.isoformat(),
            r.as_of.isoformat(),
            r.content_sha256,
        )
        for r in built.rejections
    )
    return built, rejections


def run_session(
    options: SessionOptions,
    model: DemoModel,
    on_request: Callable[[RequestFacts], None] | None = None,
) -> DemoReport:
    """Run the scenario for ``options.turns`` turns and report what happened."""
    counter = ApproxTokenCounter()
    context = Context(options.gateway)
    context.emplace_message(Message(role=Role.system, content=scenario.SYSTEM_PROMPT))
    coop = CoopContext(context)
    lifecycle = Lifecycle(coop)
    tracker = _Tracker()
    notice = OneShotNoticeArea(
        "Shift handover: you are taking over the night desk. Earlier notes are in the tickets."
    )
    coop.register(notice)
    tracker.registered(notice, "handover-notice", 0)
    conversation = CompactingConversation(
        coop, threshold_tokens=options.threshold_tokens, clock=scenario.record_clock()
    )
    tracker.registered(conversation.current, "conversation#1", 0)
    for reminder in scenario.reminders():
        lifecycle.add(
            Component(reminder.text, key=reminder.key, ttl=reminder.ttl, cadence=reminder.cadence)
        )

    requests: list[RequestFacts] = []
    outputs: list[Any] = []
    turns: list[TurnFacts] = []
    retrievals: list[RetrievalFacts] = []
    compactions: list[CompactionFacts] = []
    pending_reasoning: list[tuple[int, str, str]] = []
    reasoning: list[ReasoningFacts] = []
    previous_text: str | None = None
    previous_overlay: tuple[str, ...] = ()
    pending_retrieval: tuple[int, Any, tuple[RejectionFacts, ...]] | None = None
    waiting_compaction: CompactionFacts | None = None
    stored: StoredSession[Lifecycle] | None = None

    for turn in range(1, options.turns + 1):
        spec = scenario.turn_spec(turn)
        known = len(conversation.segments)
        conversation.user(spec.user)
        if len(conversation.segments) > known:
            segment = conversation.current
            tracker.registered(segment, f"conversation#{segment.segment}", turn)
        if spec.documents:
            built, rejections = _build_retrieval(spec, conversation.records)
            area = AsOfArea(built, anchor=conversation.current, label=f"as-of@{turn}")
            coop.register(area)
            tracker.registered(area, area.label, turn)
            for rejection in rejections:
                tracker.events.append(
                    Event(turn, None, "rejected", rejection.item_id, rejection.reason)
                )
            pending_retrieval = (turn, built, rejections)
        tool_area: ToolLoopArea | None = None
        if options.tools and spec.tool_calls:
            tool_area = ToolLoopArea(scenario.TOOLS, anchor=conversation.current)
            coop.register(tool_area)
            tracker.registered(tool_area, f"tool-loop@{turn}", turn)

        turn_requests: list[int] = []
        reply_text = ""
        for call in range(1, MAX_CALLS_PER_TURN + 1):
            collections_before = coop.collections
            request = lifecycle.render()
            index = len(requests)
            kwargs = request.kwargs
            text = cache_order_text(options.gateway, kwargs)
            tokens, reused = reuse(previous_text, text, counter)
            previous_text = text
            overlay = request.overlay_keys
            facts = RequestFacts(
                index, turn, call, tokens, reused,
                round(reused / tokens, 4) if tokens else 0.0,
                len(request.items), overlay, kwargs,
            )
            requests.append(facts)
            turn_requests.append(index)
            for key in overlay:
                if key not in previous_overlay:
                    tracker.events.append(Event(turn, index, "reminder_shown", key))
            for key in previous_overlay:
                if key not in overlay:
                    tracker.events.append(Event(turn, index, "reminder_expired", key))
            previous_overlay = overlay
            collected = coop.collections > collections_before
            record = coop.last_collection
            if collected and record is not None:
                tracker.collected(turn, index, record.areas, record.detached, record.promoted)
                if waiting_compaction is not None:
                    compactions[-1] = _collected(waiting_compaction, index, record, tracker)
                    waiting_compaction = None
                    lifecycle.seal(f"checkpoint {compactions[-1].segment} collected")
            tracker.sweep(turn, index)
            for origin, name, value in pending_reasoning:
                identical = _contains_field(kwargs, name, value)
                reasoning.append(
                    ReasoningFacts(origin, name, value, index, identical,
                                   collected and not identical)
                )
            pending_reasoning = []
            if pending_retrieval is not None:
                r_turn, built, rejections = pending_retrieval
                retrievals.append(_retrieval_facts(r_turn, built, rejections, index))
                pending_retrieval = None
            if on_request is not None:
                on_request(facts)

            reply = model.reply(spec, call, kwargs)
            outputs.append(reply.native)
            before = len(context)
            context.push_back(reply.output)
            message = _routed_message(context, before, reply)
            pending_reasoning = [(index, s.field, s.value) for s in reply.reasoning]
            segment = conversation.current
            summary = conversation.route(message)
            if tool_area is not None and not tool_area.answered:
                tool_area.route(message)
            tracker.sweep(turn, index)
            if summary is not None and not any(
                c.segment == segment.segment for c in compactions
            ):
                tracker.events.append(
                    Event(turn, index, "checkpoint", f"conversation#{segment.segment}",
                          f"{segment.tokens} >= {segment.threshold_tokens} tokens")
                )
                waiting_compaction = CompactionFacts(
                    checkpoint_turn=turn,
                    segment=segment.segment,
                    tokens_at_checkpoint=segment.tokens,
                    threshold=segment.threshold_tokens,
                    summary={
                        "facts": list(summary.facts),
                        "decisions": list(summary.decisions),
                        "open_questions": list(summary.open_questions),
                        "pointers": list(summary.pointers),
                    },
                    summary_text=segment.summary_message.text if segment.summary_message else "",
                    records={p: conversation.records.require(p).content for p in summary.pointers},
                )
                compactions.append(waiting_compaction)
            if not any(isinstance(p, ToolCallPart) for p in message.parts):
                reply_text = message.text
                break
        turns.append(TurnFacts(turn, spec.user, reply_text, tuple(turn_requests)))
        if options.store is not None:
            if stored is None:
                stored = options.store.create(options.session_id, lifecycle)
            else:
                options.store.save(stored)

    for origin, name, value in pending_reasoning:
        reasoning.append(ReasoningFacts(origin, name, value, None, None, False))
    if options.save_to is not None:
        lifecycle.save(options.save_to)
    return DemoReport(
        reported_usage=context.usage.totals() if len(context.usage) else {},
        gateway=options.gateway.value,
        model=model.name,
        live=options.live,
        as_of=scenario.AS_OF.isoformat(),
        threshold_tokens=options.threshold_tokens,
        system_prompt=scenario.SYSTEM_PROMPT,
        turns=tuple(turns),
        requests=tuple(requests),
        events=tuple(tracker.events),
        retrievals=tuple(retrievals),
        compactions=tuple(compactions),
        reasoning=tuple(reasoning),
        outputs=tuple(outputs),
        final_context_items=len(context),
        loops=() if options.live else _loops(options, requests, len(turns)),
    )


def _loops(
    options: SessionOptions, requests: list[RequestFacts], turns: int
) -> tuple[LoopCost, ...]:
    """This session, the naive loop, and the naive loop trimmed to this session's largest
    request, measured alike (see :mod:`hydrangea.demo.naive`)."""
    texts = {r.key: r.text for r in scenario.reminders()}
    schedule = [[texts[key] for key in r.overlay if key in texts] for r in requests]
    ours = loop_cost("hydrangea", options.gateway, [r.body for r in requests], turns)
    naive = naive_loop(options.gateway, turns, schedule)
    trimmed = naive_loop(options.gateway, turns, schedule, budget=ours.peak)
    return (
        ours,
        loop_cost("naive loop", options.gateway, naive, turns),
        loop_cost(f"naive, cut to {ours.peak}", options.gateway, trimmed, turns),
    )


def _collected(
    facts: CompactionFacts, index: int, record: Any, tracker: _Tracker
) -> CompactionFacts:
    return replace(
        facts,
        collected_at_request=index,
        detached=record.detached,
        promoted=record.promoted,
        reclaimed_areas=tuple(tracker.label(a) for a in record.areas),
    )


def _retrieval_facts(
    turn: int, built: Any, rejections: tuple[RejectionFacts, ...], request: int
) -> RetrievalFacts:
    fenced: list[FencedFacts] = []
    for message in built.messages:
        text = message.text
        for block in unfence(text):
            fenced.append(FencedFacts(block.item_id, block.origin, block.content, block.raw))
    return RetrievalFacts(
        turn=turn,
        as_of=scenario.AS_OF.isoformat(),
        token_budget=built.token_budget,
        tokens=built.tokens,
        request=request,
        fenced=tuple(fenced),
        rejections=rejections,
    )

