"""The error tree: one drawing (the docstring of ``hydrangea.errors``) that matches the classes
(each under its real parent, each also the builtin it names), and the docs pages restating it."""

from __future__ import annotations

import builtins
import re
from pathlib import Path

import pytest

import hydrangea.errors as errors

ROOT = Path(__file__).resolve().parent.parent
_NODE = re.compile(
    r"^(?P<indent>[│ ├└─]*)(?P<names>[A-Z]\w+(?:, [A-Z]\w+)*)(?:\s+\((?P<base>[^)]*)\))?"
)


def _tree() -> list[str]:
    doc = errors.__doc__ or ""
    block = doc.split("The tree::", 1)[1].split('"""', 1)[0]
    return [line[4:] for line in block.splitlines() if line.strip()]


def _nodes() -> list[tuple[int, list[str], str | None]]:
    nodes = []
    for line in _tree():
        match = _NODE.match(line)
        assert match, line
        depth = len(match["indent"]) // 4
        nodes.append((depth, match["names"].split(", "), match["base"]))
    return nodes


def test_the_drawing_lists_every_class_once_under_its_real_parent() -> None:
    seen: list[str] = []
    parents: list[str] = []
    for depth, names, base in _nodes():
        del parents[depth:]
        for name in names:
            cls = getattr(errors, name)
            assert issubclass(cls, errors.HydrangeaError), name
            if parents:
                assert issubclass(cls, getattr(errors, parents[-1])), (name, parents[-1])
            if base is not None:
                other = base.removeprefix("also ")
                expected = getattr(builtins, other, None) or getattr(errors, other)
                assert issubclass(cls, expected), (name, other)
            seen.append(name)
        parents.append(names[0])
    assert sorted(set(seen)) == sorted(errors.__all__)


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_errors_page_shows_the_same_tree(language: str) -> None:
    page = (ROOT / "docs" / language / "errors.md").read_text(encoding="utf-8")
    drawn = page.split("```text\n", 1)[1].split("```", 1)[0].splitlines()
    assert drawn == _tree(), (
        f"copy the tree from the docstring of hydrangea/errors.py into docs/{language}/errors.md"
    )
