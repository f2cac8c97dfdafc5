"""The calibrated counter: never under the largest reported ratio, never below the base; one
per gateway and model, fitted to a token-count endpoint's figures."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping
from typing import Any

import anthropic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hydrangea import Context, GatewayType, Message, Role
from hydrangea.asof.calibration import CalibratedCounter, Calibration, request_text
from hydrangea.asof.counting import ApproxTokenCounter
from hydrangea.errors import UnsupportedOptionError
from hydrangea.providers.anthropic.counting import AnthropicTokenCounter
from tests.support.capture_server import capture_server

reports = st.lists(st.tuples(st.text(min_size=1, max_size=200), st.integers(0, 500)), max_size=8)


@given(reports, st.text(max_size=300))
def test_estimates_cover_every_report_and_never_shrink(
    samples: list[tuple[str, int]], probe: str
) -> None:
    counter = CalibratedCounter.from_reports(samples)
    base = ApproxTokenCounter()
    for text, reported in samples:
        assert counter.count(text) >= reported  # what the provider reported is covered
    assert counter.count(probe) >= base.count(probe)
    worst = max([1.0, *(r / base.count(t) for t, r in samples if base.count(t))])
    assert counter.ratio == pytest.approx(worst)
    assert counter.count(probe) == math.ceil(base.count(probe) * counter.ratio)


def test_japanese_text_reported_by_a_gateway() -> None:
    text = "日本語の文章は一文字ごとにトークンが増える。" * 10  # 220 characters: 55 estimated
    counter = CalibratedCounter().updated(text, 190)
    assert counter.count(text) >= 190 and counter.ratio > 3
    assert counter.updated("short", 0).ratio == counter.ratio  # lower reports never shrink it
    with pytest.raises(ValueError):
        CalibratedCounter(ratio=0.5)
    with pytest.raises(ValueError):
        counter.updated(text, -1)
    assert "ratio=" in repr(counter)


# -- Calibration: per gateway and model, fitted to an endpoint's figures -----------------------

gateways = st.sampled_from(["anthropic", "openai_responses", "gemini"])
models = st.sampled_from([None, "m1", "m2"])
observations = st.lists(
    st.tuples(gateways, models, st.text(min_size=1, max_size=120), st.integers(0, 400)),
    max_size=12,
)


def _four_chars_a_token(text: str) -> int:
    return (len(text) + 3) // 4  # the default counter, written out independently


@given(observations, gateways, models, st.text(max_size=200))
def test_each_pair_is_fitted_to_its_own_figures_only(
    seen: list[tuple[str, str | None, str, int]], gateway: str, model: str | None, probe: str
) -> None:
    calibration = Calibration()
    for g, m, text, reported in seen:
        calibration.observe(g, m, text, reported)
    mine = [(t, r) for g, m, t, r in seen if (g, m) == (gateway, model)]
    worst = max([1.0, *(r / _four_chars_a_token(t) for t, r in mine)])
    counter = calibration.counter(gateway, model)
    assert counter.ratio == pytest.approx(worst)
    for text, reported in mine:  # every figure the provider gave for this pair is covered
        assert counter.count(text) >= reported
    assert counter.count(probe) >= _four_chars_a_token(probe)


@given(st.recursive(
    st.text(max_size=8) | st.integers() | st.none(),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["text", "content", "type", "role", "model", "x"]), inner,
                      max_size=3),
    max_leaves=12,
))
def test_request_text_holds_every_string_but_names(value: object) -> None:
    def leaves(node: object, skipped: bool) -> list[tuple[str, bool]]:
        if isinstance(node, str):
            return [(node, skipped)]
        if isinstance(node, dict):
            return [x for k, v in node.items() for x in leaves(v, skipped or k in NAMES)]
        if isinstance(node, list):
            return [x for v in node for x in leaves(v, skipped)]
        return []

    found = leaves({"body": value}, False)
    kept = [s for s, skipped in found if not skipped]
    assert request_text({"body": value}) == "\n".join(kept)


NAMES = {"type", "role", "model", "betas"}


class _Endpoint:
    """A stand-in endpoint counter: reports a fixed figure, or refuses."""

    def __init__(self, figure: int | None) -> None:
        self.figure = figure
        self.asked: list[dict[str, Any]] = []

    def count_request(self, request: Mapping[str, Any]) -> int:
        self.asked.append(dict(request))
        if self.figure is None:
            raise UnsupportedOptionError("refused", option="x", gateway="g", model=None)
        return self.figure

    async def acount_request(self, request: Mapping[str, Any]) -> int:
        return self.count_request(request)


def test_calibrate_fits_the_requests_model_and_a_refusal_changes_nothing() -> None:
    request = {"model": "m1", "system": "Be terse.", "messages": [
        {"role": "user", "content": "日本語の質問です。" * 8}]}
    calibration = Calibration()
    assert calibration.calibrate(_Endpoint(120), "anthropic", request) == 120
    fitted = calibration.counter("anthropic", "m1")
    assert fitted.count(request_text(request)) >= 120 and fitted.ratio > 1
    assert calibration.counter("anthropic", "m2").ratio == 1.0  # another model: not fitted
    assert calibration.counter("gemini", "m1").ratio == 1.0
    with pytest.raises(UnsupportedOptionError):
        calibration.calibrate(_Endpoint(None), "anthropic", {**request, "model": "m2"})
    assert calibration.counter("anthropic", "m2").ratio == 1.0
    # only what the endpoint counted is compared with the figure
    contents = {"contents": [{"role": "user", "parts": [{"text": "hi there, hydrangea"}]}]}
    figure = asyncio.run(calibration.acalibrate(
        _Endpoint(10), "gemini", {**contents, "model": "g", "config": {"system_instruction": {
            "parts": [{"text": "a long system instruction " * 20}]}}}, counted=contents))
    assert figure == 10
    assert calibration.counter("gemini", "g").ratio == pytest.approx(10 / 5)
    assert "anthropic/m1" in repr(calibration)


def test_calibrated_on_a_real_count_endpoint() -> None:
    ctx = Context(GatewayType.anthropic)
    ctx.emplace_message(Message(role=Role.user, content="アジサイの高さはどのくらい?" * 4))
    request = ctx.request(model="claude-sonnet-4-5", max_tokens=64)
    calibration = Calibration()
    with capture_server([(200, {"input_tokens": 90})]) as server:
        client = anthropic.Anthropic(api_key="k", base_url=server.base_url, max_retries=0)
        counter = AnthropicTokenCounter(client)
        assert calibration.calibrate(counter, GatewayType.anthropic, request) == 90
    assert len(server.captured) == 1
    local = calibration.counter(GatewayType.anthropic, "claude-sonnet-4-5")
    assert local.count(request_text(request)) >= 90  # later budgets: no endpoint call
