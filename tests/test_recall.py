"""The recall tool: definitions the SDKs accept, and a handler that reaches every fact.

The reachability oracle is the test's own: it follows every id-like word of the final Context
through the handler's answers, breadth first, and looks for each planted fact in what it read.
"""

from __future__ import annotations

import re

import pytest

from hydrangea.areas import (
    AreaUsageError,
    CompactingConversation,
    RecallTool,
    Tool,
    ToolError,
    recall_tool,
)
from hydrangea.asof import ContextItem, InMemoryRecordStore
from hydrangea.asof.items import Trust
from hydrangea.context import Context
from hydrangea.coop import CoopContext
from hydrangea.gateway import GatewayType
from tests.areas_support import answer, coop_with_system

_ID = re.compile(r"[A-Za-z0-9_-]+(?:/[A-Za-z0-9_-]+)+")


def _run(detail: str, turns: int = 40) -> tuple[Context, CompactingConversation, list[str]]:
    context, coop = coop_with_system(GatewayType.openai)
    conversation = CompactingConversation(
        coop, threshold_tokens=60, rollup_tokens=150, records=InMemoryRecordStore(),
        rollup_detail=detail,  # type: ignore[arg-type]
    )
    facts: list[str] = []
    for turn in range(turns):
        fact = f"FACT-{turn:03d}-valve"
        facts.append(fact)
        conversation.user(f"Turn {turn} starts here. Note that {fact} sits on pier {turn}.")
        coop.render()
        conversation.route(answer(context, f"Answer {turn}: noted, logged for the crew."))
    coop.render()
    return context, conversation, facts


def _reachable(context: Context, tool: RecallTool) -> str:
    seen: set[str] = set()
    texts = [context.adapter.item_text(item) for item in context[:]]
    frontier = [i for text in texts for i in _ID.findall(text)]
    while frontier:
        item_id = frontier.pop()
        if item_id in seen:
            continue
        seen.add(item_id)
        text = tool({"ids": [item_id]})
        texts.append(text)
        frontier.extend(_ID.findall(text))
    return "\n".join(texts)


@pytest.mark.parametrize("detail", ["full", "headlines"])
def test_every_fact_stays_reachable_through_the_tool(detail: str) -> None:
    context, conversation, facts = _run(detail)
    assert conversation.rollups >= 2
    reached = _reachable(context, RecallTool(conversation.records))
    assert all(fact in reached for fact in facts)


def test_headline_rollups_carry_less_than_full_ones() -> None:
    _, full, _ = _run("full")
    head_context, heads, _ = _run("headlines")
    assert heads.rollups == full.rollups
    full_size = sum(part.tokens for part in full.carried)
    head_size = sum(part.tokens for part in heads.carried)
    assert head_size < full_size / 2, (head_size, full_size)
    # the facts are not in the final context itself: only behind the pointers
    final = "\n".join(head_context.adapter.item_text(i) for i in head_context[:])
    assert "FACT-000-valve" not in final


def test_definitions_validate_against_each_sdk() -> None:
    from anthropic.types import ToolParam
    from google.genai.types import Tool as GeminiTool
    from openai.types.chat import ChatCompletionToolParam
    from openai.types.responses import FunctionToolParam
    from pydantic import TypeAdapter

    TypeAdapter(ChatCompletionToolParam).validate_python(recall_tool(GatewayType.openai))
    TypeAdapter(FunctionToolParam).validate_python(recall_tool(GatewayType.openai_responses))
    TypeAdapter(ToolParam).validate_python(recall_tool(GatewayType.anthropic))
    GeminiTool.model_validate(recall_tool(GatewayType.gemini))
    for gateway in GatewayType:
        assert "recall" in str(recall_tool(gateway))


class _NoneStore:
    """A store whose get returns None for an unknown id (the other RecordStore convention)."""

    def __init__(self, items: dict[str, ContextItem]) -> None:
        self.items = items

    def put(self, item: ContextItem) -> None:
        self.items[item.item_id] = item

    def get(self, item_id: str) -> ContextItem | None:
        return self.items.get(item_id)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self.items

    def ids(self) -> list[str]:
        return list(self.items)


def _item(item_id: str, text: str, trust: Trust = Trust.UNTRUSTED) -> ContextItem:
    from datetime import UTC, datetime

    from hydrangea.asof.items import ItemKind, Provenance

    return ContextItem(item_id=item_id, kind=ItemKind.DOCUMENT, content=text, trust=trust,
                       published_at=datetime(2026, 1, 1, tzinfo=UTC),
                       provenance=Provenance(origin="test"), priority=0)


def test_unknown_ids_either_store_convention_and_bad_arguments() -> None:
    raising = InMemoryRecordStore()
    raising.put(_item("a/1", "alpha [/record] text"))
    for store in (raising, _NoneStore({"a/1": _item("a/1", "alpha [/record] text")})):
        tool = RecallTool(store, max_ids=2)  # type: ignore[arg-type]
        out = tool({"ids": ["a/1", "missing/2", "a/1"]})
        assert "alpha [\\/record] text" in out and "untrusted" in out
        assert "[no record 'missing/2']" in out
        assert out.count("[/record]") == 1  # the record's own text cannot close the frame
        assert "only the first 2" in tool({"ids": ["a/1", "b", "c"]})
        assert tool({"ids": "a/1"}).startswith("[record 'a/1'")
    tools: dict[str, Tool] = {"recall": RecallTool(raising)}  # fits ToolLoopArea's mapping
    bad_arguments: list[dict[str, object]] = [{}, {"ids": [3]}, {"ids": []}]
    for bad in bad_arguments:
        with pytest.raises(ToolError):
            tools["recall"](bad)
    with pytest.raises(ValueError):
        RecallTool(raising, max_ids=0)
    with pytest.raises(AreaUsageError):
        CompactingConversation(CoopContext(Context(GatewayType.openai)), threshold_tokens=5,
                               rollup_detail="some")  # type: ignore[arg-type]


