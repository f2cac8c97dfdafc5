"""Anthropic Messages: the adapter, its wire checks and request building, caching, streams."""

from hydrangea.providers.anthropic.adapter import AnthropicAdapter
from hydrangea.providers.anthropic.caching import AnthropicCaching, CacheTTL

__all__ = ["AnthropicAdapter", "AnthropicCaching", "CacheTTL"]
