"""ConversationArea: owns the user turns and the model replies routed to it.

The caller queues each user turn with :meth:`ConversationArea.user`; the next render appends it.
Model output goes into the Context through ``Context.push_back`` (so reasoning state stays
byte-identical); the caller also routes it here as a generic message with
:meth:`ConversationArea.route`, which is how the area learns about replies that lie beyond its
EffectRange. Every turn is kept as a full record (a :class:`~hydrangea.asof.ContextItem`) in a
record store when one is given, so a later summary can point back to it.

A conversation area stays retained until :meth:`ConversationArea.close`, so a long session is one
retained range: nothing inside it is ever reclaimed. For a session that must stay within a
budget, use :class:`~hydrangea.areas.CompactionArea` segments instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from hydrangea.areas._common import message_tokens, native_tokens, registered_with
from hydrangea.areas.errors import AreaUsageError
from hydrangea.areas.recall import latest_tool_output
from hydrangea.asof.counting import ApproxTokenCounter, TokenCounter
from hydrangea.asof.items import ContextItem, ItemKind
from hydrangea.asof.records import RecordStore
from hydrangea.context.area import AreaFlowState, AreaLifeState
from hydrangea.errors import ContextStateError, InvalidMessageError
from hydrangea.message import Message, Role, ToolCallPart
from hydrangea.providers.native import NativeContent

__all__ = ["ConversationArea", "check_reply", "message_record_text"]


def _now() -> datetime:
    return datetime.now(UTC)


def check_reply(reply: object, what: str) -> None:
    """Refuse a routed reply that is not an assistant :class:`~hydrangea.message.Message`."""
    if not isinstance(reply, Message):
        raise InvalidMessageError(
            f"{what} takes a hydrangea Message, got {type(reply).__name__}; to store a "
            "provider's response and route it, call context.push_back(response, route=area)"
        )
    if reply.role is not Role.assistant:
        raise AreaUsageError(
            f"a routed reply must have the assistant role, got {reply.role.value}"
        )


def message_record_text(message: Message, records: RecordStore | None = None) -> str:
    """The text kept in a record for ``message``: its text, then one line per tool call; a
    call whose output ``records`` holds (a ToolLoopArea sharing the store keeps it under
    :func:`~hydrangea.areas.tool_output_id`; route the reply to the loop first) names that
    record, so a summary pointing at this reply leads to the output."""
    lines = [message.text] if message.text else []
    for part in message.parts:
        if isinstance(part, ToolCallPart):
            arguments = json.dumps(part.arguments, ensure_ascii=False, sort_keys=True)
            output = None if records is None else latest_tool_output(part.id, records)
            named = "" if output is None else f" output: {output}"
            lines.append(f"[tool call {part.name} {arguments}{named}]")
    return "\n".join(lines)


class ConversationArea:
    """The user's turns and the model's replies, as one retained range.

    * :meth:`user` queues a user turn; :meth:`render` appends the queued turns (all of them, in
      order) and yields the cursor.
    * :meth:`route` tells the area about a model reply (an assistant :class:`Message`).
    * :attr:`tokens` estimates the size of the conversation: the items of its EffectRange as last
      observed (their compact JSON, counted with ``counter``) plus what was rendered or routed
      since. :meth:`observe` counts only the items it has not seen before, so watching the size
      costs O(new items) a turn.
    * :meth:`close` retires the area; a closed conversation promotes nothing.
    * :attr:`last_reply_text` is the text of the newest reply routed here.

    Register the area (``coop.register(conversation)``) before feeding it: :meth:`user` and
    :meth:`route` on an area no CoopContext has registered raise
    :class:`~hydrangea.errors.ContextStateError`, since nothing would ever send that turn.

    Records (when ``records`` is given) are untrusted ``memory`` items with ids
    ``"<name>/turn-<n>/user"`` and ``"<name>/turn-<n>/reply-<k>"``, dated by ``clock``.
    """

    def __init__(
        self,
        *,
        name: str = "conversation",
        records: RecordStore | None = None,
        counter: TokenCounter | None = None,
        clock: Callable[[], datetime] | None = None,
        first_turn: int = 1,
    ) -> None:
        """``first_turn`` numbers this area's first user turn (segments continue a count)."""
        if not name:
            raise AreaUsageError("a conversation needs a non-empty name")
        if first_turn < 1:
            raise AreaUsageError(f"first_turn must be at least 1, got {first_turn}")
        self._name = name
        self._records = records
        self._counter: TokenCounter = counter if counter is not None else ApproxTokenCounter()
        self._clock = clock if clock is not None else _now
        self._life = AreaLifeState.retain
        self._pending: list[Message] = []
        self._transcript: list[Message] = []
        self._record_ids: list[str] = []
        self._first_turn = first_turn
        self._turn = first_turn - 1
        self._replies_this_turn = 0
        self._range_tokens = 0
        self._observed_items = 0
        self._unobserved_tokens = 0
        self._routed_since_render = 0
        self._registered_with: object | None = None

    # -- states ------------------------------------------------------------------------------

    @property
    def life_state(self) -> AreaLifeState:
        """``retain`` until :meth:`close` (or a subclass's checkpoint)."""
        return self._life

    @property
    def flow_state(self) -> AreaFlowState:
        """Always ``yielded``: the conversation never holds the cursor."""
        return AreaFlowState.yielded

    # -- reading -----------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The name used in record ids."""
        return self._name

    @property
    def first_turn(self) -> int:
        """The number of this area's first user turn."""
        return self._first_turn

    @property
    def turn(self) -> int:
        """The number of the latest user turn rendered (``first_turn - 1`` before the first)."""
        return self._turn

    @property
    def pending(self) -> tuple[Message, ...]:
        """User turns queued but not yet rendered."""
        return tuple(self._pending)

    @property
    def transcript(self) -> tuple[Message, ...]:
        """Rendered user turns and routed replies, in order."""
        return tuple(self._transcript)

    @property
    def record_ids(self) -> tuple[str, ...]:
        """Ids of the records kept for this area's turns, in order (empty without a store)."""
        return tuple(self._record_ids)

    @property
    def records(self) -> RecordStore | None:
        """The record store given at construction."""
        return self._records

    @property
    def observed_tokens(self) -> int:
        """Tokens of the EffectRange as of the last :meth:`observe` (compact JSON of each item)."""
        return self._range_tokens

    @property
    def tokens(self) -> int:
        """Estimated tokens of the conversation so far (see the class docstring)."""
        return self._range_tokens + self._unobserved_tokens

    @property
    def registered(self) -> bool:
        """Whether a CoopContext has registered this area."""
        return self._registered_with is not None

    def on_register(self, coop: object) -> None:
        """Called by ``CoopContext.register``: remember ``coop``, and refuse a second, different
        CoopContext (:class:`~hydrangea.errors.DuplicateAreaError`)."""
        self._registered_with = registered_with(self, self._registered_with, coop, "area")

    # -- feeding -----------------------------------------------------------------------------

    def user(self, turn: str | Message) -> None:
        """Queue a user turn (a string, or a user :class:`~hydrangea.message.Message`) for the
        next render."""
        self._require_open("user()")
        if not isinstance(turn, str | Message):
            raise InvalidMessageError(
                f"user() takes a str or a hydrangea Message, got {type(turn).__name__}; write "
                "conversation.user('text') or conversation.user(Message(role=Role.user, "
                "content=...))"
            )
        message = Message(role=Role.user, content=turn) if isinstance(turn, str) else turn
        if message.role is not Role.user:
            raise AreaUsageError(f"a user turn must have the user role, got {message.role.value}")
        if isinstance(message.content, str) and not message.content.strip():
            raise AreaUsageError("a user turn needs some text")
        self._require_registered("user()")
        self._pending.append(message)

    def route(self, reply: Message) -> None:
        """Record a model reply that the caller pushed into the Context.

        ``reply`` is a hydrangea :class:`~hydrangea.message.Message`; to store a provider's
        response and route it in one call, use ``context.push_back(response, route=area)``.
        """
        self._require_open("route()")
        check_reply(reply, "route()")
        self._require_registered("route()")
        self._keep(reply, self._replies_this_turn + 1, "assistant")
        self._replies_this_turn += 1
        estimate = self._estimate(reply)
        self._unobserved_tokens += estimate
        self._routed_since_render += estimate

    @property
    def last_reply_text(self) -> str:
        """The text of the newest reply routed to this area (``""`` before the first reply, or
        when the newest reply only calls tools)."""
        for message in reversed(self._transcript):
            if message.role is Role.assistant:
                return message.text
        return ""

    def close(self) -> None:
        """Retire the conversation. Queued, unrendered turns are discarded."""
        self._pending.clear()
        self._life = AreaLifeState.retired

    # -- the contract ------------------------------------------------------------------------

    def observe(self, context: Sequence[NativeContent]) -> None:
        """Count the range's items not counted before; replies routed since the last render lie
        beyond the range and stay in the estimate."""
        if len(context) < self._observed_items:  # the range never shrinks while retained
            raise ContextStateError(
                f"{self!r}: EffectRange shrank from {self._observed_items} to {len(context)} items"
            )
        for item in context[self._observed_items :]:
            self._range_tokens += native_tokens(item, self._counter)
        self._observed_items = len(context)
        self._unobserved_tokens = self._routed_since_render

    def render(self) -> list[Message]:
        """The queued user turns (possibly none)."""
        if not self._pending:
            return []
        out, self._pending = self._pending, []
        for message in out:
            self._turn += 1
            self._replies_this_turn = 0
            self._keep(message, None, "user")
            self._unobserved_tokens += self._estimate(message)
        self._routed_since_render = 0
        return out

    def promote(self) -> tuple[Message, ...]:
        """Nothing survives a closed conversation."""
        return ()

    def gc_prologue(self) -> None:
        """No resources to release."""

    # -- internals ---------------------------------------------------------------------------

    def _require_open(self, what: str) -> None:
        if self._life is AreaLifeState.retired:
            raise ContextStateError(f"{what} on a retired {type(self).__name__} ({self._name})")

    def _require_registered(self, what: str) -> None:
        if self._registered_with is None:
            raise ContextStateError(
                f"{what} on {self!r}, which no CoopContext has registered: nothing would ever "
                f"send it; call coop.register({self._name}) first"
            )

    def _estimate(self, message: Message) -> int:
        return message_tokens(message, self._counter)

    def _keep(self, message: Message, reply: int | None, speaker: str) -> None:
        """Keep ``message`` (the user turn, or reply number ``reply`` of the current turn)."""
        self._transcript.append(message)
        if self._records is None:
            return
        suffix = f"turn-{self._turn}/user" if reply is None else f"turn-{self._turn}/reply-{reply}"
        item = ContextItem.outside(
            ItemKind.MEMORY,
            message_record_text(message, self._records),
            item_id=f"{self._name}/{suffix}",
            published_at=self._clock(),
            origin=f"{self._name}:{speaker}",
        )
        self._records.put(item)
        self._record_ids.append(item.item_id)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._name!r}, turn {self._turn}, {self._life.value})"
