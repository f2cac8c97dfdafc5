"""What the sync and async PostgreSQL stores share: the driver import, error translation and
the DSN shown in messages (never with its password)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from hydrangea.errors import (
    MissingExtraError,
    SchemaVersionError,
    StoreError,
    StorePermissionError,
    StoreUnavailableError,
)
from hydrangea.stores import sql

__all__ = ["check_schema", "describe", "driver", "translate"]

MIGRATION_LOCK = 7_294_001
"""The advisory lock key that serializes schema migrations between processes."""


def driver() -> tuple[ModuleType, ModuleType]:
    """``(psycopg, psycopg_pool)``; MissingExtraError naming the extra if they are missing."""
    try:
        import psycopg
        import psycopg_pool
    except ImportError as exc:
        raise MissingExtraError(
            "the PostgreSQL stores need psycopg 3 and psycopg-pool: "
            "pip install 'hydrangea-context[postgres]'"
        ) from exc
    return psycopg, psycopg_pool


def describe(dsn: str) -> str:
    """``dsn`` without secrets: user, host (or socket folder), port and database."""
    psycopg, _ = driver()
    try:
        info = psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "PostgreSQL (unparsable connection string)"
    host = info.get("host") or "localhost"
    port = info.get("port") or "5432"
    return f"postgresql://{info.get('user') or ''}@{host}:{port}/{info.get('dbname') or ''}"


def translate(exc: BaseException, where: str, doing: str) -> StoreError:
    """The library's error for a driver or pool exception raised while ``doing``."""
    psycopg, pool = driver()
    errors = psycopg.errors
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, errors.InsufficientPrivilege | errors.ReadOnlySqlTransaction):
        return StorePermissionError(f"cannot {doing} on {where}: the role may not write "
                                    f"({text})")
    if isinstance(exc, pool.PoolTimeout | psycopg.OperationalError | pool.PoolClosed):
        return StoreUnavailableError(
            f"cannot {doing}: {where} is unreachable or the connection dropped ({text}); "
            "nothing of this operation was committed unless the drop came during COMMIT: "
            "load the session to see its version"
        )
    if isinstance(exc, errors.UndefinedTable):
        return SchemaVersionError(f"cannot {doing} on {where}: the session tables are missing "
                                  f"({text})")
    return StoreError(f"cannot {doing} on {where}: {text}")


def check_schema(current: int, migrate: bool, where: str) -> bool:
    """Whether a migration is needed; SchemaVersionError when it is refused or impossible."""
    if current == sql.LATEST:
        return False
    if current > sql.LATEST:
        raise SchemaVersionError(
            f"{where} has session schema version {current}; this version of the library reads "
            f"version {sql.LATEST}: upgrade hydrangea-context"
        )
    if not migrate:
        raise SchemaVersionError(
            f"{where} has session schema version {current}, this library needs {sql.LATEST}; "
            "open the store with migrate=True (as a role that may create tables) to migrate"
        )
    return True


def execute(conn: Any, step: sql.Step) -> Any:
    """Run one step on a psycopg (sync) connection."""
    with conn.cursor() as cursor:
        if step.rows is not None:
            cursor.executemany(step.sql, step.rows)
            return cursor.rowcount
        cursor.execute(step.sql, tuple(step.params) or None)
        return cursor.fetchall() if step.fetch else cursor.rowcount


async def execute_async(conn: Any, step: sql.Step) -> Any:
    """Run one step on a psycopg async connection."""
    async with conn.cursor() as cursor:
        if step.rows is not None:
            await cursor.executemany(step.sql, step.rows)
            return cursor.rowcount
        await cursor.execute(step.sql, tuple(step.params) or None)
        return await cursor.fetchall() if step.fetch else cursor.rowcount


async def run_async(ops: sql.Ops, conn: Any) -> Any:
    """Drive ``ops`` on an async connection; the operation's result."""
    try:
        step = next(ops)
        while True:
            step = ops.send(await execute_async(conn, step))
    except StopIteration as stop:
        return stop.value
