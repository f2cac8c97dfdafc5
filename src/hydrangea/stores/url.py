"""Open a session store from one string, as the command line's ``--store`` takes it."""

from __future__ import annotations

from hydrangea.errors import StoreError
from hydrangea.stores.memory import InMemorySessionStore
from hydrangea.stores.postgres import PostgresSessionStore
from hydrangea.stores.sqlite import SqliteSessionStore

__all__ = ["open_store"]


def open_store(
    url: str,
) -> InMemorySessionStore | SqliteSessionStore | PostgresSessionStore:
    """``memory:``, ``sqlite:PATH`` or a PostgreSQL URL (``postgresql://...``, ``postgres://...``).

    Raises :class:`~hydrangea.errors.StoreError` for anything else; a PostgreSQL store needs the
    ``postgres`` extra (:class:`~hydrangea.errors.MissingExtraError` otherwise).
    """
    if url == "memory:":
        return InMemorySessionStore()
    if url.startswith("sqlite:"):
        path = url.removeprefix("sqlite:")
        if path.startswith("//"):
            path = path[2:]
        if not path:
            raise StoreError("a SQLite store needs a file: sqlite:PATH")
        return SqliteSessionStore(path)
    if url.startswith(("postgresql://", "postgres://")):
        return PostgresSessionStore(url)
    raise StoreError(
        f"unknown store {url[:40]!r}: use memory:, sqlite:PATH or postgresql://..."
    )
