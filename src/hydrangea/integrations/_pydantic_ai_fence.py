"""Trust fences for pydantic-ai tool returns and retry feedback (used by the history processor).

Only text is fenced: every string of a return (the whole content, or each string inside a list
or a dict, at any depth) is put inside the tool-output fence (:func:`hydrangea.tools.
fence_tool_output`, the one :class:`~hydrangea.areas.ToolLoopArea` sends);
images, audio, documents and other files (``BinaryContent``, ``ImageUrl``, ...), numbers,
booleans, ``None`` and the shape of lists and dicts are kept as they were. Other objects
(pydantic models, dataclasses, datetimes) are first turned into their JSON form, as pydantic-ai
would send them, so their strings are fenced too.

Fencing is idempotent and recognised from the content alone: a string that is one well-formed
tool-output fence, or exactly the as-of fence earlier versions wrote for this part (one block
with this part's id, origin and kind; see :mod:`hydrangea.integrations._tool_fence`), is left
as it is, so a message is never fenced twice, whoever built it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, cast

import pydantic_core
from pydantic_ai.messages import (
    LoadCapabilityReturnPart,
    ModelRequestPart,
    RetryFeedbackPart,
    ToolReturnPart,
    ToolSearchReturnPart,
    is_multi_modal_content,
)

from hydrangea.integrations._tool_fence import Kind, fence_once

__all__ = ["RETRY_ID", "RETRY_ORIGIN", "fence_part"]

RETRY_ID = "retry-feedback"
"""The id of a retry feedback part in the legacy as-of fence (it answers no tool call)."""
RETRY_ORIGIN = "pydantic-ai"
"""The origin of a retry feedback part in the legacy as-of fence."""

_FRAMEWORK_RETURNS = (ToolSearchReturnPart, LoadCapabilityReturnPart)
"""pydantic-ai's own tool returns (tool search, capability loading): the framework reads their
typed content back, and none of it is outside text."""


@dataclasses.dataclass(frozen=True, slots=True)
class _Labels:
    """The part's labels, by which a legacy as-of fence of it is recognised."""

    item_id: str
    origin: str
    kind: Kind

    def fence(self, text: str) -> str:
        """``text`` fenced, unless it already is a fence."""
        return fence_once(text, item_id=self.item_id, origin=self.origin, kind=self.kind)


def _fence_value(value: object, labels: _Labels) -> object:
    if isinstance(value, str):
        return labels.fence(value)
    if is_multi_modal_content(value) or value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, list | tuple):
        return [_fence_value(item, labels) for item in value]
    if isinstance(value, dict):
        return {key: _fence_value(item, labels) for key, item in value.items()}
    return _fence_value(pydantic_core.to_jsonable_python(value), labels)


def fence_part(part: ModelRequestPart, trusted: frozenset[str]) -> ModelRequestPart:
    """``part`` with its outside text fenced, or ``part`` itself when nothing is to change.

    Fenced: returns of every tool not in ``trusted`` (retried ones too, when their content is
    the tool's own text), and retry feedback whose content is text (an output validator's
    ``ModelRetry`` message). Kept: trusted tools' returns, pydantic-ai's own tool-search and
    capability returns and its fixed "no output" feedback, and validation-error lists (the
    model's own arguments, described by pydantic).
    """
    if isinstance(part, ToolReturnPart):
        if isinstance(part, _FRAMEWORK_RETURNS) or part.tool_name in trusted:
            return part
        if part.outcome == "retried" and not isinstance(part.content, str):
            return part
        content = _fence_value(part.content, _Labels(part.tool_call_id, part.tool_name, "tool"))
        if content == part.content:
            return part
        returned = cast("ToolReturnPart[Any]", part)
        return dataclasses.replace(returned, content=content)
    if (
        isinstance(part, RetryFeedbackPart)
        and isinstance(part.content, str)
        and part.retry.cause != "no_output"  # the framework's own fixed text
    ):
        fenced = _Labels(RETRY_ID, RETRY_ORIGIN, "retry").fence(part.content)
        return part if fenced == part.content else dataclasses.replace(part, content=fenced)
    return part
