"""CoopContext.arender(): the same collection and pass as render(), for async areas.

The stateful test drives random scripted areas, each sync or async at random, through
``arender()`` (a fresh event loop per render) and compares every step with the same independent
oracle the sync stateful test uses (tests/support/coop_oracle.py): Context items, callback
order, ring, ranges, cursor and fault outcomes.
"""

from __future__ import annotations

import asyncio
import gc
import warnings
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import rule

from hydrangea.context import Context, NativeContent
from hydrangea.context.area import AreaFlowState, AreaLifeState
from hydrangea.coop import AreaContractError, CoopContext, GcPrologueError
from hydrangea.errors import ContextStateError
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role
from tests.support.coop_script import Boom, Script, ScriptedArea
from tests.test_coop_stateful import CoopMachine, scripts


class AsyncScriptedArea:
    """A ScriptedArea behind coroutine methods that really suspend before each callback."""

    def __init__(self, script: Script, log: list[tuple[Any, ...]]) -> None:
        self.inner = ScriptedArea(script, log)
        self.script = script

    def __repr__(self) -> str:
        return f"AsyncScriptedArea({self.script.name!r})"

    @property
    def life_state(self) -> AreaLifeState:
        return self.inner.life_state

    @property
    def flow_state(self) -> AreaFlowState:
        return self.inner.flow_state

    async def observe(self, context: Sequence[NativeContent]) -> None:
        await asyncio.sleep(0)
        self.inner.observe(context)

    async def render(self) -> list[Message]:
        await asyncio.sleep(0)
        return self.inner.render()

    async def promote(self) -> tuple[Message, ...]:
        await asyncio.sleep(0)
        return self.inner.promote()

    async def gc_prologue(self) -> None:
        await asyncio.sleep(0)
        self.inner.gc_prologue()


class AsyncCoopMachine(CoopMachine):
    """The sync machine's rules and invariant, with mixed areas and ``arender()``."""

    @rule(script=scripts, is_async=st.booleans())
    def register(self, script: tuple[Any, ...], is_async: bool = False) -> None:
        steps_, start_retired, promoted, promote_fails, gc_fails = script
        self.names += 1
        spec = Script(f"a{self.names}", steps_, start_retired, promoted, promote_fails, gc_fails)
        area = AsyncScriptedArea(spec, self.log) if is_async else ScriptedArea(spec, self.log)
        self.coop.register(area)
        self.oracle.register(spec)

    @rule()
    def render(self) -> None:
        expected = self.oracle.render()
        try:
            asyncio.run(self.coop.arender())
            actual = "ok"
        except Boom:
            actual = "boom"
        except GcPrologueError as group:
            assert all(isinstance(e, Boom) for e in group.exceptions)
            actual = "gc-error"
        assert actual == expected
        event(f"arender outcome: {actual}")


AsyncCoopMachine.TestCase.settings = settings(AsyncCoopMachine.TestCase.settings)
TestAsyncCoopAgainstOracle = AsyncCoopMachine.TestCase


# -- scenarios ---------------------------------------------------------------------------------


class Talker:
    """An async area: says each queued line once, calling ``hook`` inside render if set."""

    def __init__(self, *lines: str) -> None:
        self.lines = list(lines)
        self.life_state = AreaLifeState.retain
        self.flow_state = AreaFlowState.yielded
        self.hook: Any = None
        self.log: list[str] = []

    async def observe(self, context: Sequence[NativeContent]) -> None:
        await asyncio.sleep(0)

    async def render(self) -> list[Message]:
        self.log.append("start")
        if self.hook is not None:
            await self.hook()
        await asyncio.sleep(0)
        self.log.append("end")
        out = [Message(role=Role.user, content=line) for line in self.lines]
        self.lines = []
        return out

    async def promote(self) -> tuple[Message, ...]:
        return ()

    async def gc_prologue(self) -> None:
        return None


def _texts(context: Context) -> list[str]:
    return [item["content"] for item in context[:]]


def test_async_and_sync_areas_render_together_in_ring_order() -> None:
    from tests.support.coop_areas import Probe

    context = Context(GatewayType.openai)
    coop = CoopContext(context)
    coop.register(Talker("async one"))
    log: list[Any] = []
    probe = Probe("sync", log, [("sync one",)])
    coop.register(probe)
    coop.register(Talker("async two"))
    assert asyncio.run(coop.arender()) is context
    assert _texts(context) == ["async one", "sync one", "async two"]
    assert [e[0] for e in log] == ["render"]


def test_sync_render_refuses_an_async_area_and_leaves_no_coroutine_behind() -> None:
    context = Context(GatewayType.openai)
    coop = CoopContext(context)
    coop.register(Talker("hello"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(AreaContractError, match=r"arender"):
            coop.render()
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message)]
    assert len(context) == 0
    asyncio.run(coop.arender())  # the same area renders fine through arender
    assert _texts(context) == ["hello"]


def test_arender_from_inside_an_area_callback_raises() -> None:
    coop = CoopContext(Context(GatewayType.openai))
    talker = Talker("x")
    coop.register(talker)
    seen: list[BaseException] = []

    async def reenter() -> None:
        for attempt in (coop.arender, coop.render):
            try:
                result = attempt()
                if asyncio.iscoroutine(result):
                    await result
            except ContextStateError as exc:
                seen.append(exc)

    talker.hook = reenter
    asyncio.run(coop.arender())
    assert len(seen) == 2 and all("inside an area callback" in str(e) for e in seen)
    assert _texts(coop.context) == ["x"]


def test_concurrent_arender_calls_run_one_after_the_other() -> None:
    coop = CoopContext(Context(GatewayType.openai))
    talker = Talker("first")
    coop.register(talker)

    async def pause() -> None:
        for _ in range(3):
            await asyncio.sleep(0)

    talker.hook = pause

    async def main() -> None:
        await asyncio.gather(coop.arender(), coop.arender(), coop.arender())

    asyncio.run(main())
    assert talker.log == ["start", "end"] * 3  # never interleaved
    assert coop.renders == 3 and _texts(coop.context) == ["first"]


def test_a_cancelled_arender_leaves_a_working_coop() -> None:
    coop = CoopContext(Context(GatewayType.openai))
    stuck = Talker("never")
    gate = asyncio.Event()

    async def wait() -> None:
        await gate.wait()

    stuck.hook = wait
    coop.register(stuck)

    async def main() -> None:
        task = asyncio.create_task(coop.arender())
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert len(coop.context) == 0  # nothing of the cancelled area was appended
        stuck.hook = None
        await coop.arender()

    asyncio.run(main())
    assert _texts(coop.context) == ["never"]


def test_sync_render_refuses_before_collecting_an_async_area() -> None:
    calls: list[str] = []

    class Finished(Talker):
        async def gc_prologue(self) -> None:
            calls.append("gc_prologue")

    coop = CoopContext(Context(GatewayType.openai))
    done = Finished("to be reclaimed")
    coop.register(done)
    asyncio.run(coop.arender())
    done.life_state = AreaLifeState.retired
    before = coop.context[:]
    with pytest.raises(AreaContractError, match="async callbacks"):
        coop.render()
    assert coop.context[:] == before and calls == [] and coop.areas()  # nothing collected
    asyncio.run(coop.arender())
    assert calls == ["gc_prologue"] and coop.context[:] == () and coop.areas() == ()
