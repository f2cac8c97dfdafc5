"""OneShotNoticeArea: renders once, retires, promotes nothing; what the collector does with it."""

from __future__ import annotations

import pytest

from hydrangea.areas import ConversationArea, OneShotNoticeArea
from hydrangea.context.area import AreaFlowState, AreaLifeState, ContextAreaImplementation
from hydrangea.errors import ContextStateError
from hydrangea.message import Message, Role
from tests.areas_support import SYSTEM, answer, coop_with_system, life, texts


def test_satisfies_the_area_contract_statically_and_at_registration() -> None:
    area: ContextAreaImplementation = OneShotNoticeArea("hello")
    _, coop = coop_with_system()
    coop.register(area)  # CoopContext validates the members at runtime


def test_renders_once_then_retires_and_promotes_nothing() -> None:
    area = OneShotNoticeArea("Tools changed.")
    assert life(area) is AreaLifeState.retain
    assert area.flow_state is AreaFlowState.yielded
    assert [m.text for m in area.render()] == ["Tools changed."]
    assert life(area) is AreaLifeState.retired
    assert area.promote() == ()
    with pytest.raises(ContextStateError):
        area.render()


def test_accepts_a_complete_message_with_its_role() -> None:
    message = Message(role=Role.system, content="Mid-session system notice.")
    area = OneShotNoticeArea(message)
    assert area.render() == [message]


def test_collector_reclaims_the_notice_and_everything_after_it() -> None:
    context, coop = coop_with_system()
    coop.register(OneShotNoticeArea("Only for this turn."))
    coop.render()
    assert "Only for this turn." in texts(context[:])
    answer(context, "Noted.")
    coop.render()  # the notice is retired and alone at the tail: reclaimed
    record = coop.last_collection
    assert record is not None and record.detached == 2 and record.promoted == 0
    assert len(context) == 1 and SYSTEM in texts(context[:])
    assert coop.areas() == ()


def test_a_notice_before_a_retained_area_survives_until_that_area_retires() -> None:
    context, coop = coop_with_system()
    coop.register(OneShotNoticeArea("before the conversation"))
    conversation = ConversationArea()
    coop.register(conversation)
    conversation.user("first question")
    coop.render()  # notice at 1, question at 2
    answer(context, "first answer")
    conversation.user("second question")
    coop.render()
    answer(context, "second answer")
    coop.render()
    assert coop.collections == 0  # the walk from the tail stops at the retained conversation
    assert "before the conversation" in texts(context[:])
    conversation.close()
    coop.render()
    record = coop.last_collection
    assert record is not None and record.start == 1 and record.promoted == 0
    assert len(context) == 1  # everything after the system prompt was reclaimed


def test_a_notice_rendered_after_the_latest_retained_output_is_reclaimed_at_once() -> None:
    context, coop = coop_with_system()
    conversation = ConversationArea()
    coop.register(conversation)
    coop.register(OneShotNoticeArea("after the question"))
    conversation.user("question")
    coop.render()  # question at 1, notice at 2: the notice is the newest range
    answer(context, "answer")
    coop.render()
    record = coop.last_collection
    assert record is not None and record.start == 2 and record.detached == 2
    assert "after the question" not in texts(context[:])
    assert "answer" not in texts(context[2:])
    assert life(conversation) is AreaLifeState.retain


def test_an_anchored_notice_is_kept_until_its_anchor_retires() -> None:
    context, coop = coop_with_system()
    conversation = ConversationArea()
    coop.register(conversation)
    notice = OneShotNoticeArea("anchored", anchor=conversation)
    coop.register(notice)
    conversation.user("question")
    coop.render()
    assert life(notice) is AreaLifeState.retain
    answer(context, "answer")
    coop.render()
    assert coop.collections == 0 and "anchored" in texts(context[:])
    conversation.close()
    assert life(notice) is AreaLifeState.retired
    coop.render()
    assert len(context) == 1
