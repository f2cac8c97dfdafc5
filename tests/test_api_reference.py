"""The built API reference reads well: links instead of raw Sphinx roles, code instead of quotes,
and each module once."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def api_html(tmp_path_factory: pytest.TempPathFactory) -> str:
    site = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(site)],
        cwd=ROOT, check=True, timeout=600, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    return (site / "api" / "index.html").read_text(encoding="utf-8")


def test_no_raw_sphinx_role_is_left(api_html: str) -> None:
    roles = re.findall(r":(?:class|func|meth|mod|data|attr|exc|obj|const):", api_html)
    assert roles == []
    assert "autorefs-internal" in api_html


def test_doctests_render_as_code_not_quotes(api_html: str) -> None:
    assert "<blockquote>" not in api_html
    assert re.search(r"<code>.*?&gt;&gt;&gt;", api_html, re.DOTALL)


def test_each_module_is_listed_once(api_html: str) -> None:
    headings = re.findall(r'<h2 id="(hydrangea[\w.]*)"', api_html)
    page = (ROOT / "docs" / "en" / "api.md").read_text(encoding="utf-8")
    modules = re.findall(r"^::: ([\w.]+)$", page, re.MULTILINE)
    assert sorted(headings) == sorted(modules)
    assert len(set(headings)) == len(headings)
