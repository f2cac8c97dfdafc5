"""Fuzz: ``push_back`` and ``extend`` on all four gateways take anything and raise only
library errors; a refusal changes nothing, and what is accepted saves and loads back the same.

Seeded and bounded: the default profile runs a quick pass, ``HYPOTHESIS_PROFILE=ci`` a deeper one.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.errors import HydrangeaError, InvalidItemError, UnencodableTextError
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role
from hydrangea.providers.native import check_json, copy_json
from tests.support.wild import is_json, wild, wild_items

GATEWAYS = list(GatewayType)


def _context(gateway: GatewayType) -> Context:
    context = Context(gateway)
    context.emplace_message(Message(role=Role.system, content="Be brief."))
    context.emplace_message(Message(role=Role.user, content="Hello"))
    return context


def _push(context: Context, value: Any, how: str) -> bool:
    """Push ``value``; True if accepted. Any non-library exception fails the test."""
    before = context.to_json()
    try:
        if how == "push_back":
            context.push_back(value)
        else:
            context.extend(value if isinstance(value, list) else [value])
    except HydrangeaError as error:
        assert isinstance(error, ValueError | TypeError | KeyError), type(error)
        assert context.to_json() == before, "a refusal changed the Context"
        return False
    return True


@pytest.mark.parametrize("gateway", GATEWAYS)
@pytest.mark.parametrize("how", ["push_back", "extend"])
@seed(14)
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(value=wild_items)
def test_anything_pushed_gives_a_library_error_or_a_lossless_item(
    gateway: GatewayType, how: str, value: Any
) -> None:
    context = _context(gateway)
    if not _push(context, value, how):
        return
    text = context.to_json()
    assert Context.from_json(text).to_json() == text  # what was accepted loads back the same
    text.encode("utf-8")  # and can be saved


@pytest.mark.parametrize("gateway", GATEWAYS)
@seed(1414)
@given(value=wild)
def test_text_that_is_not_json_is_refused_before_the_adapter(
    gateway: GatewayType, value: Any
) -> None:
    item = {"role": "assistant", "content": "ok", "extra": value}
    context = _context(gateway)
    if is_json(value):
        return  # JSON-clean: the adapter decides (an unknown key may or may not be refused)
    with pytest.raises((InvalidItemError, UnencodableTextError)):
        context.extend([item])
    assert len(context) == 2


@pytest.mark.parametrize("gateway", GATEWAYS)
@seed(141414)
@given(st.lists(wild_items, min_size=2, max_size=4))
def test_a_multi_item_append_is_all_or_nothing(gateway: GatewayType, items: list[Any]) -> None:
    context = _context(gateway)
    accepted = [item for item in items if _push(_context(gateway), [item], "extend")]
    before = context.to_json()
    try:
        context.extend(items)
    except HydrangeaError:
        assert context.to_json() == before
        assert len(accepted) < len(items)  # refused only because one of them is refused
    else:
        assert len(accepted) == len(items)
        assert len(context) == 2 + len(items)


@seed(14141414)
@given(value=wild)
def test_check_json_and_copy_json_agree_with_an_independent_check(value: Any) -> None:
    item = {"value": value}
    plain = is_json(item) and not _has_tuple_or_subclass(item)
    try:
        check_json(item)
    except HydrangeaError:
        checked = False
    else:
        checked = True
    try:
        copied = copy_json(item)
    except HydrangeaError:
        assert not is_json(item)
        assert not checked
    else:
        assert is_json(item)
        assert json.dumps(copied) == json.dumps(item)
        assert json.dumps(copy_json(item, sort_keys=True)) == json.dumps(item, sort_keys=True)
        assert checked == plain


def _has_tuple_or_subclass(value: object) -> bool:
    if isinstance(value, tuple):
        return True
    if isinstance(value, dict):
        return any(_has_tuple_or_subclass(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_tuple_or_subclass(v) for v in value)
    return False
