"""A deterministic set of sessions across the four gateways, and the request kwargs each sends.

``python -m tests.golden.sessions --write`` freezes the requests into ``requests.jsonl.gz``;
``tests/test_golden_requests.py`` rebuilds them and asserts the bytes are unchanged.
"""

from __future__ import annotations

import gzip
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hydrangea import ConversationArea, CoopContext
from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle, Placement, Stage
from hydrangea.message import Message, Role
from tests.golden._more import MORE
from tests.golden._replies import calls as _calls
from tests.golden._replies import results as _results
from tests.golden._replies import say as _say

FROZEN = Path(__file__).with_name("requests.jsonl.gz")

Session = Callable[[GatewayType], list[dict[str, Any]]]


def canonical(kwargs: dict[str, Any]) -> str:
    """The request's canonical bytes: key order kept, no spaces, non-ASCII as it is."""
    return json.dumps(kwargs, sort_keys=False, ensure_ascii=False, separators=(",", ":"))


def plain(gateway: GatewayType) -> list[dict[str, Any]]:
    """Three turns of plain conversation, non-ASCII included."""
    context = Context(gateway)
    sent = []
    for turn, question in enumerate(["Hello", "紫陽花は何色？", "Thanks!"]):
        context.emplace_message(Message(role=Role.user, content=question))
        sent.append(context.request())
        context.push_back(_say(gateway, f"answer {turn}"))
    return sent


def system_plain(gateway: GatewayType) -> list[dict[str, Any]]:
    """A system message before the conversation."""
    context = Context(gateway)
    context.emplace_message(Message(role=Role.system, content="You are terse."))
    sent = []
    for turn in range(2):
        context.emplace_message(Message(role=Role.user, content=f"question {turn}"))
        sent.append(context.request())
        context.push_back(_say(gateway, f"answer {turn}"))
    return sent


def single_tool(gateway: GatewayType) -> list[dict[str, Any]]:
    """One tool call, its result, and the final answer."""
    context = Context(gateway)
    context.emplace_message(Message(role=Role.user, content="Weather in Kyoto?"))
    sent = [context.request()]
    context.push_back(_calls(gateway, ("call_1", "weather", {"city": "Kyoto"})))
    context.emplace_message(_results(("call_1", "sunny")))
    sent.append(context.request())
    context.push_back(_say(gateway, "It is sunny."))
    context.emplace_message(Message(role=Role.user, content="Thanks"))
    sent.append(context.request())
    return sent


def parallel_tools(gateway: GatewayType) -> list[dict[str, Any]]:
    """Two calls in one turn, answered together."""
    context = Context(gateway)
    context.emplace_message(Message(role=Role.system, content="Use tools."))
    context.emplace_message(Message(role=Role.user, content="Weather and time?"))
    sent = [context.request()]
    context.push_back(
        _calls(gateway, ("call_1", "weather", {"city": "Kyoto"}), ("call_2", "clock", {}))
    )
    context.emplace_message(_results(("call_1", "sunny"), ("call_2", "noon")))
    sent.append(context.request())
    return sent


def with_model(gateway: GatewayType) -> list[dict[str, Any]]:
    """Requests with a model and extra options merged in."""
    context = Context(gateway)
    context.emplace_message(Message(role=Role.user, content="hi"))
    return [context.request(model="model-a")]


def lifecycle_after(gateway: GatewayType) -> list[dict[str, Any]]:
    """A reminder with ttl and cadence after the history."""
    context = Context(gateway)
    lc = Lifecycle(context)
    lc.add(Component("Cite the ticket number.", ttl=2, cadence=1, key="cite"))
    sent = []
    for turn in range(4):
        context.emplace_message(Message(role=Role.user, content=f"question {turn}"))
        sent.append(lc.render().kwargs)
        context.push_back(_say(gateway, f"answer {turn}"))
    return sent


