"""ToolLoopArea: holds the cursor while the model keeps calling tools, yields when it answers."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeAlias

from hydrangea.areas._common import anchored_life, registered_with
from hydrangea.areas.conversation import ConversationArea, check_reply
from hydrangea.areas.errors import AreaUsageError, ToolError
from hydrangea.areas.recall import RecallTool, tool_output_id
from hydrangea.asof.items import ContextItem, ItemKind
from hydrangea.asof.records import RecordStore
from hydrangea.context.area import AnyContextArea, AreaFlowState, AreaLifeState
from hydrangea.errors import (
    ContextStateError,
    DuplicateToolError,
    ToolDefinitionError,
)
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, ToolCallPart, ToolResultPart
from hydrangea.providers.native import NativeContent
from hydrangea.tools.definitions import tool_definitions, with_tools
from hydrangea.tools.fence import fence_tool_output
from hydrangea.tools.function import FunctionTool, result_text

__all__ = ["RawTool", "Tool", "ToolLoopArea", "ToolRun"]

Tool: TypeAlias = Callable[[Mapping[str, Any]], str]
"""A tool: takes the call's arguments, returns the result text, raises ToolError on failure."""

RawTool: TypeAlias = Callable[[Mapping[str, Any]], object]
"""A hand-written tool: takes the call's arguments as they came, returns any JSON value (or an
awaitable of one, for ``async def``), raises ToolError on failure. No schema, no validation:
prefer a :class:`~hydrangea.tools.FunctionTool`."""

_AnyTool: TypeAlias = RawTool | FunctionTool[..., Any]
_Given: TypeAlias = FunctionTool[..., Any] | RecallTool


@dataclass(frozen=True, slots=True)
class ToolRun:
    """One tool call the loop ran, and what it returned."""

    round: int
    call_id: str
    name: str
    arguments: Mapping[str, Any]
    result: str
    """The text sent to the model: the output (a value that is not a string, as compact JSON),
    fenced as untrusted data unless the tool is trusted (see :attr:`output`)."""
    is_error: bool
    value: Any = None
    """What the tool returned, before it became text (for an error: the error text)."""
    output: str = ""
    """The output as text, unfenced (``result`` is this text fenced, or this text itself)."""
    record_id: str | None = None
    """The id of the record keeping :attr:`output`, when the loop has a record store."""


