"""The providers: one folder per vendor behind the :class:`Adapter` contract.

``hydrangea.providers.anthropic``, ``hydrangea.providers.openai`` (Chat Completions and Responses)
and ``hydrangea.providers.gemini`` each hold everything about their wire: the checks of what is
pushed, request building, reading replies back, caching rules, streams and the SDK types they
recognise. Beside them sit the engines every provider shares (pairing tool calls with results,
turn grouping, intake of SDK objects and raw bodies, usage). Nothing here imports the Context:
the Context asks a provider through its adapter (:func:`adapter_for`).

Adding a provider is a new folder and one line in :mod:`hydrangea.providers.registry`; the
contributing page lists the files it takes.
"""

from hydrangea.providers.adapter import Adapter
from hydrangea.providers.anthropic import AnthropicAdapter, AnthropicCaching, CacheTTL
from hydrangea.providers.gemini import GeminiAdapter, GeminiContextCache, gemini_minimum_tokens
from hydrangea.providers.native import NativeContent
from hydrangea.providers.openai import (
    OpenAICaching,
    OpenAIChatAdapter,
    OpenAIResponsesAdapter,
    PromptCacheRetention,
    session_cache_key,
)
from hydrangea.providers.registry import adapter_for
from hydrangea.providers.sdk import read_sdk_response
from hydrangea.providers.streams import assemble
from hydrangea.providers.usage import Usage, UsageLog, UsageRecord, usage_of

__all__ = [
    "Adapter",
    "AnthropicAdapter",
    "AnthropicCaching",
    "CacheTTL",
    "GeminiAdapter",
    "GeminiContextCache",
    "NativeContent",
    "OpenAICaching",
    "OpenAIChatAdapter",
    "OpenAIResponsesAdapter",
    "PromptCacheRetention",
    "Usage",
    "UsageLog",
    "UsageRecord",
    "adapter_for",
    "assemble",
    "gemini_minimum_tokens",
    "read_sdk_response",
    "session_cache_key",
    "usage_of",
]
