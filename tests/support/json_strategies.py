"""Hypothesis strategies shared by the native-output generators of the provider checks.

Opaque base64 tokens (signatures, redacted reasoning), short non-empty texts, small JSON
values, and tool names and arguments as a model would emit them.
"""

from __future__ import annotations

import base64
from typing import Any

from hypothesis import strategies as st

base64_tokens = st.binary(min_size=1, max_size=64).map(lambda raw: base64.b64encode(raw).decode())
"""Opaque base64 text, as providers use for signatures and redacted reasoning."""

short_texts = st.text(min_size=1, max_size=40)
"""Non-empty text of at most 40 characters."""

json_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
"""Small JSON values: scalars, lists and objects nested a little."""

tool_arguments = st.dictionaries(st.text(min_size=1, max_size=8), json_values, max_size=3)
"""A tool call's arguments: a JSON object of at most three keys."""

tool_names = st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True)
"""A tool name: lower-case identifier of at most 16 characters."""
