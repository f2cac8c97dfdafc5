"""The Area contract types, and the spec page's minimal example run exactly as written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from hydrangea.context import Context
from hydrangea.context.area import AreaFlowState, AreaLifeState, ContextAreaImplementation
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role

# The two code blocks of spec/context-areas.en.md, "Minimal implementation", verbatim.
SPEC_AREA = """\
from collections.abc import Sequence

from hydrangea.context import NativeContent
from hydrangea.context.area import (
    AreaFlowState,
    AreaLifeState,
    ContextAreaImplementation,
)
from hydrangea.message import Message, Role


class OneShotNoticeArea:
    _life_state: AreaLifeState
    _flow_state: AreaFlowState

    _content: str
    _rendered: bool

    def __init__(self, content: str) -> None:
        self._life_state = AreaLifeState.retain
        self._flow_state = AreaFlowState.yielded
        self._content = content
        self._rendered = False

    @property
    def life_state(self) -> AreaLifeState:
        return self._life_state

    @property
    def flow_state(self) -> AreaFlowState:
        return self._flow_state

    def observe(
        self,
        context: Sequence[NativeContent],
    ) -> None:
        _ = context

    def render(self) -> list[Message]:
        if self._rendered:
            raise RuntimeError(
                "OneShotNoticeArea rendered more than once."
            )

        self._rendered = True
        self._life_state = AreaLifeState.retired
        return [
            Message(
                role=Role.user,
                content=self._content,
            )
        ]

    def promote(self) -> tuple[Message, ...]:
        return ()

    def gc_prologue(self) -> None:
        pass


area: ContextAreaImplementation = OneShotNoticeArea(
    "Use the repository state as the authoritative source."
)
"""

SPEC_REGISTER = """\
from hydrangea.context import Context
from hydrangea.context.coop_context import CoopContext
from hydrangea.gateway import GatewayType


context = Context(GatewayType.gemini)
coop_context = CoopContext(context)
coop_context.register(area)

model_context = coop_context.render()
"""

NOTICE = "Use the repository state as the authoritative source."


def test_spec_minimal_example_runs_verbatim_and_behaves_as_described() -> None:
    namespace: dict[str, Any] = {}
    exec(compile(SPEC_AREA + "\n" + SPEC_REGISTER, "<spec example>", "exec"), namespace)
    coop = namespace["coop_context"]
    model_context = namespace["model_context"]
    assert model_context is namespace["context"]
    expected = Context(GatewayType.gemini)
    expected.emplace_message(Message(role=Role.user, content=NOTICE))
    assert model_context[:] == expected[:]  # the notice is in the first rendered context
    assert coop.render()[:] == ()  # the next render reclaims it
    assert coop.areas() == ()
    assert coop.render()[:] == ()  # and the one-shot area is never rendered again


def test_enums_have_the_spec_members() -> None:
    assert [m.value for m in AreaLifeState] == ["retain", "retired"]
    assert [m.value for m in AreaFlowState] == ["exclusive", "yielded"]


def test_protocol_has_exactly_the_contract_members() -> None:
    members = {
        name
        for name in vars(ContextAreaImplementation)
        if not name.startswith("_") and name not in {"mro"}
    }
    assert members == {
        "life_state",
        "flow_state",
        "observe",
        "render",
        "promote",
        "gc_prologue",
    }


NEGATIVE = """\
from collections.abc import Sequence

from hydrangea.context import NativeContent
from hydrangea.context.area import AreaFlowState, AreaLifeState, ContextAreaImplementation
from hydrangea.message import Message


class PlainAttributes:
    life_state: AreaLifeState = AreaLifeState.retain
    flow_state: AreaFlowState = AreaFlowState.yielded

    def observe(self, context: Sequence[NativeContent]) -> None: ...
    def render(self) -> list[Message]:
        return []

    def promote(self) -> tuple[Message, ...]:
        return ()

    def gc_prologue(self) -> None: ...


class NoPrologue:
    life_state: AreaLifeState = AreaLifeState.retain
    flow_state: AreaFlowState = AreaFlowState.yielded

    def observe(self, context: Sequence[NativeContent]) -> None: ...
    def render(self) -> list[Message]:
        return []

    def promote(self) -> tuple[Message, ...]:
        return ()


fine: ContextAreaImplementation = PlainAttributes()
broken: ContextAreaImplementation = NoPrologue()
"""


def test_mypy_strict_checks_the_contract_at_the_annotated_boundary(tmp_path: Path) -> None:
    (tmp_path / "spec_example.py").write_text(SPEC_AREA + "\n" + SPEC_REGISTER)
    (tmp_path / "areas_check.py").write_text(NEGATIVE)
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental",
         "spec_example.py", "areas_check.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=240, check=False,
    )
    errors = [line for line in run.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1, run.stdout
    line = NEGATIVE.splitlines().index("broken: ContextAreaImplementation = NoPrologue()") + 1
    assert errors[0].startswith(f"areas_check.py:{line}:"), run.stdout
    assert "gc_prologue" in run.stdout
