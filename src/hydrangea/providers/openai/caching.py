"""OpenAI prompt caching: automatic, helped by a stable ``prompt_cache_key``.

OpenAI caches every prompt of 1,024 tokens or more on its own, in steps of 128 tokens, as long
as the prefix is identical: the library keeps the prefix stable (history first, overlay at the
tail), so nothing needs to be marked. Requests are routed to a cache by a hash of the prompt's
start; ``prompt_cache_key`` joins that hash, so giving every request of one session the same
key keeps the session on the machines that hold its prefix. ``prompt_cache_retention="24h"``
asks for the extended retention (``"in_memory"`` is the short default), on both Chat
Completions and Responses.

:func:`session_cache_key` derives a key that stays the same for a session across processes and
save/load (from the session's first items and an optional session id), and
:class:`OpenAICaching` adds the options to a request's keyword arguments.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from hydrangea.errors import CachingError
from hydrangea.providers.native import NativeContent

__all__ = ["OpenAICaching", "PromptCacheRetention", "session_cache_key"]

PromptCacheRetention = Literal["in_memory", "24h"]
"""The retention policies the OpenAI API offers."""

_KEY_PREFIX = "hydrangea-"
_MAX_KEY_CHARS = 64


def session_cache_key(
    items: Sequence[NativeContent], *, session: str | None = None, head: int = 1
) -> str:
    """A ``prompt_cache_key`` for a session: a hash of its first ``head`` items and ``session``.

    The first items (the system prompt) never change, so the key is the same on every turn,
    after save and load, and in every process serving the session. Pass ``session`` (a
    conversation or user id) so that many sessions with one system prompt do not share one key:
    OpenAI spreads a key that receives more than about 15 requests a minute over more machines.
    """
    if head < 0:
        raise CachingError(f"head must not be negative, got {head}")
    digest = hashlib.sha256()
    digest.update(json.dumps(list(items[:head]), sort_keys=True, ensure_ascii=False).encode())
    if session is not None:
        digest.update(b"\x00" + session.encode("utf-8", "surrogatepass"))
    return _KEY_PREFIX + digest.hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class OpenAICaching:
    """Options for OpenAI's prompt cache; ``apply`` adds them to a request's kwargs."""

    key: str | None = None
    """The ``prompt_cache_key`` (see :func:`session_cache_key`); ``None`` sends none."""
    retention: PromptCacheRetention | None = None
    """``"24h"`` for extended retention; ``None`` leaves the provider's default."""

    def __post_init__(self) -> None:
        if self.retention is not None and self.retention not in get_args(PromptCacheRetention):
            raise CachingError(
                f"retention must be one of {get_args(PromptCacheRetention)}, got {self.retention!r}"
            )
        if self.key is not None and not 0 < len(self.key) <= _MAX_KEY_CHARS:
            raise CachingError(f"prompt_cache_key must be 1 to {_MAX_KEY_CHARS} characters")

    def apply(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of ``kwargs`` with the cache options added (the caller's own win)."""
        out = dict(kwargs)
        if self.key is not None:
            out.setdefault("prompt_cache_key", self.key)
        if self.retention is not None:
            out.setdefault("prompt_cache_retention", self.retention)
        return out
