"""Anthropic Messages: the adapter, its wire checks and request building, caching, streams,
context management (context editing, threshold and on-demand compaction), cache diagnostics."""

from hydrangea.providers.anthropic.adapter import AnthropicAdapter
from hydrangea.providers.anthropic.caching import AnthropicCaching, CacheTTL
from hydrangea.providers.anthropic.diagnostics import CacheDiagnostics
from hydrangea.providers.anthropic.management import (
    ClearThinking,
    ClearToolUses,
    ContextEditing,
    OnDemandCompaction,
    ThresholdCompaction,
)

__all__ = [
    "AnthropicAdapter",
    "AnthropicCaching",
    "CacheDiagnostics",
    "CacheTTL",
    "ClearThinking",
    "ClearToolUses",
    "ContextEditing",
    "OnDemandCompaction",
    "ThresholdCompaction",
]
