"""A pydantic-ai history processor that keeps the prefix and adds hydrangea lifecycles.

pydantic-ai (2.x) runs a history processor, wrapped in its ``ProcessHistory`` capability, before
every model request, and keeps what it returns as the run's history. :class:`HistoryProcessor`
runs a hydrangea :class:`~hydrangea.Lifecycle` over that history:

* **What was sent is history.** Every request the agent sends begins with exactly what the
  previous request sent, followed by the model's output (the providers bind a reply's reasoning
  to the request that produced it; see "Prefix binding" in the docs). Only the messages after
  the latest model response (the request about to be sent) are ever changed; everything before
  it is returned as the very same objects.
* **Lifecycles, per conversation.** Each model request is one episode. The components an
  episode sends (reminders, sticky notes, cadences, stages, permanent components) are appended
  as user-prompt parts at the end of the request about to be sent, and stay where they were
  once the model answered. The schedule is kept per pydantic-ai conversation
  (``RunContext.conversation_id``, which a history carries with it, also through
  ``ModelMessagesTypeAdapter``): one agent can serve concurrent runs, and a reloaded history
  continues its own schedule. A request sent again unanswered (a retried model call) is the
  same episode and carries the same components.
* **Tool output is outside text.** Every tool return is fenced (the tool-output fence of
  :func:`hydrangea.tools.fence_tool_output`, as :class:`~hydrangea.areas.ToolLoopArea` sends
  it) unless the tool is named in ``trusted_tools``, retries and retry feedback included;
  images and other files, numbers and the shape of structured returns are kept, only text is
  fenced. A fenced text is recognised from its content (the as-of fence earlier versions wrote
  too), so nothing is fenced twice.

Install with the ``pydantic-ai`` extra. Example::

    from pydantic_ai import Agent
    from hydrangea import Component
    from hydrangea.integrations.pydantic_ai import HistoryProcessor

    history = HistoryProcessor(trusted_tools={"get_time"})
    history.add(Component("Cite the ticket number.", ttl=1, cadence=1))
    agent = Agent(model, capabilities=[history.capability()])
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Sequence
from typing import Any

from hydrangea.context import Context
from hydrangea.errors import ContextStateError, MissingExtraError, SessionNotFoundError
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, DuplicateKeyError, Lifecycle

try:
    from pydantic_ai import RunContext
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelRequestPart,
        ModelResponse,
        UserPromptPart,
    )

    from hydrangea.integrations._pydantic_ai_fence import fence_part
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise MissingExtraError(
        "hydrangea.integrations.pydantic_ai needs pydantic-ai: "
        "pip install 'hydrangea-context[pydantic-ai]'"
    ) from exc

__all__ = ["MAX_CONVERSATIONS", "HistoryProcessor"]

_log = logging.getLogger(__name__)
MAX_CONVERSATIONS = 4096
"""How many conversations' schedules one processor keeps (least recently used ones go)."""
_ANSWERED = {"role": "assistant", "content": "[answered]"}
"""Pushed into a conversation's own Context when the model answered: what was sent before it
is history there too, so the lifecycle keeps it (it takes back only unanswered components)."""


def _default_lifecycle() -> Lifecycle:
    return Lifecycle(Context(GatewayType.openai))


@dataclasses.dataclass(slots=True)
class _Conversation:
    """One conversation's lifecycle and what its latest episode added."""

    lifecycle: Lifecycle
    start: int = -1  # where the unsent requests began at the latest call (-1: no call yet)
    added: tuple[UserPromptPart, ...] = ()  # the parts that call appended


