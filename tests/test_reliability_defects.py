"""One test per defect of issue 14: each one failed before its fix.

Saving that destroyed the last good save, text that could not be encoded, a permanent component
lost through a failed render and a save, raw Python errors at public entry points, loading that
trusted the file, a Ctrl-C inside ``gc_prologue``, and the snapshot and key behaviours the
lifecycle docs describe.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from hydrangea.context import Context
from hydrangea.coop import CoopContext
from hydrangea.errors import (
    HydrangeaError,
    InputTooDeepError,
    InvalidComponentError,
    InvalidItemError,
    InvalidMessageError,
    MessageValidationError,
    SerializationError,
    UnencodableTextError,
)
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle, Placement, Stage
from hydrangea.message import Message, Role, TextPart, ToolCallPart, ToolResultPart
from tests.support.coop_areas import Probe

LONE = json.loads('"half an emoji \\ud83d"')  # what json.loads of outside JSON can produce


def user(text: str) -> Message:
    return Message(role=Role.user, content=text)


# -- saving ---------------------------------------------------------------------------------


@pytest.mark.parametrize("gateway", list(GatewayType))
def test_a_lone_surrogate_is_refused_at_push_back_and_nothing_is_appended(
    gateway: GatewayType,
) -> None:
    context = Context(gateway)
    context.emplace_message(user("hello"))
    before = context.to_json()
    item = (
        {"role": "model", "parts": [{"text": LONE}]}
        if gateway is GatewayType.gemini
        else {"role": "assistant", "content": LONE}
        if gateway is not GatewayType.openai_responses
        else {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": LONE}],
        }
    )
    with pytest.raises(UnencodableTextError, match="U\\+D83D") as info:
        context.push_back(item)
    assert isinstance(info.value, ValueError)
    assert context.to_json() == before


def test_the_surrogate_save_no_longer_destroys_the_last_good_file(tmp_path: Path) -> None:
    path = tmp_path / "context.json"
    context = Context(GatewayType.anthropic)
    context.emplace_message(user("first"))
    context.save(path)
    good = path.read_bytes()
    with pytest.raises(UnencodableTextError):
        context.push_back({"role": "assistant", "content": [{"type": "text", "text": LONE}]})
    context.save(path)  # still saves: the refused item never entered
    assert path.read_bytes() == good
    assert Context.load(path).to_json() == context.to_json()


@pytest.mark.parametrize("kind", ["context", "lifecycle"])
def test_a_failed_save_leaves_the_previous_file_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    path = tmp_path / "saved.json"
    context = Context(GatewayType.openai)
    session = Lifecycle(context)
    context.emplace_message(user("first"))
    saver = context if kind == "context" else session
    saver.save(path)
    good = path.read_bytes()
    context.emplace_message(user("second"))

    def broken_fsync(descriptor: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="No space"):
        saver.save(path)
    assert path.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["saved.json"]  # no temporary left
    monkeypatch.undo()
    saver.save(path)
    assert path.read_bytes() != good


def test_a_save_keeps_the_file_mode(tmp_path: Path) -> None:
    path = tmp_path / "context.json"
    context = Context(GatewayType.openai)
    context.save(path)
    path.chmod(0o640)
    context.emplace_message(user("more"))
    context.save(path)
    assert path.stat().st_mode & 0o777 == 0o640


def test_one_policy_for_unencodable_text_at_every_boundary() -> None:
    refusals: list[Any] = [
        lambda: Message(role=Role.user, content=LONE),
        lambda: TextPart(text=LONE),
        lambda: ToolCallPart(id="c", name="n", arguments={"q": [LONE]}),
        lambda: ToolCallPart(id="c", name="n", arguments={LONE: 1}),
        lambda: ToolResultPart(call_id="c", content=LONE),
        lambda: Message.model_validate(
            {"role": "user", "content": [{"type": "text", "text": LONE}]}
        ),
        lambda: Component(LONE),
        lambda: Component("x", key=LONE),
        lambda: Component("x", tags=[LONE]),
        lambda: Context(GatewayType.openai, [{"role": "user", "content": LONE}]),
    ]
    for refuse in refusals:
        with pytest.raises(UnencodableTextError, match="lone surrogate"):
            refuse()


def test_loading_text_with_an_escaped_surrogate_is_refused() -> None:
    context = Context(GatewayType.openai)
    context.emplace_message(user("SURROGATE"))
    text = context.to_json().replace("SURROGATE", "\\ud800")
    with pytest.raises(SerializationError, match="lone surrogate"):
        Context.from_json(text)
    session = Lifecycle(context)
    session.render()
    session.seal("SEAL")
    with pytest.raises(SerializationError, match="lone surrogate"):
        Lifecycle.from_json(session.to_json().replace("SEAL", "\\udfff"))


# -- a permanent component is never lost -----------------------------------------------------


def _collecting_session() -> tuple[Lifecycle, CoopContext, Probe, Probe]:
    """A session where the next render collects a retired area whose range ends before a
    committed permanent component, and another area's render raises in that same render."""
    log: list[Any] = []
    coop = CoopContext(Context(GatewayType.openai))
    tool = Probe("tool", log, [["tool output"]])
    failing = Probe("failing", log, [[], ["late"]])
    coop.register(tool)
    coop.register(failing)
    session = Lifecycle(coop)
    coop.context.emplace_message(user("hello"))
    session.add(Component("The user's name is Alice.", key="name"))
    session.render()  # episode 0: tool renders [1], then the permanent component at [2]
    assert session.get("name").key == "name"
    assert next(s for s in session.states() if s.key == "name").committed == (2, 3)
    tool.retire()

    def boom(_: Probe) -> None:
        raise RuntimeError("render failed")

    failing.on_render = boom
    return session, coop, tool, failing


