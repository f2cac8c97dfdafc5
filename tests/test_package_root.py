"""The package root is lazy, and the command line reports its version."""

from __future__ import annotations

import subprocess
import sys

import pytest

import hydrangea


def _loaded_after(statement: str) -> set[str]:
    code = (
        f"{statement}\nimport sys\n"
        "print('\\n'.join(m for m in sys.modules if m.split('.')[0] == 'hydrangea'))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    return set(run.stdout.split())


def test_importing_the_message_module_does_not_load_the_library() -> None:
    loaded = _loaded_after("import hydrangea.message")
    assert "hydrangea.message" in loaded
    assert not any(m.startswith(("hydrangea.context", "hydrangea.coop", "hydrangea.asof",
                                 "hydrangea.lifecycle", "hydrangea.areas")) for m in loaded)


def test_a_root_name_loads_its_module_on_first_use() -> None:
    loaded = _loaded_after("import hydrangea\nhydrangea.CoopContext")
    assert "hydrangea.coop.coop_context" in loaded
    assert "hydrangea.asof.builder" not in loaded


def test_every_root_name_resolves_to_the_object_of_its_module() -> None:
    import importlib

    for name in hydrangea.__all__:
        if name == "__version__":
            continue
        value = getattr(hydrangea, name)
        home = importlib.import_module(hydrangea._EXPORTS[name])
        assert getattr(home, name) is value, name


def test_an_unknown_root_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchThing"):
        getattr(hydrangea, "NoSuchThing")  # noqa: B009


def test_the_command_line_reports_its_version() -> None:
    run = subprocess.run([sys.executable, "-m", "hydrangea", "--version"], capture_output=True,
                         text=True, check=True, timeout=60)
    assert run.stdout.strip() == f"hydrangea-context {hydrangea.__version__}"
