"""The fast paths of ``push_back`` against the general pipeline they replace.

``push_back`` of a dict or a list copies and checks the JSON once, reads it through
``Adapter.from_pushed`` (no ``json.dumps`` trial, no second ``canonical`` where it is idempotent)
and key-sorts the items with an unchecked clone. The oracles (``tests/support/reference_json``)
are the walks written value by value and the general pipeline built on public adapter methods:
stored bytes (key order included) and refusals (class and message) must be the same.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.errors import HydrangeaError
from hydrangea.gateway import GatewayType
from hydrangea.providers.native import clone_sorted, copy_json_value
from hydrangea.providers.registry import adapter_for
from tests.support.real_corpus import RESPONSES
from tests.support.reference_json import reference_copy, reference_stored
from tests.support.wild import deep, wild, wild_items

GATEWAYS = list(GatewayType)


def _outcome(call: Any) -> tuple[str, Any]:
    try:
        value = call()
    except HydrangeaError as error:
        return "error", (type(error), str(error))
    return "ok", json.dumps(value)  # key order counts


@seed(160)
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(value=st.one_of(wild, wild_items, deep), sort_keys=st.booleans())
def test_the_copy_walk_returns_and_refuses_as_the_value_by_value_walk(
    value: Any, sort_keys: bool
) -> None:
    fast = _outcome(lambda: copy_json_value(value, "the value", sort_keys=sort_keys))
    slow = _outcome(lambda: reference_copy(value, "the value", sort_keys=sort_keys))
    assert fast == slow


_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False,
              allow_infinity=False), st.text(max_size=6)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)


@seed(161)
@given(value=_json)
def test_clone_sorted_is_a_fresh_key_sorted_copy(value: Any) -> None:
    cloned = clone_sorted(value)
    assert json.dumps(cloned) == json.dumps(value, sort_keys=True)

    def containers(tree: Any) -> list[int]:
        if isinstance(tree, dict):
            return [id(tree), *(i for inner in tree.values() for i in containers(inner))]
        if isinstance(tree, list):
            return [id(tree), *(i for inner in tree for i in containers(inner))]
        return []

    assert not set(containers(cloned)) & set(containers(value))


# Bodies with what a turn carries: tool calls (with and without ids), server tools, thinking,
# reasoning, nulls, camelCase (and keys the snake_case rule renames differently twice).
_args = st.dictionaries(st.sampled_from(["q", "city", "fooBar", "n"]), _json, max_size=3)
_ids = st.sampled_from(["call_1", "call_2", "toolu_1", ""])
_names = st.sampled_from(["search", "lookup", "fooBAR"])
_text = st.text(max_size=8)
_nullable = st.one_of(st.none(), _text)

_anthropic_block = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": _text},
                          optional={"citations": st.none()}),
    st.fixed_dictionaries({"type": st.just("thinking"), "thinking": _text,
                           "signature": st.just("c2ln")}),
    st.fixed_dictionaries({"type": st.just("redacted_thinking"), "data": st.just("ZGF0YQ==")}),
    st.fixed_dictionaries({"type": st.just("tool_use"), "id": _ids, "name": _names,
                           "input": _args}),
    st.fixed_dictionaries({"type": st.just("server_tool_use"), "id": _ids, "name": _names,
                           "input": _args}),
    st.fixed_dictionaries({"type": st.just("web_search_tool_result"), "tool_use_id": _ids,
                           "content": st.lists(_json, max_size=2)}),
    st.fixed_dictionaries({"type": st.just("mcp_tool_use"), "id": _ids, "name": _names,
                           "server_name": _text, "input": _args}),
)
_anthropic = st.one_of(
    st.fixed_dictionaries({
        "type": st.just("message"), "role": st.just("assistant"), "id": _text,
        "model": st.sampled_from(["claude-x", ""]),
        "content": st.lists(_anthropic_block, max_size=4),
        "stop_reason": _nullable,
        "usage": st.fixed_dictionaries({"input_tokens": st.integers(0, 9),
                                        "output_tokens": st.integers(0, 9)},
                                       optional={"cache_read_input_tokens": st.integers(0, 9)}),
    }),
    st.fixed_dictionaries({"role": st.just("assistant"),
                           "content": st.lists(_anthropic_block, max_size=3)}).map(
        lambda item: [item]),
)

_call = st.fixed_dictionaries({
    "id": _ids, "type": st.just("function"),
    "function": st.fixed_dictionaries({"name": _names, "arguments": _text}),
})
_chat_message = st.fixed_dictionaries(
    {"role": st.just("assistant")},
    optional={"content": _nullable, "tool_calls": st.lists(_call, max_size=3),
              "refusal": st.none(), "annotations": st.lists(_json, max_size=1),
              "audio": st.one_of(st.none(), st.fixed_dictionaries({"id": _text, "data": _text})),
              "parsed": _json},
)
_chat = st.one_of(
    st.fixed_dictionaries({
        "object": st.just("chat.completion"), "model": _text, "id": _text,
        "choices": st.tuples(st.fixed_dictionaries({"index": st.just(0),
                                                    "message": _chat_message})).map(list),
        "usage": st.fixed_dictionaries({"prompt_tokens": st.integers(0, 9),
                                        "completion_tokens": st.integers(0, 9)}),
    }),
    _chat_message,
    st.lists(_chat_message, max_size=2),
)

_responses_item = st.one_of(
    st.fixed_dictionaries({
        "type": st.just("message"), "role": st.just("assistant"), "id": _text,
        "status": st.just("completed"),
        "content": st.lists(st.fixed_dictionaries({
            "type": st.just("output_text"), "text": _text,
            "annotations": st.lists(_json, max_size=1), "logprobs": st.none()}), max_size=2),
    }),
    st.fixed_dictionaries({"type": st.just("reasoning"), "id": _text,
                           "summary": st.lists(st.fixed_dictionaries(
                               {"type": st.just("summary_text"), "text": _text}), max_size=2),
                           "encrypted_content": _nullable}),
    st.fixed_dictionaries({"type": st.just("function_call"), "id": _text,
                           "call_id": _ids, "name": _names, "arguments": _text,
                           "status": _nullable}),
    st.fixed_dictionaries({"type": st.just("web_search_call"), "id": _text,
                           "status": st.just("completed"), "action": _json}),
)
_responses = st.one_of(
    st.fixed_dictionaries({
        "object": st.just("response"), "id": _text, "model": _text,
        "output": st.lists(_responses_item, max_size=4),
        "usage": st.fixed_dictionaries({"input_tokens": st.integers(0, 9),
                                        "output_tokens": st.integers(0, 9),
                                        "input_tokens_details": st.fixed_dictionaries(
                                            {"cached_tokens": st.integers(0, 9)})}),
    }),
    _responses_item,
    st.lists(_responses_item, max_size=3),
)

_function_call = st.fixed_dictionaries({"name": _names, "args": _args},
                                       optional={"id": st.sampled_from(["c1", "c2"])})
_gemini_part = st.one_of(
    st.fixed_dictionaries({"text": _text}, optional={"thought": st.booleans()}),
    st.fixed_dictionaries({"functionCall": _function_call},
                          optional={"thoughtSignature": st.just("c2ln")}),
    st.fixed_dictionaries({"function_call": _function_call}),
    st.fixed_dictionaries({"executableCode": st.fixed_dictionaries(
        {"language": st.just("PYTHON"), "code": _text})}),
    st.fixed_dictionaries({"toolCall": _json, "fooBAR": _json}),
)
_gemini_content = st.fixed_dictionaries({"role": st.just("model"),
                                         "parts": st.lists(_gemini_part, min_size=1,
                                                           max_size=3)})
_gemini = st.one_of(
    st.fixed_dictionaries({
        "candidates": st.tuples(st.fixed_dictionaries(
            {"content": _gemini_content}, optional={"finishReason": st.just("STOP")})).map(list),
        "modelVersion": _text,
        "usageMetadata": st.fixed_dictionaries({"promptTokenCount": st.integers(0, 9),
                                                "candidatesTokenCount": st.integers(0, 9)}),
    }),
    _gemini_content,
    st.lists(_gemini_content, max_size=2),
)

_BODIES = {
    GatewayType.anthropic: _anthropic,
    GatewayType.openai: _chat,
    GatewayType.openai_responses: _responses,
    GatewayType.gemini: _gemini,
}


def _pushed(gateway: GatewayType, output: Any) -> tuple[str, Any]:
    context = Context(gateway)
    try:
        context.push_back(output)
    except HydrangeaError as error:
        assert len(context) == 0
        return "error", (type(error), str(error))
    models = [context.model_of(index) for index in range(len(context))]
    return "ok", (json.dumps(list(context)), models)


def _general(gateway: GatewayType, output: Any) -> tuple[str, Any]:
    adapter = adapter_for(gateway)
    try:
        stored = reference_stored(adapter, output)
    except HydrangeaError as error:
        return "error", (type(error), str(error))
    model = adapter.output_model(output)
    return "ok", (json.dumps(stored), [model] * len(stored))


def _dict_or_list(value: object) -> bool:
    return isinstance(value, dict | list)


@pytest.mark.parametrize("gateway", GATEWAYS)
@seed(162)
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_push_back_of_a_turn_stores_what_the_general_pipeline_stores(
    gateway: GatewayType, data: st.DataObject
) -> None:
    output = data.draw(_BODIES[gateway])
    assert _pushed(gateway, output) == _general(gateway, output)


@pytest.mark.parametrize("gateway", GATEWAYS)
@seed(163)
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(output=wild_items.filter(_dict_or_list))
def test_push_back_of_hostile_json_stores_or_refuses_as_the_general_pipeline(
    gateway: GatewayType, output: Any
) -> None:
    # (anything but a dict or a list takes the general path itself: an SDK object, a tuple)
    assert _pushed(gateway, output) == _general(gateway, output)


@pytest.mark.parametrize("fixture", RESPONSES, ids=lambda fixture: fixture.name)
def test_push_back_of_recorded_traffic_stores_what_the_general_pipeline_stores(
    fixture: Any,
) -> None:
    pushed = _pushed(fixture.gateway, fixture.response)
    assert pushed == _general(fixture.gateway, fixture.response)


class _Key(str):
    """A str subclass as a key: the checked walk turns it into a plain str."""


@pytest.mark.parametrize(
    "value",
    [{1: "a", "b": 2}, {"a": {2: 1, 3: 2}}, [{_Key("k"): 1}], {"a": (1, 2)}, {"a": {1, 2}}],
)
def test_clone_sorted_hands_what_is_not_plain_json_to_the_checked_walk(value: Any) -> None:
    def outcome(call: Any) -> tuple[str, Any]:
        try:
            copied = call()
        except HydrangeaError as error:
            return "error", (type(error), str(error))
        return "ok", (json.dumps(copied), [type(key) for key in _keys(copied)])

    assert outcome(lambda: clone_sorted(value)) == outcome(
        lambda: reference_copy(value, "a native item", sort_keys=True)
    )


def _keys(tree: Any) -> list[Any]:
    if isinstance(tree, dict):
        return [*tree, *(key for inner in tree.values() for key in _keys(inner))]
    if isinstance(tree, list):
        return [key for inner in tree for key in _keys(inner)]
    return []
