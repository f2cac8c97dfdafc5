"""The built API reference reads well: one page per public package, typed signatures, links
instead of raw Sphinx roles and never to a private module, code instead of quotes, no noise
from refused list methods, and each module once."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


PAGES = sorted(p.stem for p in (ROOT / "docs" / "en" / "api").glob("*.md") if p.stem != "index")


@pytest.fixture(scope="module")
def api_pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    site = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(site)],
        cwd=ROOT, check=True, timeout=600, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    return {
        page: (site / "api" / page / "index.html").read_text(encoding="utf-8") for page in PAGES
    }


@pytest.fixture(scope="module")
def api_html(api_pages: dict[str, str]) -> str:
    return "\n".join(api_pages.values())


def test_no_raw_sphinx_role_is_left(api_html: str) -> None:
    roles = re.findall(r":(?:class|func|meth|mod|data|attr|exc|obj|const):", api_html)
    assert roles == []
    assert "autorefs-internal" in api_html


def test_doctests_render_as_code_not_quotes(api_html: str) -> None:
    assert "<blockquote>" not in api_html
    assert re.search(r"<code>.*?&gt;&gt;&gt;", api_html, re.DOTALL)


def test_each_module_is_listed_once(api_html: str) -> None:
    headings = re.findall(r'<h2 id="(hydrangea[\w.]*)"', api_html)
    modules = [
        module
        for page in PAGES
        for module in re.findall(
            r"^::: ([\w.]+)$",
            (ROOT / "docs" / "en" / "api" / f"{page}.md").read_text(encoding="utf-8"),
            re.MULTILINE,
        )
    ]
    assert sorted(headings) == sorted(modules)
    assert len(set(headings)) == len(headings)


def test_one_page_per_public_package() -> None:
    import hydrangea

    root = Path(hydrangea.__file__).parent
    packages = {p.name for p in root.iterdir() if (p / "__init__.py").exists()}
    public = {name for name in packages if not name.startswith("_") and name != "demo"}
    assert public - {"integrations"} <= set(PAGES)
    assert "integrations" in PAGES and "hydrangea" in PAGES


def test_signatures_carry_their_types(api_pages: dict[str, str]) -> None:
    def signature(page: str, anchor: str) -> str:
        html = api_pages[page]
        start = html.index(f'id="{anchor}"')
        block = html[start : html.index("doc-contents", start)]
        return re.sub(r"<[^>]+>", "", block).replace("&gt;", ">")

    assert "reply: Message" in signature("areas", "hydrangea.areas.ConversationArea.route")
    assert "-> None" in signature("areas", "hydrangea.areas.ConversationArea.route")
    assert "as_of: datetime" in signature("asof", "hydrangea.asof.ContextBuilder")
    message = signature("hydrangea", "hydrangea.message.Message")
    assert "content: str | Sequence[Part]" in message


def test_no_refused_list_methods_and_no_private_links(api_pages: dict[str, str]) -> None:
    assert len(api_pages) >= 10
    for page, html in api_pages.items():
        assert "Refused:" not in html, page
        private = re.findall(r'href="[^"]*hydrangea(?:\.\w+)*\._\w+[^"]*"', html)
        assert private == [], (page, private[:3])


def test_no_page_is_a_wall(api_pages: dict[str, str]) -> None:
    assert max(len(html) for html in api_pages.values()) < 500_000
