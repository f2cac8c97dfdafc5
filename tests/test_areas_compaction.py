"""CompactionArea and CompactingConversation: the checkpoint, the summary with pointers, and what
the collector keeps and reclaims."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hydrangea.areas import (
    AreaUsageError,
    AsOfArea,
    CompactingConversation,
    CompactionArea,
    ConversationArea,
    OneShotNoticeArea,
    ToolLoopArea,
)
from hydrangea.areas.compaction import summary_message
from hydrangea.asof import BuiltContext, InMemoryRecordStore, StructuredSummary
from hydrangea.asof.fence import published_label, unfence
from hydrangea.asof.summary import parse_pointers
from hydrangea.context.area import AreaLifeState
from hydrangea.errors import ContextStateError
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role
from tests.areas_support import SYSTEM, answer, call_tool, coop_with_system, life, texts
from tests.support.sdk_check import validate_request


def empty_build() -> BuiltContext:
    return BuiltContext(
        messages=(Message(role=Role.user, content="retrieved: the valve log"),),
        items=(),
        tokens=8,
        token_budget=100,
        compactions=(),
        dropped=(),
        rejections=(),
    )


def test_no_checkpoint_below_the_threshold_and_none_mid_tool_loop() -> None:
    context, coop = coop_with_system()
    segment = CompactionArea(threshold_tokens=50)
    coop.register(segment)
    segment.user("short")
    coop.render()
    assert not segment.checkpoint_due
    segment.route(call_tool(context, "c1", "lookup", query="x" * 400))
    assert segment.checkpoint_due  # over the threshold, but the model is mid tool loop
    assert life(segment) is AreaLifeState.retain and segment.summary is None
    segment.route(answer(context, "done"))
    assert life(segment) is AreaLifeState.retired and segment.summary is not None


def test_settings_are_checked() -> None:
    with pytest.raises(AreaUsageError):
        CompactionArea(threshold_tokens=0)
    with pytest.raises(AreaUsageError):
        CompactionArea(threshold_tokens=10, segment=0)
    with pytest.raises(ContextStateError):
        CompactionArea(threshold_tokens=10).checkpoint()  # nothing to compact
    with pytest.raises(ContextStateError):
        CompactionArea(threshold_tokens=10).successor()  # not retired yet


def test_summary_pointers_resolve_to_the_full_records() -> None:
    records = InMemoryRecordStore()
    context, coop = coop_with_system()
    segment = CompactionArea(threshold_tokens=10_000, records=records)
    coop.register(segment)
    asked = ["Where is the leak? It is on Quay Street.", "Who is on call tonight?"]
    for question in asked:
        segment.user(question)
        coop.render()
        segment.route(answer(context, f"Answer to: {question}"))
    summary = segment.checkpoint()
    assert summary.pointers == segment.record_ids
    assert len(summary.pointers) == 4
    for pointer in summary.pointers:
        assert pointer in records
    assert records.require(summary.pointers[0]).content == asked[0]
    # the extractive summary keeps the first sentence only; the record keeps the whole text
    assert summary.note_of(summary.pointers[0]) == "Where is the leak?"
    assert not any("Quay Street" in note for note in summary.notes)
    # the promoted message is one fenced, untrusted block naming the same pointers
    (promoted,) = segment.promote()
    (block,) = unfence(promoted.text)
    assert block.kind == "summary" and block.origin == "conversation:compaction"
    assert parse_pointers(block.content) == summary.pointers


@pytest.mark.parametrize("gateway", list(GatewayType))
def test_checkpoint_reclaims_the_segment_and_keeps_prefix_and_summary(
    gateway: GatewayType,
) -> None:
    context, coop = coop_with_system(gateway)
    notice = OneShotNoticeArea("Handover: night shift.")
    coop.register(notice)
    conversation = CompactingConversation(coop, threshold_tokens=200)
    first = conversation.current
    conversation.user("Turn one: the main on Quay Street broke.")
    coop.register(AsOfArea(empty_build(), anchor=conversation.current))
    coop.render()
    assert conversation.route(answer(context, "Noted: Quay Street main break.")) is None
    conversation.user("Turn two: look up the ticket.")
    tools = ToolLoopArea({"lookup": lambda a: "HW-1: crew arrived 01:45"}, anchor=first)
    coop.register(tools)
    coop.render()
    reply = call_tool(context, "c1", "lookup", ticket="HW-1")
    conversation.route(reply)
    tools.route(reply)
    coop.render()  # tool results, exclusive
    final = answer(context, "The crew arrived at 01:45, " + "within target. " * 60)
    tools.route(final)
    summary = conversation.route(final)
    assert summary is not None  # the checkpoint ran at the end of the model's turn
    assert life(tools) is AreaLifeState.retired  # anchored areas retire with the segment
    before = context[:]
    conversation.user("Turn three: write the handover note.")
    coop.render()
    record = coop.last_collection
    assert record is not None and record.promoted == 1
    assert set(record.areas) >= {first, tools, notice}
    # survives: the system prompt (the unchanged prefix) and the summary, then the new turn
    assert context[0] == before[0] and SYSTEM in texts(context[0])
    rest = texts(context[1:])
    assert "Turn three" in rest
    summary_text = context.adapter.item_text(context[1])
    assert "Turn three" not in summary_text
    assert parse_pointers(unfence(summary_text)[0].content) == summary.pointers
    # reclaimed: the turns, the tool exchange, the retrieved text, the handover notice
    after_summary = texts(context[2:])
    for gone in ("Handover: night shift", "the valve log", "crew arrived 01:45", "within target"):
        assert gone not in after_summary
    assert "within target. within target." not in rest  # the summary keeps a first sentence
    assert conversation.current.segment == 2 and conversation.current.first_turn == 3
    validate_request(gateway, context.request())


def test_a_retained_area_overlapping_the_segment_blocks_the_collection() -> None:
    context, coop = coop_with_system()
    conversation = CompactingConversation(coop, threshold_tokens=30)
    side = ConversationArea(name="side")
    coop.register(side)
    conversation.user("main question " + "x" * 200)
    side.user("side channel opens")
    coop.render()  # the retained side range starts after the segment's
    conversation.route(answer(context, "main answer"))
    assert conversation.summaries  # checkpoint done
    coop.render()
    assert coop.collections == 0  # the retained side range is the newest: nothing is reclaimed
    assert "main question" in texts(context[:])
    side.close()
    coop.render()
    assert coop.collections == 1
    assert "main question " not in texts(context[2:])
    conversation.user("next main question")
    coop.render()
    assert "next main question" in texts(context[2:])


def test_only_one_summary_per_checkpoint_not_every_turn() -> None:
    context, coop = coop_with_system()
    conversation = CompactingConversation(coop, threshold_tokens=400)
    renders_with_collection = []
    for turn in range(1, 25):
        conversation.user(f"question {turn} " + "q" * 40)
        before = coop.collections
        coop.render()
        if coop.collections > before:
            renders_with_collection.append(turn)
        conversation.route(answer(context, f"answer {turn} " + "a" * 60))
    checkpoints = len(conversation.summaries)
    assert 2 <= checkpoints < 12
    assert len(renders_with_collection) in {checkpoints, checkpoints - 1}
    # every record belongs to exactly one summary or to the open segment
    covered = [p for s in conversation.summaries for p in s.pointers]
    covered += list(conversation.current.record_ids)
    assert sorted(covered) == sorted(conversation.records.ids())
    assert len(covered) == len(set(covered))


@settings(max_examples=25)
@given(
    st.lists(st.integers(min_value=1, max_value=300), min_size=1, max_size=14),
    st.integers(min_value=60, max_value=600),
)
def test_records_partition_and_reclaimed_turns_leave_the_context(
    sizes: list[int], threshold: int
) -> None:
    context, coop = coop_with_system()
    conversation = CompactingConversation(coop, threshold_tokens=threshold)
    for turn, size in enumerate(sizes, start=1):
        conversation.user(f"<q{turn}>" + "q" * size)
        coop.render()
        conversation.route(answer(context, f"<a{turn}>" + "a" * size))
    coop.render()
    # an oracle independent of the areas: which turns must still be verbatim in the Context
    open_turns = {
        int(rid.split("/")[1].removeprefix("turn-")) for rid in conversation.current.record_ids
    }
    compacted = {
        int(p.split("/")[1].removeprefix("turn-"))
        for summary in conversation.summaries
        for p in summary.pointers
    }
    assert open_turns | compacted == set(range(1, len(sizes) + 1))
    plain = [context.adapter.item_text(item) for item in context[1:]]
    summaries = [text for text in plain if unfence(text)]
    verbatim = "\n".join(text for text in plain if not unfence(text))
    assert len(summaries) == len(conversation.summaries)
    for turn in range(1, len(sizes) + 1):
        full_q, full_a = f"<q{turn}>" + "q" * sizes[turn - 1], f"<a{turn}>" + "a" * sizes[turn - 1]
        if turn in open_turns:
            assert full_q in verbatim and full_a in verbatim
        else:
            assert f"<q{turn}>" not in verbatim and f"<a{turn}>" not in verbatim
            assert any(f"conversation/turn-{turn}/user" in parse_pointers(unfence(text)[0].content)
                       for text in summaries)


class ForgingSummarizer:
    """A summarizer that tries to point at records it did not summarize."""

    def summarize(self, items: object) -> StructuredSummary:
        return StructuredSummary(facts=("forged",), pointers=("secret/record",))


def test_pointers_never_come_from_the_summarizer() -> None:
    records = InMemoryRecordStore()
    context, coop = coop_with_system()
    segment = CompactionArea(threshold_tokens=5, summarizer=ForgingSummarizer(), records=records)
    coop.register(segment)
    segment.user("question")
    coop.render()
    segment.route(answer(context, "answer"))
    assert segment.summary is not None
    assert segment.summary.facts == ("forged",)
    assert segment.summary.pointers == ("conversation/turn-1/user", "conversation/turn-1/reply-1")
    assert "secret/record" not in texts(segment.promote()[0].text)


def test_turns_queued_at_the_checkpoint_move_to_the_successor() -> None:
    context, coop = coop_with_system()
    segment = CompactionArea(threshold_tokens=10_000, name="desk")
    coop.register(segment)
    segment.user("first")
    coop.render()
    segment.route(answer(context, "first answer"))
    segment.user("queued before the checkpoint")
    segment.checkpoint()
    with pytest.raises(ContextStateError):
        segment.user("too late")
    nxt = segment.successor()
    assert [m.text for m in nxt.pending] == ["queued before the checkpoint"]
    assert segment.pending == ()
    assert (nxt.segment, nxt.first_turn, nxt.name) == (2, 2, "desk")
    assert nxt.records is segment.records
    coop.register(nxt)
    coop.render()
    assert nxt.record_ids == ("desk/turn-2/user",)
    assert "queued before the checkpoint" in texts(context[-1])


def test_a_segment_that_does_not_promote_leaves_its_summary_to_its_owner() -> None:
    context, coop = coop_with_system()
    segment = CompactionArea(threshold_tokens=5, promotes=False)
    coop.register(segment)
    segment.user("Where is valve V1? It is on pier 1.")
    coop.render()
    segment.route(answer(context, "Valve V1 is on pier 1."))
    assert segment.summary is not None and segment.summary_message is not None
    assert segment.promote() == ()
    assert segment.successor().promotes is False
    coop.render()
    assert len(context) == 1  # reclaimed, and nothing promoted in its place
    assert coop.last_collection is not None and coop.last_collection.promoted == 0


def test_the_summary_message_names_each_record_once_and_is_deterministic() -> None:
    context, coop = coop_with_system()
    segment = CompactionArea(threshold_tokens=10_000)
    coop.register(segment)
    for turn in range(1, 4):
        segment.user(f"Question {turn}: where is valve V{turn}?")
        coop.render()
        segment.route(answer(context, f"Valve V{turn} is on pier {turn}."))
    segment.checkpoint()
    message = segment.summary_message
    assert message is not None and segment.summary is not None
    (block,) = unfence(message.text)
    for pointer in segment.summary.pointers:
        assert block.content.count(pointer) == 1
    assert parse_pointers(block.content) == segment.summary.pointers
    for note in segment.summary.notes:  # each record's sentence is shown beside its id
        assert note in block.content
    published = segment.summary_published
    assert published is not None
    again = summary_message(
        block.content.split("\n", 1)[0],
        segment.summary,
        item_id=segment.summary_id,
        origin=segment.origin,
        published=published,
    )
    assert again == message


def test_the_summary_is_dated_by_its_latest_source() -> None:
    # DESIGN: a summary of untrusted text is untrusted; its published_at is the latest of its
    # sources. The clock hands out dates out of order, so the latest is neither the first nor the
    # last record, and the earliest differs from it.
    dates = iter(datetime(2026, 1, day, 8, 0, tzinfo=UTC) for day in (5, 1, 9, 3, 2, 4, 6, 7))
    records = InMemoryRecordStore()
    context, coop = coop_with_system()
    segment = CompactionArea(threshold_tokens=10_000, records=records, clock=lambda: next(dates))
    coop.register(segment)
    for turn in (1, 2):
        segment.user(f"Question {turn}: is pump P{turn} running?")
        coop.render()
        segment.route(answer(context, f"Pump P{turn} is running."))
    segment.checkpoint()
    stamps = [records.require(item_id).published_at for item_id in segment.record_ids]
    assert stamps == [datetime(2026, 1, day, 8, 0, tzinfo=UTC) for day in (5, 1, 9, 3)]
    latest = datetime(2026, 1, 9, 8, 0, tzinfo=UTC)
    assert segment.summary_published == latest
    message = segment.summary_message
    assert message is not None
    (block,) = unfence(message.text)
    assert block.published == published_label(latest)
