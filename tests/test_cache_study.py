"""The cache study of bench/cache.py: the session generator, the cache accounting, the strategies.

The study lives in ``bench/cachestudy`` (imported as ``bench.cachestudy`` from the repository
root). Expected figures in the accounting tests are computed by hand in the comments.
"""

from __future__ import annotations

import json
import math
from itertools import takewhile
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.cachestudy.accounting import (
    CACHE_READ_PRICE,
    CACHE_WRITE_PRICE,
    MIN_CACHEABLE_TOKENS,
    Request,
    RequestMessage,
    billed_cost,
    cost_turns,
    reused_tokens,
    shared_prefix_tokens,
    totals,
)
from bench.cachestudy.baselines import InPlaceReminders, SlidingWindow, SummarizeReplace
from bench.cachestudy.binding import Binding, BindingCount, StudyDefectError, count_broken
from bench.cachestudy.library import LibraryModel
from bench.cachestudy.providers import (
    AnthropicRules,
    GeminiRules,
    OpenAIRules,
    cost_turns_with,
    unit_costs,
)
from bench.cachestudy.real_library import LibraryStrategy
from bench.cachestudy.render import Renderer
from bench.cachestudy.strategy import Strategy, reminder_message
from bench.cachestudy.study import (
    LibrarySetting,
    StrategyResult,
    _library,
    information_kept,
    new_tokens,
    run_strategy,
)
from bench.cachestudy.summaries import first_sentence, reachable_texts
from bench.cachestudy.tokens import LocalApproxCounter
from bench.cachestudy.transcript import Reminder, Transcript, Turn, generate
from bench.reporting.cache import cache_section
from bench.reporting.common import Page
from bench.reporting.peers import asof_section, coop_section, generic_section, lifecycle_section
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle.session import Resend
from hydrangea.message import Message, Role, ToolCallPart, ToolResultPart


def _tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _request(*pairs: tuple[str, int]) -> Request:
    return tuple(RequestMessage(text, tokens) for text, tokens in pairs)


# -- the session generator -------------------------------------------------------------------


def test_same_seed_gives_the_same_session_and_another_seed_another() -> None:
    first = generate(11, turns=80)
    again = generate(11, turns=80)
    other = generate(12, turns=80)
    assert first == again
    assert first.system_prompt == again.system_prompt
    assert first != other
    assert first.system_prompt != other.system_prompt
    assert first.facts != other.facts


def _tool_results(transcript: Transcript) -> list[str]:
    return [
        part.content
        for turn in transcript.turns
        for message in turn.events
        for part in message.parts
        if isinstance(part, ToolResultPart)
    ]


def test_the_default_session_has_the_promised_shape() -> None:
    session = generate(7)
    assert len(session.turns) == 300
    assert 1_400 <= _tokens(session.system_prompt) <= 1_600
    outputs = _tool_results(session)
    assert len(outputs) > 200
    assert all(200 <= _tokens(text) <= 5_000 for text in outputs)
    assert max(_tokens(text) for text in outputs) > 3_000  # the range is used, not just allowed
    assert any("[document 1]" in text for text in outputs)  # retrieved documents
    users = [m.content for t in session.turns for m in t.events if m.role is Role.user]
    texts = [content for content in users if isinstance(content, str)]  # not tool results
    assert len(texts) >= 20
    assert all(50 <= _tokens(text) <= 650 for text in texts)
    assert len(session.facts) >= 100


@given(st.integers(min_value=0, max_value=2**32))
def test_every_session_keeps_its_promises(seed: int) -> None:
    session = generate(seed, turns=30)
    assert 1_400 <= _tokens(session.system_prompt) <= 1_600
    assert all(200 <= _tokens(text) <= 5_000 for text in _tool_results(session))
    # facts are unique, planted in exactly one message each, never in its first sentence
    assert len(set(session.facts)) == len(session.facts)
    for turn in session.turns:
        for fact in turn.facts:
            holders = [m for m in turn.events if fact in m.text]
            assert len(holders) == 1
            assert fact not in first_sentence(holders[0].text)
    # every tool call is answered in the same turn; a tool loop is 3 to 12 tool steps long
    loop = 0
    for turn in session.turns[1:]:
        calls = [p for m in turn.events for p in m.parts if isinstance(p, ToolCallPart)]
        results = [p for m in turn.events for p in m.parts if isinstance(p, ToolResultPart)]
        assert [c.id for c in calls] == [r.call_id for r in results]
        if calls:
            loop += 1
        else:
            assert 3 <= loop <= 12
            loop = 0
    assert loop <= 12
    # the to-do reminder is always visible; the test reminder every tenth turn only
    for turn in session.turns:
        keys = [r.key for r in turn.reminders]
        assert keys[0] == "todo"
        assert ("run-tests" in keys) == (turn.index % 10 == 0)


