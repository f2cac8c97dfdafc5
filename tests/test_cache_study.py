"""The cache study of bench/cache.py: the session generator, the cache accounting, the strategies.

The study lives in ``bench/cachestudy`` (imported as ``bench.cachestudy`` from the repository
root). Expected figures in the accounting tests are computed by hand in the comments.
"""

from __future__ import annotations

import math
from itertools import takewhile
from pathlib import Path

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
from bench.cachestudy.library import LibraryModel
from bench.cachestudy.providers import AnthropicRules, GeminiRules, OpenAIRules
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
from bench.cachestudy.transcript import Transcript, generate
from bench.reporting.cache import cache_section
from bench.reporting.common import Page
from bench.reporting.peers import asof_section, coop_section, generic_section, lifecycle_section
from hydrangea.gateway import GatewayType
from hydrangea.message import Role, ToolCallPart, ToolResultPart


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


@pytest.mark.parametrize("rollup", [None, 1_000])
def test_the_library_history_is_append_only_between_checkpoints(
    session: Transcript, rollup: int | None
) -> None:
    renderer = Renderer(LocalApproxCounter())
    library = LibraryStrategy(session, renderer, _BUDGET, threshold=6_000, rollup=rollup)
    previous: Request | None = None
    previous_checkpoints = 0
    previous_overlay = 0
    checked = 0
    for turn in session.turns:
        request = library.step(turn)
        if previous is not None and library.checkpoints == previous_checkpoints:
            history = previous[: len(previous) - previous_overlay]
            assert request[: len(history)] == history
            checked += 1
        previous, previous_checkpoints = request, library.checkpoints
        previous_overlay = len(turn.reminders)
        tail = sorted(m.text for m in request[len(request) - len(turn.reminders) :])
        shown = [renderer.request_of([reminder_message(r)])[0].text for r in turn.reminders]
        assert tail == sorted(shown)
    assert library.checkpoints >= 2
    assert checked >= len(session.turns) - library.checkpoints - 1


@pytest.mark.parametrize("rollup", [None, 1_000])
def test_in_place_reminders_rewrite_history_the_library_does_not(
    session: Transcript, rollup: int | None
) -> None:
    renderer = Renderer(LocalApproxCounter())
    fresh = new_tokens(session, renderer)
    overlay = run_strategy(
        LibraryStrategy(session, renderer, _BUDGET, threshold=6_000, rollup=rollup),
        session,
        fresh,
    )
    in_place = run_strategy(
        LibraryStrategy(session, renderer, _BUDGET, threshold=6_000, rollup=rollup, in_place=True),
        session,
        fresh,
    )
    # same content, so the same sizes; only the reminders' position differs
    assert [t.input_tokens for t in overlay.turns] == [t.input_tokens for t in in_place.turns]
    assert in_place.totals.reused_tokens < overlay.totals.reused_tokens
    assert in_place.totals.billed > overlay.totals.billed


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
