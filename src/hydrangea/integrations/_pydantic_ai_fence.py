"""Trust fences for pydantic-ai tool returns and retry feedback (used by the history processor).

Only text is fenced: every string of a return (the whole content, or each string inside a list
or a dict, at any depth) becomes one fenced data message (:func:`hydrangea.asof.fence.data_text`);
images, audio, documents and other files (``BinaryContent``, ``ImageUrl``, ...), numbers,
booleans, ``None`` and the shape of lists and dicts are kept as they were. Other objects
(pydantic models, dataclasses, datetimes) are first turned into their JSON form, as pydantic-ai
would send them, so their strings are fenced too.

Fencing is idempotent and recognised from the content alone: a string that is exactly the fence
of some text for this part (one block with this part's id, origin and kind, rendered as this
module renders it) is left as it is, so a message is never fenced twice, whoever built it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, cast

import pydantic_core
from pydantic_ai.messages import (
    LoadCapabilityReturnPart,
    ModelRequestPart,
    RetryFeedbackPart,
    ToolReturnPart,
    ToolSearchReturnPart,
    is_multi_modal_content,
)

from hydrangea.asof.errors import FenceFormatError
from hydrangea.asof.fence import MARK, data_text, fence_body, unfence

__all__ = ["RETRY_ID", "RETRY_ORIGIN", "fence_part", "fence_text", "is_fence_of"]

RETRY_ID = "retry-feedback"
"""The id in the fence of a retry feedback part (it answers no tool call)."""
RETRY_ORIGIN = "pydantic-ai"
"""The origin in the fence of a retry feedback part."""

_FRAMEWORK_RETURNS = (ToolSearchReturnPart, LoadCapabilityReturnPart)
"""pydantic-ai's own tool returns (tool search, capability loading): the framework reads their
typed content back, and none of it is outside text."""


def fence_text(text: str, *, item_id: str, origin: str, kind: Literal["tool", "retry"]) -> str:
    """``text`` as one fenced data message: the untrusted-data notice, one block with this id,
    origin and kind (no publication time), the end line."""
    return data_text([fence_body(text, item_id=item_id, origin=origin, kind=kind, published="-")])


def is_fence_of(text: str, *, item_id: str, origin: str, kind: Literal["tool", "retry"]) -> bool:
    """Whether ``text`` is exactly :func:`fence_text` of some text with these labels."""
    if MARK not in text:
        return False
    try:
        blocks = unfence(text)
    except FenceFormatError:
        return False
    if len(blocks) != 1:
        return False
    (block,) = blocks
    return fence_text(block.content, item_id=item_id, origin=origin, kind=kind) == text


@dataclasses.dataclass(frozen=True, slots=True)
class _Labels:
    """The header fields of one part's fences."""

    item_id: str
    origin: str
    kind: Literal["tool", "retry"]

    def fence(self, text: str) -> str:
        """``text`` fenced, unless it already is a fence with these labels."""
        if is_fence_of(text, item_id=self.item_id, origin=self.origin, kind=self.kind):
            return text
        return fence_text(text, item_id=self.item_id, origin=self.origin, kind=self.kind)


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