def test_a_session_needs_a_turn() -> None:
    with pytest.raises(ValueError, match="at least one turn"):
        generate(1, turns=0)


# -- the cache accounting --------------------------------------------------------------------


def test_three_requests_computed_by_hand() -> None:
    first = _request(("sys", 1_500), ("u1", 300))
    second = _request(("sys", 1_500), ("u1", 300), ("a1", 200), ("t1", 800))
    third = _request(("sys", 1_500), ("u1 edited", 300), ("a1", 200), ("t1", 800), ("u2", 100))
    # first: nothing cached; second: sys + u1 = 1,800; third: u1 changed, so sys only = 1,500
    costs = cost_turns([first, second, third], [1_800, 1_000, 400])
    assert [c.input_tokens for c in costs] == [1_800, 2_800, 2_900]
    assert [c.reused_tokens for c in costs] == [0, 1_800, 1_500]
    # billed: 1,800 * 1.25 = 2,250; 1,800 * 0.1 + 1,000 * 1.25 = 1,430;
    # 1,500 * 0.1 + 1,400 * 1.25 = 1,900
    assert [c.billed for c in costs] == pytest.approx([2_250.0, 1_430.0, 1_900.0])
    total = totals(costs)
    assert total.input_tokens == 7_500
    assert total.reused_tokens == 3_300
    assert total.billed == pytest.approx(5_580.0)
    assert total.peak_tokens == 2_900
    assert total.mean_tokens == pytest.approx(2_500.0)
    assert total.reuse_share == pytest.approx(3_300 / 7_500)
    # new tokens 3,200 of 7,500: at most 4,300 / 7,500 could ever be reused
    assert total.reuse_limit == pytest.approx(4_300 / 7_500)


def test_a_prefix_shorter_than_the_minimum_is_not_cached() -> None:
    assert MIN_CACHEABLE_TOKENS == 1_024
    previous = _request(("sys", 1_000), ("u1", 500))
    assert reused_tokens(previous, _request(("sys", 1_000), ("u2", 500))) == 0
    assert reused_tokens(_request(("sys", 1_023)), _request(("sys", 1_023), ("x", 9))) == 0
    assert reused_tokens(_request(("sys", 1_024)), _request(("sys", 1_024), ("x", 9))) == 1_024
    assert reused_tokens(None, previous) == 0


def test_cache_pricing() -> None:
    assert (CACHE_READ_PRICE, CACHE_WRITE_PRICE) == (0.1, 1.25)
    assert billed_cost(10_000, 0) == pytest.approx(12_500.0)
    assert billed_cost(10_000, 10_000) == pytest.approx(1_000.0)
    assert billed_cost(10_000, 4_000) == pytest.approx(400.0 + 7_500.0)
    with pytest.raises(ValueError, match="outside"):
        billed_cost(100, 101)


def test_bad_accounting_input_is_refused() -> None:
    with pytest.raises(ValueError, match="requests but"):
        cost_turns([_request(("a", 5))], [])
    with pytest.raises(ValueError, match="new tokens in a request"):
        cost_turns([_request(("a", 5))], [6])


_messages = st.lists(st.tuples(st.sampled_from("abc"), st.integers(1, 900)), max_size=8)


@given(_messages, _messages)
def test_shared_prefix_against_an_oracle(
    left: list[tuple[str, int]], right: list[tuple[str, int]]
) -> None:
    before, after = _request(*left), _request(*right)
    pairs = zip(before, after, strict=False)
    same = list(takewhile(lambda pair: pair[0].text == pair[1].text, pairs))
    assert shared_prefix_tokens(before, after) == sum(now.tokens for _, now in same)
    reused = reused_tokens(before, after)
    assert reused in (0, shared_prefix_tokens(before, after))
    assert reused == 0 or reused >= MIN_CACHEABLE_TOKENS
    assert reused <= sum(m.tokens for m in after)


# -- information kept ------------------------------------------------------------------------


class _Stub:
    name = "stub"

    def __init__(self, records: dict[str, str] | None) -> None:
        self._records = records

    def step(self, turn: object) -> Request:
        raise AssertionError("not used")

    def records(self) -> dict[str, str] | None:
        return self._records


def test_information_kept_counts_verbatim_facts_and_pointed_records() -> None:
    final = _request(('summary ["conversation/turn-5/user"]', 10), ("FACT-A is here", 5))
    records = {
        "conversation/turn-5/user": "FACT-B in full",
        "conversation/turn-50/user": "FACT-C not pointed to",
    }
    facts = ["FACT-A", "FACT-B", "FACT-C", "FACT-D"]
    assert information_kept(facts, final, _Stub(records)) == 2
    assert information_kept(facts, final, _Stub(None)) == 1
    texts = reachable_texts("see conversation/turn-50/user", records)
    assert texts[1:] == ["FACT-C not pointed to"]  # turn-5 is not a prefix match of turn-50


