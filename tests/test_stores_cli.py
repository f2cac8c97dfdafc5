"""``hydrangea demo --store`` saves the demo session after every turn; ``hydrangea explore
--store`` opens it again. Errors are one line, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from hydrangea.__main__ import main
from hydrangea.lifecycle import Lifecycle
from hydrangea.stores import PostgresSessionStore, SqliteSessionStore
from tests.test_cli import one_error_line


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_demo_on_sqlite_then_explore(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:{tmp_path / 'demo.db'}"
    code, _, err = _run(["demo", "--turns", "4", "--store", url, "--session", "d1"], capsys)
    assert code == 0, err
    with SqliteSessionStore(tmp_path / "demo.db") as store:
        [info] = store.list_sessions()
        assert (info.session_id, info.kind) == ("d1", "lifecycle")
        assert info.version == 4  # created after turn 1, saved after each later turn
        lc = store.load("d1", Lifecycle).value
        assert lc.episode >= 3
    code, out, err = _run(["explore", "--store", url, "--session", "d1"], capsys)
    assert code == 0, err
    assert out.startswith(f"Context anthropic: {len(lc.context)} items, episode {lc.episode}")
    code, _, err = _run(["demo", "--turns", "1", "--store", url, "--session", "d1"], capsys)
    assert code == 1
    assert "already stored under 'd1'" in one_error_line(err)


def test_demo_on_postgres_then_explore(
    postgres_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(["demo", "--turns", "3", "--store", postgres_dsn], capsys)
    assert code == 0, err
    with PostgresSessionStore(postgres_dsn) as store:
        assert [i.session_id for i in store.list_sessions()] == ["demo"]
        items = len(store.load("demo", Lifecycle).value.context)
    code, out, err = _run(["explore", "--store", postgres_dsn], capsys)
    assert code == 0, err
    assert f"{items} items" in out.splitlines()[0]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["demo", "--store", "mysql://x"], "--store must be sqlite:PATH or postgresql://"),
        (["explore", "--store", "redis://x"], "--store must be"),
        (["explore", "x.json", "--store", "sqlite:x.db"], "not both"),
    ],
)
def test_bad_store_arguments(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(argv, capsys)
    assert code == 2
    assert needle in one_error_line(err)


def test_explore_a_missing_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    SqliteSessionStore(tmp_path / "e.db").close()
    code, _, err = _run(["explore", "--store", f"sqlite:{tmp_path / 'e.db'}",
                         "--session", "nope"], capsys)
    assert code == 1
    assert "no session is stored under 'nope'" in one_error_line(err)


def test_unreachable_postgres_is_one_line(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["demo", "--turns", "1", "--store",
                         f"postgresql://postgres@/x?host={tmp_path}&connect_timeout=2"], capsys)
    assert code == 1
    assert "unreachable" in one_error_line(err)
