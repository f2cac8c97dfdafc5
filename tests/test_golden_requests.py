"""What the library sends is frozen: every golden session's request bytes equal the stored ones."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.golden.sessions import FROZEN, SESSIONS, build, read


def _first_difference(old: Any, new: Any, path: str = "$") -> str:
    """The JSON path of the first place ``old`` and ``new`` differ (key order included)."""
    if type(old) is not type(new):
        return f"{path}: {type(old).__name__} became {type(new).__name__}"
    if isinstance(old, dict):
        if list(old) != list(new):
            return f"{path}: keys {list(old)} became {list(new)}"
        for key in old:
            if old[key] != new[key] or json.dumps(old[key]) != json.dumps(new[key]):
                return _first_difference(old[key], new[key], f"{path}.{key}")
    if isinstance(old, list):
        if len(old) != len(new):
            for i, (a, b) in enumerate(zip(old, new, strict=False)):
                if json.dumps(a) != json.dumps(b):
                    return _first_difference(a, b, f"{path}[{i}]")
            return f"{path}: {len(old)} items became {len(new)}"
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            if json.dumps(a) != json.dumps(b):
                return _first_difference(a, b, f"{path}[{i}]")
    return f"{path}: {old!r} became {new!r}"


FROZEN_REQUESTS = read(FROZEN)
BUILT = dict(build())


def test_the_corpus_covers_every_session() -> None:
    assert sorted(BUILT) == sorted(FROZEN_REQUESTS)
    assert len(BUILT) >= 4 * len(SESSIONS)


@pytest.mark.parametrize("name", sorted(FROZEN_REQUESTS))
def test_request_bytes_are_unchanged(name: str) -> None:
    frozen, built = FROZEN_REQUESTS[name], BUILT.get(name)
    assert built is not None, f"session {name} is frozen but no longer built"
    assert len(built) == len(frozen), f"{name}: {len(frozen)} requests became {len(built)}"
    for step, (old, new) in enumerate(zip(frozen, built, strict=True)):
        if old != new:
            where = _first_difference(json.loads(old), json.loads(new))
            pytest.fail(f"{name} step {step}: first difference at {where}")
