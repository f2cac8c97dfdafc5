"""Hypothesis strategies of provider-neutral Messages, for the adapter tests.

Tool ids come from a small pool so that draws produce real call/result pairs, orphan calls,
orphan results, results far from their call and repeated ids.
"""

from __future__ import annotations

from hypothesis import strategies as st

from hydrangea.message import ImagePart, Message, Role, TextPart, ToolCallPart, ToolResultPart

CALL_IDS = ("call_a", "call_b", "call_c", "call_d")
"""The pool tool call and tool result ids are drawn from."""

_text = st.text(min_size=1, max_size=30)
_ids = st.sampled_from(CALL_IDS)
_media = st.sampled_from(["image/png", "image/jpeg", "image/gif", "image/webp"])

text_parts = st.builds(TextPart, text=_text)
image_parts = st.one_of(
    st.builds(
        ImagePart, url=st.sampled_from(["https://example.com/a.png", "https://x.test/b.jpg"])
    ),
    st.builds(ImagePart, data=st.binary(min_size=1, max_size=32), media_type=_media),
)
call_parts = st.builds(
    ToolCallPart,
    id=_ids,
    name=st.sampled_from(["search", "read_file", "add"]),
    arguments=st.dictionaries(
        st.text(min_size=1, max_size=5), st.integers() | st.text(max_size=8), max_size=3
    ),
)
result_parts = st.builds(
    ToolResultPart, call_id=_ids, content=st.text(max_size=30), is_error=st.booleans()
)


def _message(
    role: Role, parts: st.SearchStrategy[TextPart | ImagePart | ToolCallPart | ToolResultPart]
) -> st.SearchStrategy[Message]:
    as_parts = st.lists(parts, min_size=1, max_size=3).map(
        lambda ps: Message(role=role, content=tuple(ps))
    )
    as_text = _text.map(lambda text: Message(role=role, content=text))
    return as_text | as_parts


messages = st.one_of(
    _message(Role.system, text_parts),
    _message(Role.user, text_parts | image_parts | result_parts),
    _message(Role.assistant, text_parts | call_parts),
)
"""Any valid Message: system text, user text/images/tool results, assistant text/tool calls."""