# -- the strategies on a short session -------------------------------------------------------

_BUDGET = 60_000


@pytest.fixture(scope="module")
def session() -> Transcript:
    return generate(5, turns=60)


def _run(strategy: Strategy, session: Transcript, renderer: Renderer) -> list[Request]:
    return [strategy.step(turn) for turn in session.turns]


def test_every_strategy_stays_within_the_budget(session: Transcript) -> None:
    renderer = Renderer(LocalApproxCounter())
    fresh = new_tokens(session, renderer)
    strategies: list[Strategy] = [
        LibraryStrategy(session, renderer, _BUDGET, threshold=6_000),
        LibraryStrategy(session, renderer, _BUDGET, threshold=6_000, in_place=True),
        LibraryModel(session, renderer, _BUDGET, threshold=6_000),
        InPlaceReminders(session, renderer, _BUDGET, threshold=6_000),
        SlidingWindow(session, renderer, _BUDGET),
        SummarizeReplace(session, renderer, _BUDGET, every=10),
    ]
    for strategy in strategies:
        result = run_strategy(strategy, session, fresh)
        assert result.totals.peak_tokens <= _BUDGET, strategy.name
        assert result.totals.reused_tokens <= result.totals.input_tokens - result.totals.new_tokens
        if strategy.records() is not None:  # summaries with pointers keep every fact
            assert result.info_kept == 1.0, strategy.name
    sliding = run_strategy(SlidingWindow(session, renderer, _BUDGET), session, fresh)
    assert sliding.info_kept < 1.0  # the budget forces it to forget


def _marker(reminder: Reminder) -> str:
    """A reminder's message text as it appears inside a rendered unit."""
    return json.dumps(reminder_message(reminder).text, ensure_ascii=False)[1:-1]


def _holds(unit: RequestMessage, reminder: Reminder) -> bool:
    return _marker(reminder) in unit.text


_POLICIES = [Resend.each_episode, Resend.when_changed]


@pytest.mark.parametrize("resend", _POLICIES)
@pytest.mark.parametrize("rollup", [None, 1_000])
def test_each_library_request_begins_with_the_previous_one_but_at_checkpoints(
    session: Transcript, rollup: int | None, resend: Resend
) -> None:
    # What was sent is history: a request is the previous request, reminders included, followed
    # by the model's reply and what came after it; only a checkpoint (the collector's cut) may
    # change what came before.
    renderer = Renderer(LocalApproxCounter())
    library = LibraryStrategy(
        session, renderer, _BUDGET, threshold=6_000, rollup=rollup, resend=resend
    )
    previous: Request | None = None
    checkpoints = checked = 0
    for turn in session.turns:
        request = library.step(turn)
        if previous is not None and library.checkpoints == checkpoints:
            assert request[: len(previous)] == previous, turn.index
            assert len(request) > len(previous)
            checked += 1
        previous, checkpoints = request, library.checkpoints
    assert library.checkpoints >= 2
    assert checked == len(session.turns) - 1 - library.checkpoints


@pytest.mark.parametrize("rollup", [None, 1_000])
def test_resending_each_episode_appends_every_visible_reminder_and_keeps_the_old_ones(
    session: Transcript, rollup: int | None
) -> None:
    renderer = Renderer(LocalApproxCounter())
    library = LibraryStrategy(session, renderer, _BUDGET, threshold=6_000, rollup=rollup)
    sent: list[tuple[int, Reminder]] = []  # every sending since the last checkpoint
    checkpoints = 0
    for turn in session.turns:
        request = library.step(turn)
        if library.checkpoints != checkpoints:  # the cut took the conversation's sendings
            sent, checkpoints = [], library.checkpoints
        count = len(turn.reminders)
        tail = request[len(request) - count :]
        # the request ends with exactly this turn's visible reminders, one unit each
        assert sorted(_marker(r) for r in turn.reminders) == sorted(
            next(_marker(r) for r in turn.reminders if _holds(unit, r)) for unit in tail
        )
        sent.extend((turn.index, reminder) for reminder in turn.reminders)
        # and every earlier sending is still in the history, as many times as it was sent
        units = [unit for unit in request if "<reminder key=" in unit.text]
        assert len(units) == len(sent), turn.index
    assert library.checkpoints >= 2


