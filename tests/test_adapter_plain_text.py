"""A user message of plain text converts as the same message given as one text part.

Each adapter converts a user message whose content is a string without making its parts; the
items must be those of the general path (a tuple holding one TextPart), keys in the same order,
and the Context must hold and validate them alike.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.errors import HydrangeaError
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, TextPart
from hydrangea.providers.registry import adapter_for

_TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)


@pytest.mark.parametrize("gateway", list(GatewayType))
@given(text=_TEXT)
def test_plain_text_converts_as_one_text_part(gateway: GatewayType, text: str) -> None:
    adapter = adapter_for(gateway)
    plain = adapter.from_message(Message(role=Role.user, content=text))
    parted = adapter.from_message(Message(role=Role.user, content=(TextPart(text=text),)))
    assert json.dumps(plain) == json.dumps(parted)  # the same items, keys in the same order


@pytest.mark.parametrize("gateway", list(GatewayType))
@given(text=_TEXT)
def test_the_context_holds_plain_text_as_one_text_part(gateway: GatewayType, text: str) -> None:
    def emplaced(content: str | tuple[TextPart, ...]) -> str | type[HydrangeaError]:
        context = Context(gateway)
        try:
            context.emplace_message(Message(role=Role.user, content=content))
        except HydrangeaError as exc:
            return type(exc)
        return json.dumps(context[:])

    assert emplaced(text) == emplaced((TextPart(text=text),))
