"""The command line: --help everywhere; bad arguments and unusable files give one clear line on
stderr and a non-zero exit, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hydrangea.__main__ import main
from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role

KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert lines[0].startswith("hydrangea")
    return lines[0]


@pytest.mark.parametrize("argv", [["--help"], ["demo", "--help"], ["explore", "--help"]])
def test_every_command_has_help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: hydrangea")
    if argv[0] == "demo":
        for option in ("--gateway", "--turns", "--json", "--live"):
            assert option in out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        ([], "choose a command"),
        (["bogus"], "invalid choice"),
        (["demo", "--gateway", "nope"], "--gateway"),
        (["demo", "--turns", "0"], "--turns must be between"),
        (["demo", "--turns", "many"], "--turns must be a whole number"),
        (["demo", "--threshold", "5"], "--threshold must be at least"),
        (["demo", "--model", "gpt-x"], "--model is only used with --live"),
        (["demo", "--surprise"], "unrecognized arguments"),
        (["explore"], "the following arguments are required: file"),
    ],
)
def test_bad_arguments_give_one_line(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert needle in one_error_line(captured.err)
    assert captured.out == ""


def test_unreadable_and_invalid_files_give_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = {
        tmp_path / "missing.json": "cannot read",
        tmp_path: "cannot read",  # a directory
    }
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    cases[tmp_path / "bad.json"] = "not a saved Context or session"
    (tmp_path / "latin1.json").write_bytes(b"\xff\xfe\x00garbage")
    cases[tmp_path / "latin1.json"] = "not UTF-8"
    (tmp_path / "other.json").write_text('{"format": "something else"}', encoding="utf-8")
    cases[tmp_path / "other.json"] = "no 'format' field"
    (tmp_path / "broken.json").write_text(
        '{"format": "hydrangea.context", "version": 1, "gateway": "openai", '
        '"items": [{"role": "wizard"}]}',
        encoding="utf-8",
    )
    cases[tmp_path / "broken.json"] = "error"
    for path, needle in cases.items():
        assert main(["explore", str(path)]) == 2, path
        captured = capsys.readouterr()
        assert needle in one_error_line(captured.err), path


def test_explore_prints_a_saved_context(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    context = Context(GatewayType.anthropic)
    context.emplace_message(Message(role=Role.system, content="Be brief."))
    context.emplace_message(Message(role=Role.user, content="Where is the leak?"))
    path = tmp_path / "saved.json"
    context.save(path)
    assert main(["explore", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Where is the leak?" in out


def test_live_without_a_key_is_one_line_and_non_zero(capsys: pytest.CaptureFixture[str]) -> None:
    saved = {name: os.environ.pop(name) for name in KEY_VARIABLES if name in os.environ}
    try:
        for gateway in GatewayType:
            assert main(["demo", "--live", "--gateway", gateway.value]) != 0
            line = one_error_line(capsys.readouterr().err)
            assert "API key" in line and "_API_KEY" in line
    finally:
        os.environ.update(saved)


def test_as_a_subprocess_a_bad_argument_is_one_line_without_traceback() -> None:
    env = {k: v for k, v in os.environ.items() if k not in KEY_VARIABLES}
    for argv in (["demo", "--turns", "-3"], ["demo", "--live"], ["explore", "/nonexistent/x"]):
        done = subprocess.run(
            [sys.executable, "-m", "hydrangea", *argv],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            check=False,
        )
        assert done.returncode != 0
        one_error_line(done.stderr)
        assert done.stdout == ""


def test_a_saved_demo_session_can_be_explored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "session.json"
    assert main(["demo", "--gateway", "openai", "--turns", "3", "--json", "--save", str(path)]) == 0
    capsys.readouterr()
    assert main(["explore", str(path)]) == 0
    out = capsys.readouterr().out
    assert "current-task" in out  # the sticky reminder, as the explorer describes it
    assert "A customer reports no water" in out  # the first user turn, in the history


def test_without_rich_the_commands_say_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "rich", None)  # makes `import rich` fail
    for argv in (["demo"], ["explore", "anything.json"]):
        assert main(argv) == 2
        assert "hydrangea-context[cli]" in one_error_line(capsys.readouterr().err)
