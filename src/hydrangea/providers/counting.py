"""What the providers' token-count endpoints share: which keywords reach them, and the figure.

Each provider folder has a ``counting.py`` with one counter class
(:class:`~hydrangea.providers.anthropic.counting.AnthropicTokenCounter`,
:class:`~hydrangea.providers.openai.counting.ResponsesTokenCounter`,
:class:`~hydrangea.providers.gemini.counting.GeminiTokenCounter`) that takes an SDK client and
the keyword arguments ``Context.request()`` returned, and asks the provider how many input tokens
that request holds. ``count_request`` is for a sync client and ``acount_request`` for an async
one; both satisfy :class:`hydrangea.asof.calibration.RequestCounter` (and its async twin), so a
:class:`~hydrangea.asof.calibration.Calibration` can fit the local counter to the figures.

A keyword goes to the endpoint when the installed SDK's count method takes it (read from its
signature, so an older SDK refuses what it cannot send rather than failing inside the call).
A keyword that only steers generation (``max_tokens``, ``temperature``, ``stream`` ...) is left
out: it does not change the input. Any other keyword is refused with
:class:`~hydrangea.errors.UnsupportedOptionError` before anything is sent, since leaving it out
could change the figure.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from hydrangea.errors import MissingExtraError, TokenCountError, UnsupportedOptionError

__all__ = [
    "EndpointCounter", "check_client_kind", "endpoint_kwargs", "read_count", "require_sdk",
]


def require_sdk(module: str, extra: str) -> None:
    """Raise :class:`~hydrangea.errors.MissingExtraError` naming ``extra`` unless ``module``
    can be imported."""
    try:
        importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f"token counting with the provider's endpoint needs the optional extra {extra!r}: "
            f"pip install 'hydrangea-context[{extra}]' ({module} cannot be imported)"
        ) from exc


def check_client_kind(method: Callable[..., Any], *, asynchronous: bool, endpoint: str) -> None:
    """Refuse a sync client's method where an async one is awaited, and the other way round."""
    if inspect.iscoroutinefunction(method) is asynchronous:
        return
    wanted, given = ("count_request", "a sync") if asynchronous else ("acount_request", "an async")
    raise TokenCountError(f"{endpoint} was given {given} client: call {wanted}() with it")


def endpoint_kwargs(
    request: Mapping[str, Any],
    method: Callable[..., Any],
    *,
    dropped: frozenset[str],
    endpoint: str,
    gateway: str,
) -> dict[str, Any]:
    """The keywords of ``request`` that ``method`` takes, without those in ``dropped``; any
    other keyword raises :class:`~hydrangea.errors.UnsupportedOptionError` naming it."""
    accepted = inspect.signature(method).parameters
    model = request.get("model")
    kwargs: dict[str, Any] = {}
    for key, value in request.items():
        if key in accepted:
            kwargs[key] = value
        elif key not in dropped:
            raise UnsupportedOptionError(
                f"{endpoint} takes no {key!r} and leaving it out could change the count: "
                f"count the request without {key!r}, or count its input another way",
                option=key, gateway=gateway, model=model if isinstance(model, str) else None,
            )
    return kwargs


def read_count(reply: object, field: str, endpoint: str) -> int:
    """The non-negative int ``field`` of an SDK reply object (or its dict form)."""
    value = reply.get(field) if isinstance(reply, Mapping) else getattr(reply, field, None)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TokenCountError(
            f"{endpoint} answered without a token count ({field}={value!r}): check the "
            "client's base URL and the SDK version"
        )
    return value


class EndpointCounter:
    """What every provider's counter shares: a client, a default model, the sync and async
    calls and reading the figure. A subclass names its SDK (:attr:`sdk`, :attr:`extra`), the
    reply's field (:attr:`field`) and gives :meth:`_call`."""

    __slots__ = ("_client", "_model")

    sdk: ClassVar[str]
    """The module the client comes from (checked when the counter is made)."""
    extra: ClassVar[str]
    """The extra that installs it."""
    field: ClassVar[str] = "input_tokens"
    """The reply's field holding the count."""

    def __init__(self, client: Any, *, model: str | None = None) -> None:
        require_sdk(self.sdk, self.extra)
        self._client = client
        self._model = model

    def count_request(self, request: Mapping[str, Any]) -> int:
        """The input tokens of ``request`` (a sync client)."""
        method, kwargs, endpoint = self._call(request, asynchronous=False)
        return read_count(method(**kwargs), self.field, endpoint)

    async def acount_request(self, request: Mapping[str, Any]) -> int:
        """The input tokens of ``request`` (an async client)."""
        method, kwargs, endpoint = self._call(request, asynchronous=True)
        return read_count(await method(**kwargs), self.field, endpoint)

    def _call(
        self, request: Mapping[str, Any], *, asynchronous: bool
    ) -> tuple[Callable[..., Any], dict[str, Any], str]:
        """The endpoint's method, the keywords it is called with, and its name."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self._model!r})"
