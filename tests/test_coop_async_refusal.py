"""A sync render refuses exactly while an area with async callbacks is registered.

CoopContext keeps a flag instead of looking at every area on each render; random registrations
and collections check it against the plain record of which areas are still registered.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import Context, NativeContent
from hydrangea.context.area import AreaFlowState, AreaLifeState
from hydrangea.coop import AreaContractError, CoopContext
from hydrangea.gateway import GatewayType
from hydrangea.message import Message


class _Sync:
    def __init__(self) -> None:
        self.life_state = AreaLifeState.retain
        self.flow_state = AreaFlowState.yielded

    def observe(self, context: Sequence[NativeContent]) -> None:
        return None

    def render(self) -> list[Message]:
        return []

    def promote(self) -> tuple[Message, ...]:
        return ()

    def gc_prologue(self) -> None:
        return None


class _Async:
    def __init__(self) -> None:
        self.life_state = AreaLifeState.retain
        self.flow_state = AreaFlowState.yielded

    async def observe(self, context: Sequence[NativeContent]) -> None:
        return None

    async def render(self) -> list[Message]:
        return []

    async def promote(self) -> tuple[Message, ...]:
        return ()

    async def gc_prologue(self) -> None:
        return None


_STEPS = st.lists(
    st.sampled_from(["register sync", "register async", "retire", "arender", "render"]),
    max_size=14,
)


@given(_STEPS)
def test_a_sync_render_refuses_while_an_async_area_is_registered(steps: list[str]) -> None:
    coop = CoopContext(Context(GatewayType.openai))
    registered: list[_Sync | _Async] = []  # the oracle: registered and not yet collected
    for step in steps:
        match step:
            case "register sync" | "register async":
                area = _Sync() if step == "register sync" else _Async()
                coop.register(area)
                registered.append(area)
            case "retire":
                if registered:
                    registered[0].life_state = AreaLifeState.retired
            case "arender":
                asyncio.run(coop.arender())
                registered = [a for a in registered if a.life_state is AreaLifeState.retain]
            case _:
                if any(isinstance(a, _Async) for a in registered):
                    with pytest.raises(AreaContractError, match="async callbacks"):
                        coop.render()
                else:
                    coop.render()
                    registered = [a for a in registered if a.life_state is AreaLifeState.retain]
