"""Editable text brought into a conversation as a tool-call exchange.

Text that others can edit (an instruction file such as ``AGENTS.md``, stored memories, a fetched
page) is outside text, however familiar: Anthropic's guidance for its newest models is that it
reach the model only inside ``tool_result`` blocks, never as the system prompt or a user turn.
:func:`tool_exchange` writes it that way on every gateway: an assistant message calling a tool
(``read_file`` by default) and a user message answering the call with the text fenced as
untrusted data (:func:`~hydrangea.tools.fence_tool_output`), exactly what a
:class:`~hydrangea.areas.ToolLoopArea` sends for a tool's output.

>>> call, result = tool_exchange("Run the tests first.", arguments={"path": "AGENTS.md"})
>>> call.parts[0].name, result.parts[0].call_id == call.parts[0].id
('read_file', True)
>>> from hydrangea.tools import unfence_tool_output
>>> unfence_tool_output(result.parts[0].content)
'Run the tests first.'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from hydrangea.errors import ToolDefinitionError
from hydrangea.message import Message, Role, ToolCallPart, ToolResultPart
from hydrangea.tools.fence import fence_tool_output

__all__ = ["tool_exchange"]


def tool_exchange(
    text: str,
    *,
    name: str = "read_file",
    arguments: Mapping[str, Any] | None = None,
    call_id: str | None = None,
) -> tuple[Message, Message]:
    """The assistant call and the user result that bring ``text`` into a conversation.

    ``name`` and ``arguments`` are the call the model reads (``read_file`` with, say,
    ``{"path": "AGENTS.md"}``); declare a tool of that name among the request's tools, so the
    call is one the model could have made. ``call_id`` defaults to an id derived from the
    name, the arguments and the text (``<name>-`` and 12 hex digits), so the same text makes
    the same bytes, and a cached prefix holding it stays valid. Append both messages, in
    order (``context.emplace_messages(tool_exchange(...))``) or render them from an area.

    Raises :class:`~hydrangea.errors.ToolDefinitionError` for a name that is not an
    identifier; ``text`` must be a ``str``.
    """
    if not isinstance(text, str):
        raise TypeError(f"the text to bring in must be a str, got {type(text).__name__}")
    if not isinstance(name, str) or not name.isidentifier():
        raise ToolDefinitionError(
            f"a tool name is made of letters, digits and underscores, got {name!r}"
        )
    given = dict(arguments) if arguments is not None else {}
    if call_id is None:
        digest = hashlib.sha256(json.dumps([name, given, text], sort_keys=True).encode())
        call_id = f"{name}-{digest.hexdigest()[:12]}"
    call = Message(role=Role.assistant,
                   content=(ToolCallPart(id=call_id, name=name, arguments=given),))
    result = Message(role=Role.user,
                     content=(ToolResultPart(call_id=call_id, content=fence_tool_output(text),
                                             name=name),))
    return call, result