def _check_sent_when_changed(library: LibraryStrategy, session: Transcript) -> list[int]:
    """Run ``library``; check each reminder version is sent once while the history keeps it,
    and return the turns where a visible reminder was not in the request."""
    missing: list[int] = []
    versions: set[tuple[str, str]] = set()
    checkpoints = 0
    for turn in session.turns:
        request = library.step(turn)
        if library.checkpoints != checkpoints:
            versions, checkpoints = set(), library.checkpoints
        units = [unit for unit in request if "<reminder key=" in unit.text]
        for reminder in turn.reminders:
            copies = sum(1 for unit in units if _holds(unit, reminder))
            assert copies <= 1, (turn.index, reminder.key)  # never sent twice unchanged
            if copies == 0:
                missing.append(turn.index)
            else:
                versions.add((reminder.key, reminder.text))
        assert len(units) <= len(versions) + len(turn.reminders)
    return missing


def test_resending_when_changed_sends_each_version_once(session: Transcript) -> None:
    renderer = Renderer(LocalApproxCounter())
    library = LibraryStrategy(
        session, renderer, _BUDGET, threshold=6_000, resend=Resend.when_changed
    )
    each = LibraryStrategy(session, renderer, _BUDGET, threshold=6_000)
    missing = _check_sent_when_changed(library, session)
    # the reminders are found wherever no checkpoint happened in that very turn
    checkpoints = {t for t, _ in _checkpoint_turns(session, renderer)}
    assert set(missing) <= checkpoints
    fresh = new_tokens(session, renderer)
    once = run_strategy(
        LibraryStrategy(session, renderer, _BUDGET, threshold=6_000, resend=Resend.when_changed),
        session, fresh, "", OpenAIRules(),
    )
    again = run_strategy(each, session, fresh, "", OpenAIRules())
    assert 0 < once.totals.reminder_tokens < again.totals.reminder_tokens
    assert once.totals.billed < again.totals.billed


def _checkpoint_turns(session: Transcript, renderer: Renderer) -> list[tuple[int, int]]:
    library = LibraryStrategy(session, renderer, _BUDGET, threshold=6_000)
    out: list[tuple[int, int]] = []
    for turn in session.turns:
        before = library.checkpoints
        library.step(turn)
        if library.checkpoints != before:
            out.append((turn.index, library.checkpoints))
    return out


def test_resending_when_changed_shows_every_visible_reminder_in_every_request(
    session: Transcript,
) -> None:
    renderer = Renderer(LocalApproxCounter())
    library = LibraryStrategy(
        session, renderer, _BUDGET, threshold=6_000, resend=Resend.when_changed
    )
    assert _check_sent_when_changed(library, session) == []


@pytest.mark.parametrize("resend", ["each_episode", "when_changed"])
def test_the_local_model_keeps_what_it_sent_and_shows_every_visible_reminder(
    session: Transcript, resend: Literal["each_episode", "when_changed"]
) -> None:
    renderer = Renderer(LocalApproxCounter())
    model = LibraryModel(session, renderer, _BUDGET, threshold=6_000, resend=resend)
    previous: Request | None = None
    checkpoints = 0
    sendings = 0
    for turn in session.turns:
        request = model.step(turn)
        if model.history.checkpoints != checkpoints:
            checkpoints, sendings = model.history.checkpoints, 0
        elif previous is not None:
            assert request[: len(previous)] == previous, turn.index
        units = [unit for unit in request if "<reminder key=" in unit.text]
        assert all(any(_holds(unit, r) for unit in units) for r in turn.reminders)
        if resend == "each_episode":
            sendings += len(turn.reminders)
            assert len(units) == sendings
        else:
            assert len(units) == len({unit.text for unit in units})  # each version once
        previous = request
    assert model.history.checkpoints >= 2


@pytest.mark.parametrize("rollup", [None, 1_000])
def test_in_place_reminders_rewrite_history_the_library_does_not(
    session: Transcript, rollup: int | None
) -> None:
    renderer = Renderer(LocalApproxCounter())
    fresh = new_tokens(session, renderer)
    rules = OpenAIRules()

    def run(**options: Any) -> StrategyResult:
        strategy = LibraryStrategy(
            session, renderer, _BUDGET, threshold=6_000, rollup=rollup, **options
        )
        return run_strategy(strategy, session, fresh, "", rules, bindings=True)

    in_place = run(in_place=True)
    assert in_place.binding is not None and in_place.binding.requests_broken > 0
    for resend in _POLICIES:
        library = run(resend=resend)
        assert library.binding is not None and library.binding.requests_broken == 0
        # the same checkpoints; the library carries its reminders' sendings, in-place edits
        assert library.totals.input_tokens >= in_place.totals.input_tokens
        assert library.totals.reuse_share > in_place.totals.reuse_share
        assert library.totals.billed < in_place.totals.billed


