"""ConversationArea: user turns and routed replies as one retained range, with full records."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.areas import AreaUsageError, ConversationArea, OneShotNoticeArea
from hydrangea.asof import InMemoryRecordStore, Trust
from hydrangea.context.area import AreaLifeState, ContextAreaImplementation
from hydrangea.errors import ContextStateError
from hydrangea.message import Message, Role
from tests.areas_support import answer, call_tool, coop_with_system, json_tokens, life, texts


def test_user_turns_render_in_order_and_replies_are_recorded() -> None:
    records = InMemoryRecordStore()
    context, coop = coop_with_system()
    area: ContextAreaImplementation = ConversationArea(records=records)
    conversation = ConversationArea(records=records, name="chat")
    coop.register(conversation)
    del area
    conversation.user("one")
    conversation.user("two")
    coop.render()
    assert [context.adapter.item_text(i) for i in context[1:]] == ["one", "two"]
    conversation.route(answer(context, "reply to two"))
    assert conversation.record_ids == (
        "chat/turn-1/user",
        "chat/turn-2/user",
        "chat/turn-2/reply-1",
    )
    assert records.require("chat/turn-2/reply-1").content == "reply to two"
    assert records.require("chat/turn-1/user").trust is Trust.UNTRUSTED
    assert [m.text for m in conversation.transcript] == ["one", "two", "reply to two"]


def test_tool_calls_are_kept_in_the_record_text() -> None:
    records = InMemoryRecordStore()
    context, coop = coop_with_system()
    conversation = ConversationArea(records=records)
    coop.register(conversation)
    conversation.user("look it up")
    coop.render()
    conversation.route(call_tool(context, "c1", "lookup", ticket="HW-1"))
    assert records.require("conversation/turn-1/reply-1").content == (
        '[tool call lookup {"ticket": "HW-1"}]'
    )


def test_bad_input_is_refused_and_leaves_the_area_unchanged() -> None:
    conversation = ConversationArea()
    with pytest.raises(AreaUsageError):
        conversation.user("   ")
    with pytest.raises(AreaUsageError):
        conversation.user(Message(role=Role.assistant, content="not a user"))
    with pytest.raises(AreaUsageError):
        conversation.route(Message(role=Role.user, content="not a reply"))
    with pytest.raises(AreaUsageError):
        ConversationArea(first_turn=0)
    assert conversation.pending == () and conversation.transcript == ()
    conversation.close()
    assert life(conversation) is AreaLifeState.retired
    with pytest.raises(ContextStateError):
        conversation.user("too late")


def test_a_long_session_is_one_retained_range_and_nothing_is_reclaimed() -> None:
    context, coop = coop_with_system()
    conversation = ConversationArea()
    coop.register(conversation)
    for turn in range(30):
        conversation.user(f"question {turn}")
        if turn % 7 == 3:
            coop.register(OneShotNoticeArea(f"notice {turn}", anchor=conversation))
        coop.render()
        conversation.route(answer(context, f"answer {turn}"))
    coop.render()
    assert coop.collections == 0
    for turn in range(30):
        assert f"question {turn}" in texts(context[:])
        assert f"answer {turn}" in texts(context[:])
        if turn % 7 == 3:
            assert f"notice {turn}" in texts(context[:])
    ranges = {r.area: r.effect_range for r in coop.areas()}
    conv_range = ranges[conversation]
    assert conv_range is not None and conv_range.earliest == 1


@given(st.lists(st.text(min_size=1, max_size=60).filter(str.strip), min_size=1, max_size=8))
def test_observed_size_matches_an_independent_count_of_the_range(turns: list[str]) -> None:
    context, coop = coop_with_system()
    conversation = ConversationArea()
    coop.register(conversation)
    for text in turns:
        conversation.user(text)
        before = {r.area: r.effect_range for r in coop.areas()}.get(conversation)
        coop.render()
        if before is not None:
            expected = json_tokens(context[before.earliest : before.latest + 1])
            assert conversation.observed_tokens == expected
        conversation.route(answer(context, text[::-1]))
    # the size estimate never shrinks while the conversation grows
    assert conversation.tokens >= conversation.observed_tokens
