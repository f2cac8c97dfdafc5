"""A pydantic-ai history processor that keeps the cached prefix and adds hydrangea lifecycles.

pydantic-ai (2.x) runs a history processor, wrapped in its ``ProcessHistory`` capability, before
every model request, and keeps what it returns as the run's history. :class:`HistoryProcessor`
runs a hydrangea :class:`~hydrangea.Lifecycle` over that history:

* **Cache-safe prefix.** Messages already sent are returned as the very same objects, never
  edited, so the prefix a provider cached stays byte-identical. Only the newest request is
  touched.
* **Lifecycles.** Each model request is one episode. Components with a ttl (reminders, sticky
  notes, cadences, stages) are added as user-prompt parts at the end of the newest request in
  exactly the episodes they are visible, and taken out of it again when the next request
  starts, as hydrangea's own tail overlay is. Permanent components (``ttl=None``) are added
  once, to the request of the episode they first appear in, and stay there.
* **Trust fences.** Tool returns of the tools named ``untrusted_tools`` are fenced the first
  time the processor sees them (:func:`hydrangea.asof.fence.data_text`), so text a web page or a
  document returned cannot pose as instructions. The fenced text is kept, so it is fenced once.

Install with the ``pydantic-ai`` extra. Example::

    from pydantic_ai import Agent
    from hydrangea import Component
    from hydrangea.integrations.pydantic_ai import HistoryProcessor

    history = HistoryProcessor(untrusted_tools={"fetch_page"})
    history.lifecycle.add(Component("Cite the ticket number.", ttl=1, cadence=1))
    agent = Agent(model, capabilities=[history.capability()])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from typing import Any, cast

from hydrangea.context import Context
from hydrangea.errors import MissingExtraError
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Lifecycle

try:
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelRequestPart,
        ToolReturnPart,
        UserPromptPart,
    )
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise MissingExtraError(
        "hydrangea.integrations.pydantic_ai needs pydantic-ai: "
        "pip install 'hydrangea-context[pydantic-ai]'"
    ) from exc

__all__ = ["HistoryProcessor"]


class HistoryProcessor:
    """A pydantic-ai history processor running a hydrangea lifecycle over the run's messages.

    Args:
        untrusted_tools: Names of tools whose returns are outside text, to be fenced.
        lifecycle: The lifecycle to run; by default a new one over an empty Context. Add
            components to :attr:`lifecycle` before or between runs.
    """

    def __init__(
        self, *, untrusted_tools: Collection[str] = (), lifecycle: Lifecycle | None = None
    ) -> None:
        self._untrusted = frozenset(untrusted_tools)
        self.lifecycle = lifecycle if lifecycle is not None else Lifecycle(
            Context(GatewayType.openai)
        )
        """The lifecycle whose components are added to the requests."""
        self._context: Context = self.lifecycle.context
        self._seen_history = len(self._context)
        self._overlay: list[UserPromptPart] = []
        self._fenced: set[str] = set()

    def capability(self) -> ProcessHistory[Any]:
        """This processor as a pydantic-ai capability: ``Agent(model, capabilities=[...])``."""
        return ProcessHistory(self)

    def __call__(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """Process the history before one model request (one episode)."""
        out = [self._without_overlay(message) for message in messages]
        out = [self._fence(message) for message in out]
        request = self.lifecycle.render()
        adapter = self._context.adapter
        permanent = [
            adapter.item_text(item) for item in request.history[self._seen_history :]
        ]
        self._seen_history = len(request.history)
        overlay = [adapter.item_text(item) for entry in request.overlay for item in entry.items]
        last = self._last_request(out)
        if last is None or not (permanent or overlay):
            self._overlay = []
            return out
        kept = [UserPromptPart(content=text) for text in permanent]
        shown = [UserPromptPart(content=text) for text in overlay]
        self._overlay = shown
        newest = out[last]
        assert isinstance(newest, ModelRequest)
        out[last] = dataclasses.replace(newest, parts=[*newest.parts, *kept, *shown])
        return out

    def _last_request(self, messages: list[ModelMessage]) -> int | None:
        for index in range(len(messages) - 1, -1, -1):
            if isinstance(messages[index], ModelRequest):
                return index
        return None

    def _without_overlay(self, message: ModelMessage) -> ModelMessage:
        if not self._overlay or not isinstance(message, ModelRequest):
            return message
        parts = [p for p in message.parts if not any(p is o or p == o for o in self._overlay)]
        if len(parts) == len(message.parts):
            return message
        return dataclasses.replace(message, parts=parts)

    def _fence(self, message: ModelMessage) -> ModelMessage:
        if not self._untrusted or not isinstance(message, ModelRequest):
            return message
        changed = False
        parts: list[ModelRequestPart] = []
        for part in message.parts:
            if (
                isinstance(part, ToolReturnPart)
                and part.tool_name in self._untrusted
                and not (isinstance(part.content, str) and part.content in self._fenced)
            ):
                text = _fenced(part)
                self._fenced.add(text)
                returned = cast("ToolReturnPart[Any]", part)
                parts.append(dataclasses.replace(returned, content=text))
                changed = True
            else:
                parts.append(part)
        return dataclasses.replace(message, parts=parts) if changed else message


def _fenced(part: ToolReturnPart) -> str:
    from hydrangea.asof.fence import data_text, fence_body

    text = part.model_response_str()
    body = fence_body(text, item_id=part.tool_call_id, origin=part.tool_name, kind="tool",
                      published="-")
    return data_text([body])
