"""pytest fixtures around :class:`tests.support.pgserver.PostgresServer`.

``postgres_server`` starts one throwaway server for the whole test session (about a second);
``postgres_dsn`` hands each test a connection URL whose ``search_path`` is a fresh schema, so
tests never see each other's tables. A server that cannot start fails the tests that need it,
with the server's log: it is never a skip (CI must not pass without PostgreSQL).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from tests.support.pgserver import PostgresServer, schema_dsn

_schemas = itertools.count(1)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the session, stopped at the end."""
    server = PostgresServer()
    try:
        server.start()
    except (RuntimeError, OSError) as exc:
        server.stop()
        pytest.fail(f"the throwaway PostgreSQL server did not start: {exc}", pytrace=False)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_dsn(postgres_server: PostgresServer) -> str:
    """A URL on a fresh, empty schema of the session's server."""
    return schema_dsn(postgres_server, f"t{next(_schemas)}")
