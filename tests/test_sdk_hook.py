"""The suite-wide hook in conftest.py really checks every built request against the SDK types.

The adapters pass an unknown key through untouched (they trust validated Context items), so a
request holding one is built fine by the adapter alone; only the SDK check refuses it.
"""

from __future__ import annotations

from typing import Any

import pytest

from hydrangea.context import adapter_for
from hydrangea.gateway import GatewayType

_UNKNOWN_KEY: dict[GatewayType, list[dict[str, Any]]] = {
    GatewayType.openai: [{"role": "user", "content": "hi", "bogus": 1}],
    GatewayType.openai_responses: [
        {"role": "user", "content": "hi", "type": "message", "bogus": 1}
    ],
    GatewayType.anthropic: [{"role": "user", "content": "hi", "bogus": 1}],
    GatewayType.gemini: [{"role": "user", "parts": [{"text": "hi"}], "bogus": 1}],
}


@pytest.mark.parametrize("gateway", list(GatewayType))
def test_the_adapter_alone_builds_the_request(gateway: GatewayType) -> None:
    adapter = adapter_for(gateway)
    unchecked = type(adapter).build_request.__defaults__[0]  # type: ignore[index]
    request = unchecked(adapter, _UNKNOWN_KEY[gateway])
    assert "bogus" in str(request)


@pytest.mark.parametrize("gateway", list(GatewayType))
def test_under_the_hook_the_sdk_check_refuses_it(gateway: GatewayType) -> None:
    with pytest.raises(Exception, match=r"(?i)bogus|extra"):
        adapter_for(gateway).build_request(_UNKNOWN_KEY[gateway])
