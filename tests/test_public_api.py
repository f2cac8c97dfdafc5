"""The public surface: every exported name is documented and listed in the API reference."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import hydrangea

API_PAGES = Path(__file__).resolve().parent.parent / "docs" / "en" / "api"


def _public_modules() -> list[str]:
    names = ["hydrangea"]
    for info in pkgutil.walk_packages(hydrangea.__path__, "hydrangea."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        names.append(info.name)
    return sorted(names)


def _exported(module_name: str) -> list[tuple[str, object]]:
    module = importlib.import_module(module_name)
    return [(name, getattr(module, name)) for name in getattr(module, "__all__", ())]


def test_spec_import_paths_resolve() -> None:
    from hydrangea.context import Context, NativeContent
    from hydrangea.gateway import GatewayType
    from hydrangea.message import Message, Role

    assert Context.__module__.startswith("hydrangea.context")
    assert {GatewayType.openai, GatewayType.anthropic} <= set(GatewayType)
    assert Message(role=Role.user, content="x").text == "x"
    assert NativeContent is not None


@pytest.mark.parametrize("module_name", _public_modules())
def test_exports_have_docstrings(module_name: str) -> None:
    missing = [
        name
        for name, obj in _exported(module_name)
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and not inspect.getdoc(obj)
    ]
    assert not missing, f"{module_name}: no docstring on {missing}"


def test_every_exporting_package_is_in_the_api_reference() -> None:
    page = "\n".join(p.read_text(encoding="utf-8") for p in sorted(API_PAGES.glob("*.md")))
    documented = set(re.findall(r"^::: ([\w.]+)$", page, re.MULTILINE))
    exporting = {name for name in _public_modules() if _exported(name)}
    packages = {
        name for name in exporting if hasattr(importlib.import_module(name), "__path__")
    }
    names_reached: set[str] = set()
    for module_name in documented:
        names_reached |= {n for n, _ in _exported(module_name)}
    for name, _ in _exported("hydrangea"):
        if name != "__version__":
            assert name in names_reached, f"hydrangea.{name} is not in the API reference"
    assert packages - {"hydrangea"} <= documented, packages - documented