def lifecycle_before(gateway: GatewayType) -> list[dict[str, Any]]:
    """A component before the newest item and a staged cycling one."""
    context = Context(gateway)
    context.emplace_message(Message(role=Role.user, content="hi"))
    lc = Lifecycle(context)
    lc.add(Component(Message(role=Role.system, content="Mode: review"), ttl=3, placement="before"))
    lc.add(
        Component(
            "Status", stages=[Stage(Placement.after, 1), Stage(Placement.before, 1)], cycle=True
        )
    )
    sent = []
    for turn in range(4):
        sent.append(lc.render().kwargs)
        context.push_back(_say(gateway, f"answer {turn}"))
        context.emplace_message(Message(role=Role.user, content=f"question {turn}"))
    return sent


def lifecycle_tools(gateway: GatewayType) -> list[dict[str, Any]]:
    """Overlays around a tool exchange."""
    context = Context(gateway)
    context.emplace_message(Message(role=Role.user, content="Weather?"))
    context.push_back(
        _calls(gateway, ("call_1", "weather", {"city": "Kyoto"}), ("call_2", "clock", {}))
    )
    context.emplace_message(_results(("call_1", "sunny"), ("call_2", "noon")))
    lc = Lifecycle(context)
    lc.add(Component("Remember: be brief.", ttl=2, placement=Placement.before, key="b"))
    lc.add(Component("Current task: weather", ttl=1, cadence=1, key="s"))
    sent = [lc.render().kwargs]
    context.push_back(_say(gateway, "Sunny at noon."))
    context.emplace_message(Message(role=Role.user, content="ok"))
    sent.append(lc.render().kwargs)
    return sent


def coop_conversation(gateway: GatewayType) -> list[dict[str, Any]]:
    """A CoopContext with a ConversationArea and a reminder lifecycle."""
    coop = CoopContext(Context(gateway))
    conversation = ConversationArea()
    coop.register(conversation)
    lc = Lifecycle(coop)
    lc.add(Component("Answer in one short paragraph.", ttl=1, cadence=1, key="style"))
    sent = []
    for turn, question in enumerate(["Is HW-2291 closed?", "Thanks!", "Bye"]):
        conversation.user(question)
        sent.append(lc.render().kwargs)
        coop.context.push_back(_say(gateway, f"reply {turn}"), route=conversation)
    return sent


def drop_reasoning(gateway: GatewayType) -> list[dict[str, Any]]:
    """broken_reasoning="drop" on a plain conversation."""
    context = Context(gateway, broken_reasoning="drop")
    context.emplace_message(Message(role=Role.user, content="hi"))
    sent = [context.request()]
    context.push_back(_say(gateway, "hello"))
    context.emplace_message(Message(role=Role.user, content="again"))
    sent.append(context.request())
    return sent


SESSIONS: dict[str, Session] = {
    f.__name__: f
    for f in (
        plain,
        system_plain,
        single_tool,
        parallel_tools,
        with_model,
        lifecycle_after,
        lifecycle_before,
        lifecycle_tools,
        coop_conversation,
        drop_reasoning,
        *MORE,
    )
}


def build() -> Iterator[tuple[str, list[str]]]:
    """Every session's name (``gateway/session``) and the canonical bytes of its requests."""
    for gateway in GatewayType:
        for name, session in SESSIONS.items():
            yield f"{gateway.value}/{name}", [canonical(k) for k in session(gateway)]


def write(path: Path = FROZEN) -> None:
    """Freeze every session's requests into ``path``."""
    lines = [json.dumps({"session": n, "requests": r}, ensure_ascii=False) for n, r in build()]
    with gzip.GzipFile(path, "wb", mtime=0) as out:
        out.write(("\n".join(lines) + "\n").encode())


def read(path: Path = FROZEN) -> dict[str, list[str]]:
    """The frozen requests, by session name."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return {row["session"]: row["requests"] for row in rows}


if __name__ == "__main__" and "--write" in sys.argv:
    write()
