"""The segment log: views stay exact through appends and tail detaches."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle.history import HistoryLog, HistoryView
from hydrangea.message import Message, Role

steps = st.lists(
    st.tuples(st.sampled_from(["append", "detach", "view"]), st.integers(0, 5)), max_size=40
)


@given(steps)
def test_views_are_exact_after_any_appends_and_detaches(plan: list[tuple[str, int]]) -> None:
    context = Context(GatewayType.openai)
    log = HistoryLog()
    views: list[tuple[HistoryView, list[object]]] = []
    counter = 0
    for op, n in plan:
        if op == "append":
            for _ in range(n):
                counter += 1
                context.emplace_message(Message(role=Role.user, content=f"m{counter}"))
        elif op == "detach":
            start = max(0, len(context) - n)
            context.detach_tail(start)
            for _ in range(n % 3):  # something new, possibly equal in length
                counter += 1
                context.emplace_message(Message(role=Role.user, content=f"m{counter}"))
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
