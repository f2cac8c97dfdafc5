"""Lifecycles on an append-only history: ttl, cadence, stages, keys and tags, snapshots.

Start with :class:`Lifecycle` (attach it to a CoopContext or a Context), add
:class:`Component` objects, and call :meth:`Lifecycle.render` once per model turn. A component's
schedule says in which episodes it is sent; what was sent is history (see "Prefix binding").
"""

from hydrangea.lifecycle.component import Component, LifecycleKind, Placement, Stage
from hydrangea.lifecycle.errors import (
    ComponentNotFoundError,
    DuplicateKeyError,
    InvalidComponentError,
    InvalidTargetError,
    LifecycleError,
    PermanentComponentError,
    UnknownSnapshotError,
)
from hydrangea.lifecycle.history import LifecycleRequest, OverlayItem, Sending, Snapshot
from hydrangea.lifecycle.records import ComponentState, PlainRenderer, Renderer, SnapshotHistory
from hydrangea.lifecycle.session import Lifecycle, Resend
from hydrangea.lifecycle.visibility import Change, Phase, next_change, visible_at

__all__ = [
    "Change",
    "Component",
    "ComponentNotFoundError",
    "ComponentState",
    "DuplicateKeyError",
    "InvalidComponentError",
    "InvalidTargetError",
    "Lifecycle",
    "LifecycleError",
    "LifecycleKind",
    "LifecycleRequest",
    "OverlayItem",
    "PermanentComponentError",
    "Phase",
    "Placement",
    "PlainRenderer",
    "Renderer",
    "Resend",
    "Sending",
    "Snapshot",
    "SnapshotHistory",
    "Stage",
    "UnknownSnapshotError",
    "next_change",
    "visible_at",
]
