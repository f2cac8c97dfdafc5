"""GPT-5.6 explicit prompt caching on the Responses API: the policy, its placement, the wire.

The multi-turn tests run the real ``openai`` client against
:class:`~tests.support.emulators.responses_caching.CachingResponsesEmulator`, whose cache rules
come from the provider's documentation (its module docstring), not from the library. The
property test checks the placement against an oracle written here from the documented rule
(a breakpoint goes on an ``input_text`` / ``input_image`` / ``input_file`` part of an input
message or a tool output; the anchor is the last such part of the stable history).
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Iterator
from typing import Any, Literal

import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.areas import CompactingConversation
from hydrangea.context import Context
from hydrangea.coop import CoopContext
from hydrangea.errors import CachingError, RequestOptionError, UnsupportedOptionError
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle
from hydrangea.message import Message, Role, ToolResultPart
from hydrangea.providers.openai import OpenAIExplicitCaching
from hydrangea.providers.openai.explicit_caching import (
    breakpoint_positions,
    place_breakpoints,
    supports_explicit_caching,
)
from hydrangea.providers.openai.responses import OpenAIResponsesAdapter
from tests.support.check_openai import validate_responses
from tests.support.emulators import text, tool_call
from tests.support.emulators.responses_caching import CachingResponsesEmulator

GW = GatewayType.openai_responses
MODEL = "gpt-5.6-sol"
MARK = "prompt_cache_breakpoint"
TOOLS = [{"type": "function", "name": "lookup", "description": "Look a word up.",
          "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
          "strict": False}]
SYSTEM = "You answer questions about garden plants. " * 20


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# --- the policy ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "model", ["gpt-5.6", "gpt-5.6-sol", "gpt-5.6-terra-pro", "openai/gpt-5.6-luna", "gpt-5.7",
              "gpt-5.10-mini", "gpt-6", "ft:gpt-5.6-sol:acme::x1"],
)
def test_models_from_gpt_5_6_on_take_the_policy(model: str) -> None:
    policy = OpenAIExplicitCaching(model=model, ttl="12h")
    assert policy.options == {"mode": "explicit", "ttl": "12h"}


@pytest.mark.parametrize(
    "model", ["gpt-5.5", "gpt-5.5-pro", "gpt-5", "gpt-5-mini", "gpt-4.1", "gpt-4o", "o3",
              "claude-opus-4-8", ""],
)
def test_older_models_are_refused_naming_model_and_option(model: str) -> None:
    with pytest.raises(UnsupportedOptionError) as raised:
        OpenAIExplicitCaching(model=model)
    assert raised.value.model == model and raised.value.option == "prompt_cache_options"
    assert repr(model) in str(raised.value) and "gpt-5.6" in str(raised.value)


def test_without_a_model_the_refusal_says_to_pass_it() -> None:
    with pytest.raises(UnsupportedOptionError, match="pass model=") as raised:
        OpenAIExplicitCaching(model=None)
    assert raised.value.model is None


@pytest.mark.parametrize(("field", "value"), [("mode", "auto"), ("ttl", "24h"), ("ttl", "5m")])
def test_unknown_mode_or_ttl_is_refused(field: str, value: str) -> None:
    with pytest.raises(CachingError, match=field):
        OpenAIExplicitCaching(model=MODEL, **{field: value})  # type: ignore[arg-type]


def test_implicit_mode_leaves_one_write_to_the_api() -> None:
    assert OpenAIExplicitCaching(model=MODEL).max_writes == 4
    assert OpenAIExplicitCaching(model=MODEL, mode="implicit").max_writes == 3


@pytest.mark.parametrize(
    ("gateway", "error"),
    [(GatewayType.openai, UnsupportedOptionError), (GatewayType.gemini, UnsupportedOptionError),
     (GatewayType.anthropic, RequestOptionError)],
)
def test_another_gateway_refuses_the_policy_and_changes_nothing(
    gateway: GatewayType, error: type[Exception]
) -> None:
    ctx = Context(gateway)
    ctx.emplace_message(Message(role=Role.user, content="hello"))
    before = (ctx.sent, ctx.to_json())
    with pytest.raises(error, match="openai_responses"):
        ctx.request(caching=OpenAIExplicitCaching(model=MODEL))
    with pytest.raises(error, match="openai_responses"):
        ctx.build_incremental(1, (), caching=OpenAIExplicitCaching(model=MODEL))
    assert (ctx.sent, ctx.to_json()) == before


# --- what is sent -------------------------------------------------------------------------------


def _context() -> Context:
    ctx = Context(GW)
    ctx.emplace_message(Message(role=Role.system, content=SYSTEM))
    ctx.emplace_message(Message(role=Role.user, content="What is a hydrangea?"))
    return ctx


def test_without_the_policy_or_with_it_off_the_request_is_the_plain_one() -> None:
    ctx = _context()
    plain = _dumps(ctx.request())
    off = OpenAIExplicitCaching(model=MODEL, enabled=False)
    assert _dumps(ctx.request(caching=off)) == plain
    assert MARK not in plain and "prompt_cache_options" not in plain


def test_marks_go_on_the_head_and_the_stable_end_and_the_history_keeps_none() -> None:
    ctx = _context()
    stored = ctx.to_json()
    sent = ctx.request(caching=OpenAIExplicitCaching(model=MODEL, ttl="12h"))
    assert sent["prompt_cache_options"] == {"mode": "explicit", "ttl": "12h"}
    assert sent["input"] == [
        {"type": "message", "role": "system",
         "content": [{"type": "input_text", "text": SYSTEM, MARK: {"mode": "explicit"}}]},
        {"type": "message", "role": "user",
         "content": [{"type": "input_text", "text": "What is a hydrangea?",
                      MARK: {"mode": "explicit"}}]},
    ]
    assert ctx.to_json() == stored  # marks are on copies: the history is unchanged


def _answer(n: int) -> dict[str, Any]:
    return {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": f"answer {n}", "annotations": []}]}


def test_the_incremental_request_equals_the_one_built_from_scratch() -> None:
    ctx, policy = _context(), OpenAIExplicitCaching(model=MODEL)
    adapter = OpenAIResponsesAdapter()
    for n in range(4):
        ctx.push_back(_answer(n))
        ctx.emplace_message(Message(role=Role.user, content=f"question {n}"))
        sent = ctx.request(caching=policy)
        assert sent == adapter.breakpoint_request(ctx[:], caching=policy)
        validate_responses({"input": sent["input"]})  # the SDK's types take the marks


def test_a_string_tool_output_is_not_marked_and_a_list_one_is() -> None:
    ctx, policy = _context(), OpenAIExplicitCaching(model=MODEL)
    ctx.push_back({"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"})
    ctx.emplace_message(Message(role=Role.user, content=(ToolResultPart(call_id="c1",
                                                                        content="a shrub"),)))
    sent = ctx.request(caching=policy)["input"]
    assert sent[-1] == {"type": "function_call_output", "call_id": "c1", "output": "a shrub"}
    assert breakpoint_positions({"input": sent}) == ((0, 0), (1, 0))  # head, last user message
    ctx.push_back({"type": "function_call", "call_id": "c2", "name": "lookup", "arguments": "{}"})
    ctx.extend([{"type": "function_call_output", "call_id": "c2",
                 "output": [{"type": "input_text", "text": "blue"}]}])
    sent = ctx.request(caching=policy)["input"]
    assert sent[-1]["output"] == [
        {"type": "input_text", "text": "blue", MARK: {"mode": "explicit"}}]


def test_a_lifecycle_takes_the_policy_and_guards_the_newest_cut() -> None:
    agent = Context(GW)
    agent.emplace_message(Message(role=Role.system, content="You are a careful agent. " * 50))
    coop = CoopContext(agent)
    conversation = CompactingConversation(coop, threshold_tokens=200, rollup_tokens=5_000)
    turns = Lifecycle(coop, caching=OpenAIExplicitCaching(model=MODEL))
    turns.add(Component("Reminder: run the tests.", key="tests", ttl=1, cadence=1))
    for n in range(12):
        conversation.user(f"Step {n}: read the next file. " + "details " * 60)
        request = turns.render()
        agent.push_back(_answer(n))
        conversation.route(Message(role=Role.assistant, content=f"answer {n}"))
    assert conversation.summaries and request.cuts
    sent = request.kwargs["input"]
    placed = breakpoint_positions(request.kwargs)
    plain = _unmarked(sent)
    markable = _oracle_markable(plain, len(plain))
    guard = _oracle_markable(plain, request.cuts[0])[-1]
    assert placed == tuple(sorted({(0, 0), guard, markable[-1]}))
    assert request.kwargs["prompt_cache_options"] == {"mode": "explicit"}


# --- the real SDK on the emulator ----------------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def emu() -> Iterator[CachingResponsesEmulator]:
    with CachingResponsesEmulator(default=text("ok"), clock=_Clock()) as emulator:
        yield emulator


def _marks_of(body: dict[str, Any]) -> list[tuple[int, int]]:
    found = []
    for k, item in enumerate(body["input"]):
        parts = item.get("content") if "content" in item else item.get("output")
        for j, part in enumerate(parts if isinstance(parts, list) else []):
            if isinstance(part, dict) and MARK in part:
                found.append((k, j))
    return found


def test_a_session_reads_at_every_turn_what_the_turn_before_wrote(
    emu: CachingResponsesEmulator,
) -> None:
    emu.add_replies([tool_call("lookup", q="hydrangea"), text("A shrub."),
                     tool_call("lookup", q="colour"), text("Blue."), text("Yes.")])
    client, ctx = emu.client(), _context()
    policy = OpenAIExplicitCaching(model=MODEL)
    questions = iter(["What colour?", "In acid soil too?"])
    for turn in range(5):
        kwargs = ctx.request(caching=policy, model=MODEL, tools=TOOLS)
        reply = client.responses.create(**kwargs)
        ctx.push_back(reply)
        calls = [item for item in reply.output if item.type == "function_call"]
        if turn == 0:
            ctx.emplace_message(Message(role=Role.user, content=(
                ToolResultPart(call_id=calls[0].call_id, content="a flowering shrub"),)))
        elif calls:  # a tool output in list form: its part takes the anchor
            ctx.extend([{"type": "function_call_output", "call_id": calls[0].call_id,
                         "output": [{"type": "input_text", "text": "blue in acid soil"}]}])
        else:
            ctx.emplace_message(Message(role=Role.user, content=next(questions, "Thanks.")))
        assert ctx.usage.last is not None
        usage = ctx.usage.last.usage
        report = emu.reports[-1]
        assert (usage.cache_read_tokens, usage.cache_write_tokens) == (
            report.read_tokens, report.write_tokens)
    bodies = [r.body for r in emu.requests]
    assert emu.rejections == [] and emu.errors == []
    assert all(len(_marks_of(b)) <= 4 and b["prompt_cache_options"] == {"mode": "explicit"}
               for b in bodies)
    assert all(r.ignored == () for r in emu.reports)
    reports = emu.reports
    assert reports[0].read_tokens == 0 and reports[0].write_tokens == reports[0].input_tokens
    for earlier, later in itertools.pairwise(reports):
        # each request starts with the whole stable prefix the one before wrote: it reads it
        assert later.read_tokens >= max(earlier.written_tokens)
        assert later.write_tokens < later.input_tokens
    # turn 1's anchor could only go on the last user message (the tool output was a string):
    # what it wrote was read, nothing new was written
    assert reports[1].write_tokens == 0
    # the prefix-binding invariant: every reasoning item went back and was kept
    assert emu.reasoning_dropped == 0 and emu.reasoning_accepted == 1 + 2 + 3 + 4
    for before, after in itertools.pairwise(bodies):
        assert _unmarked(after["input"])[: len(before["input"])] == _unmarked(before["input"])
    assert MARK not in ctx.to_json()


def _unmarked(entries: list[Any]) -> list[Any]:
    """``entries`` without marks, a one-part text content read as the string it stands for."""
    out = []
    for entry in copy.deepcopy(entries):
        for key in ("content", "output"):
            parts = entry.get(key)
            if isinstance(parts, list):
                for part in parts:
                    if isinstance(part, dict):
                        part.pop(MARK, None)
                if key == "content" and len(parts) == 1 and parts[0].get("type") == "input_text" \
                        and set(parts[0]) == {"type", "text"}:
                    entry[key] = parts[0]["text"]
        out.append(entry)
    return out


def test_the_cache_expires_after_its_ttl(emu: CachingResponsesEmulator) -> None:
    client, clock = emu.client(), emu.clock
    assert isinstance(clock, _Clock)
    ttls: tuple[tuple[Literal["30m", "12h"], int, bool], ...] = (
        ("30m", 31 * 60, False), ("12h", 31 * 60, True))
    for ttl, wait, read in ttls:
        ctx = _context()
        ctx.emplace_message(Message(role=Role.user, content=f"ttl {ttl}"))
        policy = OpenAIExplicitCaching(model=MODEL, ttl=ttl)
        ctx.push_back(client.responses.create(**ctx.request(caching=policy, model=MODEL)))
        clock.now += wait
        ctx.emplace_message(Message(role=Role.user, content="again"))
        ctx.push_back(client.responses.create(**ctx.request(caching=policy, model=MODEL)))
        assert (emu.reports[-1].read_tokens > 0) is read


def test_the_emulator_refuses_the_options_on_an_older_model(
    emu: CachingResponsesEmulator,
) -> None:
    kwargs = _context().request(caching=OpenAIExplicitCaching(model=MODEL))
    with pytest.raises(openai.BadRequestError, match="prompt_cache_options"):
        emu.client().responses.create(model="gpt-5.5", **kwargs)
    kwargs.pop("prompt_cache_options")
    with pytest.raises(openai.BadRequestError, match=MARK):
        emu.client().responses.create(model="gpt-5.5", **kwargs)
    assert [r.rule for r in emu.rejections] == ["unsupported_parameter"] * 2


def test_the_emulator_writes_only_the_latest_four_marks(emu: CachingResponsesEmulator) -> None:
    parts = [{"type": "input_text", "text": f"part {n}", MARK: {"mode": "explicit"}}
             for n in range(6)]
    emu.client().responses.create(
        model=MODEL, input=[{"type": "message", "role": "user", "content": parts}],
        prompt_cache_options={"mode": "explicit"})
    assert emu.reports[-1].written == ((0, 2), (0, 3), (0, 4), (0, 5))
    assert emu.reports[-1].ignored == ((0, 0), (0, 1))


# --- the placement, against an oracle ------------------------------------------------------

_TEXT = st.text("abc ", min_size=0, max_size=6)
_PART = st.one_of(
    st.builds(lambda t: {"type": "input_text", "text": t}, _TEXT),
    st.just({"type": "input_image", "image_url": "https://example.com/a.png", "detail": "auto"}),
    st.just({"type": "input_file", "file_id": "file_1"}),
)
_ENTRY = st.one_of(
    st.builds(lambda r, c: {"type": "message", "role": r, "content": c},
              st.sampled_from(["user", "system", "developer"]),
              st.one_of(_TEXT, st.lists(_PART, max_size=3))),
    st.builds(lambda t: {"type": "message", "id": "msg", "role": "assistant",
                         "status": "completed",
                         "content": [{"type": "output_text", "text": t, "annotations": []}]},
              _TEXT),
    st.builds(lambda o: {"type": "function_call_output", "call_id": "c", "output": o},
              st.one_of(_TEXT, st.lists(_PART, max_size=2))),
    st.just({"type": "reasoning", "id": "rs", "summary": []}),
)


def _oracle_markable(entries: list[Any], stop: int) -> list[tuple[int, int]]:
    """Every part a breakpoint may go on before entry ``stop``, in reading order."""
    found = []
    for k, entry in enumerate(entries[:stop]):
        if entry["type"] == "message" and entry["role"] != "assistant":
            body = entry["content"]
        elif entry["type"] == "function_call_output" and isinstance(entry["output"], list):
            body = entry["output"]
        else:
            continue
        if isinstance(body, str):
            found += [(k, 0)] if body else []
            continue
        found += [(k, j) for j, p in enumerate(body)
                  if p["type"] != "input_text" or p["text"]]
    return found


@given(
    entries=st.lists(_ENTRY, max_size=12),
    data=st.data(),
    mode=st.sampled_from(["explicit", "implicit"]),
)
def test_placement_matches_the_oracle(entries: list[Any], data: Any, mode: str) -> None:
    stable = data.draw(st.integers(0, len(entries)))
    cuts = data.draw(st.lists(st.integers(1, max(1, stable)), max_size=3))
    policy = OpenAIExplicitCaching(model=MODEL, mode=mode)  # type: ignore[arg-type]
    original = copy.deepcopy(entries)
    request: dict[str, Any] = {"input": list(entries)}
    placed = place_breakpoints(request, policy, stable=stable, cuts=cuts)
    assert entries == original  # nothing the caller holds was changed
    validate_responses({"input": request["input"]})  # the SDK's types take the marks
    assert request["prompt_cache_options"]["mode"] == mode
    head = 0
    while head < stable and entries[head]["type"] == "message" \
            and entries[head]["role"] in ("system", "developer"):
        head += 1
    candidates = []
    for stop in (stable, *cuts[:1], head, *cuts[1:]):
        markable = _oracle_markable(entries, min(stop, stable))
        if markable and markable[-1] not in candidates:
            candidates.append(markable[-1])
    expected = sorted(candidates[: 4 if mode == "explicit" else 3])
    assert list(placed) == expected == sorted(_marks_of(request))
    assert all(k < stable for k, _ in placed)
    # without its marks the request is exactly the plain one
    assert _unmarked(request["input"]) == _unmarked(original)
    assert [e for k, e in enumerate(request["input"]) if k not in {p[0] for p in placed}] == [
        e for k, e in enumerate(original) if k not in {p[0] for p in placed}]


_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.sampled_from(["", "hi", "more"])),
        st.tuples(st.just("parts"), st.sampled_from(["", "a"])),
        st.tuples(st.just("answer"), st.sampled_from(["ok"])),
        st.tuples(st.just("call"), st.integers(0, 3)),
        st.tuples(st.just("output"), st.integers(0, 3)),
        st.tuples(st.just("list output"), st.integers(0, 3)),
        st.tuples(st.just("detach"), st.integers(0, 4)),
    ),
    max_size=14,
)


@given(steps=_STEPS)
def test_the_incremental_placement_follows_a_changing_tail(steps: list[tuple[str, Any]]) -> None:
    """Orphan-call notices that go once the output comes, outputs as strings or parts, detached
    tails: the request built on the request cache (its anchor search continued from the last
    turn's) is the one built from scratch, at every step."""
    ctx, policy = _context(), OpenAIExplicitCaching(model=MODEL)
    adapter = OpenAIResponsesAdapter()
    for n, (kind, arg) in enumerate(steps):
        if kind == "user":
            ctx.emplace_message(Message(role=Role.user, content=arg or "."))
        elif kind == "parts":
            ctx.extend([{"type": "message", "role": "user",
                         "content": [{"type": "input_text", "text": arg}]}])
        elif kind == "answer":
            ctx.push_back({**_answer(n), "content": [
                {"type": "output_text", "text": arg, "annotations": []}]})
        elif kind == "call":
            ctx.push_back({"type": "function_call", "call_id": f"c{arg}", "name": "lookup",
                           "arguments": "{}"})
        elif kind == "output":
            ctx.emplace_message(Message(role=Role.user, content=(
                ToolResultPart(call_id=f"c{arg}", content="found"),)))
        elif kind == "list output":
            ctx.extend([{"type": "function_call_output", "call_id": f"c{arg}",
                         "output": [{"type": "input_text", "text": "found"}]}])
        else:
            ctx.detach_tail(max(2, len(ctx) - arg))
        assert ctx.request(caching=policy) == adapter.breakpoint_request(ctx[:], caching=policy)


@given(st.from_regex(r"(openai/)?gpt-[0-9]{1,2}(\.[0-9]{1,2})?(-[a-z]{1,5})?", fullmatch=True))
def test_the_model_gate_matches_the_version_rule(model: str) -> None:
    numbers = model.removeprefix("openai/").removeprefix("gpt-").split("-")[0].split(".")
    version = (int(numbers[0]), int(numbers[1]) if len(numbers) > 1 else 0)
    assert supports_explicit_caching(model) is (version >= (5, 6))
