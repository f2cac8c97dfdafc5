"""The summary rollup of CompactingConversation: what survives a rollup, what it reclaims, the
merged summary (facts and pointers of every earlier summary), and a prefix that stays byte-stable
between rollups (one cache break per checkpoint, a rollup included)."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hydrangea.areas import AreaUsageError, CompactingConversation, SummaryRegionArea
from hydrangea.asof import InMemoryRecordStore, StructuredSummary
from hydrangea.asof.fence import FencedBlock, unfence
from hydrangea.asof.summary import parse_pointers
from hydrangea.context import Context
from hydrangea.context.area import AreaLifeState
from hydrangea.coop import CoopContext
from hydrangea.gateway import GatewayType
from tests.areas_support import SYSTEM, answer, coop_with_system, life, texts
from tests.support.sdk_check import validate_request

Items = list[str]


def blocks(context: Context) -> list[FencedBlock]:
    """Every fenced block in the Context, in order (the summaries, in these tests)."""
    out: list[FencedBlock] = []
    for item in context[:]:
        out.extend(unfence(context.adapter.item_text(item)))
    return out


def snapshot(context: Context) -> Items:
    """The Context's items as canonical JSON strings (the bytes a provider would cache)."""
    return [json.dumps(item, sort_keys=True, ensure_ascii=False) for item in context[:]]


def common_prefix(before: Items, after: Items) -> int:
    """How many leading items two snapshots share (an oracle independent of the collector)."""
    shared = 0
    for old, new in zip(before, after, strict=False):
        if old != new:
            break
        shared += 1
    return shared


def session(
    turns: int, *, threshold: int = 20, rollup: int = 700, gateway: GatewayType = GatewayType.openai
) -> tuple[Context, CoopContext, CompactingConversation, list[Items], list[bool]]:
    """Run ``turns`` question/answer turns (each big enough to checkpoint) and a last render;
    return the Context, the conversation, a snapshot before the first render and after each, and
    whether each render collected."""
    context, coop = coop_with_system(gateway)
    conversation = CompactingConversation(
        coop, threshold_tokens=threshold, rollup_tokens=rollup, records=InMemoryRecordStore()
    )
    shots: list[Items] = [snapshot(context)]
    collected: list[bool] = []
    for turn in range(1, turns + 1):
        conversation.user(f"Question {turn}: where is valve V{turn}? It is on pier {turn}.")
        before = coop.collections
        coop.render()
        shots.append(snapshot(context))
        collected.append(coop.collections > before)
        conversation.route(answer(context, f"Valve V{turn} is on pier {turn}. Logged as W{turn}."))
    before = coop.collections
    coop.render()  # the last checkpoint's collection
    shots.append(snapshot(context))
    collected.append(coop.collections > before)
    return context, coop, conversation, shots, collected


def test_rollup_tokens_must_be_positive() -> None:
    _, coop = coop_with_system()
    with pytest.raises(AreaUsageError):
        CompactingConversation(coop, threshold_tokens=10, rollup_tokens=0)
    assert CompactingConversation(coop, threshold_tokens=10).rollup_tokens is None


def test_a_rollup_leaves_one_merged_summary_holding_every_earlier_one() -> None:
    context, _, conversation, _, _ = session(12)
    assert conversation.rollups >= 1
    segment_summaries = conversation.summaries  # one per checkpoint, oldest first
    assert len(segment_summaries) == 12  # every turn reached the threshold
    found = [b for b in blocks(context) if b.kind == "summary"]
    assert [b.item_id for b in found] == [c.item_id for c in conversation.carried]
    rollup = conversation.carried[0]
    assert rollup.item_id == f"conversation/rollup-{conversation.rollups}"
    merged_away = conversation.carried[0].last_segment
    # facts and pointers of every summary merged away are kept, none re-summarized
    for summary in segment_summaries[:merged_away]:
        assert set(summary.facts) <= set(rollup.summary.facts)
        assert set(summary.pointers) <= set(rollup.summary.pointers)
    # the later summaries are still there on their own
    loose = [c.summary for c in conversation.carried[1:]]
    assert loose == list(segment_summaries[merged_away:])


