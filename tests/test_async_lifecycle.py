"""Lifecycle.arender(): the same episode as render(), over the CoopContext's arender()."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import Context, NativeContent
from hydrangea.context.area import AreaFlowState, AreaLifeState
from hydrangea.coop import CoopContext
from hydrangea.errors import ContextStateError
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle
from hydrangea.message import Message, Role


class Echo:
    """An async area rendering one line per render; ``hook`` runs inside render if set."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.life_state = AreaLifeState.retain
        self.flow_state = AreaFlowState.yielded
        self.count = 0
        self.fail_at = fail_at
        self.hook: Any = None

    async def observe(self, context: Sequence[NativeContent]) -> None:
        await asyncio.sleep(0)

    async def render(self) -> list[Message]:
        await asyncio.sleep(0)
        if self.hook is not None:
            await self.hook()
        self.count += 1
        if self.count == self.fail_at:
            raise RuntimeError("render failed")
        return [Message(role=Role.user, content=f"line {self.count}")]

    async def promote(self) -> tuple[Message, ...]:
        return ()

    async def gc_prologue(self) -> None:
        return None


def _session(fail_at: int | None = None) -> tuple[Lifecycle, Echo]:
    coop = CoopContext(Context(GatewayType.openai))
    echo = Echo(fail_at)
    coop.register(echo)
    lifecycle = Lifecycle(coop)
    lifecycle.add(Component("always here", ttl=1, cadence=1))
    lifecycle.add(Component("two episodes", ttl=2))
    lifecycle.add(Component("every third", ttl=1, cadence=3))
    return lifecycle, echo


@given(st.integers(1, 6), st.integers(1, 6) | st.none())
def test_arender_gives_the_same_requests_as_render(episodes: int, fail_at: int | None) -> None:
    """A twin session rendered with render() (sync twin of the same area) is the oracle."""

    class SyncEcho:
        def __init__(self) -> None:
            self.life_state = AreaLifeState.retain
            self.flow_state = AreaFlowState.yielded
            self.count = 0

        def observe(self, context: Sequence[NativeContent]) -> None:
            _ = context

        def render(self) -> list[Message]:
            self.count += 1
            if self.count == fail_at:
                raise RuntimeError("render failed")
            return [Message(role=Role.user, content=f"line {self.count}")]

        def promote(self) -> tuple[Message, ...]:
            return ()

        def gc_prologue(self) -> None:
            pass

    coop = CoopContext(Context(GatewayType.openai))
    coop.register(SyncEcho())
    twin = Lifecycle(coop)
    for component in _session()[0].states():
        twin.add(
            Component(
                component.component.content,
                ttl=component.component.ttl,
                cadence=component.component.cadence,
            )
        )
    lifecycle, _ = _session(fail_at)

    async def run() -> list[Any]:
        out: list[Any] = []
        for _ in range(episodes):
            try:
                out.append((await lifecycle.arender()).kwargs)
            except RuntimeError as exc:
                out.append(str(exc))
        return out

    expected: list[Any] = []
    for _ in range(episodes):
        try:
            expected.append(twin.render().kwargs)
        except RuntimeError as exc:
            expected.append(str(exc))
    assert asyncio.run(run()) == expected
    assert lifecycle.episode == twin.episode


def test_a_failed_arender_does_not_advance_the_episode() -> None:
    lifecycle, _ = _session(fail_at=2)

    async def run() -> None:
        await lifecycle.arender()
        with pytest.raises(RuntimeError):
            await lifecycle.arender()
        assert lifecycle.episode == 0
        await lifecycle.arender()

    asyncio.run(run())
    assert lifecycle.episode == 1


def test_arender_from_inside_an_area_raises() -> None:
    lifecycle, echo = _session()
    seen: list[Exception] = []

    async def reenter() -> None:
        try:
            await lifecycle.arender()
        except ContextStateError as exc:
            seen.append(exc)

    echo.hook = reenter
    asyncio.run(lifecycle.arender())
    assert len(seen) == 1 and "already rendering" in str(seen[0])


def test_arender_on_a_bare_context_uses_its_render() -> None:
    context = Context(GatewayType.anthropic)
    context.emplace_message(Message(role=Role.user, content="hi"))
    lifecycle = Lifecycle(context)
    lifecycle.add(Component("note", ttl=1))
    request = asyncio.run(lifecycle.arender())
    assert "note" in str(request.kwargs["messages"]) and lifecycle.episode == 0
