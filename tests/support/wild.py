"""Hypothesis strategies for hostile input: wrong types, lone surrogates, deep nesting.

Used by the fuzz suites (``tests/test_fuzz_*.py``): anything a caller, a provider or a file
could hand the library, biased towards the field names the adapters read, so that the values
reach the checks behind them.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st

SURROGATES = ("\ud800", "\udbff", "\udc00", "\udfff", "\ud83d")
"""Lone surrogates: half of a UTF-16 pair, as a cut emoji or json.loads('"\\ud83d"') gives."""

FIELDS = (
    "role",
    "content",
    "type",
    "text",
    "parts",
    "detail",
    "status",
    "media_type",
    "source",
    "id",
    "call_id",
    "name",
    "arguments",
    "output",
    "input",
    "tool_use_id",
    "signature",
    "thinking",
    "data",
    "function_call",
    "functionCall",
    "functionResponse",
    "function_response",
    "thought_signature",
    "thoughtSignature",
    "summary",
    "encrypted_content",
    "image_url",
    "url",
    "tool_calls",
    "function",
    "refusal",
    "annotations",
    "is_error",
    "args",
    "response",
    "inline_data",
    "inlineData",
    "mime_type",
    "mimeType",
    "file_data",
    "thought",
    "model",
)
"""Field names the gateway adapters read."""

WORDS = (
    "user",
    "assistant",
    "system",
    "model",
    "tool",
    "developer",
    "function",
    "message",
    "text",
    "input_text",
    "output_text",
    "image",
    "tool_use",
    "tool_result",
    "thinking",
    "redacted_thinking",
    "function_call",
    "function_call_output",
    "reasoning",
    "base64",
    "url",
    "auto",
    "low",
    "high",
    "completed",
    "in_progress",
    "image/png",
    "text/plain",
    "",
)
"""Values those fields take (and near misses)."""

surrogate_texts = st.tuples(
    st.text(max_size=4), st.sampled_from(SURROGATES), st.text(max_size=4)
).map("".join)
"""Text holding at least one lone surrogate."""

texts = st.one_of(st.text(max_size=8), st.sampled_from(WORDS), surrogate_texts)
"""Short text, the adapters' words, or text that cannot be encoded."""

scalars: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([2**63, 2**64, -(2**63) - 1, 10**30]),
    st.floats(allow_nan=True, allow_infinity=True),
    texts,
    st.binary(max_size=4),
)
"""Every kind of leaf, JSON or not."""


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    keys = st.one_of(st.sampled_from(FIELDS), texts, st.integers(-2, 2), st.none())
    return st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=2).map(tuple),
        st.dictionaries(keys, inner, max_size=4),
        st.frozensets(st.integers(), max_size=2),
    )


wild: st.SearchStrategy[Any] = st.recursive(scalars, _containers, max_leaves=12)
"""Any value, nested a little."""


def nested(depth: int, leaf: Any = "x") -> Any:
    """A value nested ``depth`` levels deep, alternating objects and arrays."""
    value = leaf
    for level in range(depth):
        value = {"content": value} if level % 2 else [value]
    return value


deep = st.integers(min_value=500, max_value=3_000).map(nested)
"""Values nested around and past the library's 512-level bound."""

_field_value = st.one_of(st.sampled_from(WORDS), wild)

blocks = st.fixed_dictionaries(
    {"type": st.sampled_from(WORDS)},
    optional={name: _field_value for name in FIELDS if name != "type"},
)
"""A content block or part of a known type whose other fields may have any type."""

near_valid_items = st.fixed_dictionaries(
    {"role": st.sampled_from(("user", "assistant", "model", "system"))},
    optional={
        "type": st.sampled_from(WORDS),
        "content": st.one_of(texts, st.lists(blocks, max_size=3)),
        "parts": st.lists(blocks, max_size=3),
        "status": _field_value,
        "detail": _field_value,
        "id": _field_value,
        "call_id": _field_value,
        "name": _field_value,
        "arguments": _field_value,
        "output": _field_value,
        "summary": st.one_of(st.lists(blocks, max_size=2), wild),
        "tool_calls": st.lists(
            st.fixed_dictionaries(
                {"type": st.just("function")},
                optional={"id": _field_value, "function": st.one_of(blocks, wild)},
            ),
            max_size=2,
        ),
    },
)
"""Items with a valid role whose other fields are of known names and any type."""

wild_items: st.SearchStrategy[Any] = st.one_of(
    near_valid_items,
    near_valid_items.map(lambda item: [item]),
    st.fixed_dictionaries(
        {"role": st.one_of(st.sampled_from(WORDS), wild)},
        optional={
            "content": st.one_of(
                texts,
                wild,
                st.lists(st.dictionaries(st.sampled_from(FIELDS), wild, max_size=4), max_size=3),
            ),
            "parts": st.lists(
                st.dictionaries(st.sampled_from(FIELDS), wild, max_size=4), max_size=3
            ),
            "type": st.one_of(st.sampled_from(WORDS), wild),
            "deep": deep,
        },
    ),
    st.dictionaries(st.sampled_from(FIELDS), st.one_of(st.sampled_from(WORDS), wild), max_size=5),
    wild,
)
"""Things pushed as model output: item-shaped dicts with wrong-typed fields, and anything."""


def is_json(value: object) -> bool:
    """True if ``value`` is JSON as the library accepts it (an independent, simple check)."""
    if value is None or isinstance(value, bool | int | str):
        return not isinstance(value, str) or not any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list | tuple):
        return all(is_json(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and is_json(k) and is_json(v) for k, v in value.items())
    return False