def test_every_pointer_resolves_and_the_merged_summaries_are_records_too() -> None:
    context, _, conversation, _, _ = session(12)
    records = conversation.records
    rollup = conversation.carried[0]
    for pointer in rollup.summary.pointers:
        assert records.require(pointer).item_id == pointer
    for number, summary in enumerate(conversation.summaries[: rollup.last_segment], start=1):
        kept = records.require(f"conversation/summary-{number}")
        assert kept.summary == summary
        assert kept.kind.value == "summary" and kept.trust.value == "untrusted"
        assert f"conversation/summary-{number}" in rollup.summary.pointers
    if conversation.rollups > 1:  # an earlier rollup is a record and a pointer too
        assert "conversation/rollup-1" in rollup.summary.pointers
        assert records.require("conversation/rollup-1").summary is not None
    # the text the model sees names each pointer exactly once, on the pointers line
    shown = next(b for b in blocks(context) if b.item_id == rollup.item_id).content
    assert parse_pointers(shown) == rollup.summary.pointers
    listed = parse_pointers(shown)
    assert len(listed) == len(set(listed))  # each pointer exactly once


def test_what_a_rollup_reclaims_and_what_survives() -> None:
    context, coop, conversation, _, _ = session(12)
    open_turns = conversation.current.record_ids
    text = texts(context[1:])
    assert context.adapter.item_text(context[0]) == SYSTEM  # the system prompt never moves
    for turn in range(1, 13):
        verbatim = f"Question {turn}: where is valve V{turn}? It is on pier {turn}."
        answered = f"Logged as W{turn}."
        if f"conversation/turn-{turn}/user" in open_turns:
            assert verbatim in text
        else:  # compacted: only its first sentence survives, inside a summary
            assert answered not in text
    # the region areas and segments before the current ones were collected and removed
    ring = {record.area for record in coop.areas()}
    assert conversation.current in ring
    assert all(region not in ring for region in conversation.regions[:-1])
    assert all(segment not in ring for segment in conversation.segments[:-1])
    validate_request(GatewayType.openai, context.request())


def test_the_prefix_is_stable_between_rollups_and_breaks_once_per_checkpoint() -> None:
    context, _, conversation, shots, collected = session(16)
    breaks = 0
    rollup_breaks = 0
    for before, after, collection in zip(shots[:-1], shots[1:], collected, strict=True):
        shared = common_prefix(before, after)
        if not collection:
            assert shared == len(before)  # append-only between checkpoints
            continue
        breaks += 1
        summaries_before = sum(1 for item in before if re.search(r"¤\d{12} \S+ \S+ summary ", item))
        if shared == 1 and summaries_before:  # the whole region was rewritten: a rollup
            rollup_breaks += 1
        else:  # the system prompt and every earlier summary survive byte for byte
            assert shared >= 1 + summaries_before
    assert breaks == sum(collected) == len(conversation.summaries)
    assert rollup_breaks == conversation.rollups >= 2
    # between rollups the prefix only grows: no checkpoint but a rollup rewrites a summary
    assert context.adapter.item_text(context[0]) == SYSTEM


def test_the_summaries_are_back_at_the_next_render_without_a_new_turn() -> None:
    context, coop = coop_with_system()
    conversation = CompactingConversation(coop, threshold_tokens=20, rollup_tokens=10_000)
    conversation.user("Where is valve V1? It is on pier 1.")
    coop.render()
    summary = conversation.route(answer(context, "Valve V1 is on pier 1."))
    assert summary is not None
    coop.render()  # no user turn queued
    found = [b for b in blocks(context) if b.kind == "summary"]
    assert [b.item_id for b in found] == ["conversation/summary-1"]
    assert len(context) == 2  # the system prompt and the summary; the turn was reclaimed


