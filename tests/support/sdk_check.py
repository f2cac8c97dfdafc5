"""One entry point to validate a built request against the official SDK's own request types.

Each gateway's checks live in their own module (``check_openai``, ``check_anthropic``,
``check_gemini``); this module only dispatches, so every test can say
``validate_request(gateway, kwargs)`` without caring which SDK is behind it.
"""

from __future__ import annotations

from typing import Any, assert_never

from hypothesis import strategies as st

from hydrangea.context import NativeContent
from hydrangea.gateway import GatewayType


def validate_request(gateway: GatewayType, kwargs: dict[str, Any]) -> None:
    """Raise if ``kwargs`` is not a valid request for ``gateway`` by the SDK's own types."""
    match gateway:
        case GatewayType.openai:
            from tests.support import check_openai

            check_openai.validate_chat(kwargs)
        case GatewayType.openai_responses:
            from tests.support import check_openai

            check_openai.validate_responses(kwargs)
        case GatewayType.anthropic:
            from tests.support import check_anthropic

            check_anthropic.validate(kwargs)
        case GatewayType.gemini:
            from tests.support import check_gemini

            check_gemini.validate(kwargs)
        case _:
            assert_never(gateway)


def model_outputs(gateway: GatewayType) -> st.SearchStrategy[list[NativeContent]]:
    """Native model output for ``gateway`` (text, tool calls, reasoning), as push_back takes."""
    match gateway:
        case GatewayType.openai:
            from tests.support import check_openai

            return check_openai.chat_outputs()
        case GatewayType.openai_responses:
            from tests.support import check_openai

            return check_openai.responses_outputs()
        case GatewayType.anthropic:
            from tests.support import check_anthropic

            return check_anthropic.outputs()
        case GatewayType.gemini:
            from tests.support import check_gemini

            return check_gemini.outputs()
        case _:
            assert_never(gateway)
