"""A durable :class:`~hydrangea.asof.records.RecordStore` on the standard library's ``sqlite3``.

The full records behind summary pointers outlive the process that compacted them: a record is
written as the item's JSON (``ContextItem.model_dump_json()``) into one table of an SQLite file.

* **Durable.** The database runs in WAL mode with ``synchronous=FULL``, and :meth:`put` returns
  only after its transaction has committed, so an acknowledged ``put`` survives the process being
  killed the moment after.
* **Shared.** Several processes (and threads) on one machine may open the same file. Writers
  take the write lock up front (``BEGIN IMMEDIATE``) and wait up to ``timeout`` seconds for one
  another (``busy_timeout``). WAL needs shared memory, so the file must live on a local disk,
  not a network file system.
* **Idempotent, never overwriting.** Putting an item that is already stored, field for field, is
  a no-op. Putting a *different* item under an id that is taken raises
  :class:`~hydrangea.asof.errors.DuplicateItemError` and leaves the stored record untouched: a
  pointer must always lead back to exactly what was summarised.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from types import TracebackType

from pydantic import ValidationError

from hydrangea.asof.errors import DuplicateItemError, RecordNotFoundError
from hydrangea.asof.items import ContextItem
from hydrangea.errors import RecordStoreError

__all__ = ["RecordStoreError", "SqliteRecordStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    item_id TEXT NOT NULL UNIQUE,
    body TEXT NOT NULL
)
"""



class SqliteRecordStore:
    """Full context records in an SQLite file, durable and shared by processes on one machine.

    ``path`` is created if missing (its directory must exist). ``timeout`` is how long, in
    seconds, an operation waits for another process's write lock before it fails with
    :class:`RecordStoreError`. The store is safe to use from several threads; call
    :meth:`close` (or use it as a context manager) when done.
    """

    __slots__ = ("_conn", "_lock", "_path")

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0) -> None:
        if timeout < 0:
            raise RecordStoreError(f"timeout must be >= 0 seconds, got {timeout}")
        self._path = Path(path)
        self._lock = threading.Lock()
        try:
            conn = sqlite3.connect(
                self._path, timeout=timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise RecordStoreError(f"cannot open record database {self._path}: {exc}") from exc
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()
            if mode is None or str(mode[0]).lower() != "wal":
                raise RecordStoreError(
                    f"record database {self._path} cannot use WAL journaling (got {mode!r}); "
                    "it must be on a local file system"
                )
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute(_SCHEMA)
        except sqlite3.Error as exc:
            conn.close()
            raise RecordStoreError(f"cannot prepare record database {self._path}: {exc}") from exc
        except RecordStoreError:
            conn.close()
            raise
        self._conn = conn

    @property
    def path(self) -> Path:
        """The database file."""
        return self._path

    def put(self, item: ContextItem) -> None:
        """Store ``item`` durably; a no-op if the identical item is already stored.

        Raises :class:`DuplicateItemError` if a different item is stored under the same id.
        """
        body = item.model_dump_json()
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    row = self._conn.execute(
                        "SELECT body FROM records WHERE item_id = ?", (item.item_id,)
                    ).fetchone()
                    if row is None:
                        self._conn.execute(
                            "INSERT INTO records (item_id, body) VALUES (?, ?)",
                            (item.item_id, body),
                        )
                    elif row[0] != body and self._decode(item.item_id, row[0]) != item:
                        raise DuplicateItemError(
                            f"record {item.item_id!r} is already stored with different "
                            "content; a stored record is never overwritten"
                        )
                    self._conn.execute("COMMIT")
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise RecordStoreError(
                    f"cannot store record {item.item_id!r} in {self._path}: {exc}"
                ) from exc

    def get(self, item_id: str) -> ContextItem | None:
        """The stored item ``item_id``, or ``None`` if there is none.

        Raises :class:`RecordStoreError` if the row holds something other than a valid item
        with exactly that id (a file edited or written by something else)."""
        row = self._query_one("SELECT body FROM records WHERE item_id = ?", (item_id,))
        if row is None:
            return None
        return self._decode(item_id, str(row[0]))

    def require(self, item_id: str) -> ContextItem:
        """The stored item ``item_id``; raises :class:`RecordNotFoundError` if there is none."""
        found = self.get(item_id)
        if found is None:
            raise RecordNotFoundError(f"no record under {item_id!r}")
        return found

    def __contains__(self, item_id: object) -> bool:
        if not isinstance(item_id, str):
            return False
        return self._query_one("SELECT 1 FROM records WHERE item_id = ?", (item_id,)) is not None

    def ids(self) -> list[str]:
        """Every stored id, in the order the records were first stored."""
        with self._lock:
            try:
                rows = self._conn.execute("SELECT item_id FROM records ORDER BY seq").fetchall()
            except sqlite3.Error as exc:
                raise RecordStoreError(f"cannot list records in {self._path}: {exc}") from exc
        return [str(row[0]) for row in rows]

    def __len__(self) -> int:
        row = self._query_one("SELECT COUNT(*) FROM records", ())
        count = 0 if row is None else row[0]
        if not isinstance(count, int):
            raise RecordStoreError(f"unexpected row count {count!r} from {self._path}")
        return count

    def close(self) -> None:
        """Close the connection. Committed records stay in the file."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> SqliteRecordStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SqliteRecordStore({str(self._path)!r})"

    def _query_one(self, sql: str, params: tuple[str, ...]) -> tuple[object, ...] | None:
        with self._lock:
            try:
                row: tuple[object, ...] | None = self._conn.execute(sql, params).fetchone()
            except sqlite3.Error as exc:
                raise RecordStoreError(f"cannot read {self._path}: {exc}") from exc
        return row

    def _decode(self, item_id: str, body: str) -> ContextItem:
        try:
            item = ContextItem.model_validate_json(body)
        except (ValidationError, ValueError) as exc:
            raise RecordStoreError(
                f"record {item_id!r} in {self._path} is not a valid context item: {exc}"
            ) from exc
        if item.item_id != item_id:
            raise RecordStoreError(
                f"the row for {item_id!r} in {self._path} holds record {item.item_id!r}"
            )
        return item
