"""Fuzz: context items and the record stores take anything and raise only library errors.

An item that is created can be stored and read back equal, in memory and in SQLite; a refused
``put`` or look-up leaves the store as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from hydrangea.asof import (
    ContextItem,
    InMemoryRecordStore,
    ItemKind,
    RecordStore,
    SqliteRecordStore,
)
from hydrangea.errors import HydrangeaError
from tests.support.wild import texts, wild

moments = st.one_of(
    st.none(),
    st.just(datetime(2026, 1, 1, tzinfo=UTC)),
    st.just(datetime(2026, 1, 1)),  # naive: refused
    wild,
)


def _library_error_only(call: Callable[..., object], *args: Any, **kwargs: Any) -> object | None:
    """``call(*args, **kwargs)``, or ``None`` if it raised a library error (anything else fails)."""
    try:
        return call(*args, **kwargs)
    except HydrangeaError:
        return None


@pytest.fixture(scope="module")
def sqlite_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqliteRecordStore]:
    path: Path = tmp_path_factory.mktemp("records") / "records.db"
    with SqliteRecordStore(path) as store:
        yield store


@seed(14)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    kind=st.one_of(st.sampled_from(list(ItemKind)), wild),
    content=st.one_of(texts, wild),
    item_id=st.one_of(texts, wild),
    published_at=moments,
    origin=st.one_of(texts, wild),
    lookup=texts,
)
def test_items_and_stores_raise_only_library_errors(
    sqlite_store: SqliteRecordStore,
    kind: Any,
    content: Any,
    item_id: Any,
    published_at: Any,
    origin: Any,
    lookup: Any,
) -> None:
    item = _library_error_only(
        lambda: ContextItem.outside(
            kind, content, item_id=item_id, published_at=published_at, origin=origin
        )
    )
    stores: list[RecordStore] = [InMemoryRecordStore(), sqlite_store]
    for store in stores:
        before = store.ids()
        if isinstance(item, ContextItem):
            try:
                store.put(item)
            except HydrangeaError:
                assert store.ids() == before, "a refused put changed the store"
            else:
                assert store.get(item.item_id) == item
        elif item is not None:
            raise AssertionError(f"ContextItem.outside returned {item!r}")
        after_put = store.ids()
        found = _library_error_only(store.get, lookup)
        assert found is None or isinstance(found, ContextItem)
        assert isinstance(lookup in store, bool)
        assert store.ids() == after_put  # look-ups change nothing
    _library_error_only(stores[0].put, content)  # not an item at all
