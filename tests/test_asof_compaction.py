"""Compaction: summaries, their text, and several rounds keeping every fact and pointer."""

from __future__ import annotations

import json
import logging
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.asof import (
    BuiltContext,
    ContextBuilder,
    ContextItem,
    ExtractiveSummarizer,
    InMemoryRecordStore,
    ItemKind,
    Provenance,
    StructuredSummary,
    SummaryPointerError,
    Trust,
    unfence,
)
from hydrangea.asof.summary import first_sentence, parse_pointers
from tests.support.asof_oracle import (
    AS_OF,
    adversarial_label,
    adversarial_text,
    data_message,
    doc,
    pointers_in,
)


def test_summary_render_spells_out_pointers_and_merge_keeps_everything() -> None:
    a = StructuredSummary(facts=("f1", "f2"), decisions=("d1",), pointers=("a", "b"))
    b = StructuredSummary(facts=("f2", "f3"), open_questions=("q1",), pointers=("b", "c\n\"x"))
    merged = StructuredSummary.merge([a, b])
    assert merged.facts == ("f1", "f2", "f3")
    assert merged.decisions == ("d1",) and merged.open_questions == ("q1",)
    assert merged.pointers == ("a", "b", "c\n\"x")
    text = merged.render()
    assert pointers_in(text) == ["a", "b", "c\n\"x"]
    assert parse_pointers(text) == merged.pointers
    assert text == StructuredSummary.merge([a, b]).render()
    assert "- f3" in text and "decisions:\n- d1" in text and "open questions:\n- q1" in text


def test_first_sentence_is_bounded() -> None:
    assert first_sentence("One. Two.") == "One."
    assert first_sentence("line one\nline two") == "line one"
    assert first_sentence("   ") == "(empty)"
    long = first_sentence("x" * 1000, limit=50)
    assert len(long) == 50 and long.endswith("…")


def facts_shown(built: BuiltContext) -> str:
    data = data_message(built)
    assert data is not None
    return "\n".join(b.content for b in unfence(data.text))


def round_of(store: InMemoryRecordStore, carried: tuple[ContextItem, ...], start: int,
             budget: int) -> BuiltContext:
    b = ContextBuilder(as_of=AS_OF, token_budget=budget, records=store)
    b.add(ContextItem.harness(ItemKind.TASK, "Answer from the record.", item_id="task"))
    for item in carried:
        b.add(item)
    for i in range(start, start + 30):
        b.add(doc(i, days=1000 - i))
    return b.build()


def test_three_rounds_of_compaction_keep_every_fact_and_pointer() -> None:
    store = InMemoryRecordStore()
    carried: tuple[ContextItem, ...] = ()
    all_docs: list[ContextItem] = []
    previous_facts: tuple[str, ...] = ()
    for round_number in range(3):
        start = 100 * round_number
        built = round_of(store, carried, start, budget=400 + 300 * round_number)
        all_docs += [doc(i, days=1000 - i) for i in range(start, start + 30)]
        assert built.dropped == ()
        (summary,) = built.summary_items
        assert summary.summary is not None and summary.trust is Trust.UNTRUSTED
        # facts of the previous summary survive verbatim
        assert set(previous_facts) <= set(summary.summary.facts)
        for old in carried:
            if old.kind is ItemKind.SUMMARY:
                assert old.item_id in built.compactions[0].source_ids
                assert set(old.pointers) <= set(summary.pointers)
        # every original document is shown in full, has its fact in the summary, or is named
        shown = facts_shown(built)
        for item in all_docs:
            assert (item.content in shown or first_sentence(item.content) in shown
                    or item.item_id in summary.pointers)
        # every pointer shown resolves, and each compacted item is pointed to
        pointed = pointers_in(summary.content)
        for source in built.compactions[0].source_ids:
            assert source in pointed
        for item_id in pointed:
            assert store.require(item_id).item_id == item_id
        previous_facts = summary.summary.facts
        # the next round starts from what this one showed: the summary and the full items
        carried = tuple(i for i in built.items if i.trust is Trust.UNTRUSTED)