def test_without_a_rollup_summaries_pile_up_as_before() -> None:
    context, coop = coop_with_system()
    conversation = CompactingConversation(coop, threshold_tokens=20)
    for turn in range(1, 9):
        conversation.user(f"Question {turn}: where is valve V{turn}? It is on pier {turn}.")
        coop.render()
        conversation.route(answer(context, f"Valve V{turn} is on pier {turn}."))
    conversation.user("last")
    coop.render()
    assert conversation.rollups == 0 and conversation.carried == () and not conversation.regions
    assert len([b for b in blocks(context) if b.kind == "summary"]) == 8


def test_a_region_area_renders_once_and_retires_with_its_segment() -> None:
    context, coop = coop_with_system()
    conversation = CompactingConversation(coop, threshold_tokens=20, rollup_tokens=10_000)
    conversation.user("Where is valve V1? It is on pier 1.")
    coop.render()
    conversation.route(answer(context, "Valve V1 is on pier 1."))
    (region,) = conversation.regions
    assert isinstance(region, SummaryRegionArea)
    assert life(region) is AreaLifeState.retain and region.promote() == ()
    coop.render()
    assert region.rendered and region.render() == []
    conversation.user("Where is valve V2?")
    coop.render()
    conversation.route(answer(context, "Valve V2 is on pier 2."))
    assert life(region) is AreaLifeState.retired  # its segment checkpointed


@settings(max_examples=20, deadline=None)
@given(
    st.lists(st.integers(min_value=1, max_value=200), min_size=1, max_size=16),
    st.integers(min_value=40, max_value=400),
    st.integers(min_value=1, max_value=1_500),
)
def test_records_partition_and_the_context_shows_exactly_the_carried_region(
    sizes: list[int], threshold: int, rollup: int
) -> None:
    context, coop = coop_with_system()
    conversation = CompactingConversation(coop, threshold_tokens=threshold, rollup_tokens=rollup)
    for turn, size in enumerate(sizes, start=1):
        conversation.user(f"<q{turn}> " + "q" * size)
        coop.render()
        conversation.route(answer(context, f"<a{turn}> " + "a" * size))
    coop.render()
    carried = conversation.carried
    shown = [b for b in blocks(context) if b.kind == "summary"]
    assert [b.item_id for b in shown] == [c.item_id for c in carried]
    for block, part in zip(shown, carried, strict=True):
        assert parse_pointers(block.content) == part.summary.pointers
    # every turn is either open (verbatim) or pointed to by a carried summary, never both
    pointed = {p for c in carried for p in c.summary.pointers}
    turn_ids = [i for i in conversation.records.ids() if "/turn-" in i]
    open_ids = set(conversation.current.record_ids)
    assert set(turn_ids) == open_ids | (pointed & set(turn_ids))
    assert not open_ids & pointed
    for pointer in pointed:
        assert pointer in conversation.records
    # every fact any checkpoint produced is still in a carried summary
    facts = {f for c in carried for f in c.summary.facts}
    assert {f for s in conversation.summaries for f in s.facts} <= facts
    assert all(isinstance(c.summary, StructuredSummary) for c in carried)
    assert SYSTEM in texts(context[0])


# -- the summary text: each pointer written once ---------------------------------------------


@settings(max_examples=50)
@given(st.lists(st.tuples(st.text(min_size=1, max_size=30), st.text(min_size=1, max_size=12)),
                min_size=1, max_size=8, unique_by=lambda p: p[1]))
def test_extractive_notes_name_each_pointer_once(pairs: list[tuple[str, str]]) -> None:
    from hydrangea.areas.summary_text import summary_text

    summary = StructuredSummary(pointers=tuple(i for _, i in pairs),
                                notes=tuple(n for n, _ in pairs))
    text = summary_text(summary)
    assert text == summary_text(summary) == summary.render()  # deterministic
    assert parse_pointers(text) == summary.pointers
