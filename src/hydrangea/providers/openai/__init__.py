"""OpenAI: the Chat Completions and Responses adapters, their checks, prompt caching
(explicit on GPT-5.6, with cache diagnostics), streams, Responses context management (server
compaction, ``/responses/compact``, truncation)."""

from hydrangea.providers.openai.caching import (
    OpenAICaching,
    PromptCacheRetention,
    session_cache_key,
)
from hydrangea.providers.openai.chat import OpenAIChatAdapter
from hydrangea.providers.openai.context_management import (
    ResponsesCompact,
    ResponsesCompaction,
    ResponsesTruncation,
)
from hydrangea.providers.openai.explicit_caching import CacheComparison, OpenAIExplicitCaching
from hydrangea.providers.openai.responses import OpenAIResponsesAdapter

__all__ = [
    "CacheComparison",
    "OpenAICaching",
    "OpenAIChatAdapter",
    "OpenAIExplicitCaching",
    "OpenAIResponsesAdapter",
    "PromptCacheRetention",
    "ResponsesCompact",
    "ResponsesCompaction",
    "ResponsesTruncation",
    "session_cache_key",
]
