"""The tool-output fence as the framework adapters apply it: once, recognised from the content.

Both adapters (pydantic-ai, the Agents SDK) fence a tool's text with the fence of
:mod:`hydrangea.tools.fence`, the one :class:`~hydrangea.areas.ToolLoopArea` sends. A text is
left as it is when it already is a fence:

* one well-formed tool-output fence (:func:`~hydrangea.tools.is_fenced_tool_output`), or
* exactly the as-of fence earlier versions of the adapters wrote for this very part (the
  untrusted-data notice, one block with this part's id, origin and kind and no publication
  time, the end line), which histories stored then still hold.

So nothing is fenced twice, whoever fenced it, and a history fenced before the switch keeps the
bytes it was sent with. Where an adapter fences on the way out (the Agents SDK session stores
outputs raw), an output stored by an earlier version is sent in :func:`legacy_fence`, the bytes
it was sent with then.
"""

from __future__ import annotations

from typing import Literal

from hydrangea.asof.fence import MARK, data_text, fence_body, unfence
from hydrangea.errors import FenceFormatError
from hydrangea.tools.fence import fence_tool_output, is_fenced_tool_output

__all__ = ["fence_once", "is_legacy_fence", "legacy_fence"]

Kind = Literal["tool", "retry"]


def legacy_fence(text: str, *, item_id: str, origin: str, kind: Kind) -> str:
    """``text`` in the as-of fence earlier adapters wrote: the untrusted-data notice, one block
    with these labels and no publication time, the end line."""
    return data_text([fence_body(text, item_id=item_id, origin=origin, kind=kind, published="-")])


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
    return legacy_fence(block.content, item_id=item_id, origin=origin, kind=kind) == text


def fence_once(
    text: str, *, item_id: str, origin: str, kind: Kind, legacy: bool = False
) -> str:
    """``text`` inside the tool-output fence (in :func:`legacy_fence` when ``legacy``: an
    output an earlier version stored raw and sent that way), or ``text`` itself when it
    already is a fence (a tool-output fence, or the legacy as-of fence of this part's
    ``item_id``, ``origin`` and ``kind``)."""
    if is_fenced_tool_output(text) or is_legacy_fence(
        text, item_id=item_id, origin=origin, kind=kind
    ):
        return text
    if legacy:
        return legacy_fence(text, item_id=item_id, origin=origin, kind=kind)
    return fence_tool_output(text)
