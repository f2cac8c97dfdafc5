"""Fuzz over session ids and payloads through every store: each either round-trips exactly or is
refused with a library error, before anything is stored (issue 24)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.errors import HydrangeaError
from hydrangea.stores import InMemorySessionStore
from tests.support.store_kinds import KINDS, close, open_kind
from tests.support.store_sessions import GATEWAY

_ids = st.one_of(
    st.text(min_size=0, max_size=220),
    st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=3),
    st.sampled_from(["a\x00b", "", " ", "'; DROP TABLE hydrangea_items; --", "ｓ１", "\u202e"]),
)
_leaves = st.one_of(
    st.none(), st.booleans(), st.floats(allow_nan=True, allow_infinity=True),
    st.integers(),
    st.text(max_size=20),
)
_json = st.recursive(_leaves, lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=12)


def _deep(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


def _plain(value: Any) -> bool:
    """The oracle: what JSON itself can write and read back (no NaN, no huge ints, no lone
    surrogates), by a round trip through the standard library."""
    try:
        text = json.dumps(value, allow_nan=False)
        text.encode("utf-8")
        return bool(json.loads(text) == value)
    except (ValueError, UnicodeEncodeError, RecursionError):
        return False


@pytest.mark.parametrize("kind", KINDS)
def test_ids_and_payloads_round_trip_or_are_refused(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    where = (str(request.getfixturevalue("postgres_dsn")) if kind.startswith("postgres")
             else str(tmp_path / "fuzz.db"))
    store = open_kind(kind, where, InMemorySessionStore())
    counter = iter(range(10**9))

    @settings(max_examples=25, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    # Integer sizes by digit count: a huge int's repr would break hypothesis's own report.
    @given(session_id=_ids, payload=_json, depth=st.sampled_from([0, 0, 0, 300, 511, 520]),
           digits=st.sampled_from([0, 0, 4299, 4300, 4301, 6000]))
    def check(session_id: str, payload: Any, depth: int, digits: int) -> None:
        before = {info.session_id for info in store.list_sessions()}
        context = Context(GATEWAY)
        extra = {"x": payload, **({"deep": _deep(depth)} if depth else {}),
                 **({"n": -(10 ** (digits - 1))} if digits else {})}
        item = {"role": "user", "content": f"m{next(counter)}", "name": "n", **extra}
        try:
            context.push_back(item)
        except HydrangeaError:
            assert not _plain(extra) or depth >= 510, "a plain payload was refused"
            assert len(context) == 0
            item = {"role": "user", "content": "plain"}
            context.push_back(item)
        try:
            stored = store.create(session_id, context)
        except HydrangeaError:
            assert {info.session_id for info in store.list_sessions()} == before
            return
        assert stored.version == 1
        loaded = store.load(session_id, Context).value
        assert loaded.to_json() == context.to_json()
        store.delete(session_id)

    try:
        check()
    finally:
        close(store)
