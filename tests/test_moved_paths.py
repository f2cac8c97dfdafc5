"""The 0.1 import paths keep working for one release, as the very modules they moved to."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from hydrangea._moved import MOVED

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_an_old_path_is_the_new_module_and_warns(old: str, new: str) -> None:
    # a fresh interpreter: in this one the alias may be imported already (warned once)
    code = (
        "import warnings, importlib, sys\n"
        "warnings.simplefilter('error')\n"
        f"new = importlib.import_module({new!r})\n"
        "try:\n"
        f"    importlib.import_module({old!r})\n"
        "except DeprecationWarning as w:\n"
        "    print('warned', w)\n"
        "warnings.simplefilter('ignore')\n"
        f"old = importlib.import_module({old!r})\n"
        "print(old is new, new.__spec__.name, new.__name__)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    lines = run.stdout.splitlines()
    assert lines[0].startswith("warned ") and new in lines[0] and "0.3" in lines[0]
    assert lines[1] == f"True {new} {new}"


def test_names_imported_from_an_old_path_are_the_new_ones() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        old = importlib.import_module("hydrangea.context.caching")
    from hydrangea.providers.anthropic import AnthropicCaching

    assert old.AnthropicCaching is AnthropicCaching


def test_the_finder_serves_only_the_table() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("hydrangea.context.no_such_module")


def test_the_docs_and_the_sources_teach_only_the_new_paths() -> None:
    taught = []
    for folder in ("docs", "src", "README.md"):
        base = ROOT / folder
        paths = [base] if base.is_file() else [*base.rglob("*.md"), *base.rglob("*.py")]
        for path in paths:
            if path.name == "_moved.py":
                continue
            text = path.read_text(encoding="utf-8")
            taught += [(str(path), old) for old in MOVED if f"{old} " in text or f"{old}\n" in text]
    assert taught == []
