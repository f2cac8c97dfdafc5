"""Session stores: save and load a Context, a CoopContext or a Lifecycle by session id.

:class:`SessionStore` is the contract; :class:`InMemorySessionStore`,
:class:`SqliteSessionStore` (the embedded default: one file, WAL) and
:class:`PostgresSessionStore` / :class:`AsyncPostgresSessionStore` (extra ``postgres``) implement
it, and :class:`PostgresRecordStore` keeps as-of records on PostgreSQL. Saves are incremental
(O(new items)) and versioned (:class:`~hydrangea.errors.SessionConflictError` instead of a lost
update). Names are imported on first use, so ``import hydrangea.stores`` never needs psycopg.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hydrangea.stores.base import (
        AsyncSessionStore,
        SessionInfo,
        SessionStore,
        StoredSession,
    )
    from hydrangea.stores.memory import InMemorySessionStore
    from hydrangea.stores.postgres import PostgresRecordStore, PostgresSessionStore
    from hydrangea.stores.postgres_async import AsyncPostgresSessionStore
    from hydrangea.stores.sqlite import SqliteSessionStore
    from hydrangea.stores.url import open_store

__all__ = [
    "AsyncPostgresSessionStore",
    "AsyncSessionStore",
    "InMemorySessionStore",
    "PostgresRecordStore",
    "PostgresSessionStore",
    "SessionInfo",
    "SessionStore",
    "SqliteSessionStore",
    "StoredSession",
    "open_store",
]

_WHERE = {
    "AsyncPostgresSessionStore": "hydrangea.stores.postgres_async",
    "AsyncSessionStore": "hydrangea.stores.base",
    "InMemorySessionStore": "hydrangea.stores.memory",
    "PostgresRecordStore": "hydrangea.stores.postgres",
    "PostgresSessionStore": "hydrangea.stores.postgres",
    "SessionInfo": "hydrangea.stores.base",
    "SessionStore": "hydrangea.stores.base",
    "SqliteSessionStore": "hydrangea.stores.sqlite",
    "StoredSession": "hydrangea.stores.base",
    "open_store": "hydrangea.stores.url",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'hydrangea.stores' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
