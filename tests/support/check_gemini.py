"""Gemini request checks for tests: google-genai's pydantic types, then the API's turn rules.

``validate(kwargs)`` raises ``AssertionError`` (or pydantic's ``ValidationError``) when the
keyword arguments built for ``client.models.generate_content`` would not be accepted:

* every entry of ``contents`` validates as ``google.genai.types.Content`` and ``config`` as
  ``GenerateContentConfig`` (both forbid unknown keys; base64 fields are decoded);
* the rules the types cannot express: roles ``user``/``model`` only, alternating, starting with
  the user; thought parts and signatures only in model turns; every model turn's function calls
  answered, first thing and in order, by named function responses in the very next user turn.

``outputs()`` draws native model output as ``push_back`` takes it.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from hydrangea.context import NativeContent
from tests.support.json_strategies import base64_tokens, short_texts, tool_arguments, tool_names


def _check_types(kwargs: dict[str, Any]) -> None:
    from google.genai import types

    unknown = set(kwargs) - {"contents", "config"}
    assert not unknown, f"unexpected request keys {sorted(unknown)}"
    contents = kwargs["contents"]
    assert isinstance(contents, list), "contents must be a list"
    for content in contents:
        assert isinstance(content, dict), "each content must be a dict"
        types.Content.model_validate(content)
    if "config" in kwargs:
        config = types.GenerateContentConfig.model_validate(kwargs["config"])
        assert config.system_instruction is not None, "config carries only system_instruction"


def _check_turns(contents: list[dict[str, Any]]) -> None:
    if contents:
        assert contents[0]["role"] == "user", "the first content must be a user turn"
    for index, content in enumerate(contents):
        role = content["role"]
        assert role in {"user", "model"}, f"content {index} has role {role!r}"
        if index:
            assert contents[index - 1]["role"] != role, (
                f"contents {index - 1} and {index} share a role"
            )
        parts = content["parts"]
        assert parts, f"content {index} has no parts"
        if role == "user":
            for part in parts:
                assert "thought" not in part and "thought_signature" not in part, (
                    f"user content {index} carries reasoning state"
                )
                assert "function_call" not in part, f"user content {index} makes a call"
            responses = [p["function_response"] for p in parts if "function_response" in p]
            if responses:
                assert index > 0, "function responses before any call"
                calls = [
                    p["function_call"] for p in contents[index - 1]["parts"] if "function_call" in p
                ]
                assert len(responses) == len(calls), (
                    f"content {index} answers {len(responses)} of {len(calls)} calls"
                )
                head = parts[: len(responses)]
                assert all("function_response" in p for p in head), (
                    f"function responses must come first in content {index}"
                )
                for call, response in zip(calls, responses, strict=True):
                    assert response.get("name") == call["name"], "response name differs from call"
                    if "id" in call and "id" in response:
                        assert response["id"] == call["id"], "response id differs from call"
        else:
            assert not any("function_response" in p for p in parts), (
                f"model content {index} answers"
            )
            if any("function_call" in p for p in parts):
                assert index + 1 < len(contents), f"the calls of content {index} go unanswered"
                following = contents[index + 1]["parts"]
                assert any("function_response" in p for p in following), (
                    f"content {index + 1} does not answer the calls of content {index}"
                )


def validate(kwargs: dict[str, Any]) -> None:
    """Raise unless ``kwargs`` is a request ``client.models.generate_content`` would accept."""
    _check_types(kwargs)
    _check_turns(kwargs["contents"])


# -- model output ------------------------------------------------------------------------------


@st.composite
def _model_output(draw: st.DrawFn) -> NativeContent:
    parts: list[dict[str, Any]] = []
    if draw(st.booleans()):
        parts.append({"text": draw(short_texts), "thought": True})
    for _ in range(draw(st.integers(0, 2))):
        part: dict[str, Any] = {"text": draw(short_texts)}
        if draw(st.booleans()):
            part["thought_signature"] = draw(base64_tokens)
        parts.append(part)
    ids = draw(st.lists(st.uuids().map(lambda u: f"call_{u.hex}"), max_size=3, unique=True))
    with_ids = draw(st.booleans())
    for position, call_id in enumerate(ids):
        name = draw(tool_names)
        arguments = draw(tool_arguments)
        call: dict[str, Any] = {"name": name, "args": arguments}
        if with_ids:
            call = {"id": call_id, **call}
        part = {"function_call": call}
        if position == 0:
            part["thought_signature"] = draw(base64_tokens)
        parts.append(part)
    if not parts:
        parts.append({"text": draw(short_texts), "thought_signature": draw(base64_tokens)})
    return {"role": "model", "parts": parts}


def outputs() -> st.SearchStrategy[list[NativeContent]]:
    """Native model output (thought parts, thought signatures, text, function calls)."""
    return st.lists(_model_output(), min_size=1, max_size=2)
