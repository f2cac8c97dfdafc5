"""Import paths of 0.1 that moved in 0.2, kept working for one release.

0.2 moved every provider file from ``hydrangea.context`` into ``hydrangea.providers.<vendor>``
(see the contributing page). A program that still imports an old path gets the new module itself
(the same object, so ``isinstance`` checks and module state agree) and a :class:`DeprecationWarning`
naming the path to write instead. The table below is the whole list; it goes in 0.3.

The aliases are served by one import finder rather than by stub modules left in
``hydrangea/context/``: the Context package then imports no provider folder, which the layer test
(``tests/test_layers.py``) holds it to.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType

__all__ = ["MOVED", "install"]

MOVED: dict[str, str] = {
    "hydrangea.context.adapter": "hydrangea.providers.adapter",
    "hydrangea.context.registry": "hydrangea.providers.registry",
    "hydrangea.context.native": "hydrangea.providers.native",
    "hydrangea.context.pairing": "hydrangea.providers.pairing",
    "hydrangea.context.sdk": "hydrangea.providers.sdk",
    "hydrangea.context.usage": "hydrangea.providers.usage",
    "hydrangea.context.streams": "hydrangea.providers.streams",
    "hydrangea.context.anthropic_messages": "hydrangea.providers.anthropic.adapter",
    "hydrangea.context.caching": "hydrangea.providers.anthropic.caching",
    "hydrangea.context.openai_chat": "hydrangea.providers.openai.chat",
    "hydrangea.context.openai_responses": "hydrangea.providers.openai.responses",
    "hydrangea.context.openai_caching": "hydrangea.providers.openai.caching",
    "hydrangea.context.gemini": "hydrangea.providers.gemini.adapter",
    "hydrangea.context.gemini_caching": "hydrangea.providers.gemini.caching",
}
"""Old module path -> the module that now holds it."""


class _Alias(importlib.abc.Loader):
    """Loads an old path as the module it moved to."""

    __slots__ = ("_own_spec", "_target")

    def __init__(self, target: str) -> None:
        self._target = target
        self._own_spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(
            f"{spec.name} moved to {self._target} in hydrangea 0.2; import it from there "
            "(the old path goes in 0.3)",
            DeprecationWarning,
            stacklevel=2,
        )
        module = importlib.import_module(self._target)
        self._own_spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run; the import system gave the module the alias's spec: give its own back."""
        module.__spec__ = self._own_spec


class _MovedFinder(importlib.abc.MetaPathFinder):
    """Finds the old paths of :data:`MOVED` (and nothing else)."""

    __slots__ = ()

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        moved_to = MOVED.get(fullname)
        if moved_to is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(moved_to))


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())
