"""The Messages API's wire-shape rules the emulator enforces besides binding, and its stream.

- A mid-conversation ``role: "system"`` message must not be first, must immediately follow a
  user message (or an assistant message ending in ``server_tool_use``), and must be last or be
  followed by an assistant message.
- ``tool_use`` blocks must be answered by ``tool_result`` blocks in the next message, and a
  ``tool_result`` must answer a ``tool_use`` of the message before it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.support.emulators._server import RequestRefused, sse


def blocks_of(content: Any) -> list[Any]:
    """A message's content as a list of blocks (a string is one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content or [])


def check_structure(messages: list[dict[str, Any]]) -> None:
    """Refuse (400) a misplaced system message or an unanswered / unexpected tool result."""
    for i, message in enumerate(messages):
        role = message.get("role")
        if role not in ("user", "assistant", "system"):
            raise RequestRefused(
                400,
                f"messages.{i}.role",
                "shape",
                f"messages.{i}.role: unexpected role {role!r}",
            )
        if role == "system":
            check_system_placement(messages, i)
        blocks = blocks_of(message.get("content"))
        calls = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
        if role == "assistant" and calls and i + 1 < len(messages):
            after = blocks_of(messages[i + 1].get("content"))
            answered = {b.get("tool_use_id") for b in after if b.get("type") == "tool_result"}
            missing = [c for c in calls if c not in answered]
            if messages[i + 1].get("role") != "user" or missing:
                raise RequestRefused(
                    400,
                    f"messages.{i + 1}",
                    "tool_result",
                    f"messages.{i + 1}: `tool_use` ids were found without `tool_result` "
                    f"blocks immediately after: {', '.join(map(str, missing or calls))}. "
                    "Each `tool_use` block must have a corresponding `tool_result` block "
                    "in the next message.",
                )
        if role == "user":
            asked = set()
            if i > 0 and messages[i - 1].get("role") == "assistant":
                asked = {
                    b.get("id")
                    for b in blocks_of(messages[i - 1].get("content"))
                    if b.get("type") == "tool_use"
                }
            for j, b in enumerate(blocks):
                if b.get("type") == "tool_result" and b.get("tool_use_id") not in asked:
                    raise RequestRefused(
                        400,
                        f"messages.{i}.content.{j}",
                        "tool_result",
                        f"messages.{i}.content.{j}: unexpected `tool_use_id` found in "
                        "`tool_result` blocks. Each `tool_result` block must have a "
                        "corresponding `tool_use` block in the previous message.",
                    )


def check_system_placement(messages: list[dict[str, Any]], i: int) -> None:
    """Refuse (400) the system message ``messages[i]`` unless it is placed as documented."""
    path = f"messages.{i}"
    if i == 0:
        raise RequestRefused(
            400,
            path,
            "system_placement",
            f"{path}: a system message cannot be the first message; put it in the top-level "
            "`system` field.",
        )
    before = messages[i - 1]
    blocks = blocks_of(before.get("content"))
    after_server_tool = (
        before.get("role") == "assistant"
        and bool(blocks)
        and blocks[-1].get("type") == "server_tool_use"
    )
    if before.get("role") != "user" and not after_server_tool:
        raise RequestRefused(
            400,
            path,
            "system_placement",
            f"{path}: a system message must immediately follow a user message; it follows a "
            f"{before.get('role')} message. Put it after the latest user message.",
        )
    if i + 1 < len(messages) and messages[i + 1].get("role") != "assistant":
        raise RequestRefused(
            400,
            path,
            "system_placement",
            f"{path}: a system message must be the last message or be followed by an assistant "
            f"message; a {messages[i + 1].get('role')} message follows it.",
        )


def stream_events(message: dict[str, Any]) -> Iterator[str]:
    """The server-sent events of ``message`` as the Messages API streams it."""
    start = {**message, "content": [], "stop_reason": None}
    start.pop("context_management", None)  # it comes on message_delta, as recorded
    events: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    for j, block in enumerate(message["content"]):
        kind = block["type"]
        stub: dict[str, Any]
        deltas: list[dict[str, Any]] = []
        if kind == "thinking":
            stub = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": block["thinking"]},
                {"type": "signature_delta", "signature": block["signature"]},
            ]
        elif kind == "text":
            stub = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": block["text"]}] if block["text"] else []
        elif kind == "compaction":
            stub = {k: v for k, v in block.items() if k not in ("content", "encrypted_content")}
            stub["content"] = None
            delta = {"type": "compaction_delta", "content": block.get("content")}
            if "encrypted_content" in block:
                delta["encrypted_content"] = block["encrypted_content"]
            deltas = [delta]
        elif kind == "tool_use":
            stub = {**block, "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
        else:
            stub = block
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": j, "content_block": stub},
            )
        )
        events.extend(
            ("content_block_delta", {"type": "content_block_delta", "index": j, "delta": d})
            for d in deltas
        )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": j}))
    usage: dict[str, Any] = {"output_tokens": message["usage"]["output_tokens"]}
    if "iterations" in message["usage"]:  # as recorded: the final counts and the iterations
        usage = dict(message["usage"])
    final: dict[str, Any] = {
        "type": "message_delta",
        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
        "usage": usage,
    }
    if "context_management" in message:
        final["context_management"] = message["context_management"]
    events.append(("message_delta", final))
    events.append(("message_stop", {"type": "message_stop"}))
    yield from sse(events)
