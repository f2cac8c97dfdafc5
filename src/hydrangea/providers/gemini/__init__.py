"""Gemini: the adapter, its checks, request building, reading replies, context caches, streams."""

from hydrangea.providers.gemini.adapter import GeminiAdapter
from hydrangea.providers.gemini.caching import GeminiContextCache, gemini_minimum_tokens

__all__ = ["GeminiAdapter", "GeminiContextCache", "gemini_minimum_tokens"]
