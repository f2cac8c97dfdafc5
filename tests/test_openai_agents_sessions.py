"""The Agents SDK's own session tests, ported onto HydrangeaSession on every store.

Written after the behaviours of ``tests/memory/test_session.py`` (SQLiteSession),
``tests/memory/test_session_limit.py`` and ``tests/extensions/memory/test_sqlalchemy_session.py``
in openai/openai-agents-python, in this project's own code; the expected behaviour is the one
``agents.SQLiteSession`` (installed) shows, checked side by side where it matters. Not ported,
and why:

* corrupt rows skipped by ``get_items``/``pop_item``: a hydrangea store refuses a tampered row
  with a library error naming it (issue 24) instead of hiding it;
* worker-thread connections, the shared file lock, rollback-failure eviction, quarantined
  connections, engine properties, the SQLAlchemy config registry, unknown ``DELETE`` row counts,
  the SQLite writer-reservation fallback: internals of those classes' drivers, with no
  counterpart in a hydrangea session (the stores' own tests cover their connections);
* same-timestamp ordering: items are ordered by position, not by time;
* ASCII-escaped storage: items are kept as the SDK gave them (tested as byte identity).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner, SQLiteSession, set_tracing_disabled
from agents.items import ModelResponse, TResponseInputItem, TResponseStreamEvent
from agents.memory import SessionSettings
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

from hydrangea.errors import ContextStateError, InvalidItemError, StoreError
from hydrangea.integrations.openai_agents import SENT_KEY, HydrangeaSession
from hydrangea.stores import (
    AsyncPostgresSessionStore,
    InMemorySessionStore,
    PostgresSessionStore,
    SqliteSessionStore,
)

set_tracing_disabled(True)

BACKENDS = ("memory", "sqlite", "postgres", "postgres-async")


class Backend:
    """Opens stores of one kind on one database, inside the test's event loop."""

    def __init__(self, kind: str, where: str) -> None:
        self.kind, self.where = kind, where
        self.memory = InMemorySessionStore()
        self.opened: list[Any] = []

    async def store(self) -> Any:
        match self.kind:
            case "memory":
                return self.memory
            case "sqlite":
                store: Any = SqliteSessionStore(self.where)
            case "postgres":
                store = PostgresSessionStore(self.where, max_size=4)
            case _:
                store = await AsyncPostgresSessionStore.open(self.where, max_size=4)
        self.opened.append(store)
        return store

    async def session(self, session_id: str = "s", **kwargs: Any) -> HydrangeaSession:
        return HydrangeaSession(session_id, await self.store(), **kwargs)

    async def close(self) -> None:
        for store in self.opened:
            result = store.close()
            if isinstance(result, Awaitable):
                await result
        self.opened.clear()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    kind = request.param
    if kind.startswith("postgres"):
        dsn = request.getfixturevalue("postgres_dsn")
        return Backend(kind, dsn)
    return Backend(kind, str(tmp_path / "sessions.db"))


def run(backend: Backend, scenario: Callable[[], Awaitable[None]]) -> None:
    async def go() -> None:
        try:
            await scenario()
        finally:
            await backend.close()
    asyncio.run(go())


class EchoModel(Model):
    """Answers each turn with the user texts it was given, joined: what the session fed it."""

    def __init__(self) -> None:
        self.inputs: list[list[Any]] = []

    async def get_response(self, system_instructions: str | None,
                           input: str | list[TResponseInputItem], *args: Any,
                           **kwargs: Any) -> ModelResponse:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        self.inputs.append(items)
        said = "|".join(str(i.get("content")) for i in items
                        if isinstance(i, dict) and i.get("role") == "user")
        message = ResponseOutputMessage(
            id=f"msg_{len(self.inputs)}", type="message", role="assistant", status="completed",
            content=[ResponseOutputText(type="output_text", text=said, annotations=[])])
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[TResponseStreamEvent]:
        raise NotImplementedError


def _user(text: str) -> TResponseInputItem:
    return {"role": "user", "content": text}


# -- test_session.py: the Runner with a session ----------------------------------------------


def test_session_memory_basic_functionality(backend: Backend) -> None:
    async def scenario() -> None:
        model = EchoModel()
        agent = Agent(name="a", model=model)
        session = await backend.session("basic")
        await Runner.run(agent, "My name is Ada", session=session)
        second = await Runner.run(agent, "What is my name?", session=session)
        assert second.final_output == "My name is Ada|What is my name?"
        # a new object on the same store sees the same history (the store is the truth)
        again = await backend.session("basic")
        assert len(await again.get_items()) == 4
    run(backend, scenario)


def test_session_memory_different_sessions(backend: Backend) -> None:
    async def scenario() -> None:
        model = EchoModel()
        agent = Agent(name="a", model=model)
        one, two = await backend.session("one"), await backend.session("two")
        await Runner.run(agent, "I am one", session=one)
        answer = await Runner.run(agent, "Who am I?", session=two)
        assert answer.final_output == "Who am I?"
        assert (await one.get_items())[0] == _user("I am one")
    run(backend, scenario)