def test_a_permanent_component_survives_a_failed_render_a_save_and_a_load(
    tmp_path: Path,
) -> None:
    session, coop, _tool, failing = _collecting_session()
    with pytest.raises(RuntimeError, match="render failed"):
        session.render()  # collects [1:] (the component included), then the area raises
    assert len(coop.context) == 1
    states = {s.key: s for s in session.states()}
    assert states["name"].committed is None  # never claimed past the end of the history
    path = tmp_path / "session.json"
    session.save(path)

    restored = Lifecycle.load(path)
    for state in restored.states():
        assert state.committed is None or state.committed[1] <= len(restored.context)
    restored.render()
    texts = [item["content"] for item in restored.context]
    assert texts == ["hello", "The user's name is Alice."]
    committed = next(s for s in restored.states() if s.key == "name").committed
    assert committed == (1, 2)

    # The session that never saved recovers the same way at its next good render.
    failing.on_render = None
    session.render()
    assert "The user's name is Alice." in [item["content"] for item in coop.context]


def test_a_keyboard_interrupt_in_the_render_also_gives_the_component_back() -> None:
    session, coop, _tool, failing = _collecting_session()

    def interrupt(_: Probe) -> None:
        raise KeyboardInterrupt

    failing.on_render = interrupt
    with pytest.raises(KeyboardInterrupt):
        session.render()
    assert next(s for s in session.states() if s.key == "name").committed is None
    failing.on_render = None
    session.render()
    assert [item["content"] for item in coop.context][-1] == "The user's name is Alice."


# -- Ctrl-C in gc_prologue -------------------------------------------------------------------


def test_ctrl_c_in_one_gc_prologue_never_runs_a_callback_twice() -> None:
    log: list[Any] = []
    coop = CoopContext(Context(GatewayType.openai))
    first = Probe("first", log, [["a"]], promoted=["summary of a"])
    second = Probe("second", log, [["b"]])
    keeper = Probe("keeper", log, [[], ["c"]])
    for area in (first, second, keeper):
        coop.register(area)
    coop.context.emplace_message(user("hello"))
    coop.render()
    first.retire()
    second.retire()

    def interrupt(_: Probe) -> None:
        raise KeyboardInterrupt

    first.on_gc = interrupt
    with pytest.raises(KeyboardInterrupt) as info:
        coop.render()
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "collection was completed" in notes and "Probe('second')" in notes
    # The collection is complete: tail detached, promoted summary appended, both areas gone.
    assert [item["content"] for item in coop.context] == ["hello", "summary of a"]
    assert [record.area for record in coop.areas()] == [keeper]
    coop.render()
    coop.render()
    calls = [event for event in log if event[0] in {"promote", "gc_prologue"}]
    assert calls == [("promote", "first"), ("promote", "second"), ("gc_prologue", "first")]
    assert ("render", "keeper") in log


# -- raw Python errors -----------------------------------------------------------------------


def test_emplace_message_of_a_dict_is_a_library_error() -> None:
    context = Context(GatewayType.openai)
    with pytest.raises(InvalidMessageError, match="push_back") as info:
        context.emplace_message({"role": "user", "content": "hi"})  # type: ignore[arg-type]
    assert isinstance(info.value, TypeError)
    with pytest.raises(InvalidMessageError):
        context.emplace_messages(user("one"))  # type: ignore[arg-type]
    assert len(context) == 0


