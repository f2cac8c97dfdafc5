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
from hydrangea.gateway import GatewayType
from hydrangea.providers.gemini._request import merge_config

__all__ = ["compose_request"]

_HISTORY_KEYS = frozenset({"messages", "input", "contents"})


def compose_request(
    gateway: GatewayType, built: dict[str, Any], options: Mapping[str, Any]
) -> dict[str, Any]:
    """``built`` (the adapter's request) with the caller's ``options`` merged in."""
    clash = sorted(set(options) & _HISTORY_KEYS)
    if clash:
        raise RequestOptionError(
            f"request() builds {clash} from the Context itself; append to the Context instead"
        )
    merged = dict(built)
    for key, value in options.items():
        if gateway is GatewayType.gemini and key == "config":
            ours = built.get("config")
            system = ours["system_instruction"]["parts"] if isinstance(ours, dict) else []
            merged["config"] = merge_config(value, system)
        elif gateway is GatewayType.anthropic and key == "system" and "system" in built:
            merged["system"] = [*_system_blocks(value), *built["system"]]
        else:
            merged[key] = value
    return merged


def _system_blocks(system: object) -> list[Any]:
    if isinstance(system, str):
        return [{"type": "text", "text": system}]
    if isinstance(system, list | tuple):
        return list(system)
    raise RequestOptionError(
        f"system must be a string or a list of text blocks, got {type(system).__name__}"
    )