def test_runner_with_session_settings_override(backend: Backend) -> None:
    async def scenario() -> None:
        model = EchoModel()
        agent = Agent(name="a", model=model)
        session = await backend.session("limits", session_settings=SessionSettings(limit=100))
        for text in ("t1", "t2", "t3"):
            await Runner.run(agent, text, session=session)
        await Runner.run(agent, "t4", session=session,
                         run_config=RunConfig(session_settings=SessionSettings(limit=2)))
        sent = model.inputs[-1]
        assert [i.get("role") for i in sent] == ["user", "assistant", "user"]  # 2 + new input
        assert sent[-1]["content"] == "t4"
    run(backend, scenario)


# -- test_session.py: direct operations ------------------------------------------------------


def test_direct_operations(backend: Backend) -> None:
    async def scenario() -> None:
        session = await backend.session("direct")
        items: list[TResponseInputItem] = [_user("Hello"),
                                           {"role": "assistant", "content": "Hi there!"}]
        await session.add_items(items)
        assert await session.get_items() == items
        await session.add_items([_user("more")])
        assert len(await session.get_items()) == 3
        await session.clear_session()
        assert await session.get_items() == []
        await session.add_items([_user("after clear")])
        assert await session.get_items() == [_user("after clear")]
    run(backend, scenario)


def test_pop_item(backend: Backend) -> None:
    async def scenario() -> None:
        session = await backend.session("pop")
        assert await session.pop_item() is None
        await session.add_items([_user("one"), _user("two"), _user("three")])
        assert await session.pop_item() == _user("three")
        assert await session.pop_item() == _user("two")
        assert await session.get_items() == [_user("one")]
        assert await session.pop_item() == _user("one")
        assert await session.pop_item() is None
        other = await backend.session("pop-other")
        await other.add_items([_user("kept")])
        assert await session.pop_item() is None
        assert await other.get_items() == [_user("kept")]
    run(backend, scenario)


@pytest.mark.parametrize("limit", [None, -5, -1, 0, 1, 2, 3, 4, 50])
def test_get_items_limit_as_sqlite_session(backend: Backend, limit: int | None) -> None:
    items = [_user(f"m{n}") for n in range(4)]

    async def reference() -> list[TResponseInputItem]:
        sdk = SQLiteSession("ref")
        await sdk.add_items(items)
        try:
            return await sdk.get_items(limit=limit)
        finally:
            sdk.close()

    expected = asyncio.run(reference())

    async def scenario() -> None:
        session = await backend.session("limit")
        await session.add_items(items)
        assert await session.get_items(limit=limit) == expected
        by_settings = await backend.session("limit", session_settings={"limit": limit})
        assert await by_settings.get_items() == expected
        # an explicit limit overrides the settings
        assert await by_settings.get_items(limit=1) == items[-1:]
    run(backend, scenario)


def test_session_settings(backend: Backend) -> None:
    async def scenario() -> None:
        plain = await backend.session("x")
        assert plain.session_settings == SessionSettings()  # as SQLiteSession
        typed = await backend.session("x", session_settings=SessionSettings(limit=3))
        assert typed.session_settings == SessionSettings(limit=3)
        from_dict = await backend.session("x", session_settings={"limit": 2})
        assert isinstance(from_dict.session_settings, SessionSettings)
        assert from_dict.session_settings.limit == 2
        with pytest.raises((TypeError, ValueError)):
            await backend.session("x", session_settings={"limit": 2, "nonsense": 1})
    run(backend, scenario)


def test_unicode_special_characters_and_sql_injection(backend: Backend) -> None:
    texts = ["こんにちは", "😊👍", "Привет", "emoji 👨‍👩‍👧 and tabs\t", "'; DROP TABLE x; --",
             "\"quotes\" and \\backslashes\\", "Robert'); DELETE FROM hydrangea_items;--"]

    async def scenario() -> None:
        session = await backend.session("strange ' id \" ; --")
        await session.add_items([_user(t) for t in texts])
        assert [i["content"] for i in await session.get_items()] == texts  # type: ignore[typeddict-item]
    run(backend, scenario)


def test_concurrent_access(backend: Backend) -> None:
    async def scenario() -> None:
        sessions = [await backend.session("busy") for _ in range(4)]
        await asyncio.gather(*(s.add_items([_user(f"w{n}-{k}")])
                               for n, s in enumerate(sessions) for k in range(5)))
        stored = [str(dict(i)["content"]) for i in await sessions[0].get_items()]
        assert sorted(stored) == sorted(f"w{n}-{k}" for n in range(4) for k in range(5))
    run(backend, scenario)


