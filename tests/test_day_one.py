"""Day one (issue 25): the traps a new user fell into, each refused with an error that says what
to do, and the calls that replace the long ways round."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import anthropic.types
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea import (
    Component,
    Context,
    ConversationArea,
    CoopContext,
    GatewayType,
    Lifecycle,
    Message,
    Role,
    TextPart,
)
from hydrangea.areas import CompactingConversation
from hydrangea.asof import ContextBuilder, ContextItem, ItemKind, StructuredSummary
from hydrangea.errors import (
    AreaUsageError,
    AsOfTypeError,
    ContextStateError,
    DuplicateAreaError,
    HydrangeaError,
    InvalidMessageError,
    NaiveDatetimeError,
)

QUESTION = "Is ticket HW-2291 closed?"


def _reply(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def _sent_text(kwargs: dict[str, Any]) -> str:
    return str(kwargs)


# -- a forgotten coop.register(conversation) --------------------------------------------------


def test_a_user_turn_on_an_unregistered_conversation_is_refused_not_dropped() -> None:
    coop = CoopContext(Context(GatewayType.anthropic))
    conversation = ConversationArea()  # coop.register(conversation) forgotten
    lifecycle = Lifecycle(coop)
    lifecycle.add(Component("Cite the ticket number.", ttl=2, key="cite"))
    with pytest.raises(ContextStateError, match=r"coop\.register") as caught:
        conversation.user(QUESTION)
    assert isinstance(caught.value, HydrangeaError)
    assert conversation.pending == ()
    coop.register(conversation)  # the fix the message names
    conversation.user(QUESTION)
    request = lifecycle.render()
    assert QUESTION in _sent_text(request.kwargs)
    assert "Cite the ticket number." in _sent_text(request.kwargs)


_steps = st.lists(
    st.one_of(st.just(("register", "")), st.just(("render", "")),
              st.tuples(st.just("user"), st.text(alphabet="abcxyz ?", min_size=1, max_size=10)
                        .filter(str.strip))),
    max_size=12,
)


@given(_steps)
def test_every_user_turn_is_either_refused_or_sent(steps: list[tuple[str, str]]) -> None:
    # The oracle: a list of the turns the area accepted; each must be in the very next request.
    coop = CoopContext(Context(GatewayType.openai))
    lifecycle = Lifecycle(coop)
    lifecycle.add(Component("Be brief.", ttl=1, cadence=1))
    conversation = ConversationArea()
    registered = False
    accepted: list[str] = []
    for kind, text in steps:
        if kind == "register" and not registered:
            coop.register(conversation)
            registered = True
        elif kind == "user":
            if registered:
                conversation.user(text)
                accepted.append(text)
            else:
                with pytest.raises(ContextStateError):
                    conversation.user(text)
        elif kind == "render":
            messages = lifecycle.render().kwargs["messages"]
            sent = [m["content"] for m in messages if m["role"] == "user"]
            for turn in accepted:
                assert turn in sent
            accepted = []
            assert "Be brief." in str(messages)


def test_push_back_routed_to_an_unregistered_area_is_refused_and_nothing_is_kept() -> None:
    context = Context(GatewayType.anthropic)
    CoopContext(context)
    conversation = ConversationArea()
    with pytest.raises(ContextStateError, match=r"coop\.register"):
        context.push_back(_reply("Yes."), route=conversation)
    assert len(context) == 0
    assert conversation.transcript == ()


def test_an_area_belongs_to_one_coop() -> None:
    conversation = ConversationArea()
    first = CoopContext(Context(GatewayType.openai))
    second = CoopContext(Context(GatewayType.openai))
    first.register(conversation)
    with pytest.raises(DuplicateAreaError, match="another CoopContext"):
        second.register(conversation)
    assert second.snapshot().pending == ()
    with pytest.raises(DuplicateAreaError):
        first.register(conversation)


def test_a_compacting_conversation_hands_queued_turns_to_a_registered_successor() -> None:
    coop = CoopContext(Context(GatewayType.openai))
    conversation = CompactingConversation(coop, threshold_tokens=10_000)
    conversation.user("first question")
    coop.render()
    conversation.route(Message(role=Role.assistant, content="first answer"))
    segment = conversation.current
    segment.user("queued while the checkpoint runs")
    segment.checkpoint()
    successor = conversation.current  # registered by the conversation
    assert successor is not segment and successor.registered
    assert [m.text for m in successor.pending] == ["queued while the checkpoint runs"]


# -- coop.render() under a Lifecycle ----------------------------------------------------------


def test_coop_render_with_a_lifecycle_attached_is_refused_and_changes_nothing() -> None:
    coop = CoopContext(Context(GatewayType.anthropic))
    conversation = ConversationArea()
    coop.register(conversation)
    lifecycle = Lifecycle(coop)
    lifecycle.add(Component("Cite the ticket number.", ttl=2, key="cite"))
    conversation.user(QUESTION)
    with pytest.raises(ContextStateError, match=r"lifecycle\.render\(\)"):
        coop.render()
    with pytest.raises(ContextStateError, match=r"lifecycle\.arender\(\)"):
        asyncio.run(coop.arender())
    assert len(coop.context) == 0 and [m.text for m in conversation.pending] == [QUESTION]
    request = lifecycle.render()
    assert QUESTION in _sent_text(request.kwargs)
    assert "Cite the ticket number." in _sent_text(request.kwargs)
    assert asyncio.run(lifecycle.arender()).episode == 1


def test_coop_render_works_again_once_its_lifecycle_is_gone() -> None:
    coop = CoopContext(Context(GatewayType.openai))
    lifecycle = Lifecycle(coop)
    with pytest.raises(ContextStateError):
        coop.render()
    del lifecycle
    gc.collect()
    assert coop.render() is coop.context


# -- errors that say what to do ----------------------------------------------------------------


def test_an_sdk_message_routed_by_hand_names_push_back() -> None:
    coop = CoopContext(Context(GatewayType.anthropic))
    conversation = ConversationArea()
    coop.register(conversation)
    sdk = anthropic.types.Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [{"type": "text", "text": "Yes."}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 1},
        }
    )
    with pytest.raises(InvalidMessageError, match=r"push_back\(response, route=") as caught:
        conversation.route(sdk)  # type: ignore[arg-type]
    assert "got assistant" not in str(caught.value)
    assert "Message" in str(caught.value) and isinstance(caught.value, TypeError)
    assert conversation.transcript == ()


def test_a_wrong_role_names_the_role_by_its_value() -> None:
    coop = CoopContext(Context(GatewayType.openai))
    conversation = ConversationArea()
    coop.register(conversation)
    with pytest.raises(AreaUsageError) as caught:
        conversation.route(Message(role=Role.user, content="not a reply"))
    assert str(caught.value) == "a routed reply must have the assistant role, got user"


@pytest.mark.parametrize("method", ["user", "route"])
def test_a_dict_given_to_the_conversation_is_a_library_error_naming_the_fix(method: str) -> None:
    coop = CoopContext(Context(GatewayType.openai))
    conversation = ConversationArea()
    coop.register(conversation)
    given_dict = {"role": "user" if method == "user" else "assistant", "content": "hi"}
    with pytest.raises(InvalidMessageError, match="got dict") as caught:
        getattr(conversation, method)(given_dict)
    assert isinstance(caught.value, TypeError)
    assert "Message(" in str(caught.value) or "push_back(" in str(caught.value)
    assert conversation.pending == () and conversation.transcript == ()


@pytest.mark.parametrize("as_of", ["2026-03-01", "2026-03-01T00:00:00+00:00", date(2026, 3, 1)])
def test_as_of_that_is_not_a_datetime_is_a_type_error_saying_how_to_write_one(
    as_of: object,
) -> None:
    with pytest.raises(AsOfTypeError, match=r"tzinfo=UTC") as caught:
        ContextBuilder(as_of=as_of, token_budget=100)  # type: ignore[arg-type]
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, NaiveDatetimeError)


def test_a_naive_as_of_says_how_to_give_it_a_timezone() -> None:
    with pytest.raises(NaiveDatetimeError, match=r"replace\(tzinfo=UTC\)"):
        ContextBuilder(as_of=datetime(2026, 3, 1), token_budget=100)


# -- list or tuple -----------------------------------------------------------------------------

_texts = st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=4)


@given(_texts)
def test_message_parts_may_be_a_list_or_a_tuple(texts: list[str]) -> None:
    # Type-checked too: `mypy --strict tests` refused the list before issue 25.
    parts = [TextPart(text=t) for t in texts]
    from_list = Message(role=Role.user, content=parts)
    from_tuple = Message(role=Role.user, content=tuple(parts))
    assert from_list == from_tuple and type(from_list.content) is tuple
    assert from_list.text == "\n".join(texts)  # the oracle: the texts joined by hand


def test_other_constructors_take_lists_as_well() -> None:
    summary = StructuredSummary(facts=["Rates rose."], pointers=["doc-1"])
    assert summary.facts == ("Rates rose.",) and summary.pointers == ("doc-1",)
    item = ContextItem.outside(
        ItemKind.DOCUMENT,
        "text",
        item_id="d",
        published_at=datetime(2026, 1, 1, tzinfo=UTC),
        origin="test",
    )
    pointed = ContextItem(**{**item.model_dump(), "pointers": ["d-1"]})
    assert pointed.pointers == ("d-1",)
    component = Component("x", ttl=1, tags=["a", "b"])
    assert component.tags == frozenset({"a", "b"})


# -- the newest reply's text -------------------------------------------------------------------


@given(st.lists(st.text(alphabet="abc xyz", min_size=1, max_size=12).filter(str.strip),
                min_size=1, max_size=4))
def test_last_reply_text_is_the_newest_routed_reply(answers: list[str]) -> None:
    coop = CoopContext(Context(GatewayType.anthropic))
    conversation = ConversationArea()
    coop.register(conversation)
    assert conversation.last_reply_text == ""
    for number, answer in enumerate(answers):
        conversation.user(f"question {number}")
        coop.render()
        coop.context.push_back(_reply(answer), route=conversation)
        assert conversation.last_reply_text == answer  # the oracle: what the model said


def test_last_reply_text_of_a_compacting_conversation_crosses_segments() -> None:
    coop = CoopContext(Context(GatewayType.openai))
    conversation = CompactingConversation(coop, threshold_tokens=10_000)
    assert conversation.last_reply_text == ""
    conversation.user("first")
    coop.render()
    conversation.route(Message(role=Role.assistant, content="the first answer"))
    conversation.current.checkpoint()
    assert conversation.current.last_reply_text == ""
    assert conversation.last_reply_text == "the first answer"


# -- the explorer reads, never creates -----------------------------------------------------------


def test_explore_refuses_a_missing_sqlite_store_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "new.db"
    done = subprocess.run(
        [sys.executable, "-m", "hydrangea", "explore", "--store", f"sqlite:{missing}"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 2
    assert "no SQLite store" in done.stderr and "hydrangea demo --store" in done.stderr
    assert not missing.exists()
