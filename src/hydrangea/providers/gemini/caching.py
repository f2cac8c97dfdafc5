"""Gemini context caching: implicit by default, explicit cached content on request.

Gemini caches a repeated prompt prefix implicitly (Gemini 2.5 and newer, with a per-model
minimum, :func:`gemini_minimum_tokens`); the library's stable prefix is what makes those hits
happen, and nothing has to be sent for it. Explicit caching guarantees the discount for a large
stable prefix: the prefix (system instruction, tools and the first contents) is stored once
with ``client.caches.create`` and each request then sends only the rest with
``cached_content=<name>``. :class:`GeminiContextCache` does that on the keyword arguments a
request builder returned: it creates the cache, refreshes its TTL before it expires
(``client.caches.update``), re-creates it when the prefix changed (deleting the old one), and
leaves the request alone when the prefix is under the model's minimum.

The client is the caller's ``google.genai.Client`` (or anything with the same ``caches`` API);
this module imports no SDK.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from hydrangea.errors import CachingError

__all__ = ["GeminiContextCache", "gemini_minimum_tokens"]

_log = logging.getLogger(__name__)

_MINIMUMS: tuple[tuple[str, int], ...] = (
    ("gemini-3-pro", 4_096),
    ("gemini-3-flash", 1_024),
    ("gemini-2.5-pro", 4_096),
    ("gemini-2.5-flash", 1_024),
)
_DEFAULT_MINIMUM = 1_024
_PREFIX_KEYS = ("system_instruction", "tools", "tool_config")


def gemini_minimum_tokens(model: str | None) -> int:
    """The shortest prompt ``model`` caches (Gemini API docs: 1,024 for Flash, 4,096 for Pro).

    Matched by model-name prefix (``models/`` stripped); unknown models get 1,024.
    """
    if model:
        name = model.lower().removeprefix("models/")
        for prefix, minimum in _MINIMUMS:
            if name.startswith(prefix):
                return minimum
    return _DEFAULT_MINIMUM


def _now() -> datetime:
    return datetime.now(UTC)


class GeminiContextCache:
    """An explicit cache for the stable prefix of one session's Gemini requests.

    ``prefix`` is how many leading ``contents`` the cache holds besides the system instruction
    and tools (0: just those). Not thread-safe: one instance per session.
    """

    def __init__(
        self,
        client: Any,
        model: str,
        *,
        prefix: int = 0,
        ttl_seconds: int = 3_600,
        refresh_margin_seconds: int = 300,
        min_tokens: int | None = None,
        count: Callable[[str], int] | None = None,
        clock: Callable[[], datetime] = _now,
    ) -> None:
        if prefix < 0:
            raise CachingError(f"prefix must not be negative, got {prefix}")
        if ttl_seconds <= refresh_margin_seconds or refresh_margin_seconds < 0:
            raise CachingError("ttl_seconds must exceed refresh_margin_seconds (>= 0)")
        self._client = client
        self._model = model
        self._prefix = prefix
        self._ttl = ttl_seconds
        self._margin = timedelta(seconds=refresh_margin_seconds)
        self._minimum = gemini_minimum_tokens(model) if min_tokens is None else min_tokens
        self._count = count or (lambda text: -(-len(text) // 4))
        self._clock = clock
        self._name: str | None = None
        self._fingerprint: str | None = None
        self._expires: datetime | None = None

    @property
    def name(self) -> str | None:
        """The cached content's resource name (``cachedContents/...``), or ``None``."""
        return self._name

    def request(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """``kwargs`` for ``client.models.generate_content(model=..., **result)``.

        With a cache: the contents after the prefix and ``config.cached_content``; the system
        instruction and tools live in the cache. Under the minimum: ``kwargs`` unchanged.
        """
        contents = list(kwargs.get("contents") or [])
        config = dict(kwargs.get("config") or {})
        if self._prefix >= len(contents):
            raise CachingError(
                f"the request has {len(contents)} contents; a cache of {self._prefix} leaves "
                "nothing to send"
            )
        cached = {key: config[key] for key in _PREFIX_KEYS if key in config}
        head = contents[: self._prefix]
        text = json.dumps([cached, head], sort_keys=True, ensure_ascii=False)
        if self._count(text) < self._minimum:
            _log.debug("prefix under %d tokens: sent without an explicit cache", self._minimum)
            return dict(kwargs)
        fingerprint = hashlib.sha256(text.encode()).hexdigest()
        if fingerprint != self._fingerprint:
            self._create(cached, head, fingerprint)
        elif self._expires is not None and self._clock() + self._margin >= self._expires:
            self._refresh()
        rest = {key: value for key, value in config.items() if key not in _PREFIX_KEYS}
        rest["cached_content"] = self._name
        return {**kwargs, "contents": contents[self._prefix :], "config": rest}

    def delete(self) -> None:
        """Delete the cache now (it also expires on its own)."""
        if self._name is not None:
            self._client.caches.delete(name=self._name)
            self._name = self._fingerprint = self._expires = None

    def _create(self, cached: dict[str, Any], head: list[Any], fingerprint: str) -> None:
        previous = self._name
        config: dict[str, Any] = {**cached, "ttl": f"{self._ttl}s"}
        if head:
            config["contents"] = head
        created = self._client.caches.create(model=self._model, config=config)
        self._name = str(created.name)
        self._fingerprint = fingerprint
        self._expires = self._expiry(created)
        _log.debug("created Gemini cache %s", self._name)
        if previous is not None:
            self._client.caches.delete(name=previous)

    def _refresh(self) -> None:
        updated = self._client.caches.update(name=self._name, config={"ttl": f"{self._ttl}s"})
        self._expires = self._expiry(updated)
        _log.debug("refreshed Gemini cache %s", self._name)

    def _expiry(self, cache: object) -> datetime:
        expires = getattr(cache, "expire_time", None)
        if isinstance(expires, datetime):
            return expires if expires.tzinfo else expires.replace(tzinfo=UTC)
        return self._clock() + timedelta(seconds=self._ttl)