def test_summaries_compacted_in_one_build_are_merged_not_resummarized() -> None:
    store = InMemoryRecordStore()
    first = round_of(store, (), 0, budget=300)
    second = round_of(store, (), 100, budget=300)
    (s1,), (s2,) = first.summary_items, second.summary_items
    assert s1.summary is not None and s2.summary is not None
    def fill(budget: int) -> ContextBuilder:
        b = ContextBuilder(as_of=AS_OF, token_budget=budget, records=store)
        for i in range(200, 210):  # long, recent documents, more important than the summaries
            b.add(doc(i, days=1, priority=1, text=f"Fact number {i} is true. " + "pad " * 80))
        b.add(s1)  # priority 0 (their sources'), so compacted first
        b.add(s2)
        return b

    b = fill(fill(10**6).build().tokens * 6 // 10)
    built = b.build()
    (merged,) = built.summary_items
    assert merged.summary is not None
    assert set(s1.summary.facts) | set(s2.summary.facts) <= set(merged.summary.facts)
    assert set(s1.pointers) | set(s2.pointers) | {s1.item_id, s2.item_id} <= set(merged.pointers)
    sources = [i for i in b.items if i.item_id in built.compactions[0].source_ids]
    assert {s1.item_id, s2.item_id} <= {i.item_id for i in sources}
    assert merged.published_at == max(i.published_at for i in sources if i.published_at)


def test_extractive_summarizer_merges_summary_items() -> None:
    carried = StructuredSummary(facts=("kept fact",), pointers=("old",))
    item = ContextItem(
        item_id="s", kind=ItemKind.SUMMARY, content=carried.render(), trust=Trust.UNTRUSTED,
        published_at=AS_OF - timedelta(days=1), provenance=Provenance(origin="compaction"),
        priority=0, summary=carried,
    )
    out = ExtractiveSummarizer().summarize([item, doc(1)])
    assert out.facts == ("kept fact", "Fact number 1 is true.")  # keelgate: first sentences
    assert out.pointers == ("doc-1", "old")  # as the text lists them: noted first
    assert out.notes == ("Fact number 1 is true.", "")
    assert out.note_of("doc-1") == "Fact number 1 is true." and out.note_of("old") == ""


def oracle_render(summary: StructuredSummary) -> str:
    """StructuredSummary.render as documented, written independently."""
    n = len(summary.pointers)
    notes = summary.notes or ("",) * n

    def label(p: str) -> str:
        plain = p and p.isprintable() and not p.startswith('"') and not any(
            c.isspace() for c in p)
        return p if plain else json.dumps(p, ensure_ascii=False)

    lines = [f"summary of {n} record" + ("" if n == 1 else "s")
             + " (full text in the record store)"]
    lines += [f"- {label(p)}: " + "\n  ".join(t.split("\n"))
              for p, t in zip(summary.pointers, notes, strict=True) if t]
    bare = [label(p) for p, t in zip(summary.pointers, notes, strict=True) if not t]
    if bare:
        lines.append(("records:" if len(bare) == n else "also:") + "".join(" " + b for b in bare))
    noted = set(notes)
    facts = tuple(f for f in summary.facts if f not in noted)  # already beside their pointer
    for title, entries in (("facts", facts), ("decisions", summary.decisions),
                           ("open questions", summary.open_questions)):
        if entries:
            lines.append(title + ":")
            for entry in entries:
                lines.append("- " + "\n  ".join(entry.split("\n")))
    return "\n".join(lines)


entries = st.lists(st.one_of(adversarial_text, st.sampled_from(
    ["\x00\x01\x02", "a\x00\x01", "\x01\x02b", "\x00", "x\n- y", ""])), max_size=6)


@given(entries, entries, entries,
       st.lists(st.tuples(adversarial_label, st.one_of(st.just(""), adversarial_text)),
                max_size=5, unique_by=lambda t: t[0]))
def test_summary_render_matches_an_independent_rendering(
    facts: list[str], decisions: list[str], questions: list[str],
    noted: list[tuple[str, str]],
) -> None:
    pointers = tuple(p for p, _ in noted)
    notes = tuple(n for _, n in noted)
    summary = StructuredSummary(facts=tuple(facts), decisions=tuple(decisions),
                                open_questions=tuple(questions), pointers=pointers,
                                notes=notes if any(notes) else ())
    text = summary.render()
    assert text == oracle_render(summary)
    # every pointer listed exactly once, read back by an independent parser and the library's
    with_notes = [p for p, n in noted if n]
    expected = [*with_notes, *[p for p, n in noted if not n]]
    assert pointers_in(text) == expected == list(parse_pointers(text))
    merged = StructuredSummary.merge([summary, summary])
    deduplicated = StructuredSummary(
        facts=tuple(dict.fromkeys(facts)), decisions=tuple(dict.fromkeys(decisions)),
        open_questions=tuple(dict.fromkeys(questions)), pointers=summary.pointers,
        notes=summary.notes)
    assert merged.render() == deduplicated.render()
    assert merged.pointers == summary.pointers == tuple(expected)


@given(
    st.lists(st.tuples(adversarial_text, adversarial_label), max_size=8,
             unique_by=lambda t: t[1]),
    st.integers(2, 60),
)
def test_extraction_notes_each_item_with_its_first_sentence(
    pairs: list[tuple[str, str]], limit: int
) -> None:
    items = [ContextItem.outside(ItemKind.MEMORY, text, item_id=item_id, origin="m",
                                 published_at=AS_OF)
             for text, item_id in pairs]
    extractor = ExtractiveSummarizer(limit=limit)
    notes = [first_sentence(i.content, limit=limit) for i in items]
    assert extractor.notes(items) == notes == [extractor.note(i) for i in items]
    summary = extractor.summarize(items)
    assert summary.pointers == tuple(i.item_id for i in items)
    assert summary.notes == (tuple(notes) if items else ())
    # keelgate's rule: each first sentence is a fact (once; empty sentences are no fact)
    assert summary.facts == tuple(dict.fromkeys(n for n in notes if n))
    assert summary.render().count("\nfacts:") == 0  # each is already its pointer's note


def forged_summary_item(item_id: str, pointers: tuple[str, ...]) -> ContextItem:
    """An untrusted summary item supplied by the caller, claiming records that may not exist."""
    claimed = StructuredSummary(facts=(f"{item_id} remembers the payroll.",), pointers=pointers)
    return ContextItem(
        item_id=item_id, kind=ItemKind.SUMMARY, content=claimed.render(), trust=Trust.UNTRUSTED,
        published_at=AS_OF - timedelta(days=2000), provenance=Provenance(origin="memory"),
        priority=0, summary=claimed,
    )


def assert_every_pointer_resolves(built: BuiltContext, store: InMemoryRecordStore) -> None:
    assert built.summary_items
    for summary in built.summary_items:
        assert summary.summary is not None
        assert summary.pointers == summary.summary.pointers
        assert pointers_in(summary.content) == list(summary.pointers)
        assert len(set(summary.pointers)) == len(summary.pointers)  # each pointer once
        for item_id in summary.pointers:
            assert item_id in store, item_id
            assert store.require(item_id).item_id == item_id


def test_forged_pointers_of_an_untrusted_summary_item_are_not_carried(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = InMemoryRecordStore()
    store.put(doc(900))  # a real record, replaced by a stored summary: a pointer to it may be
    replaced = forged_summary_item("summary-900", ("doc-900",))  # carried through that summary
    store.put(replaced)
    mem = forged_summary_item("mem-1", ("ghost-42", "payroll-db", "summary-900", "doc-900"))
    with caplog.at_level(logging.WARNING, logger="hydrangea.asof.builder"):
        built = round_of(store, (mem,), 0, budget=400)
    (warning,) = [r for r in caplog.records if r.name == "hydrangea.asof.builder"]
    assert warning.levelno == logging.WARNING
    assert "'mem-1'" in warning.getMessage()
    (compaction,) = built.compactions
    assert "mem-1" in compaction.source_ids  # the forged summary itself was compacted
    assert_every_pointer_resolves(built, store)
    (summary,) = built.summary_items
    assert summary.summary is not None
    assert {"ghost-42", "payroll-db"}.isdisjoint(summary.pointers)
    assert "ghost-42" not in pointers_in(summary.content)
    assert "payroll-db" not in pointers_in(summary.content)
    assert "doc-900" in summary.pointers  # it resolves, so it is carried
    # the forged item is kept in full and pointed to by its own id; its facts are merged
    assert "mem-1" in summary.pointers and store.get("mem-1") == mem
    assert "mem-1 remembers the payroll." in summary.summary.facts


def test_a_caller_summary_pointing_at_a_record_it_did_not_replace_is_refused() -> None:
    store = InMemoryRecordStore()
    store.put(ContextItem.outside(ItemKind.DOCUMENT, "Salaries: ...", item_id="hr-salaries",
                                  published_at=AS_OF - timedelta(days=30), origin="hr"))
    store.put(doc(900))
    replaced = forged_summary_item("summary-900", ("doc-900",))
    store.put(replaced)
    for pointers in [("hr-salaries",), ("summary-900", "doc-900", "hr-salaries")]:
        mem = forged_summary_item("mem-1", pointers)
        before = {i: store.get(i) for i in store.ids()}
        with pytest.raises(SummaryPointerError, match="'hr-salaries'"):
            round_of(store, (mem,), 0, budget=400)
        with pytest.raises(SummaryPointerError):  # refused even when nothing is compacted
            round_of(store, (mem,), 0, budget=10**6)
        assert {i: store.get(i) for i in store.ids()} == before  # nothing stored
    # the summary a build made and stored stands for what it points at
    assert round_of(store, (replaced,), 0, budget=400).summary_items


@given(st.lists(st.sampled_from(["ghost-42", "payroll-db", "doc-900", "doc-3", "mem-2"]),
                max_size=5, unique=True),
       st.booleans(), st.integers(250, 600))
def test_every_pointer_of_every_built_summary_resolves(
    claimed: list[str], seeded: bool, budget: int
) -> None:
    store = InMemoryRecordStore()
    if seeded:  # a real record, replaced by a stored summary the claim then merges
        store.put(doc(900))
        store.put(forged_summary_item("summary-900", ("doc-900",)))
        if "doc-900" in claimed:
            claimed = [*claimed, "summary-900"]
    items = (forged_summary_item("mem-1", tuple(claimed)),
             forged_summary_item("mem-2", ("ghost-42",)))
    built = round_of(store, items, 0, budget=budget)
    assert_every_pointer_resolves(built, store)
    (summary,) = built.summary_items
    assert set(built.compactions[0].source_ids) <= set(summary.pointers)
    assert {"ghost-42", "payroll-db"}.isdisjoint(summary.pointers)