class HistoryProcessor:
    """A pydantic-ai history processor: fenced tool output and lifecycles, prefix kept.

    Args:
        components: Components every conversation starts with (see :meth:`add`).
        trusted_tools: Names of tools whose returns are sent as they are; every other tool's
            return is outside text and fenced.
        new_lifecycle: Makes the lifecycle of a new conversation (by default one over an
            empty Context); the processor adds its components to it.

    Raises:
        DuplicateKeyError: two components share a key.
        InvalidComponentError: a component its lifecycle refuses.

    The schedules of the :data:`MAX_CONVERSATIONS` most recently used conversations are kept in
    memory; an older one is forgotten, and its schedule starts afresh (logged) if it comes back.
    """

    def __init__(
        self,
        components: Sequence[Component] = (),
        *,
        trusted_tools: Collection[str] = (),
        new_lifecycle: Callable[[], Lifecycle] = _default_lifecycle,
    ) -> None:
        self._trusted = frozenset(trusted_tools)
        self._components: list[Component] = list(components)
        self._new_lifecycle = new_lifecycle
        probe = new_lifecycle()
        for component in self._components:
            probe.add(component)  # a component a conversation would refuse is refused now
        self._conversations: OrderedDict[str, _Conversation] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def trusted_tools(self) -> frozenset[str]:
        """The tools whose returns are sent unfenced."""
        return self._trusted

    @property
    def components(self) -> tuple[Component, ...]:
        """The components every new conversation starts with."""
        return tuple(self._components)

    def capability(self) -> ProcessHistory[Any]:
        """This processor as a pydantic-ai capability: ``Agent(model, capabilities=[...])``."""
        return ProcessHistory(self)

    def add(self, component: Component) -> None:
        """Add ``component`` to every conversation: the ones under way (from their next
        episode) and the ones to come.

        Raises:
            DuplicateKeyError: a component of the processor, or of a conversation under way,
                holds its key; nothing is added anywhere.
            InvalidComponentError: a component a lifecycle refuses; nothing is added.
        """
        with self._lock:
            key = component.key if isinstance(component, Component) else None
            if key is not None:
                taken = [c for c, conv in self._conversations.items() if key in conv.lifecycle]
                if taken or any(c.key == key for c in self._components):
                    where = f"conversation {taken[0]!r}" if taken else "this processor"
                    raise DuplicateKeyError(
                        f"key {key!r} is taken in {where}: give the component another key, or "
                        "change the one there with lifecycle(conversation_id).update()"
                    )
            self._new_lifecycle().add(component)  # refused here before any conversation has it
            for conversation in self._conversations.values():
                conversation.lifecycle.add(component)
            self._components.append(component)

    def lifecycle(self, conversation_id: str) -> Lifecycle:
        """The lifecycle of one conversation (``result.all_messages()[-1].conversation_id``),
        to update or delete its components.

        Raises:
            SessionNotFoundError: the processor has not seen that conversation (or forgot it).
        """
        with self._lock:
            conversation = self._conversations.get(conversation_id)
        if conversation is None:
            raise SessionNotFoundError(
                f"no conversation {conversation_id!r} here: a conversation is known after its "
                "first model request went through this processor"
            )
        return conversation.lifecycle

    def __call__(self, ctx: RunContext[Any], messages: list[ModelMessage]) -> list[ModelMessage]:
        """Process the history before one model request (one episode)."""
        start = _unsent_start(messages)
        if start == len(messages):
            return messages  # nothing to send: nothing of it may change
        with self._lock:
            conversation = self._conversation(ctx.conversation_id, messages, start)
            added = self._episode(conversation, start)
            conversation.start = start
            conversation.added = added
        out = list(messages)
        for index in range(start, len(out)):
            message = out[index]
            assert isinstance(message, ModelRequest)
            parts: list[ModelRequestPart] = [fence_part(p, self._trusted) for p in message.parts]
            if added:  # an unsent request processed before carries them already
                parts = _without_tail(parts, added)
                if index == len(out) - 1:
                    parts.extend(added)
            same = len(parts) == len(message.parts) and all(
                a is b for a, b in zip(parts, message.parts, strict=True)
            )
            if not same:
                out[index] = dataclasses.replace(message, parts=parts)
        return out

    def _conversation(
        self, key: str | None, messages: list[ModelMessage], start: int
    ) -> _Conversation:
        if key is None:
            raise ContextStateError(
                "the run has no conversation_id: HistoryProcessor keeps its schedule per "
                "pydantic-ai conversation (pydantic-ai 2.x sets one on every run)"
            )
        conversation = self._conversations.get(key)
        if conversation is not None:
            self._conversations.move_to_end(key)
            return conversation
        if start > 0:
            _log.info("conversation %s is new to this processor at message %d: its "
                      "components' schedule starts at this request", key, start)
        lifecycle = self._new_lifecycle()
        for component in self._components:
            lifecycle.add(component)
        conversation = _Conversation(lifecycle)
        self._conversations[key] = conversation
        while len(self._conversations) > MAX_CONVERSATIONS:
            self._conversations.popitem(last=False)
        return conversation

    def _episode(self, conversation: _Conversation, start: int) -> tuple[UserPromptPart, ...]:
        """The parts this request carries: a new episode's components, or, when the model has
        not answered since the latest call (no response after the requests it processed: the
        same request again, perhaps with more added to it), that call's."""
        answered = start > conversation.start
        if conversation.start >= 0 and not answered:
            return conversation.added
        lifecycle = conversation.lifecycle
        context = lifecycle.context
        if conversation.start >= 0:
            context.push_back(dict(_ANSWERED))
        begin = len(context)
        request = lifecycle.render()
        adapter = context.adapter
        return tuple(
            UserPromptPart(content=adapter.item_text(item)) for item in request.history[begin:]
        )


def _unsent_start(messages: Sequence[ModelMessage]) -> int:
    """The index after the latest model response: the requests from there on were never sent."""
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], ModelResponse):
            return index + 1
    return 0


def _without_tail(
    parts: list[ModelRequestPart], added: tuple[UserPromptPart, ...]
) -> list[ModelRequestPart]:
    """``parts`` without ``added`` at its end (a request processed once already carries them)."""
    size = len(added)
    if size <= len(parts) and all(
        isinstance(p, UserPromptPart) and p.content == a.content
        for p, a in zip(parts[-size:], added, strict=True)
    ):
        return parts[:-size]
    return parts