def test_a_rollup_keeps_every_fact_and_carries_fewer_summary_tokens(session: Transcript) -> None:
    renderer = Renderer(LocalApproxCounter())
    fresh = new_tokens(session, renderer)
    plain = LibraryStrategy(session, renderer, _BUDGET, threshold=6_000)
    rolled = LibraryStrategy(session, renderer, _BUDGET, threshold=6_000, rollup=1_000)
    without = run_strategy(plain, session, fresh)
    with_rollup = run_strategy(rolled, session, fresh)
    assert rolled.rollups >= 1 and plain.rollups == 0
    assert rolled.checkpoints == plain.checkpoints  # the rollup changes no checkpoint
    assert without.info_kept == with_rollup.info_kept == 1.0
    assert rolled.summary_tokens < plain.summary_tokens
    # every pointer of the final history resolves in the store
    final = "\n".join(m.text for m in renderer.request(rolled.coop.context[:]))
    named = [key for key in rolled.store.ids() if key in final]
    assert named and all(rolled.store.require(key).content for key in named)


def test_the_local_model_rolls_up_like_the_library(session: Transcript) -> None:
    renderer = Renderer(LocalApproxCounter())
    fresh = new_tokens(session, renderer)
    model = LibraryModel(session, renderer, _BUDGET, threshold=6_000, rollup=1_000)
    result = run_strategy(model, session, fresh)
    assert model.rollups >= 1 and result.info_kept == 1.0
    assert len(model.history.summaries) <= model.history.checkpoints - model.rollups + 1
    with pytest.raises(ValueError):
        LibraryModel(session, renderer, _BUDGET, threshold=6_000, rollup=0)


# -- the report never fails on a partial or odd run ------------------------------------------


@pytest.mark.parametrize(
    "odd",
    [
        {},
        {"strategies": [{"name": 3}], "sweep": "x", "targets": 5, "config": [], "session": None},
        {"strategies": [{"name": "a", "billed_vs_library": 0.5}], "other_seeds": [{"seed": 1}]},
        {"rows": [{"items": "a", "hydrangea_seconds": 1, "keelgate_seconds": None}]},
        {"seconds_by_areas": {"x": "y"}, "ratio_by_context_length": {"10": 1.0, "100": 2.0}},
        {"render_us": {"10": "fast"}, "per_turn": [1, 2, 3, 4, 5, 6, 7]},
    ],
)
def test_report_sections_tolerate_missing_and_odd_results(
    odd: dict[str, object], tmp_path: Path
) -> None:
    sections = [cache_section, coop_section, asof_section, lifecycle_section]
    for section in sections:
        page = Page(image_dir=tmp_path, image_link="img")
        section(page, None, "not run")
        assert any("*not run*" in line for line in page.lines)
        page = Page(image_dir=tmp_path, image_link="img")
        section(page, dict(odd), None)
        assert page.lines[0].startswith("## ")
    page = Page(image_dir=tmp_path, image_link="img")
    generic_section(page, "other", None, "unreadable (bad JSON)")
    assert any("unreadable" in line for line in page.lines)


# -- each provider's rules, computed by hand -------------------------------------------------


def _units(*specs: tuple[str, int, bool]) -> Request:
    return tuple(RequestMessage(text, tokens, mark) for text, tokens, mark in specs)


def test_openai_rules_count_1024_then_128_token_steps() -> None:
    first = _units(("sys", 1_500, False), ("u1", 300, False))
    second = (*first, RequestMessage("a1", 200))
    rules = OpenAIRules()
    rules.reset()
    assert rules.cost(first) == (0, 1_800, 1_800.0)
    # shared 1,800: 1,024 + 6 * 128 = 1,792 read; 1,792 * 0.1 + 208 = 387.2
    read, written, billed = rules.cost(second)
    assert (read, written) == (1_792, 208) and billed == pytest.approx(387.2)


def test_gemini_rules_need_the_minimum_and_bill_no_write_premium() -> None:
    rules = GeminiRules()
    rules.reset()
    rules.cost(_units(("sys", 1_500, False), ("u1", 300, False)))
    longer = _units(("sys", 1_500, False), ("u1", 300, False), ("a", 200, False))
    read, _, billed = rules.cost(longer)
    assert read == 1_800 and billed == pytest.approx(180.0 + 200.0)
    small = GeminiRules()
    small.reset()
    small.cost(_units(("s", 500, False)))
    assert small.cost(_units(("s", 500, False), ("t", 10, False)))[0] == 0  # under 1,024
    assert GeminiRules(min_tokens=4_096).min_tokens == 4_096


