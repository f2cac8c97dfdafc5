"""Sanity tests of the OpenAI Responses and Gemini emulators, through the real SDK clients.

As in tests/test_emulators.py: an exact replay is accepted; each kind of change is counted as
dropped (Responses) or refused (Gemini) exactly at the position the provider's rule names.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from google.genai import errors as gerrors
from google.genai import types as gtypes

from tests.support.emulators import (
    GeminiEmulator,
    Reply,
    ResponsesEmulator,
    ToolCall,
    text,
    tool_call,
)
from tests.support.emulators.drive import GeminiSession, ResponsesSession


@pytest.fixture
def responses_emulator() -> Iterator[ResponsesEmulator]:
    """A Responses emulator answering "ok" to every request."""
    with ResponsesEmulator(default=text("ok")) as emu:
        yield emu


@pytest.fixture
def gemini_emulator() -> Iterator[GeminiEmulator]:
    """A Gemini emulator answering "ok" to every request."""
    with GeminiEmulator(default=text("ok")) as emu:
        yield emu


# --- OpenAI Responses -----------------------------------------------------------------------


def responses_session(emu: ResponsesEmulator) -> ResponsesSession:
    """Three model calls; items: u0 rs1 fc2 out3 rs4 msg5 u6 rs7 msg8."""
    emu.add_replies([tool_call("lookup", q="hydrangea"), text("A shrub."), text("Blue.")])
    session = ResponsesSession(emu.client())
    first = session.turn("Look up hydrangea.")
    session.turn(*session.outputs_for(first))
    session.turn("What colour?")
    return session


def test_responses_exact_replay_keeps_every_reasoning_item(
    responses_emulator: ResponsesEmulator,
) -> None:
    session = responses_session(responses_emulator)
    session.turn("And in acid soil?")
    assert responses_emulator.rejections == []
    assert (responses_emulator.reasoning_accepted, responses_emulator.reasoning_dropped) == (
        1 + 2 + 3,
        0,
    )
    assert len(responses_emulator.requests) == 4


@pytest.mark.parametrize(("edited", "dropped_at"), [(0, [1, 4, 7]), (3, [4, 7]), (6, [7])])
def test_responses_edited_earlier_item_drops_the_reasoning_after_it(
    responses_emulator: ResponsesEmulator, edited: int, dropped_at: list[int]
) -> None:
    session = responses_session(responses_emulator)
    items = copy.deepcopy(session.items)
    key = "output" if items[edited].get("type") == "function_call_output" else "content"
    items[edited][key] = "edited"
    reply = session.call([*items, {"role": "user", "content": "Next."}])
    assert [d.path for d in responses_emulator.dropped] == [f"input.{k}" for k in dropped_at]
    assert [t.id for t in reply.input_transformations or []] == [items[k]["id"] for k in dropped_at]
    assert {t.reason for t in reply.input_transformations or []} == {"prefix_mismatch"}
    assert responses_emulator.reasoning_dropped == len(dropped_at)
    assert responses_emulator.reasoning_accepted == 1 + 2 + (3 - len(dropped_at))
    assert responses_emulator.rejections == []


def test_responses_reminder_removed_after_a_reasoning_reply_drops_it(
    responses_emulator: ResponsesEmulator,
) -> None:
    session = responses_session(responses_emulator)
    reminder = {"role": "developer", "content": "Be brief."}
    session.turn(reminder, "Why?")  # items 9, 10; output rs11 msg12
    without = [i for i in session.items if i is not reminder]
    session.call([*without, {"role": "user", "content": "Thanks."}])
    assert [d.path for d in responses_emulator.dropped] == ["input.10"]
    assert responses_emulator.dropped[0].id == session.items[11]["id"]


@pytest.mark.parametrize(("bound", "dropped"), [(True, 3), (False, 0)])
def test_responses_instructions_change(bound: bool, dropped: int) -> None:
    with ResponsesEmulator(default=text("ok"), instructions_bound=bound) as emu:
        session = responses_session(emu)
        session.call(
            [*session.items, {"role": "user", "content": "Next."}], instructions="New rules."
        )
    assert emu.reasoning_dropped == dropped


def test_responses_string_and_part_forms_compare_equal_and_ids_are_ignored(
    responses_emulator: ResponsesEmulator,
) -> None:
    session = responses_session(responses_emulator)
    items = copy.deepcopy(session.items)
    items[0] = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "Look up hydrangea."}],
    }
    items[5] = {"role": "assistant", "content": "A shrub."}  # the output message, as an easy input
    items[2].pop("id")
    session.call([*items, {"role": "user", "content": "Next."}])
    assert (responses_emulator.reasoning_accepted, responses_emulator.reasoning_dropped) == (
        1 + 2 + 3,
        0,
    )


def test_responses_previous_response_id_chains(responses_emulator: ResponsesEmulator) -> None:
    client = responses_emulator.client()
    first = client.responses.create(model="gpt-6", input="Hi.")
    client.responses.create(model="gpt-6", input="Again.", previous_response_id=first.id)
    with pytest.raises(openai.BadRequestError):
        client.responses.create(model="gpt-6", input="x", previous_response_id="resp_unknown")
    # the chained context holds the first response's reasoning, unchanged
    assert responses_emulator.reasoning_accepted == 1
    assert [r.rule for r in responses_emulator.rejections] == ["previous"]


def test_responses_reasoning_without_its_item_or_unknown_is_refused(
    responses_emulator: ResponsesEmulator,
) -> None:
    session = responses_session(responses_emulator)
    orphan = [i for k, i in enumerate(session.items) if k != 5]  # rs4 loses its message
    forged = [
        *session.items[:1],
        {"type": "reasoning", "id": "rs_x", "summary": [], "encrypted_content": "enc_x"},
    ]
    for items in (orphan, forged):
        with pytest.raises(openai.BadRequestError):
            session.call(items)
    assert [(r.path, r.rule) for r in responses_emulator.rejections] == [
        ("input.4", "following_item"),
        ("input.1", "unknown_reasoning"),
    ]


def test_responses_stream_replays_exactly(responses_emulator: ResponsesEmulator) -> None:
    responses_emulator.add_replies([tool_call("lookup", q="x")])
    session = ResponsesSession(responses_emulator.client())
    session.items.append({"role": "user", "content": "Look up x."})
    with session.client.responses.stream(
        model="gpt-6", input=session.items, tools=session.tools, instructions=session.instructions
    ) as stream:
        final = stream.get_final_response()
    session.items.extend(o.model_dump(exclude_none=True) for o in final.output)
    session.turn(*session.outputs_for(final))
    assert responses_emulator.reasoning_accepted == 1


# --- Gemini -----------------------------------------------------------------------------------


def gemini_session(emu: GeminiEmulator) -> GeminiSession:
    """Contents: user0 model1(call) user2(response) model3(text) user4 model5(text)."""
    emu.add_replies([tool_call("lookup", q="hydrangea"), text("A shrub."), text("Blue.")])
    session = GeminiSession(emu.client())
    first = session.turn(gtypes.Part(text="Look up hydrangea."))
    session.turn(*session.responses_for(first))
    session.turn(gtypes.Part(text="What colour?"))
    return session


def test_gemini_exact_replay_is_accepted(gemini_emulator: GeminiEmulator) -> None:
    session = gemini_session(gemini_emulator)
    session.turn(gtypes.Part(text="And in acid soil?"))
    assert gemini_emulator.rejections == []
    # signatures sent back: request 2: the call's; 3: call + text; 4: call + two texts
    assert gemini_emulator.signatures_checked == 1 + 2 + 3


def current_turn_call(emu: GeminiEmulator) -> tuple[GeminiSession, Any]:
    """A session whose current turn holds a signed call: user0 model1(call) + the response."""
    emu.add_replies([tool_call("lookup", q="hydrangea")])
    session = GeminiSession(emu.client())
    first = session.turn(gtypes.Part(text="Look up hydrangea."))
    session.contents.append(gtypes.Content(role="user", parts=session.responses_for(first)))
    return session, first


def test_gemini_signature_removed_from_its_call_is_rejected(
    gemini_emulator: GeminiEmulator,
) -> None:
    session, _ = current_turn_call(gemini_emulator)
    contents = copy.deepcopy(session.contents)
    assert contents[1].parts is not None
    contents[1].parts[0].thought_signature = None
    with pytest.raises(gerrors.ClientError) as raised:
        session.call(contents)
    assert raised.value.code == 400
    assert "missing a thought_signature" in str(raised.value)
    assert [(r.path, r.rule) for r in gemini_emulator.rejections] == [
        ("contents[1].parts[0]", "missing_signature")
    ]


@pytest.mark.parametrize("how", ["to_text_part", "to_edited_call"])
def test_gemini_signature_moved_is_rejected(gemini_emulator: GeminiEmulator, how: str) -> None:
    session, _ = current_turn_call(gemini_emulator)
    contents = copy.deepcopy(session.contents)
    assert contents[1].parts is not None
    call_part = contents[1].parts[0]
    if how == "to_text_part":
        moved = gtypes.Part(text="Let me look.", thought_signature=call_part.thought_signature)
        call_part.thought_signature = None
        contents[1].parts = [moved, call_part]
        expected = ("contents[1].parts[0]", "moved_signature")
    else:
        assert call_part.function_call is not None
        call_part.function_call.args = {"q": "rose"}
        expected = ("contents[1].parts[0]", "moved_signature")
    with pytest.raises(gerrors.ClientError):
        session.call(contents)
    assert [(r.path, r.rule) for r in gemini_emulator.rejections] == [expected]


@pytest.mark.parametrize(("all_turns", "refused"), [(False, False), (True, True)])
def test_gemini_missing_signature_in_an_earlier_turn(all_turns: bool, refused: bool) -> None:
    with GeminiEmulator(default=text("ok"), check_all_turns=all_turns) as emu:
        session = gemini_session(emu)
        contents = copy.deepcopy(session.contents)
        assert contents[1].parts is not None
        contents[1].parts[0].thought_signature = None
        contents.append(gtypes.Content(role="user", parts=[gtypes.Part(text="Next.")]))
        if refused:
            with pytest.raises(gerrors.ClientError):
                session.call(contents)
        else:
            session.call(contents)
    assert [r.path for r in emu.rejections] == (["contents[1].parts[0]"] if refused else [])


def test_gemini_parallel_calls_sign_only_the_first() -> None:
    calls = Reply(tool_calls=(ToolCall("lookup", {"q": "a"}), ToolCall("lookup", {"q": "b"})))
    with GeminiEmulator([calls], default=text("ok")) as emu:
        session = GeminiSession(emu.client())
        first = session.turn(gtypes.Part(text="Look up a and b."))
        parts = first.candidates[0].content.parts
        assert [p.thought_signature is not None for p in parts] == [True, False]
        session.turn(*session.responses_for(first))
        assert emu.rejections == []
        contents = copy.deepcopy(session.contents[:3])
        assert contents[1].parts is not None
        contents[1].parts[0].thought_signature = None
        with pytest.raises(gerrors.ClientError):
            session.call(contents)
    assert [(r.path, r.rule) for r in emu.rejections] == [
        ("contents[1].parts[0]", "missing_signature")
    ]


def test_gemini_stream_replays_exactly(gemini_emulator: GeminiEmulator) -> None:
    gemini_emulator.add_replies([tool_call("lookup", q="x")])
    session = GeminiSession(gemini_emulator.client())
    session.contents.append(gtypes.Content(role="user", parts=[gtypes.Part(text="Look up x.")]))
    chunks = list(
        session.client.models.generate_content_stream(
            model="gemini-3-pro", contents=session.contents
        )
    )
    [chunk] = chunks
    session.contents.append(chunk.candidates[0].content)
    session.turn(*session.responses_for(chunk))
    assert gemini_emulator.requests[0].path.endswith(":streamGenerateContent?alt=sse")
    assert gemini_emulator.rejections == [] and gemini_emulator.signatures_checked == 1
