"""The same demo session against a real provider, through its official SDK.

Needs the provider's API key in the environment and its SDK installed (the gateway's extra).
The scripted tool loop is left out of live runs: the live model is given no tools, so the turns
that would call one are answered directly.
"""

from __future__ import annotations

import os
from typing import Any, assert_never

from hydrangea.demo.scenario import TurnSpec
from hydrangea.demo.scripted import ModelReply
from hydrangea.errors import LiveCallError, LiveUnavailableError
from hydrangea.gateway import GatewayType

__all__ = [
    "DEFAULT_MODELS",
    "KEY_VARIABLES",
    "LiveCallError",
    "LiveModel",
    "LiveUnavailableError",
]

KEY_VARIABLES: dict[GatewayType, tuple[str, ...]] = {
    GatewayType.openai: ("OPENAI_API_KEY",),
    GatewayType.openai_responses: ("OPENAI_API_KEY",),
    GatewayType.anthropic: ("ANTHROPIC_API_KEY",),
    GatewayType.gemini: ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
}
"""The environment variables that may hold each gateway's API key."""

DEFAULT_MODELS: dict[GatewayType, str] = {
    GatewayType.openai: "gpt-4.1-mini",
    GatewayType.openai_responses: "gpt-4.1-mini",
    GatewayType.anthropic: "claude-sonnet-4-5",
    GatewayType.gemini: "gemini-2.5-flash",
}
"""The model a live run uses unless ``--model`` names another."""

_EXTRAS = {
    GatewayType.openai: ("openai", "openai"),
    GatewayType.openai_responses: ("openai", "openai"),
    GatewayType.anthropic: ("anthropic", "anthropic"),
    GatewayType.gemini: ("google.genai", "gemini"),
}




class LiveModel:
    """Sends each request to the provider and hands back the SDK's response object."""

    def __init__(self, gateway: GatewayType, model: str | None = None) -> None:
        """Check the key and the SDK now, so a missing one fails before the session starts."""
        names = KEY_VARIABLES[gateway]
        if not any(os.environ.get(name) for name in names):
            raise LiveUnavailableError(
                f"--live with gateway {gateway.value} needs an API key in "
                f"{' or '.join(names)}; none is set"
            )
        module, extra = _EXTRAS[gateway]
        try:
            __import__(module)
        except ImportError as exc:
            raise LiveUnavailableError(
                f"--live with gateway {gateway.value} needs the {module} SDK: "
                f"pip install 'hydrangea-context[{extra}]'"
            ) from exc
        self._gateway = gateway
        self._model = model or DEFAULT_MODELS[gateway]
        self._client: Any = self._make_client()

    @property
    def name(self) -> str:
        """The provider model's name."""
        return self._model

    def _make_client(self) -> Any:
        match self._gateway:
            case GatewayType.openai | GatewayType.openai_responses:
                import openai

                return openai.OpenAI()
            case GatewayType.anthropic:
                import anthropic

                return anthropic.Anthropic()
            case GatewayType.gemini:
                from google import genai

                return genai.Client()
            case _:
                assert_never(self._gateway)

    def reply(self, spec: TurnSpec, call: int, kwargs: dict[str, Any]) -> ModelReply:
        """One SDK call with the request ``kwargs``; the routed message is derived later."""
        try:
            output = self._call(kwargs)
        except Exception as exc:  # any SDK failure ends the run with one line
            raise LiveCallError(
                f"{self._gateway.value} call for turn {spec.turn} (call {call}) failed: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        return ModelReply(output=output, message=None, reasoning=(), native=None)

    def _call(self, kwargs: dict[str, Any]) -> object:
        match self._gateway:
            case GatewayType.openai:
                return self._client.chat.completions.create(model=self._model, **kwargs)
            case GatewayType.openai_responses:
                return self._client.responses.create(model=self._model, **kwargs)
            case GatewayType.anthropic:
                return self._client.messages.create(model=self._model, max_tokens=1024, **kwargs)
            case GatewayType.gemini:
                return self._client.models.generate_content(model=self._model, **kwargs)
            case _:
                assert_never(self._gateway)
