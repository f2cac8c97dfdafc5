"""ToolLoopArea: holds the cursor while the model keeps calling tools, yields when it answers."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from hydrangea.areas._common import anchored_life
from hydrangea.areas.errors import AreaUsageError, ToolError
from hydrangea.context.area import AreaFlowState, AreaLifeState, ContextAreaImplementation
from hydrangea.context.native import NativeContent
from hydrangea.errors import ContextStateError
from hydrangea.message import Message, Role, ToolCallPart, ToolResultPart

__all__ = ["Tool", "ToolLoopArea", "ToolRun"]

Tool: TypeAlias = Callable[[Mapping[str, Any]], str]
"""A tool: takes the call's arguments, returns the result text, raises ToolError on failure."""


@dataclass(frozen=True, slots=True)
class ToolRun:
    """One tool call the loop ran, and what it returned."""

    round: int
    call_id: str
    name: str
    arguments: Mapping[str, Any]
    result: str
    is_error: bool


class ToolLoopArea:
    """Runs the tools a model asks for and renders their results, one round per model call.

    Route every model reply of the loop to :meth:`route`. A reply that calls tools makes the area
    ``exclusive``: the next render appends the results (one user message of tool results) and
    ends the pass there, so no other area speaks in the middle of the exchange. A reply that calls
    no tool is the answer: the area yields and is finished. Finished, it retires (with an
    ``anchor``, only once the anchor retires, so the exchange is reclaimed with the anchor's
    range and not on its own). It promotes nothing.

    ``exclusive`` holds the cursor once the loop has it: CoopContext starts each pass at the
    cursor, so in the render right after the *first* tool call the areas before the loop in the
    ring still take their turn (with nothing queued they append nothing). Route the reply
    before queuing anything else, and the results follow the call directly.

    An unknown tool, or a tool raising :class:`~hydrangea.areas.ToolError`, gives an error result;
    after ``max_rounds`` rounds every further call gets an error result asking for an answer.
    """

    __slots__ = (
        "_anchor",
        "_answered",
        "_calling",
        "_max_rounds",
        "_pending",
        "_rounds",
        "_runs",
        "_tools",
    )

    def __init__(
        self,
        tools: Mapping[str, Tool],
        *,
        anchor: ContextAreaImplementation | None = None,
        max_rounds: int = 8,
    ) -> None:
        """``tools`` maps tool names to callables."""
        if max_rounds < 1:
            raise AreaUsageError(f"max_rounds must be at least 1, got {max_rounds}")
        self._tools = dict(tools)
        self._anchor = anchor
        self._max_rounds = max_rounds
        self._pending: list[Message] = []
        self._runs: list[ToolRun] = []
        self._rounds = 0
        self._calling = False
        self._answered = False

    @property
    def life_state(self) -> AreaLifeState:
        """``retain`` until the model answered (and, with an anchor, until it retires)."""
        return anchored_life(self._answered, self._anchor)

    @property
    def flow_state(self) -> AreaFlowState:
        """``exclusive`` while the model's latest reply called tools, else ``yielded``."""
        return AreaFlowState.exclusive if self._calling else AreaFlowState.yielded

    @property
    def rounds(self) -> int:
        """How many replies with tool calls were routed."""
        return self._rounds

    @property
    def runs(self) -> tuple[ToolRun, ...]:
        """Every tool call run so far, in order."""
        return tuple(self._runs)

    @property
    def answered(self) -> bool:
        """Whether the model has answered (replied without calling a tool)."""
        return self._answered

    def route(self, reply: Message) -> None:
        """Take the model's reply: run the tools it calls, or note that it answered."""
        if self._answered:
            raise ContextStateError("this tool loop is finished; register a new ToolLoopArea")
        if reply.role is not Role.assistant:
            raise AreaUsageError(f"a routed reply must have the assistant role, got {reply.role}")
        calls = [part for part in reply.parts if isinstance(part, ToolCallPart)]
        if not calls:
            self._calling = False
            self._answered = True
            return
        self._rounds += 1
        results = [self._run(call) for call in calls]
        self._pending.append(Message(role=Role.user, content=tuple(results)))
        self._calling = True

    def _run(self, call: ToolCallPart) -> ToolResultPart:
        if self._rounds > self._max_rounds:
            text, error = f"tool limit of {self._max_rounds} rounds reached; answer now", True
        elif (tool := self._tools.get(call.name)) is None:
            text, error = f"unknown tool {call.name!r}", True
        else:
            try:
                text, error = tool(call.arguments), False
            except ToolError as exc:
                text, error = str(exc), True
        self._runs.append(ToolRun(self._rounds, call.id, call.name, call.arguments, text, error))
        return ToolResultPart(call_id=call.id, content=text, is_error=error)

    def observe(self, context: Sequence[NativeContent]) -> None:
        """Nothing to watch: replies are routed explicitly."""
        _ = context

    def render(self) -> list[Message]:
        """The results of the latest round of tool calls, once."""
        out, self._pending = self._pending, []
        return out

    def promote(self) -> tuple[Message, ...]:
        """Nothing: the exchange is reclaimed with its range."""
        return ()

    def gc_prologue(self) -> None:
        """No resources to release."""

    def __repr__(self) -> str:
        state = "answered" if self._answered else "calling" if self._calling else "idle"
        return f"ToolLoopArea({sorted(self._tools)}, {self._rounds} rounds, {state})"