def test_anthropic_rules_read_at_breakpoints_within_the_lookback() -> None:
    rules = AnthropicRules()
    rules.reset()
    first = _units(("sys", 1_500, True), ("u1", 300, True))
    assert rules.cost(first) == (0, 1_800, 2_250.0)  # all written at 1.25x
    second = _units(("sys", 1_500, True), ("u1", 300, False), ("a1", 200, True))
    # the breakpoint on a1 finds the entry written at u1 one block back: 1,800 read
    read, written, billed = rules.cost(second)
    assert (read, written) == (1_800, 200) and billed == pytest.approx(180.0 + 250.0)
    # 25 new blocks: the last breakpoint cannot look back to a1; only the system entry is read
    far = (*_units(("sys", 1_500, True), ("u1", 300, False), ("a1", 200, False)),
           *(RequestMessage(f"x{n}", 10) for n in range(25)), RequestMessage("end", 10, True))
    assert rules.cost(far)[0] == 1_500
    # no breakpoint, nothing cached; a prefix under the minimum is not written
    fresh = AnthropicRules()
    fresh.reset()
    assert fresh.cost(_units(("a", 900, True), ("b", 50, False))) == (0, 0, 950.0)
    assert fresh.cost(_units(("a", 900, True), ("b", 50, True)))[0] == 0
    with pytest.raises(ValueError, match="breakpoints"):
        fresh.cost(_units(*((f"u{n}", 10, True) for n in range(5))))


@given(_messages, _messages)
def test_openai_reads_against_an_oracle(
    left: list[tuple[str, int]], right: list[tuple[str, int]]
) -> None:
    before, after = _request(*left), _request(*right)
    rules = OpenAIRules()
    rules.reset()
    rules.cost(before)
    read = rules.cost(after)[0]
    pairs = zip(before, after, strict=False)
    same = list(takewhile(lambda pair: pair[0].text == pair[1].text, pairs))
    shared = sum(now.tokens for _, now in same) if sum(m.tokens for m in before) >= 1_024 else 0
    assert read <= shared
    assert read == 0 or (read >= 1_024 and (read - 1_024) % 128 == 0 and shared - read < 128)


@pytest.mark.parametrize("gateway", [GatewayType.anthropic, GatewayType.gemini])
def test_the_recall_setting_keeps_every_fact_with_a_small_summary(
    session: Transcript, gateway: GatewayType
) -> None:
    renderer = Renderer(LocalApproxCounter(), gateway)
    fresh = new_tokens(session, renderer)
    rules = AnthropicRules() if gateway is GatewayType.anthropic else GeminiRules()
    setting = LibrarySetting(3_000, 500, in_loops=True)
    recall = run_strategy(
        _library(session, renderer, _BUDGET, setting, recall=True), session, fresh, "", rules
    )
    full = run_strategy(_library(session, renderer, _BUDGET, setting), session, fresh, "", rules)
    assert recall.info_kept == 1.0 and full.info_kept == 1.0
    assert recall.extra["summary_tokens_at_end"] < full.extra["summary_tokens_at_end"]
    assert recall.totals.reused_tokens <= recall.totals.input_tokens - recall.totals.new_tokens


@pytest.mark.parametrize("gateway", [GatewayType.anthropic, GatewayType.openai])
def test_checkpoints_in_tool_loops_shrink_the_requests_and_keep_every_fact(
    session: Transcript, gateway: GatewayType
) -> None:
    renderer = Renderer(LocalApproxCounter(), gateway)
    fresh = new_tokens(session, renderer)
    rules = AnthropicRules() if gateway is GatewayType.anthropic else OpenAIRules()

    def run(in_loops: bool) -> StrategyResult:
        setting = LibrarySetting(2_500, 500, in_loops=in_loops)
        strategy = _library(session, renderer, _BUDGET, setting, recall=True)
        return run_strategy(strategy, session, fresh, "", rules)

    loops, ends = run(True), run(False)
    assert loops.info_kept == 1.0
    assert loops.extra["checkpoints"] > ends.extra["checkpoints"]
    assert loops.totals.mean_tokens < ends.totals.mean_tokens
    assert loops.totals.billed < ends.totals.billed


def test_anthropic_breakpoints_read_every_prefix_an_earlier_request_sent(
    session: Transcript,
) -> None:
    # The library's breakpoints (cut guards before each area's start included) leave nothing
    # on the table under Anthropic's rules: each request reads as much as a cache of *every*
    # earlier prefix would give it (the oracle below), checkpoints and rollups included.
    renderer = Renderer(LocalApproxCounter(), GatewayType.anthropic)
    strategy = _library(session, renderer, _BUDGET, LibrarySetting(2_500, 3_000))
    assert isinstance(strategy, LibraryStrategy)
    requests = _run(strategy, session, renderer)
    rules = AnthropicRules()
    rules.reset()
    seen: set[tuple[str, ...]] = set()
    read = best = 0
    for request in requests:
        texts = tuple(unit.text for unit in request)
        shared = max((n for n in range(len(texts) + 1) if texts[:n] in seen), default=0)
        tokens = sum(unit.tokens for unit in request[:shared])
        best += tokens if tokens >= MIN_CACHEABLE_TOKENS else 0
        seen.update(texts[:n] for n in range(1, len(texts) + 1))
        read += rules.cost(request)[0]
    assert strategy.checkpoints >= 3
    assert read == best


