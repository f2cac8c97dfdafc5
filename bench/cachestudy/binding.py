"""Prefix binding: which requests of a session break the reasoning a provider binds to its prefix.

Every model reply of the session (the first event of each turn after the first) is taken to
carry reasoning (a thinking model), bound to the request that produced it: the request of the
turn before. A later request that still holds the reply keeps the binding only if everything in
front of the reply is exactly that request (cache markers aside: the units are rendered without
them). The providers' rules, as documented:

* Anthropic, preserved thinking (``build-with-claude/preserved-thinking``): a block whose prefix
  differs "and every later thinking block are invalid", and the request is rejected with a 400
  (the default for accounts created from 2026-08-31; otherwise the blocks are dropped);
* OpenAI Responses, newer reasoning models (``guides/keep-prefix-unchanged``): reasoning items
  that follow a prefix change are dropped silently;
* Gemini 3+: a ``functionCall`` part's ``thoughtSignature`` must come back on that same part.
  There is no prefix check; no strategy of the study edits a part it sends back, so nothing is
  lost.

A reply that is no longer in the request (compacted, slid out of the window) binds nothing: the
collector's cut takes every later reasoning block with it. A reply that is there but whose unit
differs from the first request that held it (an assistant turn edited) breaks its binding like a
changed prefix does.

The reply is found in a request by its text (JSON-escaped, as the units are rendered): the whole
text of the reply, which no summary repeats (summaries keep a first sentence of at most 160
characters, and every reply is longer than its first sentence).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import assert_never

from hydrangea.message import Role

from .accounting import Request
from .transcript import Transcript

__all__ = ["Binding", "BindingCount", "StudyDefectError", "count_broken", "reply_markers"]


class Binding(StrEnum):
    """What a provider does with reasoning whose prefix changed."""

    reject = "reject"
    """The request fails (Anthropic preserved thinking, the default)."""
    drop = "drop"
    """The reasoning items are dropped silently (OpenAI Responses)."""
    none = "none"
    """No prefix check (Gemini: signatures are checked on their own part only)."""


class StudyDefectError(RuntimeError):
    """The binding check could not tell where a reply is (a defect of the study)."""


@dataclass(frozen=True, slots=True)
class BindingCount:
    """A strategy's requests that break a binding, and the reasoning items those lose."""

    binding: Binding
    requests_broken: int
    """Requests with at least one invalid reasoning item (rejected, or losing reasoning)."""
    items_broken: int
    """Reasoning items invalid, summed over the requests (each dropped, or causing a 400)."""
    first_broken: int | None
    """The first such request (turn index), or None."""

    @property
    def requests_rejected(self) -> int:
        """Requests the provider refuses (only under :attr:`Binding.reject`)."""
        return self.requests_broken if self.binding is Binding.reject else 0

    @property
    def reasoning_dropped(self) -> int:
        """Reasoning items the provider drops silently (only under :attr:`Binding.drop`)."""
        return self.items_broken if self.binding is Binding.drop else 0


def reply_markers(transcript: Transcript) -> list[tuple[int, str]]:
    """``(turn, marker)`` for every model reply: the turn it arrived in and its whole text as it
    appears inside a rendered unit (JSON-escaped)."""
    out: list[tuple[int, str]] = []
    for turn in transcript.turns:
        if turn.events and turn.events[0].role is Role.assistant:
            text = turn.events[0].text
            out.append((turn.index, json.dumps(text, ensure_ascii=False)[1:-1]))
    return out


def _prefix_digests(request: Request) -> list[bytes]:
    """``out[n]``: a digest of the first ``n`` units of ``request``."""
    running = hashlib.sha256()
    out = [running.digest()]
    for unit in request:
        running.update(len(unit.text).to_bytes(8, "big") + unit.text.encode())
        out.append(running.copy().digest())
    return out


def count_broken(
    binding: Binding, requests: Sequence[Request], transcript: Transcript
) -> BindingCount:
    """Count the requests (and reasoning items) that break a binding under ``binding``.

    ``requests[t]`` is the request of turn ``t``; the reply arriving in turn ``r`` was produced
    by ``requests[r - 1]``.
    """
    if len(requests) != len(transcript.turns):
        raise ValueError(f"{len(requests)} requests for {len(transcript.turns)} turns")
    match binding:
        case Binding.none:
            return BindingCount(binding, 0, 0, None)
        case Binding.reject | Binding.drop:
            pass
        case _:
            assert_never(binding)
    markers = reply_markers(transcript)
    digests = [_prefix_digests(request) for request in requests]
    produced = {turn: (len(requests[turn - 1]), digests[turn - 1][-1]) for turn, _ in markers}
    shown: dict[int, str] = {}  # each reply's unit as the first request holding it has it
    broken_requests = 0
    broken_items = 0
    first: int | None = None
    for index, request in enumerate(requests):
        positions: list[tuple[int, int]] = []  # (unit index, reply turn), replies present
        joined = "\x00".join(unit.text for unit in request)
        for turn, marker in markers:
            if turn > index:
                break
            if marker not in joined:
                continue
            found = [n for n, unit in enumerate(request) if marker in unit.text]
            if len(found) > 1:
                raise StudyDefectError(f"turn {index}: the reply of turn {turn} is in {found}")
            if found:
                positions.append((found[0], turn))
                shown.setdefault(turn, request[found[0]].text)
        positions.sort()
        invalid = 0
        for rank, (position, turn) in enumerate(positions):
            length, digest = produced[turn]
            edited = request[position].text != shown[turn]
            if edited or position != length or digests[index][position] != digest:
                invalid = len(positions) - rank  # this block and every later one
                break
        if invalid:
            broken_requests += 1
            broken_items += invalid
            first = index if first is None else first
    return BindingCount(binding, broken_requests, broken_items, first)
