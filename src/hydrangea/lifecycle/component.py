"""Components and their schedules: what a lifecycle shows, and when and where it shows it.

A :class:`Component` is a :class:`~hydrangea.message.Message` plus a schedule:

* ``ttl=None`` and no stages: **permanent**. Appended once to the append-only history.
* ``ttl=N``: **temporary**. Shown in the request's tail overlay in its first N episodes.
* ``ttl=N, cadence=M``: **cyclic**. Shown in episodes ``k`` (counted from its first) with
  ``k % M < N``. ``ttl=1, cadence=1`` is **sticky**: shown in every episode.
* ``stages=[...]``: **staged**. Moves through the stages' placements, each for its own ttl,
  once (``cycle=False``), ``cycle=N`` times, or forever (``cycle=True``), then is gone.
  The last stage of a non-cycling component may have ``ttl=None``: the component then stays
  in that stage for good.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import assert_never

from hydrangea.lifecycle.errors import InvalidComponentError
from hydrangea.message import Message, Role
from hydrangea.text import check_encodable

__all__ = [
    "AUTO_KEY_PREFIX",
    "Component",
    "LifecycleKind",
    "Phase",
    "Placement",
    "Stage",
    "check_tags",
]

AUTO_KEY_PREFIX = "#"
"""Keys starting with this are assigned by the lifecycle to components added without a key."""


class Placement(StrEnum):
    """Where an ephemeral component sits in a request, relative to the newest history item."""

    before = "before"
    """Just before the newest history item (before the whole tool exchange if it ends one)."""
    after = "after"
    """After the newest history item: the very end of the request."""


class LifecycleKind(StrEnum):
    """The four lifecycle types of the spec, plus staged lifecycles."""

    permanent = "permanent"
    temporary = "temporary"
    sticky = "sticky"
    cyclic = "cyclic"
    staged = "staged"


@dataclass(frozen=True, slots=True)
class Phase:
    """Where a visible component sits: its placement and, for staged ones, its stage index."""

    placement: Placement
    stage: int | None = None


_UNSTAGED = {placement: (Phase(placement),) for placement in Placement}
"""The phases of an unstaged component, by placement (frozen values, shared)."""


def _check_ttl(value: object, what: str, *, none_ok: bool) -> int | None:
    if value is None:
        if none_ok:
            return None
        raise InvalidComponentError(f"{what} must be a positive integer, got None")
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidComponentError(f"{what} must be a positive integer, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class Stage:
    """One stage of a staged lifecycle: a placement held for ``ttl`` episodes.

    ``ttl=None`` (the default; allowed on the last stage of a non-cycling component only)
    holds the placement for good.
    """

    placement: Placement
    ttl: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "placement", _placement(self.placement))
        _check_ttl(self.ttl, "a stage's ttl", none_ok=True)


def _placement(value: object) -> Placement:
    if type(value) is Placement:
        return value
    allowed = ", ".join(p.value for p in Placement)
    if not isinstance(value, str):
        raise InvalidComponentError(f"placement must be one of {allowed}, got {value!r}")
    try:
        return Placement(value)
    except ValueError:
        raise InvalidComponentError(f"placement must be one of {allowed}, got {value!r}") from None


_NO_TAGS: frozenset[str] = frozenset()


def check_tags(tags: object, what: str) -> frozenset[str]:
    """``tags`` as a frozenset of non-empty, encodable strings; InvalidComponentError if not."""
    if type(tags) is tuple and not tags:  # the default: no ABC check, no set
        return _NO_TAGS
    if isinstance(tags, str):
        raise InvalidComponentError(f"{what} must be a collection of strings, not one string")
    if not isinstance(tags, Iterable):
        raise InvalidComponentError(
            f"{what} must be a collection of strings, got {type(tags).__name__}"
        )
    checked: set[str] = set()
    for tag in tags:
        if not isinstance(tag, str) or not tag:
            raise InvalidComponentError(f"every tag must be a non-empty string, got {tag!r}")
        checked.add(check_encodable(tag, "a tag"))
    return frozenset(checked)


@dataclass(frozen=True, slots=True, init=False)
class Component:
    """A message with a lifecycle, an optional unique key and tags.

    ``content`` may be a :class:`~hydrangea.message.Message` or a plain string (a user message).
    Invalid combinations raise :class:`~hydrangea.lifecycle.errors.InvalidComponentError`.
    """

    content: Message
    """What the model sees."""
    key: str | None
    """The unique key, or ``None`` to let the lifecycle assign one (starting with ``#``)."""
    tags: frozenset[str]
    """Labels for :meth:`~hydrangea.lifecycle.Lifecycle.get_by_tags`."""
    ttl: int | None
    """Episodes visible (per cadence period); ``None`` with no stages means permanent."""
    cadence: int | None
    """Period after which a component with a ttl comes back; ``None`` means it does not."""
    placement: Placement
    """Where an unstaged ephemeral component sits (``after`` by default)."""
    stages: tuple[Stage, ...]
    """The stages of a staged lifecycle (empty otherwise)."""
    cycle: bool | int
    """``False``: run the stages once; ``True``: forever; ``N``: N times."""
    stage_ends: tuple[int, ...]
    """Cumulative end offsets of the finite stages within one cycle (derived)."""
    kind: LifecycleKind
    """Which lifecycle type this component has (derived)."""
    phases: tuple[Phase, ...]
    """The phase of each stage, or the single phase of an unstaged component (derived)."""

    def __init__(
        self,
        content: Message | str,
        *,
        key: str | None = None,
        tags: Iterable[str] = (),
        ttl: int | None = None,
        cadence: int | None = None,
        placement: Placement | str | None = None,
        stages: Sequence[Stage] | None = None,
        cycle: bool | int = False,
    ) -> None:
        message = Message(role=Role.user, content=content) if isinstance(content, str) else content
        if not isinstance(message, Message):
            raise InvalidComponentError(
                f"content must be a Message or a string, got {type(content).__name__}"
            )
        if key is not None:
            if not isinstance(key, str) or not key:
                raise InvalidComponentError(f"key must be a non-empty string, got {key!r}")
            check_encodable(key, "the component's key")
        tag_set = check_tags(tags, "tags")
        ttl = _check_ttl(ttl, "ttl", none_ok=True)
        cadence = _check_ttl(cadence, "cadence", none_ok=True)
        if stages is not None and (
            isinstance(stages, str | bytes) or not isinstance(stages, Iterable)
        ):
            raise InvalidComponentError(
                f"stages must be a sequence of Stage objects, got {type(stages).__name__}"
            )
        stage_tuple = tuple(stages) if stages is not None else ()
        if stages is not None:
            _check_stages(stage_tuple, ttl, cadence, placement, cycle)
        else:
            if cadence is not None and ttl is None:
                raise InvalidComponentError(
                    "cadence needs a ttl (a permanent component is "
                    "always there and cannot come back)"
                )
            if cycle is not False:
                raise InvalidComponentError("cycle applies to staged components only")
            if ttl is None and placement is not None:
                raise InvalidComponentError(
                    "a permanent component (ttl=None) is appended to the history; "
                    "it takes no placement"
                )
        ends: list[int] = []
        total = 0
        for stage in stage_tuple:
            if stage.ttl is not None:
                total += stage.ttl
                ends.append(total)
        object.__setattr__(self, "content", message)
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "tags", tag_set)
        object.__setattr__(self, "ttl", ttl)
        object.__setattr__(self, "cadence", cadence)
        object.__setattr__(
            self, "placement", Placement.after if placement is None else _placement(placement)
        )
        object.__setattr__(self, "stages", stage_tuple)
        object.__setattr__(self, "cycle", cycle)
        object.__setattr__(self, "stage_ends", tuple(ends))
        object.__setattr__(self, "kind", self._kind())
        if stage_tuple:
            phases = tuple(Phase(s.placement, i) for i, s in enumerate(stage_tuple))
        else:
            phases = _UNSTAGED[self.placement]
        object.__setattr__(self, "phases", phases)

    def _kind(self) -> LifecycleKind:
        if self.stages:
            return LifecycleKind.staged
        if self.ttl is None:
            return LifecycleKind.permanent
        if self.cadence is None:
            return LifecycleKind.temporary
        if self.ttl == 1 and self.cadence == 1:
            return LifecycleKind.sticky
        return LifecycleKind.cyclic

    @property
    def ephemeral(self) -> bool:
        """True if the component lives in the request overlay, never in the history."""
        kind = self.kind
        match kind:
            case LifecycleKind.permanent:
                return False
            case (
                LifecycleKind.temporary
                | LifecycleKind.sticky
                | LifecycleKind.cyclic
                | LifecycleKind.staged
            ):
                return True
            case _:
                assert_never(kind)

    @property
    def cycles(self) -> int | None:
        """How many times a staged lifecycle runs: ``None`` for forever, 1 without cycling."""
        if self.cycle is True:
            return None
        if self.cycle is False:
            return 1
        return self.cycle

    def with_content(self, content: Message | str) -> Component:
        """A copy with other content (key, tags and schedule kept)."""
        return self._copy(content, self.key, self.tags)

    def with_tags(self, tags: Iterable[str]) -> Component:
        """A copy with other tags (content, key and schedule kept)."""
        return self._copy(self.content, self.key, tags)

    def with_key(self, key: str | None) -> Component:
        """A copy with another key (content, tags and schedule kept)."""
        return self._copy(self.content, key, self.tags)

    def _assigned(self, key: str) -> Component:
        """:meth:`with_key` for a key the lifecycle assigned (a valid key by construction):
        every other field is already checked, so it is copied as it is."""
        copied = object.__new__(Component)
        for name in Component.__slots__:
            object.__setattr__(copied, name, getattr(self, name))
        object.__setattr__(copied, "key", key)
        return copied

    def _copy(self, content: Message | str, key: str | None, tags: Iterable[str]) -> Component:
        staged = bool(self.stages)
        return Component(
            content,
            key=key,
            tags=tags,
            ttl=self.ttl,
            cadence=self.cadence,
            placement=None if staged or self.ttl is None else self.placement,
            stages=self.stages if staged else None,
            cycle=self.cycle,
        )


def _check_stages(
    stages: tuple[Stage, ...],
    ttl: int | None,
    cadence: int | None,
    placement: object,
    cycle: object,
) -> None:
    if not stages:
        raise InvalidComponentError("stages must hold at least one Stage")
    for stage in stages:
        if not isinstance(stage, Stage):
            raise InvalidComponentError(f"stages must be Stage objects, got {type(stage).__name__}")
    if ttl is not None or cadence is not None or placement is not None:
        raise InvalidComponentError(
            "a staged component takes its ttl and placement from its stages; "
            "do not give ttl, cadence or placement as well"
        )
    for stage in stages[:-1]:
        if stage.ttl is None:
            raise InvalidComponentError("only the last stage may have ttl=None")
    if isinstance(cycle, bool):
        cycling = cycle
    elif isinstance(cycle, int) and cycle >= 1:
        cycling = True
    else:
        raise InvalidComponentError(f"cycle must be True, False or a positive int, got {cycle!r}")
    if cycling and stages[-1].ttl is None:
        raise InvalidComponentError(
            "a cycling lifecycle needs a finite ttl on every stage (the last one has ttl=None)"
        )
