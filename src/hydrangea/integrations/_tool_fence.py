"""The tool-output fence as the framework adapters apply it: once, recognised from the content.

Both adapters (pydantic-ai, the Agents SDK) fence a tool's text with the fence of
:mod:`hydrangea.tools.fence`, the one :class:`~hydrangea.areas.ToolLoopArea` sends. A text is
left as it is when it already is a fence:

* one well-formed tool-output fence (:func:`~hydrangea.tools.is_fenced_tool_output`), or
* exactly the as-of fence earlier versions of the adapters wrote for this very part (the
  untrusted-data notice, one block with this part's id, origin and kind and no publication
  time, the end line), which histories stored then still hold.

So nothing is fenced twice, whoever fenced it, and a history fenced before the switch keeps the
bytes it was sent with.
"""

from __future__ import annotations

from typing import Literal

from hydrangea.asof.fence import MARK, data_text, fence_body, unfence
from hydrangea.errors import FenceFormatError
from hydrangea.tools.fence import fence_tool_output, is_fenced_tool_output

__all__ = ["fence_once", "is_legacy_fence"]

Kind = Literal["tool", "retry"]


def is_legacy_fence(text: str, *, item_id: str, origin: str, kind: Kind) -> bool:
    """Whether ``text`` is exactly the as-of fence an earlier adapter wrote for this part."""
    if MARK not in text:
        return False
    try:
        blocks = unfence(text)
    except FenceFormatError:
        return False
    if len(blocks) != 1:
        return False
    (block,) = blocks
    body = fence_body(block.content, item_id=item_id, origin=origin, kind=kind, published="-")
    return data_text([body]) == text


def fence_once(text: str, *, item_id: str, origin: str, kind: Kind) -> str:
    """``text`` inside the tool-output fence, or ``text`` itself when it already is a fence (a
    tool-output fence, or the legacy as-of fence of this part's ``item_id``, ``origin`` and
    ``kind``)."""
    if is_fenced_tool_output(text) or is_legacy_fence(
        text, item_id=item_id, origin=origin, kind=kind
    ):
        return text
    return fence_tool_output(text)
