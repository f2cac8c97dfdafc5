"""A small conversation around one tool exchange, shared by the placement and adapter tests."""

from __future__ import annotations

from hydrangea.message import Message, Role, TextPart, ToolCallPart, ToolResultPart


def two_call_exchange(*, second_fails: bool = False) -> tuple[Message, ...]:
    """System rules, a user question, an assistant turn of text and two calls (``call_1``,
    ``call_2``), and a user turn answering both; ``second_fails`` marks ``call_2``'s result as an
    error."""
    return (
        Message(role=Role.system, content="You are terse."),
        Message(role=Role.user, content="What is the weather?"),
        Message(
            role=Role.assistant,
            content=(
                TextPart(text="Let me look."),
                ToolCallPart(id="call_1", name="weather", arguments={"city": "Kyoto"}),
                ToolCallPart(id="call_2", name="clock", arguments={}),
            ),
        ),
        Message(
            role=Role.user,
            content=(
                ToolResultPart(call_id="call_1", content="sunny"),
                ToolResultPart(call_id="call_2", content="noon", is_error=second_fails),
            ),
        ),
    )
