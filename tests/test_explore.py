"""The explorer: the tree, next-change descriptions, stepping, and exploring saved files."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from hydrangea.context import Context
from hydrangea.coop import CoopContext
from hydrangea.errors import ContextStateError, SerializationError
from hydrangea.explore import Explorer, describe_next, explore_file
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, ComponentState, Lifecycle, Placement, Stage
from hydrangea.message import Message, Role
from tests.support.coop_areas import Probe


def scenario() -> tuple[Lifecycle, Explorer]:
    coop = CoopContext(Context(GatewayType.openai))
    coop.register(Probe("tool", [], [["step [one]"]]))
    lc = Lifecycle(coop)
    lc.add(Component("User is Alice", key="name", tags=["user"]))
    lc.add(Component("Check in", ttl=2, cadence=5, key="checkin"))
    lc.add(Component("Mode: research", ttl=1, cadence=1, key="mode"))
    stages = [Stage(Placement.after, 2), Stage(Placement.before, 3), Stage(Placement.after)]
    lc.add(Component("alert", key="alert", stages=stages))
    lc.add(Component("hint", ttl=3, key="hint", placement="before"))
    coop.context.emplace_message(Message(role=Role.user, content="hello"))
    return lc, Explorer(lc)


def test_tree_shows_areas_history_overlay_and_next_changes() -> None:
    lc, explorer = scenario()
    explorer.step()
    lc.seal("first")
    lc.context.push_back({"role": "assistant", "content": "hi there"})
    explorer.step(2)
    assert lc.episode == 2
    text = explorer.render_text(width=140)
    for expected in [
        "Context openai: 11 items, episode 2",
        "Probe [2, 2] retain/yielded",
        "[0] user: hello",  # in the Context before the render: nothing goes in front of it
        "[1] user: hint  (component 'hint', sent in episode 0)",  # before the areas' output
        "[2] user: step [one]",
        "[3] user: User is Alice  (component 'name')",
        "[7] assistant: hi there",
        # episode 1 was never answered: what it sent was taken back; episode 2 sent anew
        "[8] user: alert  (component 'alert', sent in episode 2)",
        "[10] user: Mode: research  (component 'mode', sent in episode 2)",
        "Sent in episode 2 (the before components at 8)",
        "alert before stage 1: alert",
        "checkin: cyclic ttl=2 cadence=5 (after) — reappears at episode 5",
        "mode: sticky (after) — stays in every episode",
        "alert: staged [after:2, before:3, after:∞] x1 — moves to stage 2 (after) at episode 5",
        "hint before: hint",  # sent in its last episode ...
        "hint: temporary ttl=3 (before) — expires after episode 2",  # ... and still listed
        "name: permanent tags=['user'] — in the history at index 3",
        "Snapshots: 1",
    ]:
        assert expected in text, expected
    assert "sent in episode 1" not in text
    explorer.step()
    assert "hint: temporary" not in explorer.render_text(width=140)  # forgotten after it


def state(component: Component, start: int) -> ComponentState:
    return ComponentState(component.key or "k", component, start, None)


@pytest.mark.parametrize(
    ("component", "start", "episode", "expected"),
    [
        (Component("x", ttl=8), 0, 3, "expires after episode 7"),
        (Component("x", ttl=2, cadence=5), 4, 4, "hidden after episode 5; reappears at episode 9"),
        (Component("x", ttl=2, cadence=5), 4, 6, "reappears at episode 9"),
        (Component("x", ttl=3), 0, 5, "gone"),
        (Component("x", ttl=3), 6, 5, "first shown at episode 6"),
        (Component("x"), 2, 1, "appended to the history at episode 2"),
        (
            Component("x", stages=[Stage(Placement.after, 4), Stage(Placement.before, 2)]),
            0,
            1,
            "moves to stage 1 (before) at episode 4",
        ),
    ],
)
def test_describe_next(component: Component, start: int, episode: int, expected: str) -> None:
    assert describe_next(state(component, start), episode) == expected


def test_explore_a_saved_session_and_a_saved_context(tmp_path: Path) -> None:
    lc, explorer = scenario()
    explorer.step(3)
    session_path = tmp_path / "session.json"
    lc.save(session_path)
    out = io.StringIO()
    explore_file(session_path, Console(file=out, width=140, color_system=None))
    assert "mode: sticky (after) — stays in every episode" in out.getvalue()
    assert "Areas" not in out.getvalue()  # areas are not saved with a session
    context_path = tmp_path / "context.json"
    lc.context.save(context_path)
    out = io.StringIO()
    explore_file(context_path, Console(file=out, width=140, color_system=None))
    assert "[0] user: hello" in out.getvalue()
    assert "Components" not in out.getvalue()
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "other"}', encoding="utf-8")
    with pytest.raises(SerializationError):
        explore_file(bad)


def test_long_histories_are_abbreviated() -> None:
    context = Context(GatewayType.openai)
    for i in range(100):
        context.emplace_message(Message(role=Role.user, content=f"message {i} " + "x" * 100))
    explorer = Explorer(context)
    with pytest.raises(ContextStateError):
        explorer.step()
    text = explorer.render_text()
    assert "… 65 more items …" in text
    assert "[99] user: message 99" in text and "[50] user" not in text
    assert "…\n" in text or "x…" in text


def test_the_core_and_the_explorer_module_do_not_import_rich() -> None:
    code = (
        "import sys; import hydrangea.lifecycle, hydrangea.explore; "
        "assert 'rich' not in sys.modules, 'rich imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_explorer_shows_where_requests_start_after_a_compaction(tmp_path: Path) -> None:
    ctx = Context(GatewayType.anthropic)
    ctx.emplace_message(Message(role=Role.user, content="a long report"))
    ctx.push_back({"type": "message", "role": "assistant", "stop_reason": "end_turn",
                   "content": [{"type": "compaction", "content": "the report, summarized"},
                               {"type": "text", "text": "read"}]})
    path = tmp_path / "context.json"
    ctx.save(path)
    out = io.StringIO()
    explore_file(path, Console(file=out, width=140, color_system=None))
    assert "requests start at a compaction in item 1" in out.getvalue()
    assert "[0] user: a long report" in out.getvalue()  # still held, shown


def test_the_explorer_shows_what_the_server_did_to_a_request() -> None:
    ctx = Context(GatewayType.anthropic)
    ctx.emplace_message(Message(role=Role.user, content="a long report"))
    ctx.push_back({
        "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
        "content": [{"type": "compaction", "content": "summary"}, {"type": "text", "text": "ok"}],
        "usage": {"input_tokens": 10, "output_tokens": 2, "iterations": [
            {"type": "compaction", "input_tokens": 7000, "output_tokens": 300}]},
        "context_management": {"applied_edits": [
            {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 3}]},
        "diagnostics": {"cache_miss_reason": {"type": "system_changed",
                                              "cache_missed_input_tokens": 64}},
    })
    text = Explorer(ctx).render_text(width=240)
    assert "compaction cost 7000 in / 300 out" in text
    assert "edits clear_tool_uses_20250919" in text
    assert "cache miss: system_changed (64 tokens)" in text
