"""A misbehaving model summarizer's fallback keeps its content in the request (issue 26).

When the model's reply is refused (17 kinds below) the extractive fallback stands in; its
content lives in the summary's notes, which the planner used to blank, leaving a bare
``records:`` list. Each case must show every compacted record's first sentence.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from hydrangea.asof.builder import ContextBuilder
from hydrangea.asof.items import ContextItem, ItemKind
from hydrangea.asof.llm import LLMSummarizer
from hydrangea.message import Message

BASE = datetime(2026, 3, 1, tzinfo=UTC)
GOOD = {"facts": ["Revenue grew."], "decisions": ["Hold."], "open_questions": ["Why?"]}
ITEMS = [
    ContextItem.outside(
        ItemKind.OBSERVATION,
        f"Reading {n} found marker q{n}z. " + "More detail of no interest here. " * 12,
        item_id=f"obs-{n}",
        published_at=BASE + timedelta(minutes=n),
        origin="tool",
    )
    for n in range(16)
]


class _Boom(RuntimeError):
    pass


def _raises(messages: Sequence[Message]) -> object:
    raise _Boom("upstream 500")


def _hangs(messages: Sequence[Message]) -> object:
    time.sleep(2)
    return json.dumps(GOOD)


REPLIES: dict[str, object] = {
    "invalid_json": "Sure! Here is the summary: facts are ...",
    "truncated_json": '{"facts": ["a"], "decisions": [',
    "string_for_list": json.dumps({**GOOD, "facts": "Revenue grew."}),
    "missing_field": json.dumps({"facts": ["a"], "decisions": []}),
    "number_in_list": json.dumps({**GOOD, "decisions": ["ok", 3]}),
    "null_field": json.dumps({**GOOD, "open_questions": None}),
    "made_up_pointers": json.dumps({**GOOD, "pointers": ["hr-salaries"]}),
    "json_array": json.dumps([GOOD]),
    "not_text": None,
    "bytes_reply": json.dumps(GOOD).encode(),
    "empty": "",
    "whitespace": " \n\t ",
    "object_for_list": json.dumps({**GOOD, "facts": {"a": "b"}}),
    "nested_list": json.dumps({**GOOD, "facts": [["Revenue grew."]]}),
    "two_objects": json.dumps(GOOD) + json.dumps(GOOD),
}
CASES = [*REPLIES, "raises", "times_out"]


def _model(case: str) -> object:
    if case == "raises":
        return _raises
    if case == "times_out":
        return _hangs
    reply = REPLIES[case]

    def model(messages: Sequence[Message]) -> object:
        return reply

    return model


def test_seventeen_kinds() -> None:
    assert len(CASES) == 17


@pytest.mark.parametrize("case", CASES)
def test_fallback_content_reaches_the_request(case: str) -> None:
    summarizer = LLMSummarizer(_model(case), timeout=0.2)  # type: ignore[arg-type]
    builder = ContextBuilder(as_of=BASE + timedelta(days=1), token_budget=1500,
                             summarizer=summarizer)
    for item in ITEMS:
        builder.add(item)
    built = builder.build()
    (compaction,) = built.compactions
    (summary,) = built.summary_items
    data = "\n".join(m.text for m in built.messages)
    assert compaction.source_ids
    assert "hr-salaries" not in data
    # every record the summary names with a note shows its first sentence's marker
    assert summary.summary is not None
    noted = [p for p in summary.summary.pointers if summary.summary.note_of(p)]
    assert noted, "the fallback's notes were blanked"
    for pointer in noted:
        marker = f"q{pointer.removeprefix('obs-')}z"
        assert marker in summary.summary.note_of(pointer)
        assert marker in data
