"""OpenAI's Responses input-token endpoint (``POST /responses/input_tokens``) as a counter.

:class:`ResponsesTokenCounter` takes an ``openai.OpenAI`` or ``openai.AsyncOpenAI`` client and
the keyword arguments ``Context(GatewayType.openai_responses).request()`` returned (a
``responses.create`` request, or a ``responses.compact`` one), and asks
``client.responses.input_tokens.count`` how many input tokens they hold; the figure is the
reply's ``input_tokens``. Keywords that steer generation, storage or caching
(``max_output_tokens``, ``stream``, ``store``, ``include``, ``prompt_cache_key`` ...) are left
out, and so is ``context_management``: the endpoint takes none, and a compaction threshold
changes what the server does past it, not what the input counts. ``prompt`` (a stored prompt)
and ``image`` change the input and the endpoint cannot take them: they are refused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hydrangea.providers.counting import EndpointCounter, check_client_kind, endpoint_kwargs

__all__ = ["ResponsesTokenCounter"]

_ENDPOINT = "responses.input_tokens.count"

_DROPPED = frozenset({
    "background", "background_options", "context_management", "include", "max_output_tokens",
    "max_tool_calls", "metadata", "moderation", "prompt_cache_key", "prompt_cache_options",
    "prompt_cache_retention", "safety_identifier", "service_tier", "store", "stream",
    "stream_options", "temperature", "top_logprobs", "top_p", "user",
})
"""Keywords of ``responses.create`` / ``compact`` that do not change the input's tokens."""


class ResponsesTokenCounter(EndpointCounter):
    """Input tokens of a Responses request, as OpenAI's input-token endpoint reports them.

    ``model`` is used when the request names none.
    """

    __slots__ = ()
    sdk = "openai"
    extra = "openai"

    def _call(
        self, request: Mapping[str, Any], *, asynchronous: bool
    ) -> tuple[Callable[..., Any], dict[str, Any], str]:
        method = self._client.responses.input_tokens.count
        check_client_kind(method, asynchronous=asynchronous, endpoint=_ENDPOINT)
        full = dict(request) if self._model is None else {"model": self._model, **request}
        kwargs = endpoint_kwargs(
            full, method, dropped=_DROPPED, endpoint=_ENDPOINT, gateway="openai_responses"
        )
        return method, kwargs, _ENDPOINT
