"""The request builders' path for items without tool calls against their general path.

Every gateway's builder makes a request of items holding no tool call or result without the
pairing (``_without_tools``); the oracle is the general path itself, forced by turning that
test off, on random conversations: system items (leading and later), text and empty content,
thinking and redacted thinking, server-side tools, images, runs of one role, and tool calls and
results (with and without ids) that send both through the general path. The request must be
the same (key order included), independent of the items, and leave them unchanged.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, seed
from hypothesis import strategies as st

from hydrangea.gateway import GatewayType
from hydrangea.providers.anthropic import _request as _anthropic_request
from hydrangea.providers.gemini import _request as _gemini_request
from hydrangea.providers.openai import chat as openai_chat
from hydrangea.providers.openai import responses as openai_responses
from hydrangea.providers.registry import adapter_for

_text = st.sampled_from(["", "hi", "ok", "[system] x", "caf\u00e9"])
_ids = st.sampled_from(["t1", "t2", "", "x"])
_names = st.sampled_from(["search", "lookup"])

_user_block = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": _text}),
    st.fixed_dictionaries({"type": st.just("image"), "source": st.just(
        {"type": "base64", "media_type": "image/png", "data": "aQ=="})}),
)
_assistant_block = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": _text}),
    st.fixed_dictionaries({"type": st.just("thinking"), "thinking": _text,
                           "signature": st.just("c2ln")}),
    st.fixed_dictionaries({"type": st.just("redacted_thinking"), "data": st.just("ZA==")}),
    st.fixed_dictionaries({"type": st.just("server_tool_use"), "id": st.just("srvtoolu_1"),
                           "name": st.just("web_search"), "input": st.just({"query": "x"})}),
    st.fixed_dictionaries({"type": st.just("web_search_tool_result"),
                           "tool_use_id": st.just("srvtoolu_1"), "content": st.just([])}),
)
_tool_use = st.fixed_dictionaries({"type": st.just("tool_use"), "id": _ids.filter(bool),
                                   "name": _names, "input": st.just({"q": "x"})})
_tool_result = st.fixed_dictionaries({
    "type": st.just("tool_result"), "tool_use_id": _ids.filter(bool),
    "content": st.one_of(_text, st.just([{"type": "text", "text": "r"}])),
})


def _anthropic_items(with_tools: bool) -> st.SearchStrategy[list[dict[str, Any]]]:
    user = st.one_of(_user_block, _tool_result) if with_tools else _user_block
    assistant = st.one_of(_assistant_block, _tool_use) if with_tools else _assistant_block
    item = st.one_of(
        st.fixed_dictionaries({"role": st.just("user"),
                               "content": st.one_of(_text, st.lists(user, max_size=3))}),
        st.fixed_dictionaries({"role": st.just("assistant"),
                               "content": st.one_of(_text, st.lists(assistant, max_size=3))}),
        st.fixed_dictionaries({"role": st.just("system"), "content": st.one_of(
            _text.filter(bool), st.lists(st.just({"type": "text", "text": "s"}), min_size=1,
                                         max_size=2))}),
    )
    return st.lists(item, max_size=7)


_user_part = st.one_of(
    st.fixed_dictionaries({"text": _text.filter(bool)}),
    st.fixed_dictionaries({"inline_data": st.just({"mime_type": "image/png", "data": "aQ=="})}),
)
_model_part = st.one_of(
    st.fixed_dictionaries(
        {"text": _text.filter(bool)},
        optional={"thought": st.booleans(), "thought_signature": st.just("c2ln")},
    ),
    st.fixed_dictionaries({"executable_code": st.just({"language": "PYTHON", "code": "1"})}),
    st.fixed_dictionaries({"code_execution_result": st.just({"outcome": "OUTCOME_OK"})}),
)
_gemini_tools = (
    st.fixed_dictionaries({"function_call": st.fixed_dictionaries(
        {"name": _names, "args": st.just({})}, optional={"id": st.sampled_from(["c1", "c2"])})}),
    st.fixed_dictionaries({"function_response": st.fixed_dictionaries(
        {"name": _names, "response": st.just({"output": "r"})},
        optional={"id": st.sampled_from(["c1", "c2", "search#0"])})}),
)


def _gemini_items(with_tools: bool) -> st.SearchStrategy[list[dict[str, Any]]]:
    calls, responses = _gemini_tools
    user = st.one_of(_user_part, responses) if with_tools else _user_part
    model = st.one_of(_model_part, calls) if with_tools else _model_part
    item = st.one_of(
        st.fixed_dictionaries({"role": st.just("user"), "parts": st.lists(user, max_size=3)}),
        st.fixed_dictionaries({"role": st.just("model"), "parts": st.lists(model, max_size=3)}),
        st.fixed_dictionaries({"role": st.just("system"), "parts": st.lists(
            st.just({"text": "s"}), min_size=1, max_size=2)}),
    )
    return st.lists(item, max_size=7)


def _chat_items(with_tools: bool) -> st.SearchStrategy[list[dict[str, Any]]]:
    call = st.fixed_dictionaries({"id": _ids, "type": st.just("function"), "function": st.just(
        {"name": "search", "arguments": "{}"})})
    plain = [
        st.fixed_dictionaries({"role": st.sampled_from(["user", "system", "developer"]),
                               "content": _text}),
        st.fixed_dictionaries({"role": st.just("assistant"), "content": _text}),
    ]
    tools = [
        st.fixed_dictionaries({"role": st.just("assistant"), "content": st.none(),
                               "tool_calls": st.lists(call, min_size=1, max_size=2)}),
        st.fixed_dictionaries({"role": st.just("tool"), "tool_call_id": _ids.filter(bool),
                               "content": _text}),
    ]
    return st.lists(st.one_of(*plain, *(tools if with_tools else [])), max_size=7)


def _responses_items(with_tools: bool) -> st.SearchStrategy[list[dict[str, Any]]]:
    plain = [
        st.fixed_dictionaries({"type": st.just("message"),
                               "role": st.sampled_from(["user", "system", "developer"]),
                               "content": _text}),
        st.fixed_dictionaries({
            "type": st.just("message"), "role": st.just("assistant"), "id": st.just("msg_1"),
            "status": st.just("completed"),
            "content": st.just([{"type": "output_text", "text": "a", "annotations": []}])}),
        st.fixed_dictionaries({"type": st.just("reasoning"), "id": st.just("rs_1"),
                               "summary": st.just([])}),
        st.fixed_dictionaries({"type": st.just("web_search_call"), "id": st.just("ws_1"),
                               "status": st.just("completed"),
                               "action": st.just({"type": "search", "query": "q"})}),
    ]
    tools = [
        st.fixed_dictionaries({"type": st.just("function_call"), "id": st.just("fc_1"),
                               "call_id": _ids.filter(bool), "name": _names,
                               "arguments": st.just("{}")}),
        st.fixed_dictionaries({"type": st.just("function_call_output"),
                               "call_id": _ids.filter(bool), "output": _text}),
    ]
    return st.lists(st.one_of(*plain, *(tools if with_tools else [])), max_size=7)


_CASES = {
    GatewayType.anthropic: (_anthropic_request, _anthropic_items),
    GatewayType.gemini: (_gemini_request, _gemini_items),
    GatewayType.openai: (openai_chat, _chat_items),
    GatewayType.openai_responses: (openai_responses, _responses_items),
}


def _containers(tree: Any) -> set[int]:
    if isinstance(tree, dict):
        return {id(tree)}.union(*(_containers(inner) for inner in tree.values()))
    if isinstance(tree, list):
        return {id(tree)}.union(*(_containers(inner) for inner in tree))
    return set()


@pytest.mark.parametrize("gateway", list(_CASES))
@seed(170)
@given(data=st.data())
def test_the_request_without_tools_is_the_general_paths(
    gateway: GatewayType, data: st.DataObject
) -> None:
    module, strategy = _CASES[gateway]
    items = data.draw(st.one_of(strategy(False), strategy(True)))
    before = copy.deepcopy(items)
    adapter = adapter_for(gateway)
    fast = adapter.build_request(items)
    assert items == before
    assert not _containers(fast) & _containers(items)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "_without_tools", lambda items: False)
        general = adapter.build_request(items)
    assert json.dumps(fast) == json.dumps(general)


@pytest.mark.parametrize("gateway", list(_CASES))
def test_the_fast_path_is_taken_without_tools_and_not_with_them(gateway: GatewayType) -> None:
    module, _ = _CASES[gateway]
    if gateway is GatewayType.anthropic:
        plain = [{"role": "user", "content": "hi"},
                 {"role": "assistant", "content": [{"type": "server_tool_use", "id": "s",
                                                    "name": "web_search", "input": {}}]}]
        tools = [{"role": "assistant", "content": [{"type": "tool_use", "id": "t",
                                                    "name": "f", "input": {}}]}]
    elif gateway is GatewayType.openai:
        plain = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]
        tools = [{"role": "tool", "tool_call_id": "t", "content": "r"}]
    elif gateway is GatewayType.openai_responses:
        plain = [{"type": "message", "role": "user", "content": "hi"},
                 {"type": "web_search_call", "id": "ws", "status": "completed"}]
        tools = [{"type": "custom_tool_call_output", "call_id": "t", "output": "r"}]
    else:
        plain = [{"role": "user", "parts": [{"text": "hi"}]},
                 {"role": "model", "parts": [{"executable_code": {"code": "1"}}]}]
        tools = [{"role": "model", "parts": [{"function_call": {"name": "f", "args": {}}}]}]
    assert module._without_tools(plain)
    assert not module._without_tools(tools)
