"""Sanity tests of the Anthropic loopback emulator (tests/support/emulators), through the SDK.

Each emulator is the oracle of a provider's documented rule; these tests check it against
hand-built sessions: an exact replay is accepted, and each kind of change is refused (or, for
Responses, counted as dropped) exactly at the position the rule names.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, ToolResultPart
from tests.support.emulators import (
    AnthropicEmulator,
    GeminiEmulator,
    Reply,
    ResponsesEmulator,
    text,
    tool_call,
)
from tests.support.emulators._server import LoopbackEmulator
from tests.support.emulators.drive import AnthropicSession

BETA = "thinking-binding-controls-2026-08-01"


@pytest.fixture
def anthropic_emulator() -> Iterator[AnthropicEmulator]:
    """An Anthropic emulator answering "ok" to every request (add replies to script it)."""
    with AnthropicEmulator(default=text("ok")) as emu:
        yield emu


def anthropic_session(emu: AnthropicEmulator) -> AnthropicSession:
    """Three model calls: a tool call, its answer, a follow-up. Messages u0 a1 u2 a3 u4 a5."""
    emu.add_replies([tool_call("lookup", q="hydrangea"), text("A shrub."), text("Blue.")])
    session = AnthropicSession(emu.client())
    first = session.turn("Look up hydrangea.")
    session.turn(session.results_for(first))
    session.turn("What colour?")
    return session


# --- Anthropic ----------------------------------------------------------------------------


def test_anthropic_exact_replay_is_accepted(anthropic_emulator: AnthropicEmulator) -> None:
    session = anthropic_session(anthropic_emulator)
    session.turn("And in acid soil?")
    assert anthropic_emulator.rejections == []
    assert anthropic_emulator.drops == []
    # requests 2, 3, 4 send back 1, 2, 3 thinking blocks
    assert anthropic_emulator.checked == 1 + 2 + 3
    assert [r.status for r in anthropic_emulator.requests] == [200] * 4


@pytest.mark.parametrize(("edited", "rejected_at"), [(0, 1), (2, 3), (4, 5)])
def test_anthropic_edited_earlier_message_is_rejected_at_the_next_thinking_block(
    anthropic_emulator: AnthropicEmulator, edited: int, rejected_at: int
) -> None:
    session = anthropic_session(anthropic_emulator)
    messages = copy.deepcopy(session.messages)
    content = messages[edited]["content"]
    if isinstance(content, str):
        messages[edited]["content"] = content + " (edited)"
    else:
        content[0]["content"] = "a different result"
    messages.append({"role": "user", "content": "Next."})
    with pytest.raises(anthropic.BadRequestError) as raised:
        session.call(messages)
    assert raised.value.status_code == 400
    error = raised.value.body["error"]  # type: ignore[index]
    assert error["type"] == "invalid_request_error"
    assert "bound to a different conversation" in error["message"]
    assert f"messages.{edited}.content.0 differs" in error["message"]
    [rejection] = anthropic_emulator.rejections
    assert (rejection.path, rejection.rule) == (f"messages.{rejected_at}.content.0", "prefix")


def test_anthropic_reminder_removed_after_a_thinking_reply_is_rejected(
    anthropic_emulator: AnthropicEmulator,
) -> None:
    session = anthropic_session(anthropic_emulator)
    reminder = {"type": "text", "text": "<reminder>Be brief.</reminder>"}
    session.turn([{"type": "text", "text": "Why?"}, reminder])  # request n shows the reminder
    without = copy.deepcopy(session.messages)
    without[6]["content"] = [{"type": "text", "text": "Why?"}]  # request n+1 takes it out
    without.append({"role": "user", "content": "Thanks."})
    with pytest.raises(anthropic.BadRequestError):
        session.call(without)
    assert [r.path for r in anthropic_emulator.rejections] == ["messages.7.content.0"]
    # kept where it was, the same request is accepted
    session.turn("Thanks.")
    assert len(anthropic_emulator.rejections) == 1


def test_anthropic_system_reminder_removed_after_a_thinking_reply_is_rejected(
    anthropic_emulator: AnthropicEmulator,
) -> None:
    session = anthropic_session(anthropic_emulator)
    session.messages.append({"role": "user", "content": "Why?"})
    session.messages.append({"role": "system", "content": "Be brief."})
    session.take(session.call())
    without = [m for m in session.messages if m["role"] != "system"]
    without.append({"role": "user", "content": "Thanks."})
    with pytest.raises(anthropic.BadRequestError):
        session.call(without)
    assert [r.path for r in anthropic_emulator.rejections] == ["messages.7.content.0"]


@pytest.mark.parametrize("where", ["system", "tools", "last_user", "every_block"])
def test_anthropic_cache_control_differences_are_ignored(
    anthropic_emulator: AnthropicEmulator, where: str
) -> None:
    session = anthropic_session(anthropic_emulator)
    marker = {"type": "ephemeral"}
    messages = copy.deepcopy(session.messages)
    system: Any = [{"type": "text", "text": "You are terse.", "cache_control": marker}]
    tools = copy.deepcopy(session.tools)
    if where == "tools":
        tools[-1]["cache_control"] = marker
    if where == "last_user":
        messages[4]["content"] = [{"type": "text", "text": "What colour?", "cache_control": marker}]
    if where == "every_block":
        for m in messages:
            if isinstance(m["content"], list):
                for block in m["content"]:
                    if block["type"] not in ("thinking", "redacted_thinking"):
                        block["cache_control"] = marker
    messages.append({"role": "user", "content": "Next."})
    session.call(messages, system=system if where == "system" else session.system, tools=tools)
    assert anthropic_emulator.rejections == []
    assert anthropic_emulator.checked == 1 + 2 + 3


@pytest.mark.parametrize("changed", ["system", "tools"])
def test_anthropic_changed_system_or_tools_is_rejected_at_the_first_thinking_block(
    anthropic_emulator: AnthropicEmulator, changed: str
) -> None:
    session = anthropic_session(anthropic_emulator)
    tools = [*session.tools, {"name": "extra", "input_schema": {"type": "object"}}]
    overrides: dict[str, Any] = (
        {"system": "Today is Tuesday."} if changed == "system" else {"tools": tools}
    )
    with pytest.raises(anthropic.BadRequestError) as raised:
        session.call([*session.messages, {"role": "user", "content": "Next."}], **overrides)
    assert f"{changed} differs" in raised.value.body["error"]["message"]  # type: ignore[index]
    assert [r.path for r in anthropic_emulator.rejections] == ["messages.1.content.0"]


def test_anthropic_thinking_left_out_between_others_moved_or_edited_is_rejected(
    anthropic_emulator: AnthropicEmulator,
) -> None:
    session = anthropic_session(anthropic_emulator)
    base = [*session.messages, {"role": "user", "content": "Next."}]
    left_out = copy.deepcopy(base)
    del left_out[1]["content"][0]  # a1's thinking; a3 and a5 keep theirs
    moved = copy.deepcopy(base)
    moved[1]["content"][0], moved[3]["content"][0] = moved[3]["content"][0], moved[1]["content"][0]
    edited = copy.deepcopy(base)
    edited[3]["content"][0]["thinking"] = "Something else."
    forged = copy.deepcopy(base)
    forged[5]["content"][0]["signature"] = "sig_forged"
    for messages in (left_out, moved, edited, forged):
        with pytest.raises(anthropic.BadRequestError):
            session.call(messages)
    got = [(r.path, r.rule) for r in anthropic_emulator.rejections]
    assert got == [
        ("messages.3.content.0", "prefix"),
        ("messages.1.content.0", "prefix"),
        ("messages.3.content.0", "modified"),
        ("messages.5.content.0", "signature"),
    ]


def test_anthropic_drop_mode_drops_every_later_thinking_block_and_reports_it() -> None:
    replies = [
        tool_call("lookup", q="x"),
        Reply(text="A shrub.", redacted_thinking=True),
        text("Blue."),
    ]
    with AnthropicEmulator(replies, default=text("ok")) as emu:
        session = AnthropicSession(emu.client())
        first = session.turn("Look up x.")
        session.turn(session.results_for(first))
        session.turn("What colour?")
        messages = copy.deepcopy(session.messages)
        messages[2]["content"][0]["content"] = "edited result"
        messages.append({"role": "user", "content": "Next."})
        binding = {"prefix_mismatch_behavior": "drop_block"}
        reply = emu.client().beta.messages.create(
            model="claude-sonnet-5-5",
            max_tokens=64,
            system=session.system,
            tools=session.tools,
            messages=messages,
            betas=[BETA],
            thinking={"type": "enabled", "budget_tokens": 1024, "block_binding": binding},
        )
    # a3 holds thinking and redacted_thinking (consecutive); a5 thinking; a1 is before the edit
    expected = ["messages.3.content.0", "messages.3.content.1", "messages.5.content.0"]
    assert [d.path for d in emu.drops] == expected
    assert {d.reason for d in emu.drops} == {"prefix_binding_mismatch"}
    assert [t.path for t in reply.input_transformations or []] == expected
    assert {t.type for t in reply.input_transformations or []} == {"thinking_dropped"}
    assert emu.rejections == []


def test_anthropic_older_account_keeps_failing_blocks_and_reports_them() -> None:
    with AnthropicEmulator(default=text("ok"), mismatch="allow") as emu:
        session = anthropic_session(emu)
        messages = [*copy.deepcopy(session.messages), {"role": "user", "content": "Next."}]
        messages[0]["content"] = "edited"
        reply = emu.client().beta.messages.create(
            model="claude-sonnet-5-5",
            max_tokens=64,
            system=session.system,
            tools=session.tools,
            messages=messages,
            betas=[BETA],
        )
        assert emu.drops == [] and emu.rejections == []
        assert [(t.type, t.path) for t in reply.input_transformations or []] == [
            ("thinking_mismatch_allowed", f"messages.{i}.content.0") for i in (1, 3, 5)
        ]
        # without the beta header nothing is reported, the blocks are handled all the same
        plain = session.call(messages)
        assert getattr(plain, "input_transformations", None) is None


def test_anthropic_switching_model_drops_unreadable_thinking_without_error() -> None:
    with AnthropicEmulator(
        default=text("ok"), reads={"claude-fable-5-1": ["claude-opus-5-5"]}
    ) as emu:
        session = AnthropicSession(emu.client())
        session.messages.append({"role": "user", "content": "Hi."})
        session.take(session.call(model="claude-opus-5-5"))
        session.messages.append({"role": "user", "content": "Again."})
        session.call(model="claude-sonnet-5-5")
        session.call(model="claude-fable-5-1")
    assert [(d.request, d.path, d.reason) for d in emu.drops] == [
        (1, "messages.1.content.0", "model_binding_mismatch")
    ]
    assert emu.rejections == [] and emu.checked == 1


U = {"role": "user", "content": "Hi."}
A = {"role": "assistant", "content": [{"type": "text", "text": "Hello."}]}
S = {"role": "system", "content": "Be brief."}
SERVER_TOOL = {
    "role": "assistant",
    "content": [
        {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "web_search",
            "input": {"query": "x"},
        }
    ],
}


@pytest.mark.parametrize(
    ("messages", "refused_at"),
    [
        ([U, S], None),
        ([U, S, A, U], None),
        ([U, A, U, S], None),
        ([U, SERVER_TOOL, S], None),
        ([S, U], "messages.0"),
        ([U, A, S], "messages.2"),
        ([U, A, S, U], "messages.2"),
        ([U, S, U], "messages.1"),
        ([U, S, S], "messages.1"),  # the first is followed by neither assistant nor end
    ],
)
def test_anthropic_mid_conversation_system_placement(
    anthropic_emulator: AnthropicEmulator, messages: list[dict[str, Any]], refused_at: str | None
) -> None:
    session = AnthropicSession(anthropic_emulator.client())
    if refused_at is None:
        session.call(messages)
        assert anthropic_emulator.rejections == []
        return
    with pytest.raises(anthropic.BadRequestError):
        session.call(messages)
    assert [(r.path, r.rule) for r in anthropic_emulator.rejections] == [
        (refused_at, "system_placement")
    ]


def test_anthropic_tool_results_must_answer_the_previous_calls(
    anthropic_emulator: AnthropicEmulator,
) -> None:
    anthropic_emulator.add_replies([tool_call("lookup", q="x")])
    session = AnthropicSession(anthropic_emulator.client())
    session.turn("Look up x.")
    for answer in (
        "plain text",
        [{"type": "tool_result", "tool_use_id": "toolu_other", "content": "r"}],
    ):
        with pytest.raises(anthropic.BadRequestError):
            session.call([*session.messages, {"role": "user", "content": answer}])
    assert [(r.path, r.rule) for r in anthropic_emulator.rejections] == [
        ("messages.2", "tool_result"),
        ("messages.2", "tool_result"),
    ]


def test_anthropic_streamed_reply_replays_exactly(anthropic_emulator: AnthropicEmulator) -> None:
    anthropic_emulator.add_replies([tool_call("lookup", q="x")])
    session = AnthropicSession(anthropic_emulator.client())
    session.messages.append({"role": "user", "content": "Look up x."})
    with session.client.messages.stream(
        model="claude-sonnet-5-5",
        max_tokens=64,
        system=session.system,
        tools=session.tools,
        messages=session.messages,
    ) as stream:
        final = stream.get_final_message()
    session.take(final)
    assert [b.type for b in final.content] == ["thinking", "tool_use"]
    session.turn(session.results_for(final))
    assert anthropic_emulator.rejections == [] and anthropic_emulator.checked == 1


def test_anthropic_script_exhausted_is_an_emulator_error() -> None:
    with AnthropicEmulator([text("only one")]) as emu:
        session = AnthropicSession(emu.client())
        session.turn("Hi.")
        with pytest.raises(anthropic.InternalServerError):
            session.turn("Again.")
    assert len(emu.errors) == 1 and emu.rejections == []


# --- the library's plain requests, on every emulator ------------------------------------------


def _anthropic_call(client: Any, request: dict[str, Any]) -> Any:
    return client.messages.create(model="claude-sonnet-5-5", max_tokens=100, **request)


def _responses_call(client: Any, request: dict[str, Any]) -> Any:
    return client.responses.create(model="gpt-6", **request)


def _gemini_call(client: Any, request: dict[str, Any]) -> Any:
    return client.models.generate_content(model="gemini-3-pro", **request)


def _call_id(reply: Any) -> str:
    if hasattr(reply, "candidates"):
        return str(reply.candidates[0].content.parts[0].function_call.name)
    if hasattr(reply, "output"):
        return str(next(o.call_id for o in reply.output if o.type == "function_call"))
    return str(next(b.id for b in reply.content if b.type == "tool_use"))


@pytest.mark.parametrize(
    ("gateway", "emulator", "call"),
    [
        (GatewayType.anthropic, AnthropicEmulator, _anthropic_call),
        (GatewayType.openai_responses, ResponsesEmulator, _responses_call),
        (GatewayType.gemini, GeminiEmulator, _gemini_call),
    ],
)
def test_a_plain_context_session_replays_clean(
    gateway: GatewayType, emulator: type[LoopbackEmulator], call: Any
) -> None:
    """A Context with no lifecycle, pushed each reply, sends every bound item back valid."""
    with emulator([tool_call("lookup", q="x"), text("A shrub."), text("Blue.")]) as emu:
        client = emu.client()
        context = Context(gateway)
        context.emplace_message(Message(role=Role.system, content="You are terse."))
        context.emplace_message(Message(role=Role.user, content="Look up x."))
        reply = call(client, context.request())
        context.push_back(reply)
        result = ToolResultPart(call_id=_call_id(reply), content="a shrub")
        context.emplace_message(Message(role=Role.user, content=(result,)))
        context.push_back(call(client, context.request()))
        context.emplace_message(Message(role=Role.user, content="What colour?"))
        context.push_back(call(client, context.request()))
    assert emu.rejections == [] and emu.errors == []
    # requests 2 and 3 send back 1 and 2 bound items (Gemini: the call's and the text's)
    match emu:
        case AnthropicEmulator():
            assert emu.checked == 3 and emu.drops == []
        case ResponsesEmulator():
            assert (emu.reasoning_accepted, emu.reasoning_dropped) == (3, 0)
        case GeminiEmulator():
            assert emu.signatures_checked == 3


def test_anthropic_models_without_preserved_thinking_run_no_prefix_check(
    anthropic_emulator: AnthropicEmulator,
) -> None:
    anthropic_emulator.add_replies([text("A shrub.")])
    session = AnthropicSession(anthropic_emulator.client(), extra={"model": "claude-sonnet-4-5"})
    session.turn("What is a hydrangea?")
    messages = [*copy.deepcopy(session.messages), {"role": "user", "content": "Next."}]
    messages[0]["content"] = "edited"
    session.call(messages)
    assert anthropic_emulator.rejections == [] and anthropic_emulator.drops == []
    # the same change, on a dated preserved-thinking model reading its own blocks, is refused
    session = anthropic_session(anthropic_emulator)
    messages = [*copy.deepcopy(session.messages), {"role": "user", "content": "Next."}]
    messages[0]["content"] = "edited"
    with pytest.raises(anthropic.BadRequestError):
        session.call(messages, model="claude-sonnet-5-5-20261001")
    assert [r.path for r in anthropic_emulator.rejections] == ["messages.1.content.0"]


def test_anthropic_none_valued_fields_sent_back_are_ignored(
    anthropic_emulator: AnthropicEmulator,
) -> None:
    session = anthropic_session(anthropic_emulator)  # history holds exclude_none dumps
    messages = copy.deepcopy(session.messages)
    nones = {"text": {"citations": None}, "tool_use": {"caller": None}}
    for message in messages[1::2]:  # every assistant turn, as the SDK's model_dump() has it
        for block in message["content"]:
            block.update(nones.get(block["type"], {}))
    assert any(None in block.values() for m in messages[1::2] for block in m["content"])
    session.call([*messages, {"role": "user", "content": "Next."}])
    assert anthropic_emulator.rejections == []
    assert anthropic_emulator.checked == (1 + 2) + 3
