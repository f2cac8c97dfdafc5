"""Typed provider options: the one contract a server-side feature fulfils.

Context editing, server compaction and explicit caching are things a request *asks* the
provider for. Each provider folder offers them as small frozen objects (for example
``hydrangea.providers.anthropic`` ``ContextEditing``, ``hydrangea.providers.openai``
``ResponsesCompaction``); the Context takes any of them through ``request(features=[...])``
and knows only this contract:

* :meth:`RequestFeature.apply` checks that the option applies to the Context's gateway and
  the request's model (:class:`~hydrangea.errors.UnsupportedOptionError` naming both, before
  anything is built), then adds its keywords to the request with :func:`merge_into`;
* :attr:`RequestFeature.swaps_head` is true for a compaction *request* whose reply replaces
  the history it was sent with (Anthropic on-demand compaction, OpenAI ``/responses/compact``):
  the Context notes how much it sent and swaps the reply in when it is pushed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from hydrangea.errors import RequestOptionError
from hydrangea.gateway import GatewayType

__all__ = [
    "RequestFeature", "add_options", "check_instructions", "checked_options", "merge_into",
]


class RequestFeature(Protocol):
    """A provider option a request asks for (see the module docstring)."""

    @property
    def swaps_head(self) -> bool:
        """Whether the reply to this request replaces the history it was sent with."""
        ...

    def apply(self, request: dict[str, Any], gateway: GatewayType, model: str | None) -> None:
        """Check the option applies to ``gateway`` and ``model`` (raise
        :class:`~hydrangea.errors.UnsupportedOptionError` if not), then add its keywords to
        ``request`` (the SDK call's keyword arguments) with :func:`merge_into`."""
        ...


def check_instructions(instructions: str | None) -> None:
    """Refuse summary instructions that say nothing (``None`` is fine: none are sent)."""
    if instructions is not None and not instructions.strip():
        raise RequestOptionError(
            "instructions must not be empty or blank: leave them out (None) instead"
        )


def checked_options(
    features: Sequence[RequestFeature], gateway: GatewayType, model: str | None
) -> dict[str, Any]:
    """The keywords ``features`` ask for, each checked against ``gateway`` and ``model`` on an
    empty request first: a refusal raises before anything is built, so nothing changes."""
    options: dict[str, Any] = {}
    for feature in features:
        feature.apply(options, gateway, model)
    return options


def add_options(kwargs: dict[str, Any], options: Mapping[str, Any], model: str | None) -> None:
    """Merge :func:`checked_options` into a built request's ``kwargs`` (:func:`merge_into`)
    and name ``model`` in it, when given."""
    for key, value in options.items():
        merge_into(kwargs, key, value)
    if model is not None:
        kwargs["model"] = model


def merge_into(request: dict[str, Any], key: str, value: object) -> None:
    """Add ``value`` under ``key``: mappings merge key by key (recursively), lists are joined
    keeping the first of equal entries (two features asking for one beta header send it once),
    anything else must equal what is there. A conflict raises
    :class:`~hydrangea.errors.RequestOptionError` and leaves ``request`` unchanged."""
    request[key] = _merged(request[key], value, key) if key in request else value


def _merged(old: object, new: object, where: str) -> object:
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        out = dict(old)
        for key, value in new.items():
            out[key] = _merged(out[key], value, f"{where}.{key}") if key in out else value
        return out
    if isinstance(old, list | tuple) and isinstance(new, list | tuple):
        joined = list(old)
        joined.extend(entry for entry in new if entry not in joined)
        return joined
    if old == new:
        return old
    raise RequestOptionError(
        f"two request options set {where!r} differently ({old!r} and {new!r}): give it once"
    )
