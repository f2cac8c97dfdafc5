"""The providers a :class:`~hydrangea.context.Context` can speak to."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["GatewayType"]


class GatewayType(StrEnum):
    """One provider API, and so one wire shape for context items."""

    openai = "openai"
    """OpenAI Chat Completions (``client.chat.completions.create``)."""
    openai_responses = "openai_responses"
    """OpenAI Responses (``client.responses.create``)."""
    anthropic = "anthropic"
    """Anthropic Messages (``client.messages.create``)."""
    gemini = "gemini"
    """Google Gemini through google-genai (``client.models.generate_content``)."""
