"""Every ```python block in docs/ and the README runs, so the docs cannot drift from the code.

Blocks in one page run in order in one namespace (a page may build on its earlier blocks),
inside a temporary working directory. A page whose examples need an optional extra that is not
installed is not skipped silently: the test fails, because `make test` installs every extra.
The "Deploying" pages talk to PostgreSQL: they read its URL from HYDRANGEA_POSTGRES_DSN, which
is set here to a fresh schema of the test session's throwaway server.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
_BLOCK = re.compile(r"^```python[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)


def _pages() -> list[Path]:
    pages = [*sorted(DOCS.rglob("*.md")), ROOT / "README.md"]
    return [p for p in pages if _BLOCK.search(p.read_text(encoding="utf-8"))]


def test_docs_have_examples() -> None:
    pages = {p.relative_to(ROOT).as_posix() for p in _pages()}
    assert {"docs/en/index.md", "docs/ja/index.md", "README.md"} <= pages


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_page_examples_run(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    monkeypatch.chdir(tmp_path)
    if page.stem == "deploying":
        monkeypatch.setenv("HYDRANGEA_POSTGRES_DSN", request.getfixturevalue("postgres_dsn"))
    namespace: dict[str, object] = {"__name__": f"docs_{page.stem}"}
    for number, block in enumerate(_BLOCK.findall(page.read_text(encoding="utf-8")), start=1):
        code = compile(block, f"{page.relative_to(ROOT)}[block {number}]", "exec")
        exec(code, namespace)
