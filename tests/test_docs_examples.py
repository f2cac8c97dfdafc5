"""Every ```python block in docs/ and the README runs and type-checks, so the docs cannot drift.

Blocks in one page run in order in one module (a page may build on its earlier blocks), compiled
as a script would be (no ``__future__`` import of this file leaks in), inside a temporary working
directory. A block right after the line ``<!-- docs-test: new program -->`` starts a fresh
module instead: the cookbook's recipes are complete programs each, and this checks that they
are. A page whose examples need an optional extra that is not installed is not skipped
silently: the test fails, because `make test` installs every extra. The "Deploying" pages talk
to PostgreSQL: they read its URL from HYDRANGEA_POSTGRES_DSN, which is set here to a fresh
schema of the test session's throwaway server.

The same programs are checked by ``mypy --strict`` with the project's own configuration (the
strictness of ``mypy --strict src tests``): each program becomes one module in which every line
outside its blocks is blank, so mypy's line numbers are the page's line numbers. One mypy run
checks every page; its cache is the ``.mypy_cache`` that ``make typecheck`` fills, so only the
pages themselves are analysed again.
"""

from __future__ import annotations

import bisect
import re
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role
from tests.support.unmarked import unmarked

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
_BLOCK = re.compile(r"^```python[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
_NEW_PROGRAM = "<!-- docs-test: new program -->"
# path:line:column: severity: message  [code]   (with --show-column-numbers)
_MYPY_LINE = re.compile(r"^(?P<file>.+?\.py):(?P<line>\d+):(?:\d+:)? (?P<kind>\w+): (?P<text>.*)$")


@dataclass(frozen=True, slots=True)
class _Block:
    number: int  # from 1, in page order
    first_line: int  # the page line (from 1) of its first line of code
    code: str


def _pages() -> list[Path]:
    pages = [*sorted(DOCS.rglob("*.md")), ROOT / "README.md"]
    return [p for p in pages if _BLOCK.search(p.read_text(encoding="utf-8"))]


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def _programs(page: Path | str) -> list[list[_Block]]:
    """The page's blocks (``page``: a file, or its text), split where a new program starts."""
    text = page if isinstance(page, str) else page.read_text(encoding="utf-8")
    programs: list[list[_Block]] = []
    for number, match in enumerate(_BLOCK.finditer(text), start=1):
        block = _Block(number, text.count("\n", 0, match.start(1)) + 1, match.group(1))
        if not programs or text[: match.start()].rstrip().endswith(_NEW_PROGRAM):
            programs.append([])
        programs[-1].append(block)
    return programs


def _module(page: Path, program: int) -> str:
    stem = "docs_" + re.sub(r"\W", "_", page.relative_to(ROOT).with_suffix("").as_posix())
    return stem if program == 0 else f"{stem}__{program + 1}"


def _module_source(page: Path | str, blocks: list[_Block]) -> str:
    """The blocks at their own line numbers, every other line of the page left blank."""
    text = page if isinstance(page, str) else page.read_text(encoding="utf-8")
    lines = [""] * text.count("\n")
    for block in blocks:
        for offset, code in enumerate(block.code.splitlines()):
            lines[block.first_line - 1 + offset] = code
    return "\n".join(lines) + "\n"


def test_docs_have_examples() -> None:
    pages = {_name(p) for p in _pages()}
    assert {"docs/en/index.md", "docs/ja/index.md", "README.md"} <= pages


def test_programs_split_at_the_marker_and_keep_page_lines() -> None:
    page = "\n".join([
        "intro", "```python", "a = 1", "```", "```python", "b = a", "```",  # lines 1-7
        "", _NEW_PROGRAM, "```python", "c = 3", "d = 4", "```", "",  # lines 8-14
    ])
    programs = _programs(page)
    assert [[(b.number, b.first_line) for b in p] for p in programs] == [
        [(1, 3), (2, 6)], [(3, 11)],
    ]
    source = _module_source(page, programs[1]).splitlines()
    assert (source[10], source[11]) == ("c = 3", "d = 4")
    assert [n for n, line in enumerate(source, start=1) if line] == [11, 12]


def test_every_cookbook_recipe_is_its_own_program() -> None:
    """The cookbook says each recipe runs as it stands: each is checked so."""
    for lang in ("en", "ja"):
        programs = _programs(DOCS / lang / "cookbook.md")
        assert len(programs) > 1 and all(len(blocks) == 1 for blocks in programs)


@pytest.mark.parametrize("page", _pages(), ids=_name)
def test_page_examples_run(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    monkeypatch.chdir(tmp_path)
    if page.stem == "deploying":
        monkeypatch.setenv("HYDRANGEA_POSTGRES_DSN", request.getfixturevalue("postgres_dsn"))
    for index, program in enumerate(_programs(page)):
        # A real module, as a script would have: dataclasses and pydantic look themselves up.
        module = types.ModuleType(_module(page, index))
        monkeypatch.setitem(sys.modules, module.__name__, module)
        for block in program:
            name = f"{_name(page)}[block {block.number}]"
            exec(compile(block.code, name, "exec", dont_inherit=True), module.__dict__)


class _SentLog:
    """Every whole-history request a Context builds while a page's examples run: the oracle of
    the prefix-binding invariant (each request begins with the one before it, cache markers
    aside, unless a detach came between them)."""

    def __init__(self) -> None:
        self.requests: dict[int, list[tuple[int, Any]]] = {}
        self.alive: list[Context] = []  # held, so that no other Context takes over an id
        self.pairs = 0

    def note(self, context: Context, stable: int, tail: object, built: dict[str, Any]) -> None:
        if tail or stable != len(context) or context._binding.policy == "drop":
            return  # a caller's own tail, or the drop policy's sanctioned change
        history = unmarked(built.get(context.adapter.history_key) or [])
        if id(context) not in self.requests:
            self.alive.append(context)
        seen = self.requests.setdefault(id(context), [])
        if seen and seen[-1][0] == context.detaches:
            earlier = seen[-1][1]
            assert history[: len(earlier)] == earlier, "a request dropped what was sent"
            self.pairs += 1
        seen.append((context.detaches, history))


def test_page_examples_keep_what_was_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """Every request the pages' examples build begins with what the one before it sent."""
    log = _SentLog()
    build = Context.build_incremental

    def watched(self: Context, stable: int, tail: Any, **kwargs: Any) -> dict[str, Any]:
        built = build(self, stable, tail, **kwargs)
        log.note(self, stable, tail, built)
        return built

    monkeypatch.setattr(Context, "build_incremental", watched)
    # (the deploying pages store sessions in one PostgreSQL database each; they build no
    # model request, and test_page_examples_run runs them on their own)
    for n, page in enumerate(p for p in _pages() if p.stem != "deploying"):
        folder = tmp_path / str(n)
        folder.mkdir()
        test_page_examples_run(page, folder, monkeypatch, request)
    assert log.pairs >= 20, log.pairs  # the examples do build sessions of many requests


def test_the_sent_log_catches_a_dropped_reminder() -> None:
    """The oracle above is not idle: a request that drops what the previous one sent fails it."""
    log = _SentLog()
    context = Context(GatewayType.openai)
    context.emplace_message(Message(role=Role.user, content="hi"))
    context.emplace_message(Message(role=Role.user, content="reminder"))
    log.note(context, len(context), (), context.request())
    shorter = {"messages": [*context.request()["messages"][:1], {"role": "user", "content": "x"}]}
    with pytest.raises(AssertionError, match="dropped what was sent"):
        log.note(context, len(context), (), shorter)


# A page the run checks besides the real ones: it must fail, at these lines, for these reasons
# (the first only under --strict), or the check could be passing because it checks nothing.
_CANARY = """# canary

```python
def untyped(value):
    return value
```

<!-- docs-test: new program -->
```python
count: int = "three"
```
"""
_CANARY_ERRORS = {("docs_canary", 4, "no-untyped-def"), ("docs_canary__2", 10, "assignment")}


@dataclass(frozen=True, slots=True)
class _MypyReport:
    """What one ``mypy --strict`` run over every page said."""

    returncode: int
    output: str
    by_module: dict[str, list[tuple[int, str]]]  # module -> (page line, "kind: message")
    unattributed: list[str]  # output lines that name no docs module


@pytest.fixture(scope="module")
def mypy_report(tmp_path_factory: pytest.TempPathFactory) -> _MypyReport:
    folder = tmp_path_factory.mktemp("docs_blocks")
    modules: set[str] = set()
    for index, blocks in enumerate(_programs(_CANARY)):
        module = "docs_canary" if index == 0 else f"docs_canary__{index + 1}"
        modules.add(module)
        (folder / f"{module}.py").write_text(_module_source(_CANARY, blocks), encoding="utf-8")
    for page in _pages():
        for index, blocks in enumerate(_programs(page)):
            modules.add(_module(page, index))
            source = _module_source(page, blocks)
            (folder / f"{_module(page, index)}.py").write_text(source, encoding="utf-8")
    run = subprocess.run(
        [
            sys.executable, "-m", "mypy",
            "--config-file", str(ROOT / "pyproject.toml"),
            "--strict",  # the config says so too; stated here so it cannot be lost there
            "--cache-dir", str(ROOT / ".mypy_cache"),
            "--show-column-numbers", "--show-error-codes", "--hide-error-context",
            "--no-error-summary", "--no-color-output", "--no-pretty",
            str(folder),
        ],
        cwd=ROOT, capture_output=True, text=True, timeout=900, check=False,
    )
    by_module: dict[str, list[tuple[int, str]]] = {}
    unattributed: list[str] = []
    for line in run.stdout.splitlines():
        found = _MYPY_LINE.match(line)
        module = Path(found["file"]).stem if found else ""
        if found and module in modules:
            entry = (int(found["line"]), f"{found['kind']}: {found['text']}")
            by_module.setdefault(module, []).append(entry)
        else:
            unattributed.append(line)
    return _MypyReport(run.returncode, run.stdout + run.stderr, by_module, unattributed)


# The first of these runs mypy: quick on the cache `make typecheck` leaves, up to about two
# minutes on a cold one (a fresh clone running pytest alone), over pytest's default timeout.
_MYPY_TIMEOUT = pytest.mark.timeout(900)


@_MYPY_TIMEOUT
def test_mypy_ran_cleanly(mypy_report: _MypyReport) -> None:
    """mypy itself worked (exit 0: clean, 1: errors found) and said nothing outside the pages."""
    assert mypy_report.returncode in (0, 1), mypy_report.output
    assert not mypy_report.unattributed, "\n".join(mypy_report.unattributed)
    errors = [
        text for found in mypy_report.by_module.values() for _, text in found
        if text.startswith("error")
    ]
    assert (mypy_report.returncode == 1) == bool(errors), mypy_report.output


@_MYPY_TIMEOUT
def test_mypy_finds_the_canary_errors(mypy_report: _MypyReport) -> None:
    """The run rejects a known-bad page, at its page lines, under --strict."""
    found = {
        (module, line, text.rsplit("[", 1)[-1].rstrip("]"))
        for module, entries in mypy_report.by_module.items()
        if module.startswith("docs_canary")
        for line, text in entries
        if text.startswith("error")
    }
    assert found == _CANARY_ERRORS, mypy_report.output


@_MYPY_TIMEOUT
@pytest.mark.parametrize("page", _pages(), ids=_name)
def test_page_examples_pass_mypy_strict(page: Path, mypy_report: _MypyReport) -> None:
    findings: list[str] = []
    failed = False
    for index, blocks in enumerate(_programs(page)):
        starts = [block.first_line for block in blocks]
        for line, text in mypy_report.by_module.get(_module(page, index), []):
            block = blocks[bisect.bisect_right(starts, line) - 1]
            findings.append(f"{_name(page)}:{line} (block {block.number}): {text}")
            failed = failed or text.startswith("error")
    message = "\n".join(findings)
    assert not failed, f"mypy --strict rejects a code block of {_name(page)}:\n{message}"
