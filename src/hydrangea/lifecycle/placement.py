"""Where the overlay goes: the insertion point for "before the newest item".

Placing a component must keep the request valid: it never goes between a tool call and its
results (nor between an OpenAI Responses reasoning item and the item it belongs to). If the
newest item is part of such an exchange, "before the newest item" means before the whole
exchange. The rule is deterministic: the same history gives the same insertion point.

What counts as a call or a result is provider knowledge; it is asked of the gateway's adapter
(:meth:`~hydrangea.providers.adapter.Adapter.opens_exchange` and
:meth:`~hydrangea.providers.adapter.Adapter.closes_exchange`).
"""

from __future__ import annotations

from collections.abc import Sequence

from hydrangea.gateway import GatewayType
from hydrangea.providers.adapter import Adapter
from hydrangea.providers.native import NativeContent
from hydrangea.providers.registry import adapter_for

__all__ = ["before_newest"]


def before_newest(gateway: GatewayType | Adapter, history: Sequence[NativeContent]) -> int:
    """The index at which "before the newest item" components are inserted.

    ``gateway`` is the history's gateway or its adapter (``context.adapter``).
    ``len(history) - 1`` normally; earlier when that point would split a tool exchange; 0 for
    an empty history. The walk is bounded by the length of the final exchange.
    """
    adapter = gateway if isinstance(gateway, Adapter) else adapter_for(gateway)
    index = len(history) - 1
    if index <= 0:
        return 0
    while index > 0 and (
        adapter.opens_exchange(history[index - 1]) or adapter.closes_exchange(history[index])
    ):
        index -= 1
    return index
