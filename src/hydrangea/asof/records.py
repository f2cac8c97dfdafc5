"""Record stores keep the full text behind every summary pointer."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from hydrangea.asof.errors import DuplicateItemError, RecordNotFoundError
from hydrangea.asof.items import ContextItem

__all__ = ["InMemoryRecordStore", "RecordStore", "stored_ids"]


@runtime_checkable
class RecordStore(Protocol):
    """Keeps the full text behind a summary pointer."""

    def put(self, item: ContextItem) -> None:
        """Store ``item`` under its id. Storing an identical item again does nothing; a different
        item under a taken id raises :class:`DuplicateItemError`."""
        ...

    def get(self, item_id: str) -> ContextItem | None:
        """The item stored under ``item_id``, or ``None`` if there is none (keelgate.context's
        contract)."""
        ...

    def require(self, item_id: str) -> ContextItem:
        """The item stored under ``item_id``; :class:`RecordNotFoundError` if there is none."""
        ...

    def __contains__(self, item_id: object) -> bool:
        """Whether a record is stored under ``item_id``."""
        ...

    def ids(self) -> list[str]:
        """The stored ids, in the order they were first stored."""
        ...


class InMemoryRecordStore:
    """Process-local store of full context records, so a compacted summary can always be traced
    back to what it replaced. Safe to share between threads."""

    __slots__ = ("_lock", "_records")

    def __init__(self) -> None:
        self._records: dict[str, ContextItem] = {}
        self._lock = threading.Lock()

    def put(self, item: ContextItem) -> None:
        """Store ``item``; idempotent for an identical item, an error for a different one."""
        with self._lock:
            held = self._records.get(item.item_id)
            if held is None:
                self._records[item.item_id] = item
            elif held != item:
                raise DuplicateItemError(
                    f"the record store already holds a different record under {item.item_id!r}"
                )

    def get(self, item_id: str) -> ContextItem | None:
        """The record under ``item_id``, or ``None``."""
        with self._lock:
            return self._records.get(item_id)

    def require(self, item_id: str) -> ContextItem:
        """The record under ``item_id``; :class:`RecordNotFoundError` if there is none."""
        found = self.get(item_id)
        if found is None:
            raise RecordNotFoundError(f"no record under {item_id!r}")
        return found

    def __contains__(self, item_id: object) -> bool:
        with self._lock:
            return item_id in self._records

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)

    def ids(self) -> list[str]:
        """The stored ids, in the order they were first stored."""
        with self._lock:
            return list(self._records)

    def __repr__(self) -> str:
        return f"InMemoryRecordStore({len(self)} records)"


def stored_ids(store: RecordStore, ids: Iterable[str]) -> frozenset[str]:
    """The ids among ``ids`` that ``store`` holds a record under: one ``in`` test per distinct
    id."""
    return frozenset([item_id for item_id in dict.fromkeys(ids) if item_id in store])
