"""Gemini's token-count endpoint (``models/{model}:countTokens``) as a token counter.

:class:`GeminiTokenCounter` takes a ``google.genai.Client`` and the keyword arguments
``Context(GatewayType.gemini).request()`` returned, and asks ``client.models.count_tokens``
(``client.aio.models.count_tokens`` from :meth:`~GeminiTokenCounter.acount_request`) how many
tokens they hold; the figure is the reply's ``total_tokens``.

The request's ``contents`` are always counted. Its ``config`` holds the system instruction and
the tools, and google-genai sends those to the count endpoint only on Vertex AI
(``CountTokensConfig.system_instruction`` / ``tools``); with a Gemini Developer API client the
SDK refuses them. So on that API a request with a system instruction or tools is refused
(:class:`~hydrangea.errors.UnsupportedOptionError`) unless the counter was made with
``contents_only=True``, and then the figure is that of the contents alone (calibrate against
the local count of the contents alone: :func:`hydrangea.asof.calibration.request_text` of
``{"contents": ...}``). The rest of ``config`` (temperature, thinking, safety, tool config,
cached content ...) steers generation and is left out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hydrangea.errors import RequestOptionError, UnsupportedOptionError
from hydrangea.providers.counting import EndpointCounter

__all__ = ["GeminiTokenCounter"]

_ENDPOINT = "models.count_tokens"
_COUNTED = (("system_instruction", "systemInstruction"), ("tools", "tools"))
"""The ``config`` fields the count endpoint takes (snake and camel spelling)."""


def _field(config: object, names: tuple[str, str]) -> object:
    if isinstance(config, Mapping):
        return next((config[n] for n in names if config.get(n) is not None), None)
    return getattr(config, names[0], None)


class GeminiTokenCounter(EndpointCounter):
    """Tokens of a ``generate_content`` request, as Gemini's count endpoint reports them
    (``client.models``; ``client.aio.models`` from :meth:`acount_request`).

    ``model`` is used when the request names none; ``contents_only`` counts only the contents
    on the Gemini Developer API, whose SDK path cannot count a system instruction or tools.
    """

    __slots__ = ("_contents_only",)
    sdk = "google.genai"
    extra = "gemini"
    field = "total_tokens"

    def __init__(
        self, client: Any, *, model: str | None = None, contents_only: bool = False
    ) -> None:
        super().__init__(client, model=model)
        self._contents_only = contents_only

    def _call(
        self, request: Mapping[str, Any], *, asynchronous: bool
    ) -> tuple[Callable[..., Any], dict[str, Any], str]:
        kwargs = self._kwargs(request)
        models = self._client.aio.models if asynchronous else self._client.models
        return models.count_tokens, kwargs, _ENDPOINT

    def _kwargs(self, request: Mapping[str, Any]) -> dict[str, Any]:
        model = request.get("model", self._model)
        if not isinstance(model, str):
            raise RequestOptionError(
                f"{_ENDPOINT} needs a model: pass model= to Context.request() or to "
                "GeminiTokenCounter"
            )
        if "contents" not in request:
            raise RequestOptionError(f"{_ENDPOINT} needs the request's contents: none given")
        for key in request:
            if key not in ("model", "contents", "config"):
                raise UnsupportedOptionError(
                    f"{_ENDPOINT} takes no {key!r}: count the request without it",
                    option=key, gateway="gemini", model=model,
                )
        config = request.get("config")
        counted = {names[0]: value for names in _COUNTED
                   if (value := _field(config, names)) is not None}
        kwargs: dict[str, Any] = {"model": model, "contents": request["contents"]}
        if counted and self._client.vertexai:
            kwargs["config"] = counted
        elif counted and not self._contents_only:
            names = " and ".join(sorted(counted))
            raise UnsupportedOptionError(
                f"the Gemini Developer API's count endpoint (through google-genai) cannot count "
                f"the request's {names}: count with a Vertex AI client, or make the counter "
                "with contents_only=True to count the contents alone",
                option=next(iter(sorted(counted))), gateway="gemini", model=model,
            )
        return kwargs

    def __repr__(self) -> str:
        return f"GeminiTokenCounter(model={self._model!r}, contents_only={self._contents_only})"
