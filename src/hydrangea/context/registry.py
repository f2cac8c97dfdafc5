"""Which adapter serves which gateway."""

from __future__ import annotations

from functools import cache
from typing import assert_never

from hydrangea.context.adapter import Adapter
from hydrangea.gateway import GatewayType

__all__ = ["adapter_for"]


@cache
def adapter_for(gateway: GatewayType) -> Adapter:
    """The shared adapter instance for ``gateway``."""
    match gateway:
        case GatewayType.openai:
            from hydrangea.context.openai_chat import OpenAIChatAdapter

            return OpenAIChatAdapter()
        case GatewayType.openai_responses:
            from hydrangea.context.openai_responses import OpenAIResponsesAdapter

            return OpenAIResponsesAdapter()
        case GatewayType.anthropic:
            from hydrangea.context.anthropic_messages import AnthropicAdapter

            return AnthropicAdapter()
        case GatewayType.gemini:
            from hydrangea.context.gemini import GeminiAdapter

            return GeminiAdapter()
        case _:
            assert_never(gateway)