# -- prefix binding and the reminders' share of the bill ---------------------------------------


def _tiny_session() -> Transcript:
    """Turn 0: the task; turns 1 and 2 start with a model reply (texts A-reply, B-reply)."""
    task = Message(role=Role.user, content="task")
    replies = [Message(role=Role.assistant, content=f"{name}-reply said more") for name in "AB"]
    turns = [Turn(0, (task,), (), ())]
    turns += [Turn(n + 1, (reply,), (), ()) for n, reply in enumerate(replies)]
    return Transcript(seed=0, system_prompt="sys", turns=tuple(turns))


def _texts(*texts: str) -> Request:
    return tuple(RequestMessage(text, 10) for text in texts)


def test_binding_counts_computed_by_hand() -> None:
    tiny = _tiny_session()
    r0 = _texts("sys", "task", "rem1")
    kept = [r0, (*r0, *_texts("A-reply said more", "u1")),
            (*r0, *_texts("A-reply said more", "u1", "B-reply said more"))]
    assert count_broken(Binding.reject, kept, tiny) == BindingCount(Binding.reject, 0, 0, None)
    # the reminder taken out of turn 0's request: A (and B after it) lose their prefix
    overlay = [r0, _texts("sys", "task", "A-reply said more", "u1"),
               _texts("sys", "task", "A-reply said more", "u1", "B-reply said more")]
    count = count_broken(Binding.reject, overlay, tiny)
    assert (count.requests_broken, count.items_broken, count.first_broken) == (2, 3, 1)
    assert (count.requests_rejected, count.reasoning_dropped) == (2, 0)
    dropped = count_broken(Binding.drop, overlay, tiny)
    assert (dropped.requests_rejected, dropped.reasoning_dropped) == (0, 3)
    # a summary in place of turn 0 and A (a cut): B is bound to request 1, not request 0
    cut = [r0, kept[1], _texts("sys", "summary", "B-reply said more")]
    assert count_broken(Binding.reject, cut, tiny).items_broken == 1
    # A gone from request 2 while B keeps its exact prefix is impossible; A edited breaks it
    edited = [r0, kept[1], (*r0, *_texts("A-reply said more, edited", "u1", "B-reply said more"))]
    assert count_broken(Binding.drop, edited, tiny).items_broken == 2
    # no prefix check (Gemini): nothing breaks
    assert count_broken(Binding.none, overlay, tiny).requests_broken == 0
    with pytest.raises(ValueError, match="requests for"):
        count_broken(Binding.reject, overlay[:2], tiny)
    with pytest.raises(StudyDefectError, match="reply of turn 1"):
        count_broken(Binding.reject, [r0, kept[1], (*kept[1], *_texts("A-reply said more"))], tiny)


@st.composite
def _edited_sessions(draw: st.DrawFn) -> tuple[Transcript, list[Request]]:
    """A session of replies and requests built by random appends, edits and cuts."""
    turns = draw(st.integers(2, 7))
    replies = [f"reply-{n} text" for n in range(1, turns)]
    events = [Turn(0, (Message(role=Role.user, content="task"),), (), ())]
    events += [
        Turn(n, (Message(role=Role.assistant, content=replies[n - 1]),), (), ())
        for n in range(1, turns)
    ]
    history = ["sys", "task"]
    requests: list[Request] = [_texts(*history)]
    for n in range(1, turns):
        history.append(replies[n - 1])
        action = draw(st.sampled_from(["append", "edit", "cut"]))
        at = draw(st.integers(0, len(history) - 1))
        if action == "edit" and replies[n - 1] != history[at]:
            history[at] = history[at].replace("text", "TEXT") + "*"
        elif action == "cut" and at < len(history) - 1:
            history[at:-1] = ["summary"]
        history.append(f"user-{n}")
        requests.append(_texts(*history))
    return Transcript(0, "sys", tuple(events)), requests


@given(_edited_sessions())
def test_binding_counts_against_a_naive_oracle(built: tuple[Transcript, list[Request]]) -> None:
    session, requests = built
    texts = [[unit.text for unit in request] for request in requests]
    broken_requests = broken_items = 0
    for t, request in enumerate(texts):
        present = sorted(
            (request.index(f"reply-{r} text"), r) for r in range(1, t + 1)
            if f"reply-{r} text" in request
        )
        bad = [rank for rank, (p, r) in enumerate(present) if request[:p] != texts[r - 1]]
        if bad:  # the first reply whose prefix changed, and every later one
            broken_requests += 1
            broken_items += len(present) - bad[0]
    count = count_broken(Binding.reject, requests, session)
    assert (count.requests_broken, count.items_broken) == (broken_requests, broken_items)


