"""The segment log: views stay exact through appends and tail detaches."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle.history import HistoryLog, HistoryView, Segment
from hydrangea.message import Message, Role
from hydrangea.providers.native import NativeContent

steps = st.lists(
    st.tuples(st.sampled_from(["append", "detach", "view"]), st.integers(0, 5)), max_size=40
)


def _append(context: Context, n: int, counter: int) -> int:
    """Append ``n`` user messages numbered after ``counter``; the new counter."""
    for _ in range(n):
        counter += 1
        context.emplace_message(Message(role=Role.user, content=f"m{counter}"))
    return counter


@given(steps)
def test_views_are_exact_after_any_appends_and_detaches(plan: list[tuple[str, int]]) -> None:
    context = Context(GatewayType.openai)
    log = HistoryLog()
    views: list[tuple[HistoryView, list[object]]] = []
    counter = 0
    for op, n in plan:
        if op == "append":
            counter = _append(context, n, counter)
        elif op == "detach":
            context.detach_tail(max(0, len(context) - n))
            counter = _append(context, n % 3, counter)  # something new, possibly equal in length
        detached = log.sync(context)
        assert [m["content"] for m in log.view().items()] == [m["content"] for m in context]
        if detached is not None:
            assert detached <= len(context)
        if op == "view":
            views.append((log.view(), [m["content"] for m in context]))
    for view, expected in views:
        assert [m["content"] for m in view.items()] == expected


def test_sync_reports_where_a_detach_started() -> None:
    context = Context(GatewayType.openai)
    for i in range(6):
        context.emplace_message(Message(role=Role.user, content=str(i)))
    log = HistoryLog()
    assert log.sync(context) is None
    context.detach_tail(2)
    context.emplace_message(Message(role=Role.user, content="2"))  # equal content, new object
    context.emplace_message(Message(role=Role.user, content="x"))
    context.emplace_message(Message(role=Role.user, content="y"))
    context.emplace_message(Message(role=Role.user, content="z"))
    assert log.sync(context) == 2
    assert log.sync(context) is None


def _held(log: HistoryLog) -> int:
    """How many item references the log's whole segment chain holds."""
    total = 0
    segment: Segment | None = log.segment
    while segment is not None:
        total += len(segment.items)
        segment = segment.parent
    return total


def _chain(log: HistoryLog) -> int:
    """How many segments the log's chain has."""
    count = 0
    segment: Segment | None = log.segment
    while segment is not None:
        count, segment = count + 1, segment.parent
    return count


def _assert_consistent(segment: Segment | None) -> None:
    """Each segment of the chain follows no more items than its parent's view holds (what a
    store writes and a load checks)."""
    while segment is not None and segment.parent is not None:
        assert segment.parent_len <= segment.parent.parent_len + len(segment.parent.items)
        segment = segment.parent


@given(
    st.lists(
        st.tuples(st.sampled_from(["append", "detach", "view", "drop"]), st.integers(0, 5)),
        max_size=50,
    )
)
def test_views_dropped_or_held_stay_exact_and_dead_tails_go(plan: list[tuple[str, int]]) -> None:
    context = Context(GatewayType.openai)
    log = HistoryLog()
    views: list[tuple[HistoryView, list[object]]] = []
    counter = 0
    for op, n in plan:
        if op == "append":
            counter = _append(context, n, counter)
        elif op == "detach":
            context.detach_tail(max(0, len(context) - n))
        elif op == "view":
            views.append((log.view(), [m["content"] for m in context[: len(log)]]))
        elif views:
            del views[n % len(views)]
        log.sync(context)
        assert all([m["content"] for m in view.items()] == want for view, want in views)
        for segment in [log.segment, *(view.segment for view, _ in views)]:
            _assert_consistent(segment)
    views.clear()
    for _ in range(5):  # the detaches a left segment waits for, each followed by a sync
        context.emplace_message(Message(role=Role.user, content="after"))
        log.sync(context)
        context.detach_tail(len(context) - 1)
        log.sync(context)
    # nothing reads the detached items any more: the chain holds the history and nothing else,
    # and every segment left behind no view reads is folded into the one after it
    assert _held(log) == len(context)
    assert _chain(log) <= 1 + 4, _chain(log)


def test_a_reminder_taken_back_every_turn_is_not_kept_once_no_request_reads_it() -> None:
    from hydrangea import ConversationArea, CoopContext
    from hydrangea.lifecycle import Component, Lifecycle, LifecycleRequest
    from hydrangea.message import ToolCallPart, ToolResultPart

    coop = CoopContext(Context(GatewayType.anthropic))
    conversation = ConversationArea()
    coop.register(conversation)
    lifecycle = Lifecycle(coop)
    lifecycle.add(Component("Answer briefly.", ttl=1, cadence=1, key="style"))
    context = coop.context
    held: LifecycleRequest | None = None
    sent: tuple[NativeContent, ...] = ()
    for turn in range(200):
        conversation.user(f"question {turn}")
        lifecycle.render()  # the reminder the last render sent is taken back: nothing followed
        call = ToolCallPart(id=f"call_{turn}", name="lookup", arguments={"q": str(turn)})
        context.emplace_message(Message(role=Role.assistant, content=(call,)))
        context.emplace_message(
            Message(role=Role.user, content=(ToolResultPart(call_id=call.id, content="ok"),))
        )
        request = lifecycle.render()
        if turn == 50:  # a request the caller keeps reads its reminder for as long as it lives
            held, sent = request, request.items
    reminders = [item for item in sent if "Answer briefly." in str(item)]
    assert held is not None and reminders and sent[-1] is reminders[-1]
    assert held.items == sent  # the reminder taken back after it is still what it sent
    assert not any(item is sent[-1] for item in context)
    # every other reminder taken back is let go of: the chain holds the history, the held
    # request's reminder and at most the last few detaches' (whose views may still live)
    log = lifecycle._log
    assert len(context) + 1 <= _held(log) <= len(context) + 1 + 4
    # and the chain is a few segments (the held request's, those of the last few detaches),
    # not one per turn
    assert _chain(log) <= 2 + 4, _chain(log)