def test_pydantic_errors_are_wrapped_at_the_constructors() -> None:
    with pytest.raises(MessageValidationError, match="role") as info:
        Message(content=(ToolCallPart(id="c", name="n"),))  # type: ignore[call-arg]
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)
    assert isinstance(info.value, HydrangeaError)
    with pytest.raises(MessageValidationError, match="tool calls"):
        Message(role=Role.user, content=(ToolCallPart(id="c", name="n"),))
    with pytest.raises(MessageValidationError):
        Message.model_validate({"role": "narrator", "content": "x"})


@pytest.mark.parametrize(
    "build",
    [
        lambda: Component("x", ttl=1, tags=None),  # type: ignore[arg-type]
        lambda: Component("x", stages=5),  # type: ignore[arg-type]
        lambda: Component("x", stages="ab"),  # type: ignore[arg-type]
        lambda: Component("x", tags=[["unhashable"]]),  # type: ignore[list-item]
        lambda: Component(5),  # type: ignore[arg-type]
        lambda: Component("x", stages=[Stage(Placement.after, 2)], cycle=-1),
    ],
)
def test_component_refusals_are_library_errors(build: Any) -> None:
    with pytest.raises(InvalidComponentError):
        build()


def test_lookups_with_wrong_types_are_library_errors() -> None:
    session = Lifecycle(Context(GatewayType.openai))
    with pytest.raises(InvalidComponentError):
        session.get_by_tags(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidComponentError):
        session.get_by_tags([1])  # type: ignore[list-item]
    with pytest.raises(KeyError):
        session.get([])  # type: ignore[arg-type]
    assert [] not in session


def _nested(depth: int) -> dict[str, Any]:
    item: dict[str, Any] = {"x": 1}
    for _ in range(depth):
        item = {"x": item}
    return item


@pytest.mark.parametrize("gateway", list(GatewayType))
def test_deep_nesting_is_a_clear_error_not_a_recursion_error(gateway: GatewayType) -> None:
    context = Context(gateway)
    with pytest.raises(InputTooDeepError, match="deeper than 512"):
        context.push_back({"role": "assistant", "content": "x", "deep": _nested(20_000)})
    assert len(context) == 0
    with pytest.raises(InputTooDeepError):
        ToolCallPart(id="c", name="n", arguments=_nested(20_000))
    text = '{"format":"hydrangea.context","version":1,"gateway":"openai","items":[' + (
        "[" * 20_000 + "]" * 20_000 + "]}"
    )
    with pytest.raises(SerializationError, match="deep"):
        Context.from_json(text)


def test_json_shape_is_checked_in_one_walk() -> None:
    context = Context(GatewayType.openai)
    for bad in (
        {"role": "user", "content": "x", "extra": float("nan")},
        {"role": "user", "content": "x", 1: "int key"},
        {"role": "user", "content": {"a set"}},
        {"role": "user", "content": b"bytes"},
    ):
        with pytest.raises(InvalidItemError):
            context.extend([bad])  # type: ignore[list-item]
    assert len(context) == 0


# -- loading trusts nothing ------------------------------------------------------------------


def _saved_session() -> dict[str, Any]:
    session = Lifecycle(Context(GatewayType.openai))
    session.context.emplace_message(user("hello"))
    session.add(Component("hint", ttl=3, key="hint"))
    session.add(Component("Alice", key="name"))
    session.render()
    session.seal("first")
    document: dict[str, Any] = json.loads(session.to_json())
    return document


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda d: d.__setitem__("episode", 1e999), "episode"),
        (lambda d: d.__setitem__("episode", -1), "episode"),
        (lambda d: d["components"][0].__setitem__("start", 2**64), "start"),
        (lambda d: d["components"][0].__setitem__("seq", True), "seq"),
        (lambda d: d["components"][1].__setitem__("committed", [5, 6]), "committed"),
        (lambda d: d["components"][1].__setitem__("committed", [0, 1]), "not this component"),
        (lambda d: d.__setitem__("committed_order", []), "committed_order"),
        (lambda d: d["natives"][0][0].__setitem__("role", "narrator"), "narrator"),
        (lambda d: d["segments"][0]["items"].append({"role": 5}), "role"),
        (lambda d: d["snapshots"][0].__setitem__("length", 99), "length"),
        (lambda d: d["snapshots"][0].__setitem__("segment", 7), "segment"),
        (lambda d: d["snapshots"][0]["after"][0].__setitem__("items", 3), "items"),
        (lambda d: d["snapshots"][0]["after"][0].__setitem__("placement", "middle"), "middle"),
        (lambda d: d["snapshots"].append(dict(d["snapshots"][0])), "used twice"),
        (lambda d: d["last"].__setitem__("anchor", -1), "anchor"),
        (lambda d: d["components"][0]["component"].__setitem__("ttl", "3"), "ttl"),
        (lambda d: d["components"][0]["component"].__setitem__("stages", 5), "stages"),
        (lambda d: d["components"].append(d["components"][0]), "key"),
    ],
)
def test_a_session_file_is_checked_before_it_loads(change: Any, match: str) -> None:
    document = _saved_session()
    Lifecycle.from_json(json.dumps(document))  # the unchanged file loads
    change(document)
    with pytest.raises(SerializationError, match=match):
        Lifecycle.from_json(json.dumps(document))


