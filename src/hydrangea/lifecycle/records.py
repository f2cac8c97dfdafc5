"""Read-only records and the renderer protocol a lifecycle session exposes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from hydrangea.context.context import Context
from hydrangea.lifecycle.component import Component
from hydrangea.lifecycle.errors import UnknownSnapshotError
from hydrangea.lifecycle.history import Snapshot

__all__ = ["ComponentState", "PlainRenderer", "Renderer", "SnapshotHistory"]


@runtime_checkable
class Renderer(Protocol):
    """What a lifecycle attaches to: a CoopContext, or anything with its two members."""

    @property
    def context(self) -> Context:
        """The Context being rendered."""
        ...

    def render(self) -> Context:
        """Prepare the Context for one model turn and return it."""
        ...


class PlainRenderer:
    """A bare Context seen as a renderer with no areas: ``render()`` returns it unchanged."""

    __slots__ = ("_context",)

    def __init__(self, context: Context) -> None:
        self._context = context

    @property
    def context(self) -> Context:
        """The wrapped Context."""
        return self._context

    def render(self) -> Context:
        """Return the Context unchanged."""
        return self._context


@dataclass(frozen=True, slots=True)
class ComponentState:
    """A read-only view of one component in the session, for debugging and the explorer."""

    key: str
    component: Component
    start: int
    """The episode that is (or was) the component's first."""
    committed: tuple[int, int] | None
    """For a permanent component in the history: its items' ``[start, end)`` indices."""


class SnapshotHistory:
    """Sealed snapshots of a session, looked up by id (``lifecycle.history.at_snapshot(id)``)."""

    __slots__ = ("_snapshots",)

    def __init__(self, snapshots: dict[str, Snapshot]) -> None:
        self._snapshots = snapshots

    def at_snapshot(self, snapshot_id: str) -> Snapshot:
        """The snapshot sealed under ``snapshot_id``; :class:`UnknownSnapshotError` if none."""
        try:
            return self._snapshots[snapshot_id]
        except KeyError:
            raise UnknownSnapshotError(f"no snapshot has the id {snapshot_id!r}") from None

    def ids(self) -> tuple[str, ...]:
        """Every snapshot id, oldest first."""
        return tuple(self._snapshots)

    def __len__(self) -> int:
        return len(self._snapshots)

    def __contains__(self, snapshot_id: object) -> bool:
        return snapshot_id in self._snapshots