class ToolLoopArea:
    """Runs the tools a model asks for and renders their results, one round per model call.

    Route every model reply of the loop to :meth:`route` (or ``await`` :meth:`aroute`, which
    also runs async tools, concurrently). A reply that calls tools makes the area ``exclusive``:
    the next render appends the results (one user message of tool results) and ends the pass
    there, so no other area speaks in the middle of the exchange. A reply that calls no tool is
    the answer: the area yields and is finished. It promotes nothing.

    Trust. A tool's output is outside text: each result is sent fenced as untrusted data
    (:func:`~hydrangea.tools.fence_tool_output`, recovered exactly by
    :func:`~hydrangea.tools.unfence_tool_output`) inside the provider's tool-result slot, on
    every gateway. Only a FunctionTool declared ``@tool(trusted=True)`` (the harness's own
    text) is sent as it is; a hand-written callable is always fenced.

    Records. With a record store (``records``, or the anchor's when the anchor is a
    :class:`~hydrangea.areas.ConversationArea` with one), every output is kept as an untrusted
    ``observation`` record under :func:`~hydrangea.areas.tool_output_id` (``tool-output/<call
    id>``), which the conversation's record of the calling reply names when the loop took
    the reply first (``Route(loop, conversation)``): after a compaction the summary points to
    that reply, and :class:`~hydrangea.areas.RecallTool` reads both.

    Lifetime. With an ``anchor``, the finished loop retires when the anchor retires, so the
    exchange is reclaimed with the anchor's range. Without one, the finished loop stays retained
    for good and the exchange is kept as history: a collection reclaims everything after a
    retired range's start, the model's answer included, so a loop that retired on its own would
    silently take its results and the answer with it.

    ``exclusive`` holds the cursor once the loop has it: CoopContext starts each pass at the
    cursor, so in the render right after the *first* tool call the areas before the loop in the
    ring still take their turn (with nothing queued they append nothing). Route the reply
    before queuing anything else, and the results follow the call directly.

    Registering. When the ``anchor`` is a registered :class:`~hydrangea.areas.ConversationArea`
    and the loop is not, :meth:`route` or :meth:`aroute` of a reply calling tools raises
    :class:`~hydrangea.errors.ContextStateError` before any tool runs (the results would never
    be sent): call ``coop.register(loop)`` first. Without an anchor, or with an unregistered
    one, the loop works standalone (:meth:`render` called directly).

    Tools are :class:`~hydrangea.tools.FunctionTool` objects (``@tool`` over a typed function)
    or :class:`~hydrangea.areas.RecallTool` handlers, given as a sequence or by name, or
    hand-written callables (:data:`RawTool`) by name. A tool
    result may be any JSON value (sent as compact JSON) or a string. An unknown tool, arguments
    that do not fit a FunctionTool's schema, or a tool raising
    :class:`~hydrangea.areas.ToolError` give an error result for the model; after ``max_rounds``
    rounds every further call gets an error result asking for an answer. Any other exception
    from a tool escapes, and the loop is then as it was before the reply was routed.
    """

    __slots__ = (
        "_anchor",
        "_answered",
        "_calling",
        "_clock",
        "_max_rounds",
        "_pending",
        "_records",
        "_registered_with",
        "_rounds",
        "_runs",
        "_tools",
    )

    def __init__(
        self,
        tools: Mapping[str, _AnyTool | RecallTool] | Iterable[_Given],
        *,
        anchor: AnyContextArea | None = None,
        max_rounds: int = 8,
        records: RecordStore | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        """``tools`` maps tool names to callables, or is a sequence of FunctionTools (and
        RecallTools). ``records`` keeps every output (default: the anchor's record store, when
        the anchor is a ConversationArea with one), dated by ``clock`` (default: now, UTC)."""
        if max_rounds < 1:
            raise AreaUsageError(f"max_rounds must be at least 1, got {max_rounds}")
        self._tools = _by_name(tools)
        self._anchor = anchor
        if records is None and isinstance(anchor, ConversationArea):
            records = anchor.records
        self._records = records
        self._clock = clock if clock is not None else _now
        self._max_rounds = max_rounds
        self._pending: list[Message] = []
        self._runs: list[ToolRun] = []
        self._rounds = 0
        self._calling = False
        self._answered = False
        self._registered_with: object | None = None

    @property
    def life_state(self) -> AreaLifeState:
        """``retain`` until the model answered and the anchor retired; without an anchor,
        always ``retain`` (the exchange is kept)."""
        if self._anchor is None:
            return AreaLifeState.retain
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

    @property
    def registered(self) -> bool:
        """Whether a CoopContext has registered this loop."""
        return self._registered_with is not None

    def on_register(self, coop: object) -> None:
        """Called by ``CoopContext.register``: remember ``coop``, and refuse a second, different
        CoopContext (:class:`~hydrangea.errors.DuplicateAreaError`)."""
        self._registered_with = registered_with(self, self._registered_with, coop, "loop")

    # -- declaring the tools to the model -------------------------------------------------------

    def definitions(self, gateway: GatewayType) -> list[dict[str, Any]]:
        """The loop's tool definitions in ``gateway``'s shape (see
        :func:`~hydrangea.tools.tool_definitions`); every tool must be a FunctionTool."""
        return tool_definitions(gateway, self._function_tools())

    def with_tools(self, kwargs: Mapping[str, Any], gateway: GatewayType) -> dict[str, Any]:
        """``kwargs`` (a request's keyword arguments) with the loop's tools declared in it (see
        :func:`~hydrangea.tools.with_tools`)."""
        return with_tools(kwargs, gateway, self._function_tools())

    def _function_tools(self) -> list[FunctionTool[..., Any]]:
        raw = sorted(name for name, t in self._tools.items() if not isinstance(t, FunctionTool))
        if raw:
            raise ToolDefinitionError(
                f"tools {raw} are plain callables with no schema to declare; "
                "make them FunctionTools with @tool"
            )
        return [t for t in self._tools.values() if isinstance(t, FunctionTool)]

    # -- routing --------------------------------------------------------------------------------

    def route(self, reply: Message) -> None:
        """Take the model's reply: run the tools it calls, or note that it answered.

        An async tool among the calls raises :class:`~hydrangea.areas.AreaUsageError` before
        anything runs: use :meth:`aroute`.
        """
        calls = self._calls(reply)
        if calls is None:
            return
        for call in calls:
            found = self._tools.get(call.name)
            if found is not None and _is_async(found):
                raise AreaUsageError(
                    f"tool {call.name!r} is async; route the reply with `await loop.aroute(reply)`"
                )
        round_ = self._rounds + 1
        outcomes: list[tuple[str, bool, object]] = []
        for call in calls:
            try:
                value = self._start(call, round_)
                if inspect.isawaitable(value):
                    _discard(value)
                    raise AreaUsageError(
                        f"tool {call.name!r} returned an awaitable; use `await loop.aroute(reply)`"
                    )
                outcomes.append((result_text(value, call.name), False, value))
            except ToolError as exc:
                outcomes.append((str(exc), True, str(exc)))
        self._commit(round_, calls, outcomes)

    async def aroute(self, reply: Message) -> None:
        """:meth:`route` that awaits async tools; the calls of one reply run concurrently.

        Sync tools run on the event loop's thread. If a tool raises something other than
        :class:`~hydrangea.areas.ToolError`, the other calls are cancelled, the exception
        escapes and the loop is unchanged.
        """
        calls = self._calls(reply)
        if calls is None:
            return
        round_ = self._rounds + 1
        tasks = [asyncio.ensure_future(self._arun(call, round_)) for call in calls]
        try:
            outcomes = await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        self._commit(round_, calls, outcomes)

    async def _arun(self, call: ToolCallPart, round_: int) -> tuple[str, bool, object]:
        try:
            value = self._start(call, round_)
            if inspect.isawaitable(value):
                value = await value
            return result_text(value, call.name), False, value
        except ToolError as exc:
            return str(exc), True, str(exc)

    def _calls(self, reply: Message) -> list[ToolCallPart] | None:
        """The reply's tool calls, or ``None`` when it is the answer (then noted)."""
        if self._answered:
            raise ContextStateError("this tool loop is finished; register a new ToolLoopArea")
        check_reply(reply, "route()")
        calls = [part for part in reply.parts if isinstance(part, ToolCallPart)]
        if not calls:
            self._calling = False
            self._answered = True
            return None
        anchor = self._anchor
        if self._registered_with is None and isinstance(anchor, ConversationArea) and (
            anchor.registered
        ):
            raise ContextStateError(
                f"route() of a reply calling {', '.join(repr(c.name) for c in calls)} on "
                f"{self!r}, which no CoopContext has registered while its anchor is: the tool "
                "results would never be sent; call coop.register(loop) before routing its "
                "replies"
            )
        return calls

    def _start(self, call: ToolCallPart, round_: int) -> object:
        """Call the tool: its value (or an awaitable of it); ToolError for an error result."""
        if round_ > self._max_rounds:
            raise ToolError(f"tool limit of {self._max_rounds} rounds reached; answer now")
        found = self._tools.get(call.name)
        if found is None:
            raise ToolError(f"unknown tool {call.name!r}")
        if isinstance(found, FunctionTool):
            return found.invoke(call.arguments)
        return found(call.arguments)

    @property
    def records(self) -> RecordStore | None:
        """The store keeping every tool output, if any."""
        return self._records

    def _commit(
        self,
        round_: int,
        calls: Sequence[ToolCallPart],
        outcomes: Sequence[tuple[str, bool, object]],
    ) -> None:
        runs: list[ToolRun] = []
        kept: list[ContextItem] = []
        for call, (text, error, value) in zip(calls, outcomes, strict=True):
            found = self._tools.get(call.name)
            trusted = isinstance(found, FunctionTool) and found.trusted
            sent = text if trusted else fence_tool_output(text)
            record_id = None
            if self._records is not None:
                record_id = _free_id(tool_output_id(call.id), self._records, kept)
                kept.append(ContextItem.outside(
                    ItemKind.OBSERVATION, text, item_id=record_id,
                    published_at=self._clock(), origin=f"tool:{call.name}",
                ))
            runs.append(ToolRun(round_, call.id, call.name, call.arguments, sent, error, value,
                                text, record_id))
        if self._records is not None:
            for item in kept:
                self._records.put(item)
        self._runs.extend(runs)
        results = [ToolResultPart(call_id=r.call_id, content=r.result, is_error=r.is_error,
                                  name=r.name)
                   for r in runs]
        self._pending.append(Message(role=Role.user, content=tuple(results)))
        self._rounds = round_
        self._calling = True

    # -- the Area contract -----------------------------------------------------------------------

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


def _free_id(base: str, records: RecordStore, kept: Sequence[ContextItem]) -> str:
    """``base``, or ``base/2``, ``base/3`` ... while the id is held (see tool_output_id)."""
    taken = {item.item_id for item in kept}
    item_id, suffix = base, 1
    while item_id in taken or item_id in records:
        suffix += 1
        item_id = f"{base}/{suffix}"
    return item_id


def _now() -> datetime:
    return datetime.now(UTC)


def _by_name(
    tools: Mapping[str, _AnyTool | RecallTool] | Iterable[_Given],
) -> dict[str, _AnyTool]:
    if isinstance(tools, Mapping):
        named: dict[str, _AnyTool] = {}
        for name, given in tools.items():
            found = given.tool if isinstance(given, RecallTool) else given
            if isinstance(found, FunctionTool) and found.name != name:
                raise AreaUsageError(
                    f"the tool under {name!r} is declared to the model as {found.name!r}; "
                    "use the same name (or pass a sequence of FunctionTools)"
                )
            if not callable(found):
                raise AreaUsageError(f"the tool under {name!r} is not callable")
            named[name] = found
        return named
    named = {}
    for given in tools:
        found = given.tool if isinstance(given, RecallTool) else given
        if not isinstance(found, FunctionTool):
            raise AreaUsageError(
                f"a sequence of tools must hold FunctionTools (see @tool) or RecallTools, got "
                f"{type(found).__name__}; give plain callables in a mapping by name"
            )
        if found.name in named:
            raise DuplicateToolError(f"a tool named {found.name!r} is given twice")
        named[found.name] = found
    return named


def _is_async(found: _AnyTool) -> bool:
    if isinstance(found, FunctionTool):
        return found.is_async
    return inspect.iscoroutinefunction(found) or inspect.iscoroutinefunction(
        getattr(found, "__call__", None)  # noqa: B004 - a callable object's method
    )


def _discard(value: Awaitable[object]) -> None:
    if inspect.iscoroutine(value):
        value.close()
