"""Which adapter serves which gateway."""

from __future__ import annotations

from functools import cache
from typing import assert_never

from hydrangea.gateway import GatewayType
from hydrangea.providers.adapter import Adapter

__all__ = ["adapter_for"]


@cache
def adapter_for(gateway: GatewayType) -> Adapter:
    """The shared adapter instance for ``gateway``."""
    match gateway:
        case GatewayType.openai:
            from hydrangea.providers.openai.chat import OpenAIChatAdapter

            return OpenAIChatAdapter()
        case GatewayType.openai_responses:
            from hydrangea.providers.openai.responses import OpenAIResponsesAdapter

            return OpenAIResponsesAdapter()
        case GatewayType.anthropic:
            from hydrangea.providers.anthropic.adapter import AnthropicAdapter

            return AnthropicAdapter()
        case GatewayType.gemini:
            from hydrangea.providers.gemini.adapter import GeminiAdapter

            return GeminiAdapter()
        case _:
            assert_never(gateway)
