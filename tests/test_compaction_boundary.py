"""The Context across provider compactions, whatever the provider's wire form.

The provider rules live in the adapters (``compaction_start``, ``swapped_head``); here a
Responses adapter is given hooks of a known, simple rule (a ``compaction`` item starts later
requests; a ``response.compaction`` window replaces what its request sent), so these tests pin
what the Context does with them: what the next request sends, what is kept, what survives a
detach, a save and a load. The per-provider rules are tested with their emulators elsewhere.

The property test's oracle is a plain list model of the session (every item in order, the
latest boundary, the pending request) that recomputes from scratch what the next request must
send; the Context's request (incremental, from its cache) must equal the fresh build of that.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.errors import (
    CompactionError,
    ContextStateError,
    PrefixBindingError,
    SerializationError,
)
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle
from hydrangea.message import Message, Role
from hydrangea.providers.features import merge_into
from hydrangea.providers.openai.responses import OpenAIResponsesAdapter as ResponsesAdapter
from hydrangea.providers.registry import adapter_for
from hydrangea.stores import InMemorySessionStore, SqliteSessionStore

GW = GatewayType.openai_responses


def _start(self: object, item: Any) -> Any:
    return item if item.get("type") == "compaction" else None


def _swapped(self: object, output: object) -> Any:
    if isinstance(output, dict) and output.get("object") == "response.compaction":
        return list(output["output"])
    return None


@pytest.fixture(autouse=True)
def _known_rule(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(ResponsesAdapter, "compaction_start", _start)
    monkeypatch.setattr(ResponsesAdapter, "swapped_head", _swapped)
    yield


@dataclass(frozen=True)
class Compact:
    """A head-swap compaction request (the stand-in for a provider's own)."""

    swaps_head: bool = True

    def apply(self, request: dict[str, Any], gateway: GatewayType, model: str | None) -> None:
        merge_into(request, "extra_body", {"compact": True})


_n = itertools.count()


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def reply(*, reasoning: bool = False, compaction: bool = False) -> dict[str, Any]:
    n = next(_n)
    output: list[dict[str, Any]] = []
    if reasoning:
        output.append({"type": "reasoning", "id": f"rs_{n}", "summary": [],
                       "encrypted_content": f"enc{n}"})
    output.append({"type": "message", "id": f"msg_{n}", "role": "assistant", "status":
                   "completed", "content": [{"type": "output_text", "text": f"answer {n}",
                                             "annotations": []}]})
    if compaction:
        output.append({"type": "compaction", "id": f"cmp_{n}", "encrypted_content": f"c{n}"})
    return {"object": "response", "id": f"resp_{n}", "model": "m", "output": output}


def window(summary: str) -> dict[str, Any]:
    n = next(_n)
    return {"object": "response.compaction", "id": f"cr_{n}", "output": [
        {"type": "message", "role": "user", "content": [{"type": "input_text",
                                                          "text": summary}]},
        {"type": "compaction", "id": f"cmp_{n}", "encrypted_content": f"w{n}"},
    ]}


def sent(ctx: Context) -> list[Any]:
    return list(ctx.request()["input"])


def built(items: list[Any]) -> list[Any]:
    return list(adapter_for(GW).build_request(items)["input"])


def test_requests_start_at_a_compaction_inside_a_reply() -> None:
    ctx = Context(GW)
    ctx.emplace_message(Message(role=Role.user, content="first"))
    ctx.push_back(reply())
    ctx.emplace_message(Message(role=Role.user, content="second"))
    ctx.push_back(reply(compaction=True))
    at = len(ctx) - 1
    ctx.emplace_message(Message(role=Role.user, content="third"))
    assert sent(ctx) == built([ctx[at], ctx[at + 1]])
    assert [b.kind for b in ctx.compactions] == ["in_reply"]
    assert ctx.compactions[0].at == at
    assert ctx[0]["content"] == "first"  # what was compacted stays readable by index


def test_a_head_swap_keeps_what_came_after_its_request() -> None:
    ctx = Context(GW)
    for text in ("a", "b"):
        ctx.emplace_message(Message(role=Role.user, content=text))
        ctx.push_back(reply())
    kwargs = ctx.request(features=[Compact()])
    assert kwargs["extra_body"] == {"compact": True}
    covered = len(ctx)
    assert ctx.compaction_pending
    # background: the conversation goes on while the compaction request runs
    ctx.emplace_message(Message(role=Role.user, content="meanwhile"))
    before_swap = sent(ctx)
    ctx.push_back(reply())
    summary = window("summary of a and b")
    ctx.push_compaction(summary)
    assert not ctx.compaction_pending
    expected = built([*summary["output"], *ctx[covered:]])
    assert sent(ctx) == expected
    assert len(before_swap) > len(expected) - len(summary["output"])
    (boundary,) = ctx.compactions
    assert (boundary.kind, boundary.start) == ("swap", covered)


def test_push_back_swaps_a_pending_summary_in_and_refuses_without_one() -> None:
    ctx = Context(GW, [user("a")])
    ctx.request(features=[Compact()])
    with pytest.raises(CompactionError):
        ctx.request(features=[Compact()])  # one at a time, as the providers say
    ctx.push_back(window("s"))
    assert len(ctx) == 1 and ctx.compactions[0].kind == "swap"
    with pytest.raises(CompactionError):
        ctx.push_compaction(window("again"))  # nothing pending


def test_a_compaction_reply_without_a_summary_keeps_the_history_whole() -> None:
    ctx = Context(GW, [user("a")])
    ctx.request(features=[Compact()])
    before = sent(ctx)
    with pytest.raises(CompactionError):
        ctx.push_compaction(reply())
    assert not ctx.compaction_pending and ctx.compactions == ()
    assert len(ctx) == 1 and sent(ctx) == before


def test_a_refused_feature_changes_nothing() -> None:
    class Refuses:
        swaps_head = True

        def apply(self, request: dict[str, Any], gateway: GatewayType, model: str | None) -> None:
            raise ValueError("no")

    ctx = Context(GW, [user("a")])
    with pytest.raises(ValueError, match="no"):
        ctx.request(features=[Refuses()])
    assert not ctx.compaction_pending


@pytest.mark.parametrize("answered", ["before the swap", "after the swap"])
def test_reasoning_of_a_request_sent_while_compacting_stays_bound(answered: str) -> None:
    ctx = Context(GW)
    ctx.emplace_message(Message(role=Role.user, content="a"))
    ctx.push_back(reply(reasoning=True))
    ctx.request(features=[Compact()])
    ctx.emplace_message(Message(role=Role.user, content="b"))
    ctx.request()  # sent on the full history, while the compaction runs
    if answered == "before the swap":
        ctx.push_back(reply(reasoning=True))
        ctx.push_compaction(window("s"))
    else:
        ctx.push_compaction(window("s"))
        ctx.push_back(reply(reasoning=True))
    ctx.emplace_message(Message(role=Role.user, content="c"))
    # the swapped history is sent and nothing is refused: the summary keeps the turns after it
    assert [i.get("type") for i in sent(ctx)] == [
        "message", "compaction", "message", "reasoning", "message", "message"
    ]
    ctx.push_back(reply(reasoning=True))
    assert sent(ctx)[-1]["type"] == "message"


def test_a_changed_prefix_after_the_boundary_is_still_refused() -> None:
    ctx = Context(GW)
    ctx.emplace_message(Message(role=Role.user, content="a"))
    ctx.push_back(reply(compaction=True))
    ctx.emplace_message(Message(role=Role.user, content="b"))
    shown = ctx.request(items=[*ctx[:], user("shown once")])
    assert shown["input"][-1]["content"] == "shown once"
    ctx.push_back(reply(reasoning=True))
    with pytest.raises(PrefixBindingError):
        ctx.request()  # "shown once" is not in the history the reasoning followed


def test_explicit_items_must_begin_with_the_compacted_ones() -> None:
    ctx = Context(GW)
    ctx.emplace_message(Message(role=Role.user, content="a"))
    ctx.push_back(reply(compaction=True))
    with pytest.raises(ContextStateError, match="must begin"):
        ctx.request(items=[user("a")])
    with pytest.raises(ContextStateError, match="before the provider compaction"):
        ctx.build_incremental(0, ())


def test_a_detach_below_the_boundary_takes_it_back() -> None:
    ctx = Context(GW)
    ctx.emplace_message(Message(role=Role.user, content="a"))
    ctx.push_back(reply())
    cut = len(ctx)
    ctx.push_back(reply(compaction=True))
    assert ctx.compactions
    ctx.detach_tail(cut)
    assert ctx.compactions == ()
    assert sent(ctx) == built(list(ctx[:]))


def test_save_and_load_keep_every_boundary() -> None:
    ctx = Context(GW)
    ctx.emplace_message(Message(role=Role.user, content="a"))
    ctx.push_back(reply(compaction=True))
    ctx.emplace_message(Message(role=Role.user, content="b"))
    ctx.request(features=[Compact()])
    ctx.push_compaction(window("s"))
    ctx.emplace_message(Message(role=Role.user, content="c"))
    ctx.request(features=[Compact()])
    loaded = Context.from_json(ctx.to_json())
    assert loaded.compactions == ctx.compactions
    assert loaded.compaction_pending
    assert sent(loaded) == sent(ctx)
    loaded.push_compaction(window("t"))
    assert loaded.compactions[-1].start == len(loaded)


# -- the property -------------------------------------------------------------------------


@dataclass
class Model:
    """The session as plain lists: every item, the latest boundary, the pending request."""

    items: list[Any] = field(default_factory=list)
    boundaries: list[tuple[int, list[Any], int | None, int]] = field(default_factory=list)
    pending: int | None = None

    def lead(self, limit: int) -> int:
        """The leading system items among the first ``limit``: never compacted away."""
        n = 0
        while n < limit and self.items[n].get("role") == "system":
            n += 1
        return n

    def expected(self) -> list[Any]:
        if not self.boundaries:
            return list(self.items)
        start, head, _, lead = self.boundaries[-1]
        return [*self.items[:lead], *head, *self.items[start:]]

    def detach(self, start: int) -> None:
        del self.items[start:]
        while self.boundaries and (
            ((at := self.boundaries[-1][2]) is not None and at >= start)
            or (at is None and self.boundaries[-1][0] > start)
        ):
            self.boundaries.pop()
        if self.pending is not None and self.pending > start:
            self.pending = None


_steps = st.lists(
    st.sampled_from(["user", "reply", "reasoned", "inreply", "compact", "summary",
                     "detach", "reload"]),
    min_size=1, max_size=40,
)


@given(_steps, st.data())
def test_random_sessions_send_what_the_rule_keeps(steps: list[str], data: st.DataObject) -> None:
    ctx, model = Context(GW), Model()
    for n in range(data.draw(st.integers(0, 2), label="system items")):
        item = {"role": "system", "content": f"rule {n}"}
        ctx.extend([item])
        model.items.append(item)
    for step in steps:
        if step == "user":
            item = user(f"u{len(model.items)}")
            ctx.extend([item])
            model.items.append(item)
        elif step in ("reply", "reasoned", "inreply"):
            body = reply(reasoning=step == "reasoned", compaction=step == "inreply")
            ctx.request()  # the reply answers a request of the whole history
            ctx.push_back(body)
            for out in body["output"]:
                model.items.append(out)
                if out["type"] == "compaction":
                    at = len(model.items) - 1
                    model.boundaries.append((at, [], at, model.lead(at)))
        elif step == "compact" and model.pending is None:
            ctx.request(features=[Compact()])
            model.pending = len(model.items)
        elif step == "summary" and model.pending is not None:
            summary = window(f"s{len(model.items)}")
            if model.boundaries and model.boundaries[-1][0] > model.pending:
                with pytest.raises(CompactionError, match="out of date"):
                    ctx.push_compaction(summary)  # a later compaction came first
            else:
                ctx.push_compaction(summary)
                model.boundaries.append(
                    (model.pending, list(summary["output"]), None, model.lead(model.pending))
                )
            model.pending = None
        elif step == "detach" and model.items:
            start = data.draw(st.integers(0, len(model.items)))
            ctx.detach_tail(start)
            model.detach(start)
        elif step == "reload":
            ctx = Context.from_json(ctx.to_json())
        # what the provider's rule keeps, after every step; nothing held is lost
        assert sent(ctx) == built(model.expected())
        assert list(ctx[:]) == model.items
        assert ctx.compaction_pending == (model.pending is not None)
        assert [b.start for b in ctx.compactions] == [b[0] for b in model.boundaries]


def _compacted_session() -> Context:
    ctx = Context(GW)
    ctx.emplace_message(Message(role=Role.user, content="a"))
    ctx.push_back(reply(reasoning=True, compaction=True))
    ctx.emplace_message(Message(role=Role.user, content="b"))
    ctx.request(features=[Compact()])
    ctx.push_compaction(window("s"))
    ctx.emplace_message(Message(role=Role.user, content="c"))
    return ctx


def test_the_stores_keep_every_boundary(tmp_path: Path) -> None:
    with SqliteSessionStore(tmp_path / "s.db") as sqlite:
        for store in (InMemorySessionStore(), sqlite):
            ctx = _compacted_session()
            saved = store.create("s", ctx)
            ctx.request(features=[Compact()])  # pending, saved as such
            store.save(saved)
            loaded = store.load("s", Context).value
            assert loaded.compactions == ctx.compactions
            assert loaded.compaction_pending
            assert sent(loaded) == sent(ctx)
            assert list(loaded[:]) == list(ctx[:])  # the compacted items too


def test_a_lifecycle_goes_on_across_a_compaction() -> None:
    ctx = Context(GW)
    lc = Lifecycle(ctx)
    lc.add(Component(content="reminder", key="r", ttl=1))
    ctx.emplace_message(Message(role=Role.user, content="a"))
    first = lc.render().kwargs
    ctx.push_back(reply(compaction=True))
    at = len(ctx) - 1
    ctx.emplace_message(Message(role=Role.user, content="b"))
    later = lc.render().kwargs["input"]
    assert later[0] == ctx[at]  # the request starts at the compaction
    assert all(item["content"] != "a" for item in later if "content" in item)
    assert first["input"][0]["content"] in ("a", "reminder")
    restored = Lifecycle.from_json(lc.to_json())
    assert restored.context.compactions == ctx.compactions


def test_a_request_rebuilt_without_its_context_is_what_was_sent() -> None:
    """A sealed request read back from a file (no Context behind it) is rebuilt from the
    compaction it started at, never from the items the provider compacted away."""
    ctx = Context(GW)
    lc = Lifecycle(ctx)
    lc.add(Component(content="reminder", key="r", ttl=1))
    ctx.emplace_message(Message(role=Role.user, content="before the compaction"))
    lc.render()
    ctx.push_back(reply(compaction=True))
    ctx.emplace_message(Message(role=Role.user, content="after it"))
    sent_then = lc.render().kwargs["input"]
    sealed = lc.seal("after")
    restored = Lifecycle.from_json(lc.to_json())
    snapshot = restored.at_snapshot(sealed)
    assert snapshot.request.context is None  # the rebuild path
    assert snapshot.kwargs["input"] == sent_then
    assert not any("before the compaction" in json.dumps(item) for item in sent_then)


@pytest.mark.parametrize("broken", [
    {"kind": "elsewhere", "start": 1, "head": []},
    {"kind": "swap", "start": 99, "head": []},
    {"kind": "swap", "start": 1, "head": [], "lead": 2},
    {"kind": "swap", "start": 1, "head": "not a list"},
    {"kind": "swap", "start": 1, "head": [{"type": "message"}]},
])
def test_a_saved_compaction_that_does_not_fit_is_refused(broken: dict[str, Any]) -> None:
    ctx = _compacted_session()
    document = json.loads(ctx.to_json())
    document["compactions"] = [broken]
    with pytest.raises(SerializationError, match="saved compaction 0"):
        Context.from_json(json.dumps(document))
    lc = Lifecycle(_compacted_session())
    lc.render()
    saved = json.loads(lc.to_json())
    saved["last"]["compaction"] = broken
    with pytest.raises(SerializationError, match="its compaction"):
        Lifecycle.from_json(json.dumps(saved))
