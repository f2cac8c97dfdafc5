"""The explorer shows the predicted cache reuse next to the usage the provider reported."""

from __future__ import annotations

from hydrangea.context import Context
from hydrangea.explore import Explorer, predicted_cache_share
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle
from hydrangea.message import Message, Role


def test_predicted_and_reported_reuse_are_shown() -> None:
    context = Context(GatewayType.anthropic)
    context.emplace_message(Message(role=Role.system, content="You are careful. " * 50))
    context.emplace_message(Message(role=Role.user, content="Go."))
    session = Lifecycle(context)
    session.add(Component("A reminder sent every turn. " * 20, key="r", ttl=1, cadence=1))
    first = session.render()
    assert first.earlier_stable == ()
    assert "predicted: 0% of the latest request repeats" in Explorer(session).render_text(200)
    context.push_back({"role": "assistant", "content": [{"type": "text", "text": "fine"}]})
    context.emplace_message(Message(role=Role.user, content="Again."))
    request = session.render()
    sent_before = len(first.items)
    assert request.items[:sent_before] == first.items  # what was sent is history
    share = predicted_cache_share(context.adapter, request.items, sent_before)
    assert 0.3 < share < 0.9  # the new turn and the reminder sent again are not cached yet
    before = Explorer(session).render_text(width=200)
    assert "reported: no response with usage pushed yet" in before
    context.push_back({
        "type": "message", "role": "assistant", "content": [{"type": "text", "text": "ok"}],
        "usage": {"input_tokens": 10, "cache_read_input_tokens": 300,
                  "cache_creation_input_tokens": 40, "output_tokens": 2},
    })
    text = Explorer(session).render_text(width=200)
    assert f"predicted: {share:.0%} of the latest request repeats an earlier one" in text
    assert "reported (response 0): read 300 of 350 input tokens (86%), wrote 40" in text
    assert predicted_cache_share(context.adapter, (), 0) == 0.0
