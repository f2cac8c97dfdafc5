"""Mixed conversations for the adapter tests: neutral Messages and native model output, played
into a Context in order, then a request checked for validity and stability.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import strategies as st

from hydrangea.context import Context, NativeContent
from hydrangea.message import Message
from tests.support.neutral_messages import messages


def mixed_steps(outputs: st.SearchStrategy[list[NativeContent]]) -> st.SearchStrategy[list[Any]]:
    """Up to eight steps, each a neutral Message or one draw of the gateway's ``outputs``."""
    return st.lists(messages.map(lambda m: [m]) | outputs, max_size=8)


def play(context: Context, steps: Sequence[list[Any]]) -> None:
    """Emplace the Message steps and push back the native-output steps, in order.

    A step is a single neutral Message (as a one-element list) or one native model output.
    """
    for step in steps:
        if isinstance(step[0], Message):
            context.emplace_messages(step)
        else:
            context.push_back(step)


def checked_request(context: Context, validate: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Build the request, check it with ``validate``, and assert that building it again gives the
    same request and that building it changed nothing in ``context``."""
    before = json.dumps(list(context))
    request = context.request()
    validate(request)
    assert context.request() == request
    assert json.dumps(list(context)) == before
    return request
