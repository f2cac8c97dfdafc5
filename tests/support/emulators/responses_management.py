"""OpenAI Responses compaction, as the provider documents it (guide "Context management").

On top of :class:`~tests.support.emulators.openai_responses.ResponsesEmulator`'s reasoning
rules:

- **Server-side compaction**: a request with ``context_management=[{"type": "compaction",
  "compact_threshold": N}]`` whose rendered input (what the model reads, ``rough_tokens``)
  reaches ``N`` is compacted before inference goes on: the output starts with a ``compaction``
  item (opaque ``encrypted_content`` minted here), then the usual reasoning and message. The
  reply's reasoning is bound to what the model read after the pruning: that compaction item.
- **What the model reads**: the guide lets a client "drop items that came before the most
  recent compaction item" since "the latest compaction item carries the necessary context",
  so the model reads the input from its latest compaction item on (items before it may be
  sent or not: they are ignored). Reasoning binding is checked on that view.
- **``POST /v1/responses/compact``**: returns a ``response.compaction`` object whose ``output``
  keeps every user message of the input (in order) followed by one ``compaction`` item; the
  next requests send that window in place of what the compact request sent.
- A ``compaction`` item the emulator never minted, or one whose content was edited, is a 400.
- ``truncation: "auto"`` over ``context_window`` tokens drops the oldest items after the first
  one until the rest fits, and lists what it dropped in ``truncated``.

Everything is recorded: ``compactions`` (request index, minted item id), ``seen`` (what the
model read, per request), ``windows`` (each compact window returned).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tests.support.emulators._server import (
    Answer,
    Reply,
    RequestRefused,
    mint,
    rough_tokens,
)
from tests.support.emulators.openai_responses import ResponsesEmulator


@dataclass(frozen=True, slots=True)
class Minted:
    """A compaction item the emulator minted: the request that made it and how."""

    request: int
    id: str
    encrypted_content: str
    how: str
    """``"threshold"`` (inside a response) or ``"compact"`` (a /responses/compact window)."""


def _threshold(body: Mapping[str, Any]) -> int | None:
    managed = body.get("context_management")
    if managed is None:
        return None
    if not isinstance(managed, list) or not all(isinstance(m, dict) for m in managed):
        raise RequestRefused(400, "context_management", "shape",
                             "context_management must be an array of objects.")
    for entry in managed:
        if entry.get("type") != "compaction":
            raise RequestRefused(400, "context_management", "shape",
                                 f"Unknown context_management type {entry.get('type')!r}.")
        value = entry.get("compact_threshold")
        if type(value) is not int or value <= 0:
            raise RequestRefused(400, "context_management.compact_threshold", "shape",
                                 "compact_threshold must be a positive integer.")
        return value
    return None


class CompactingResponsesEmulator(ResponsesEmulator):
    """``/v1/responses`` and ``/v1/responses/compact`` under the compaction rules above."""

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        default: Reply | None = None,
        context_window: int = 1_000_000,
        max_requests: int = 1000,
    ) -> None:
        super().__init__(replies, default=default, max_requests=max_requests)
        self.context_window = context_window
        self.minted: dict[str, Minted] = {}
        self.compactions: list[Minted] = []
        self.seen: list[list[Any]] = []
        """What the model read, per /responses request (after pruning and truncation)."""
        self.windows: list[list[Any]] = []
        self.truncated: list[tuple[int, int]] = []
        """(request, how many items ``truncation: "auto"`` dropped)."""

    def handle(self, method: str, path: str, headers: dict[str, str], body: Any) -> Answer:
        if method == "POST" and path.split("?", maxsplit=1)[0] == "/v1/responses/compact":
            return self._compact(body)
        return super().handle(method, path, headers, body)

    def _produce(
        self, request: int, body: Mapping[str, Any], items: list[Any], output: list[Any]
    ) -> tuple[list[Any], list[Any]]:
        """Past the threshold the context is pruned to a minted compaction item before
        inference goes on: the output starts with it and the reasoning is bound to it."""
        self.seen.append(items)
        threshold = _threshold(body)
        if threshold is None or rough_tokens(items) < threshold:
            return super()._produce(request, body, items, output)
        item = self._mint(request, "threshold")
        return super()._produce(request, body, [], [item, *output])

    def _read(self, request: int, body: Mapping[str, Any]) -> list[Any]:
        """What the model reads: the input from its latest compaction item on (each one
        checked), then ``truncation: "auto"`` if the rest is over the window."""
        _threshold(body)  # (a malformed context_management is refused before anything else)
        items = self._context(body)
        latest = None
        for k, item in enumerate(items):
            if isinstance(item, dict) and item.get("type") == "compaction":
                known = self.minted.get(str(item.get("id")))
                if known is None or item.get("encrypted_content") != known.encrypted_content:
                    raise RequestRefused(
                        400, f"input.{k}", "unknown_compaction",
                        f"Item '{item.get('id')}' of type 'compaction' could not be verified: "
                        "send compaction items back exactly as returned.",
                    )
                latest = k
        seen = items if latest is None else items[latest:]
        if body.get("truncation") == "auto":
            dropped = 0
            while len(seen) > 1 and rough_tokens(seen) > self.context_window:
                seen = [seen[0], *seen[2:]]
                dropped += 1
            if dropped:
                self.truncated.append((request, dropped))
        return seen

    def _mint(self, request: int, how: str) -> dict[str, Any]:
        made = Minted(request, mint("cmp_"), mint("gAAAA"), how)
        self.minted[made.id] = made
        self.compactions.append(made)
        return {"type": "compaction", "id": made.id, "encrypted_content": made.encrypted_content}

    def _compact(self, body: Any) -> Answer:
        if not isinstance(body, dict) or not body.get("model"):
            raise RequestRefused(400, "model", "shape", "Missing required parameter: 'model'.")
        request = len(self.requests)
        items = self._read(request, {**body, "truncation": None})
        kept = [
            {"type": "message", "role": "user", "content": item["content"]}
            for item in items
            if isinstance(item, dict) and item.get("role") == "user"
            and item.get("type", "message") == "message"
        ]
        window = [*kept, self._mint(request, "compact")]
        self.windows.append(window)
        return Answer(200, {
            "id": mint("respcomp_"), "object": "response.compaction", "created_at": 1,
            "output": window,
            "usage": {"input_tokens": rough_tokens(items),
                      "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                      "output_tokens": rough_tokens(window[-1]),
                      "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": rough_tokens(items) + rough_tokens(window[-1])},
        })


__all__ = ["CompactingResponsesEmulator", "Minted"]