def test_each_kind_of_file_is_named_when_loaded_as_the_other(tmp_path: Path) -> None:
    session = Lifecycle(Context(GatewayType.openai))
    session.context.save(tmp_path / "context.json")
    session.save(tmp_path / "session.json")
    with pytest.raises(SerializationError, match="this file is a saved Context"):
        Lifecycle.load(tmp_path / "context.json")
    with pytest.raises(SerializationError, match="this file is a saved lifecycle session"):
        Context.load(tmp_path / "session.json")
    (tmp_path / "latin1.json").write_bytes(b"\xff\xfe")
    with pytest.raises(SerializationError, match="UTF-8"):
        Context.load(tmp_path / "latin1.json")


# -- snapshots and keys as documented --------------------------------------------------------


def test_a_snapshot_has_history_overlay_and_kwargs() -> None:
    session = Lifecycle(Context(GatewayType.openai))
    session.context.emplace_message(user("hello"))
    session.add(Component("hint", ttl=1, key="hint"))
    request = session.render()
    snapshot = session.at_snapshot(session.seal())
    assert snapshot.history == (
        {"role": "user", "content": "hello"}, {"role": "user", "content": "hint"},
    )  # what was sent is history
    assert [o.key for o in snapshot.overlay] == ["hint"] == list(snapshot.overlay_keys)
    assert snapshot.kwargs == request.kwargs
    assert snapshot.kwargs["messages"][-1] == {"role": "user", "content": "hint"}


def test_a_key_stays_readable_through_its_last_episode_and_is_free_after_it() -> None:
    session = Lifecycle(Context(GatewayType.openai))
    session.context.emplace_message(user("hello"))
    session.add(Component("first hint", ttl=2, key="hint"))
    assert "hint" in session.render().overlay_keys
    assert "hint" in session.render().overlay_keys  # its last episode
    # the latest request still shows it: it can be read, and its key taken over
    assert session.get("hint").content.text == "first hint"
    session.add(Component("second hint", ttl=1, key="hint"))
    assert session.get("hint").content.text == "second hint"
    assert "hint" in session.render().overlay_keys


def test_a_finished_component_is_forgotten_at_the_next_render() -> None:
    session = Lifecycle(Context(GatewayType.openai))
    session.context.emplace_message(user("hello"))
    session.add(Component("hint", ttl=1, key="hint"))
    session.render()
    assert "hint" in session
    assert "hint" not in session.render().overlay_keys
    assert "hint" not in session


def test_a_component_added_without_a_key_can_be_found_again() -> None:
    session = Lifecycle(Context(GatewayType.openai))
    key = session.add(Component("note", ttl=3, tags=["notes"]))
    (found,) = session.get_by_tags("notes")
    assert found.key == key and key.startswith("#")
    session.update(found.key, content="edited note")
    session.add(found.with_content("replaced note"), replace=True)
    assert session.get(key).content.text == "replaced note"
    session.delete(found.key)
    assert key not in session
    with pytest.raises(InvalidComponentError):
        session.add(Component("forged", key="#99"))


def test_a_failed_arender_also_gives_the_permanent_component_back() -> None:
    import asyncio

    session, coop, _tool, failing = _collecting_session()
    with pytest.raises(RuntimeError, match="render failed"):
        asyncio.run(session.arender())
    assert len(coop.context) == 1
    assert next(s for s in session.states() if s.key == "name").committed is None
    failing.on_render = None
    asyncio.run(session.arender())
    assert [item["content"] for item in coop.context][-1] == "The user's name is Alice."
