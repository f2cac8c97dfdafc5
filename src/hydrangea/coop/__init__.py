"""Cooperative areas over an append-only Context: CoopContext, EffectRange and the Collector."""

from hydrangea.coop.collector import CollectionPlan, RangedArea, plan_collection, repair_cursor
from hydrangea.coop.coop_context import CoopContext
from hydrangea.coop.effect_range import EffectRange
from hydrangea.coop.errors import (
    AreaContractError,
    DuplicateAreaError,
    GcPrologueError,
    InvalidEffectRangeError,
)
from hydrangea.coop.view import AreaRecord, CollectionRecord, CoopSnapshot

__all__ = [
    "AreaContractError",
    "AreaRecord",
    "CollectionPlan",
    "CollectionRecord",
    "CoopContext",
    "CoopSnapshot",
    "DuplicateAreaError",
    "EffectRange",
    "GcPrologueError",
    "InvalidEffectRangeError",
    "RangedArea",
    "plan_collection",
    "repair_cursor",
]
