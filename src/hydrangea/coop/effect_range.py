"""EffectRange: the closed interval of Context indices an area has influenced."""

from __future__ import annotations

from dataclasses import dataclass

from hydrangea.coop.errors import InvalidEffectRangeError

__all__ = ["EffectRange"]


@dataclass(frozen=True, slots=True)
class EffectRange:
    """The closed interval ``[earliest, latest]`` of Context indices touched by an area.

    ``earliest`` is the index of the first item the area's first non-empty render appended;
    ``latest`` is the index of the last item its most recent non-empty render appended. Items
    in between may come from other areas or from the model: the range records influence, not
    ownership.
    """

    earliest: int
    latest: int

    def __post_init__(self) -> None:
        if self.earliest < 0 or self.latest < self.earliest:
            raise InvalidEffectRangeError(
                "an EffectRange needs 0 <= earliest <= latest, "
                f"got [{self.earliest}, {self.latest}]"
            )

    def overlaps(self, other: EffectRange) -> bool:
        """True when the two closed intervals share at least one index."""
        return self.earliest <= other.latest and other.earliest <= self.latest

    def extended_to(self, latest: int) -> EffectRange:
        """The same range with ``latest`` moved to a later index."""
        return EffectRange(self.earliest, latest)

    def __len__(self) -> int:
        return self.latest - self.earliest + 1

    def __contains__(self, index: object) -> bool:
        return isinstance(index, int) and self.earliest <= index <= self.latest
