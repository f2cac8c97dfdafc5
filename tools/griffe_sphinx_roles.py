"""A griffe extension for the API reference: Sphinx roles become links, doctests become code.

The docstrings of the library use Sphinx-style roles (``:class:`~hydrangea.message.Message```),
which mkdocstrings' Google-style parser leaves as raw text. Once the whole package is loaded,
this extension rewrites every docstring:

* a role becomes an optional mkdocs-autorefs cross-reference, its target resolved in the scope
  of the object that holds the docstring (an unresolvable target, or one inside a private
  module or class, whose name starts with ``_``, becomes a plain code span);
* a run of ``>>>`` lines and their output becomes a fenced ``pycon`` block instead of a quote.

It only changes what the documentation site renders; the source keeps its docstrings.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(class|func|meth|mod|data|attr|exc|obj|const):`(~?)([^`]+)`")


def _resolve(obj: griffe.Object, target: str) -> str | None:
    target = target.lstrip(".")
    if target.startswith("hydrangea"):
        return target
    head, _, rest = target.partition(".")
    scope: griffe.Object | None = obj
    while scope is not None:
        try:
            found = scope.resolve(head)
        except (griffe.NameResolutionError, AttributeError, KeyError):
            scope = scope.parent
            continue
        return f"{found}.{rest}" if rest else found
    return None


def _link(obj: griffe.Object, match: re.Match[str]) -> str:
    short, target = match.group(2) == "~", match.group(3).strip()
    title = target.rsplit(".", 1)[-1] if short else target.lstrip(".")
    if match.group(1) in {"meth", "func"}:
        title += "()"
    identifier = _resolve(obj, target)
    if identifier is None or any(part.startswith("_") for part in identifier.split(".")):
        return f"`{title}`"
    return f'<autoref identifier="{identifier}" optional><code>{title}</code></autoref>'


def _fence_doctests(text: str) -> str:
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith(">>>"):
            indent = line[: len(line) - len(line.lstrip())]
            block: list[str] = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
                i += 1
            out.extend([f"{indent}```pycon", *(indent + b for b in block), f"{indent}```"])
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


class SphinxRoles(griffe.Extension):
    """Rewrite Sphinx roles and doctests in every docstring of the loaded package."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        seen: set[str] = set()
        self._walk(pkg, seen)

    def _walk(self, obj: griffe.Object, seen: set[str]) -> None:
        if obj.path in seen:
            return
        seen.add(obj.path)
        if obj.docstring is not None:
            value = _ROLE.sub(lambda m: _link(obj, m), obj.docstring.value)
            obj.docstring.value = _fence_doctests(value)
        for member in obj.members.values():
            if not member.is_alias and isinstance(member, griffe.Object):
                self._walk(member, seen)
