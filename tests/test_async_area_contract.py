"""The async Area contract is checked by mypy --strict the way the sync one is."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hydrangea.context.area import AsyncContextAreaImplementation, ContextAreaImplementation

CHECKED = """\
import asyncio
from collections.abc import Sequence

from hydrangea.context import Context, NativeContent
from hydrangea.context.area import AreaFlowState, AreaLifeState, AsyncContextAreaImplementation
from hydrangea.coop import CoopContext
from hydrangea.gateway import GatewayType
from hydrangea.message import Message


class AsyncArea:
    life_state: AreaLifeState = AreaLifeState.retain
    flow_state: AreaFlowState = AreaFlowState.yielded

    async def observe(self, context: Sequence[NativeContent]) -> None: ...
    async def render(self) -> list[Message]:
        return []

    async def promote(self) -> tuple[Message, ...]:
        return ()

    async def gc_prologue(self) -> None: ...


class AsyncNoPrologue:
    life_state: AreaLifeState = AreaLifeState.retain
    flow_state: AreaFlowState = AreaFlowState.yielded

    async def observe(self, context: Sequence[NativeContent]) -> None: ...
    async def render(self) -> list[Message]:
        return []

    async def promote(self) -> tuple[Message, ...]:
        return ()


class SyncArea:
    life_state: AreaLifeState = AreaLifeState.retain
    flow_state: AreaFlowState = AreaFlowState.yielded

    def observe(self, context: Sequence[NativeContent]) -> None: ...
    def render(self) -> list[Message]:
        return []

    def promote(self) -> tuple[Message, ...]:
        return ()

    def gc_prologue(self) -> None: ...


fine: AsyncContextAreaImplementation = AsyncArea()
broken: AsyncContextAreaImplementation = AsyncNoPrologue()
not_async: AsyncContextAreaImplementation = SyncArea()

coop = CoopContext(Context(GatewayType.openai))
coop.register(AsyncArea())
coop.register(SyncArea())
context: Context = asyncio.run(coop.arender())
"""


def test_protocol_has_exactly_the_contract_members() -> None:
    def members(protocol: type) -> set[str]:
        return {n for n in vars(protocol) if not n.startswith("_") and n != "mro"}

    assert members(AsyncContextAreaImplementation) == members(ContextAreaImplementation)


def test_mypy_strict_flags_an_incomplete_or_sync_async_area(tmp_path: Path) -> None:
    (tmp_path / "async_areas.py").write_text(CHECKED)
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "async_areas.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    errors = [line for line in run.stdout.splitlines() if ": error:" in line]
    lines = CHECKED.splitlines()
    broken = lines.index("broken: AsyncContextAreaImplementation = AsyncNoPrologue()") + 1
    not_async = lines.index("not_async: AsyncContextAreaImplementation = SyncArea()") + 1
    assert [e.split(":")[1] for e in errors] == [str(broken), str(not_async)], run.stdout
    assert "gc_prologue" in run.stdout
