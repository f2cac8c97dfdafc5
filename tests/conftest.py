"""Shared test configuration: hypothesis profiles (quick by default, deeper under CI)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from hydrangea.context import Adapter, NativeContent

pytest_plugins = ["tests.support.pg_fixtures"]

settings.register_profile(
    "default", max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(autouse=True)
def _every_request_is_checked_by_the_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every request any test builds is validated against the official SDK's request types."""
    from hydrangea.gateway import GatewayType
    from hydrangea.providers.registry import adapter_for
    from tests.support.sdk_check import validate_request

    for gateway in GatewayType:
        adapter = adapter_for(gateway)
        build = type(adapter).build_request

        def checked(
            self: Adapter,
            items: Sequence[NativeContent],
            _build: Callable[[Adapter, Sequence[NativeContent]], dict[str, Any]] = build,
            _gateway: GatewayType = gateway,
        ) -> dict[str, Any]:
            request = _build(self, items)
            validate_request(_gateway, request)
            return request

        monkeypatch.setattr(type(adapter), "build_request", checked)
