"""Merging the caller's own SDK keyword arguments into the ones a Context builds.

``Context.request(**options)`` returns one dict for the SDK call, so nothing collides:

* Gemini ``config``: the caller's ``GenerateContentConfig`` (or dict) comes back as ``config``
  with the Context's leading system items appended to its ``system_instruction``.
* Anthropic ``system``: the caller's system prompt (a string or text blocks) comes first, the
  Context's system blocks after it.
* Every other option (``tools``, ``max_tokens``, ``temperature``, ...) is passed through as it
  is: the builders never return them.
* An option naming what the Context itself builds (``messages``, ``input``, ``contents``)
  raises :class:`~hydrangea.errors.RequestOptionError`: the history comes from the Context.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hydrangea.errors import RequestOptionError
from hydrangea.providers.adapter import Adapter

__all__ = ["compose_request"]

_HISTORY_KEYS = frozenset({"messages", "input", "contents"})


def compose_request(
    adapter: Adapter, built: dict[str, Any], options: Mapping[str, Any]
) -> dict[str, Any]:
    """``built`` (the adapter's request) with the caller's ``options`` merged in, each as the
    provider merges it (:meth:`~hydrangea.providers.adapter.Adapter.merge_option`)."""
    clash = sorted(set(options) & _HISTORY_KEYS)
    if clash:
        raise RequestOptionError(
            f"request() builds {clash} from the Context itself; append to the Context instead"
        )
    merged = dict(built)
    for key, value in options.items():
        merged[key] = adapter.merge_option(built, key, value)
    return merged
