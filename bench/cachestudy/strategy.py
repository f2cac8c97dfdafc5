"""What every strategy provides, and the pieces they share.

A strategy sees the session one turn at a time and returns the request it would send for that
turn, which must fit the token budget. After the last turn it reports the records its summaries
point into (if any), for the information-kept check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from hydrangea.message import Message, Role, ToolCallPart

from .accounting import Request
from .transcript import Reminder, Turn

__all__ = [
    "BudgetExceededError",
    "Entry",
    "Strategy",
    "check_budget",
    "ends_model_turn",
    "reminder_message",
    "reminder_messages",
]


class BudgetExceededError(RuntimeError):
    """A strategy built a request larger than the budget (a defect of the strategy)."""


@dataclass(frozen=True, slots=True)
class Entry:
    """A conversation message with the turn it arrived in and its position in that turn."""

    turn: int
    position: int
    message: Message


class Strategy(Protocol):
    """A way of managing the context of the session."""

    @property
    def name(self) -> str:
        """Short label for tables."""
        ...

    def step(self, turn: Turn) -> Request:
        """Take in the turn's events and return this turn's request."""
        ...

    def records(self) -> Mapping[str, str] | None:
        """Record id to full text for the records summaries point into; None if none are kept."""
        ...


def reminder_message(reminder: Reminder) -> Message:
    """How every strategy shows one reminder: a user message tagged with its key."""
    return Message(
        role=Role.user, content=f"<reminder key={reminder.key!r}>\n{reminder.text}\n</reminder>"
    )


def reminder_messages(reminders: Sequence[Reminder]) -> list[Message]:
    """The reminders of a turn, in order, for the tail of a request."""
    return [reminder_message(reminder) for reminder in reminders]


def ends_model_turn(turn: Turn) -> bool:
    """Whether the turn starts with a model answer that calls no tool (the end of a model turn,
    where the library's compaction checkpoints may happen)."""
    if not turn.events or turn.events[0].role is not Role.assistant:
        return False
    return not any(isinstance(part, ToolCallPart) for part in turn.events[0].parts)


def check_budget(name: str, request: Request, budget: int) -> Request:
    """Return ``request`` if it fits ``budget``, else raise BudgetExceededError."""
    size = sum(message.tokens for message in request)
    if size > budget:
        raise BudgetExceededError(f"{name}: request of {size} tokens over the budget {budget}")
    return request
