"""The package's layers, read from the source: no import circle, and who may import whom.

Every import statement counts, wherever it stands: at the top, under ``if TYPE_CHECKING:`` or
inside a function. A circle held together by a deferred import is still a circle for a reader.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT = SRC / "hydrangea"
VENDORS = ("anthropic", "openai", "gemini")
NEUTRAL = ("context", "coop", "lifecycle")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES: dict[str, Path] = {_module_name(p): p for p in ROOT.rglob("*.py")}


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _resolve(importer: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = importer.split(".")
    if not _is_package(importer):
        base.pop()
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports_of(name: str) -> Iterator[tuple[str, int]]:
    """The hydrangea modules ``name`` imports, with the line of each import."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES:
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(name, node)
            if target not in MODULES:
                continue
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                yield (submodule if submodule in MODULES else target), node.lineno


GRAPH: dict[str, set[str]] = {
    name: {target for target, _ in imports_of(name) if target != name} for name in MODULES
}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of ``graph`` (iterative, so deep graphs do not recurse)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                found.append(sorted(component))
    return found


def test_the_component_finder_finds_a_circle_and_only_circles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    circles = [c for c in strongly_connected(graph) if len(c) > 1]
    assert circles == [["a", "b", "c"]]
    chain = {str(i): {str(i + 1)} for i in range(3000)} | {"3000": set()}
    assert all(len(c) == 1 for c in strongly_connected(chain))


def test_no_import_circle_anywhere_under_src() -> None:
    circles = [c for c in strongly_connected(GRAPH) if len(c) > 1]
    assert circles == [], "\n".join(" <-> ".join(c) for c in circles)


def _layer(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


@pytest.mark.parametrize("layer", NEUTRAL)
def test_neutral_layers_import_no_provider_folder(layer: str) -> None:
    vendors = tuple(f"hydrangea.providers.{v}" for v in VENDORS)
    bad = [
        (name, target, line)
        for name in MODULES
        if _layer(name) == layer
        for target, line in imports_of(name)
        if target.startswith(vendors)
    ]
    assert bad == []


@pytest.mark.parametrize("layer", NEUTRAL)
def test_neutral_layers_name_no_gateway_member(layer: str) -> None:
    bad = []
    for name, path in MODULES.items():
        if _layer(name) != layer:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "GatewayType"
            ):
                bad.append((name, node.attr, node.lineno))
    assert bad == []


def test_providers_never_import_what_stands_on_them() -> None:
    above = ("context", "coop", "lifecycle", "areas", "asof", "stores", "integrations", "demo")
    bad = [
        (name, target, line)
        for name in MODULES
        if _layer(name) == "providers"
        for target, line in imports_of(name)
        if _layer(target) in above
    ]
    assert bad == []


def test_the_rules_see_deferred_imports() -> None:
    source = "def f():\n    from hydrangea.context import Context\n"
    tree = ast.parse(source)
    found = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert [n.module for n in found] == ["hydrangea.context"]
    assert "hydrangea.providers.anthropic.adapter" in MODULES
    assert "hydrangea.context.context" in GRAPH["hydrangea.context"]
