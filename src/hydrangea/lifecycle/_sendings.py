"""The session's record of where each component was sent, kept compact.

One :class:`~hydrangea.lifecycle.history.Sending` per component per episode that sent it, so a
session holds one per request it rendered. Held as four flat columns (the keys, and the
episodes, starts and ends as machine integers) they cost 32 bytes each instead of about 150
(an object and its three integers); a :class:`Sending` is made when one is read.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator

from hydrangea.lifecycle.history import Sending

__all__ = ["SendingLog"]


class SendingLog:
    """The sendings, oldest first: appended at the end and cut back from the end only."""

    __slots__ = ("_ends", "_episodes", "_keys", "_starts")

    def __init__(self, sendings: Iterable[Sending] = ()) -> None:
        self._keys: list[str] = []
        self._episodes = array("q")
        self._starts = array("q")
        self._ends = array("q")
        for sending in sendings:
            self.append(sending)

    def __len__(self) -> int:
        return len(self._keys)

    def __getitem__(self, index: int) -> Sending:
        return Sending(
            self._keys[index], self._episodes[index], self._starts[index], self._ends[index]
        )

    def __iter__(self) -> Iterator[Sending]:
        return map(Sending, self._keys, self._episodes, self._starts, self._ends)

    def append(self, sending: Sending) -> None:
        """Add ``sending`` after the others."""
        self._keys.append(sending.key)
        self._episodes.append(sending.episode)
        self._starts.append(sending.start)
        self._ends.append(sending.end)

    def end(self) -> int:
        """Where the last sending ends (0 when there is none)."""
        return self._ends[-1] if self._ends else 0

    def cut(self, keep: int) -> None:
        """Keep only the first ``keep`` sendings."""
        for column in (self._keys, self._episodes, self._starts, self._ends):
            del column[keep:]

    def cut_past(self, position: int) -> None:
        """Drop the sendings, from the end, that end after history ``position``."""
        keep = len(self._ends)
        while keep and self._ends[keep - 1] > position:
            keep -= 1
        self.cut(keep)

    def run_start(self, end: int) -> tuple[int, int]:
        """The run of sendings, from the end, that ends at history ``end`` with no gap:
        ``(how many sendings precede it, where it starts)``."""
        n, start = len(self._ends), end
        while n and self._ends[n - 1] == start:
            n -= 1
            start = self._starts[n]
        return n, start