def test_unit_costs_split_the_bill_at_the_read_and_write_boundaries() -> None:
    request = _units(("a", 1_000, False), ("b", 300, True), ("c", 200, False))
    anthropic = AnthropicRules()
    # 1,100 read, 200 written: a all read; b 100 read + 200 written; c base price
    costs = unit_costs(anthropic, request, 1_100, 200)
    assert costs == pytest.approx([100.0, 10.0 + 250.0, 200.0])
    openai = OpenAIRules()
    assert unit_costs(openai, request, 1_024, 476) == pytest.approx([100.0, 2.4 + 276.0, 200.0])
    assert (openai.write_price, GeminiRules().write_price) == (1.0, 1.0)


def test_the_reminders_share_of_the_bill_under_each_providers_rules() -> None:
    first = _request(("sys", 1_500), ("u1", 300), ("<reminder key='todo'>", 50))
    second = (*first, *_request(("a1", 200), ("<reminder key='todo'> again", 50)))
    # OpenAI: request 1 reads nothing (all 1x: 50); request 2 shares 1,850 -> 1,792 read:
    # the first reminder is tokens 1,800..1,850, 1,792 read ends before it: 50 at 1x;
    # the second 50 at 1x
    costs = cost_turns_with(OpenAIRules(), [first, second], [1_850, 250])
    assert [c.reminder_tokens for c in costs] == [50, 100]
    assert [c.reminder_billed for c in costs] == pytest.approx([50.0, 100.0])
    # Gemini reads the whole shared prefix: 1,850 read; the first reminder at 0.1x
    costs = cost_turns_with(GeminiRules(), [first, second], [1_850, 250])
    assert [c.reminder_billed for c in costs] == pytest.approx([50.0, 5.0 + 50.0])
    assert totals(costs).reminder_billed == pytest.approx(105.0)


@pytest.mark.parametrize("gateway", [GatewayType.anthropic, GatewayType.openai, GatewayType.gemini])
def test_only_strategies_that_rewrite_history_break_bindings(
    session: Transcript, gateway: GatewayType
) -> None:
    renderer = Renderer(LocalApproxCounter(), gateway)
    fresh = new_tokens(session, renderer)
    rules = {GatewayType.anthropic: AnthropicRules, GatewayType.openai: OpenAIRules,
             GatewayType.gemini: GeminiRules}[gateway]()
    strategies: list[Strategy] = [
        LibraryStrategy(session, renderer, _BUDGET, threshold=6_000),
        LibraryStrategy(session, renderer, _BUDGET, threshold=6_000, resend=Resend.when_changed),
        LibraryModel(session, renderer, _BUDGET, threshold=6_000, resend="when_changed"),
        _library(
            session, renderer, _BUDGET, LibrarySetting(2_500, 500, in_loops=True), recall=True
        ),
        LibraryStrategy(session, renderer, _BUDGET, threshold=6_000, in_place=True),
        SlidingWindow(session, renderer, 20_000),
        SummarizeReplace(session, renderer, _BUDGET, every=10),
    ]
    for n, strategy in enumerate(strategies):
        result = run_strategy(strategy, session, fresh, "", rules, bindings=True)
        count = result.binding
        assert count is not None and count.binding is rules.binding
        if n < 4 or rules.binding is Binding.none:
            assert count.requests_broken == 0, strategy.name
        else:  # a reminder taken out of or edited in a sent request breaks the next one
            assert count.first_broken == 1 and count.requests_broken > 0, strategy.name
            assert count.items_broken >= count.requests_broken


def test_the_library_reads_its_whole_previous_request_under_openai_rules(
    session: Transcript,
) -> None:
    # Append-only: each request's cached read is the previous request, rounded down to the
    # 128-token steps from 1,024, except at a checkpoint (then the part before the summary).
    renderer = Renderer(LocalApproxCounter())
    fresh = new_tokens(session, renderer)
    for resend in _POLICIES:
        library = LibraryStrategy(session, renderer, _BUDGET, threshold=6_000, resend=resend)
        requests: list[Request] = []
        checkpoint_turns: set[int] = set()
        for turn in session.turns:
            before = library.checkpoints
            requests.append(library.step(turn))
            if library.checkpoints != before:
                checkpoint_turns.add(turn.index)
        costs = cost_turns_with(OpenAIRules(), requests, fresh)
        for index in range(1, len(requests)):
            if index in checkpoint_turns:
                continue
            shared = sum(unit.tokens for unit in requests[index - 1])
            expected = 1_024 + (shared - 1_024) // 128 * 128 if shared >= 1_024 else 0
            assert costs[index].reused_tokens == min(expected, costs[index].input_tokens
                                                     - costs[index].new_tokens), index