def test_concurrent_pop_item_returns_each_item_once(backend: Backend) -> None:
    async def scenario() -> None:
        first = await backend.session("pops")
        await first.add_items([_user(f"m{n}") for n in range(8)])
        poppers = [await backend.session("pops") for _ in range(4)]
        popped = await asyncio.gather(*(p.pop_item() for p in poppers for _ in range(3)))
        got = [str(dict(p)["content"]) for p in popped if p is not None]
        assert sorted(got) == sorted(f"m{n}" for n in range(8))
        assert popped.count(None) == 4
        assert await first.get_items() == []
    run(backend, scenario)


def test_concurrent_first_write_of_a_new_id(backend: Backend) -> None:
    async def scenario() -> None:
        writers = [await backend.session("fresh") for _ in range(4)]
        await asyncio.gather(*(w.add_items([_user(f"first-{n}")])
                               for n, w in enumerate(writers)))
        assert len(await writers[0].get_items()) == 4
    run(backend, scenario)


def test_closed_session_rejects_every_call(backend: Backend) -> None:
    async def scenario() -> None:
        session = await backend.session("closing")
        await session.add_items([_user("one")])
        session.close()
        for call in (session.add_items([]), session.add_items([_user("x")]),
                     session.get_items(), session.pop_item(), session.clear_session()):
            with pytest.raises(ContextStateError):
                await call
        assert await (await backend.session("closing")).get_items() == [_user("one")]
    run(backend, scenario)


def test_add_empty_items_list(backend: Backend) -> None:
    async def scenario() -> None:
        session = await backend.session("empty")
        await session.add_items([])
        assert await session.get_items() == []
    run(backend, scenario)


def test_a_refused_add_changes_nothing_and_is_not_saved_later(backend: Backend) -> None:
    async def scenario() -> None:
        session = await backend.session("refused")
        await session.add_items([_user("one")])
        with pytest.raises(InvalidItemError):
            bad: Any = {"role": "user", "content": float("nan")}
            await session.add_items([_user("two"), bad])
        await session.add_items([_user("three")])
        assert await session.get_items() == [_user("one"), _user("three")]
    run(backend, scenario)


class FailingSaves:
    """A sync store whose saves fail while ``failing`` is set (a dropped connection)."""

    def __init__(self, store: Any) -> None:
        self.store, self.failing = store, False

    def save(self, session: Any) -> int:
        if self.failing:
            raise StoreError("the connection dropped")
        return int(self.store.save(session))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


class AsyncFailingSaves(FailingSaves):
    """:class:`FailingSaves` around an async store."""

    async def save(self, session: Any) -> int:  # type: ignore[override]
        if self.failing:
            raise StoreError("the connection dropped")
        return int(await self.store.save(session))


def test_failed_changes_are_undone(backend: Backend) -> None:
    async def scenario() -> None:
        store = await backend.store()
        wrapped = (AsyncFailingSaves if backend.kind == "postgres-async" else FailingSaves)(store)
        session = HydrangeaSession("undo", wrapped)
        await session.add_items([_user("one"), _user("two")])
        wrapped.failing = True
        for call in (session.add_items([_user("lost")]), session.pop_item(),
                     session.clear_session()):
            with pytest.raises(StoreError):
                await call
        wrapped.failing = False
        assert await session.get_items() == [_user("one"), _user("two")]
        await session.add_items([_user("three")])
        assert await session.get_items() == [_user("one"), _user("two"), _user("three")]
    run(backend, scenario)


# -- items as sent, tool output fenced -------------------------------------------------------


def test_items_come_back_byte_identical_nulls_and_key_order_kept(backend: Backend) -> None:
    items: list[Any] = [
        {"type": "file_search_call", "id": "fs_1", "status": "completed", "queries": ["q"],
         "results": None},
        {"role": "user", "content": "plain"},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA=="},
        {"type": "function_call", "name": "f", "call_id": "c1", "arguments": "{}", "id": None,
         "status": "completed"},
        {"type": "message", "role": "assistant", "status": "completed", "id": "m1",
         "content": [{"type": "output_text", "text": "ok", "annotations": [],
                      "logprobs": None}]},
    ]

    async def scenario() -> None:
        session = await backend.session("bytes")
        await session.add_items(items)
        back = await session.get_items()
        assert json.dumps(back) == json.dumps(items)
        again = await backend.session("bytes")
        assert json.dumps(await again.pop_item()) == json.dumps(items[-1])
        context = await again.get_context()
        assert all(SENT_KEY not in item for item in context)
    run(backend, scenario)


def test_an_async_store_works_and_context_points_to_get_context(postgres_dsn: str) -> None:
    async def scenario() -> None:
        store = await AsyncPostgresSessionStore.open(postgres_dsn)
        session = HydrangeaSession("a", store)
        await session.add_items([_user("hi")])
        assert await session.get_items() == [_user("hi")]
        with pytest.raises(ContextStateError, match="get_context"):
            _ = session.context
        await store.close()
    asyncio.run(scenario())
