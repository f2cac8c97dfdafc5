"""Anthropic cache diagnostics: ask the server where a request's prefix left the previous one.

A request carrying ``diagnostics={"previous_message_id": id}`` (``None`` on the first turn, to
opt in) has the server compare its prompt with the request that produced message ``id`` and
report, in the reply's ``diagnostics.cache_miss_reason``, the first place they differ (the
model, ``system``, ``tools`` or ``messages``) and about how many input tokens the cache missed
for it. The comparison runs beside the request: a reply may come back before it ends (the
reason is then ``null``; look again on the next turn). The library reads it into
:attr:`~hydrangea.providers.usage.Usage.cache_diagnosis` and
:attr:`~hydrangea.providers.usage.Usage.cache_miss`, and the request span shows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hydrangea.errors import RequestOptionError, UnsupportedOptionError
from hydrangea.gateway import GatewayType
from hydrangea.providers.features import merge_into

__all__ = ["CacheDiagnostics"]


@dataclass(frozen=True, slots=True)
class CacheDiagnostics:
    """The ``diagnostics`` request option: compare with the request that produced
    ``previous_message_id`` (a ``msg_...`` id; ``None``: first turn, nothing to compare)."""

    previous_message_id: str | None = None

    def __post_init__(self) -> None:
        previous = self.previous_message_id
        if previous is not None and (not isinstance(previous, str) or not previous.strip()):
            raise RequestOptionError(
                f"previous_message_id must be the id of a message the API returned, or None "
                f"on the first turn; got {previous!r}"
            )

    @property
    def swaps_head(self) -> bool:
        """False: an ordinary request."""
        return False

    def apply(self, request: dict[str, Any], gateway: GatewayType, model: str | None) -> None:
        """Add ``diagnostics`` (Anthropic only)."""
        if gateway is not GatewayType.anthropic:
            raise UnsupportedOptionError(
                f"cache diagnostics (diagnostics.previous_message_id) are an Anthropic "
                f"option; this Context is for {gateway.value}",
                option="diagnostics", gateway=gateway.value, model=model,
            )
        merge_into(request, "diagnostics", {"previous_message_id": self.previous_message_id})
