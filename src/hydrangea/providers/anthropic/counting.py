"""Anthropic's token-count endpoint (``POST /v1/messages/count_tokens``) as a token counter.

:class:`AnthropicTokenCounter` takes an ``anthropic.Anthropic`` or ``anthropic.AsyncAnthropic``
client and the keyword arguments ``Context(GatewayType.anthropic).request()`` returned, and
asks ``client.messages.count_tokens`` how many input tokens they hold. A request that carries
context-management options (``betas``, ``context_management``, ``compaction``, ``mcp_servers``:
what :mod:`hydrangea.providers.anthropic.management` adds) goes to
``client.beta.messages.count_tokens`` with its ``betas``, as ``client.beta.messages.create``
would send them. Generation-only keywords (``max_tokens``, ``stream``, ``stop_sequences``,
``temperature`` ...) are left out; the figure is the reply's ``input_tokens``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hydrangea.errors import RequestOptionError
from hydrangea.providers.counting import EndpointCounter, check_client_kind, endpoint_kwargs

__all__ = ["AnthropicTokenCounter"]

_DROPPED = frozenset({
    "container", "diagnostics", "fallback_credit_token", "fallbacks", "inference_geo",
    "max_tokens", "metadata", "service_tier", "stop_sequences", "stream", "temperature",
    "thread", "top_k", "top_p",
})
"""Keywords of ``messages.create`` that steer generation and do not change the input."""

_BETA_ONLY = ("betas", "context_management", "compaction", "mcp_servers")
"""Keywords only the beta endpoint takes: their presence sends the count there."""


class AnthropicTokenCounter(EndpointCounter):
    """Input tokens of a Messages request, as Anthropic's count endpoint reports them.

    ``model`` is used when the request names none (``Context.request(model=...)`` names it).
    """

    __slots__ = ()
    sdk = "anthropic"
    extra = "anthropic"

    def _call(
        self, request: Mapping[str, Any], *, asynchronous: bool
    ) -> tuple[Callable[..., Any], dict[str, Any], str]:
        beta = any(key in request for key in _BETA_ONLY)
        messages = self._client.beta.messages if beta else self._client.messages
        method = messages.count_tokens
        endpoint = "beta.messages.count_tokens" if beta else "messages.count_tokens"
        check_client_kind(method, asynchronous=asynchronous, endpoint=endpoint)
        if "model" not in request and self._model is None:
            raise RequestOptionError(
                f"{endpoint} needs a model: pass model= to Context.request() or to "
                "AnthropicTokenCounter"
            )
        full = {"model": self._model, **request}
        kwargs = endpoint_kwargs(
            full, method, dropped=_DROPPED, endpoint=endpoint, gateway="anthropic"
        )
        return method, kwargs, endpoint
