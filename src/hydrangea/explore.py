"""The explorer: a tree view of a context for debugging, and a way to step episodes.

It shows the areas of a CoopContext with their states and EffectRanges, the history items
(abbreviated), the cache reuse predicted for the latest request next to the usage the provider
reported for the responses pushed, the components the latest episode sent, and what each lifecycle
component does next
("expires after episode 7", "reappears at episode 10", "moves to stage 2 at episode 4").
``rich`` is needed only here, and only when a tree is built (the ``cli`` extra).
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, assert_never

from hydrangea.context.context import Context
from hydrangea.coop import CoopContext
from hydrangea.errors import ContextStateError, SerializationError
from hydrangea.lifecycle import Component, Lifecycle, LifecycleKind, next_change, visible_at
from hydrangea.lifecycle.records import ComponentState
from hydrangea.providers.adapter import Adapter
from hydrangea.providers.native import NativeContent
from hydrangea.providers.usage import Usage

if TYPE_CHECKING:
    from rich.console import Console
    from rich.tree import Tree

__all__ = ["Explorer", "describe_next", "explore_file", "load_target", "predicted_cache_share"]

_TEXT_WIDTH = 60
_HEAD, _TAIL = 5, 30


def describe_next(state: ComponentState, episode: int) -> str:
    """What the component does after ``episode`` (the latest rendered one), in words."""
    component, start = state.component, state.start
    if component.kind is LifecycleKind.permanent:
        if state.committed is None:
            return f"appended to the history at episode {start}"
        return f"in the history at index {state.committed[0]}"
    if episode < start:
        return f"first shown at episode {start}"
    offset = episode - start
    shown = visible_at(component, offset) is not None
    change = next_change(component, offset)
    if change is None:
        return "stays in every episode" if shown else "gone"
    at = start + change.at
    if change.phase is None:
        if change.final:
            return f"expires after episode {at - 1}"
        back = next_change(component, change.at)
        again = f"; reappears at episode {start + back.at}" if back is not None else ""
        return f"hidden after episode {at - 1}{again}"
    if not shown:
        return f"reappears at episode {at}"
    if change.phase.stage is not None:
        where = change.phase.placement.value
        return f"moves to stage {change.phase.stage} ({where}) at episode {at}"
    return f"changes at episode {at}"


def _schedule(component: Component) -> str:
    kind = component.kind
    match kind:
        case LifecycleKind.permanent:
            return "permanent"
        case LifecycleKind.temporary:
            return f"temporary ttl={component.ttl} ({component.placement.value})"
        case LifecycleKind.sticky:
            return f"sticky ({component.placement.value})"
        case LifecycleKind.cyclic:
            return f"cyclic ttl={component.ttl} cadence={component.cadence} " + (
                f"({component.placement.value})"
            )
        case LifecycleKind.staged:
            stages = ", ".join(
                f"{s.placement.value}:{'∞' if s.ttl is None else s.ttl}" for s in component.stages
            )
            cycles = component.cycles
            return f"staged [{stages}] x{'∞' if cycles is None else cycles}"
        case _:
            assert_never(kind)


def _add(node: Tree, label: str) -> Tree:
    """Add a plain-text child (no rich markup: history text may contain brackets)."""
    from rich.text import Text

    return node.add(Text(label))


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _TEXT_WIDTH else flat[: _TEXT_WIDTH - 1] + "…"


@dataclass(eq=False)
class Explorer:
    """A debugging view of a Lifecycle, a CoopContext or a bare Context."""

    target: Lifecycle | CoopContext | Context
    console: Console | None = None

    @property
    def context(self) -> Context:
        """The Context being explored."""
        target = self.target
        return target if isinstance(target, Context) else target.context

    def step(self, episodes: int = 1) -> None:
        """Advance ``episodes`` episodes (render the Lifecycle or the CoopContext)."""
        target = self.target
        if isinstance(target, Context):
            raise ContextStateError("a bare Context has no episodes to step; explore a Lifecycle")
        for _ in range(episodes):
            target.render()

    def render_tree(self) -> Tree:
        """The whole view as a ``rich`` Tree."""
        from rich.text import Text
        from rich.tree import Tree

        context = self.context
        lc = self.target if isinstance(self.target, Lifecycle) else None
        title = f"Context {context.gateway.value}: {len(context)} items"
        if lc is not None:
            title += f", episode {lc.episode}"
        root = Tree(Text(title))
        coop = self.target if isinstance(self.target, CoopContext) else None
        if lc is not None and isinstance(lc.renderer, CoopContext):
            coop = lc.renderer
        if coop is not None:
            self._areas(_add(root, "Areas"), coop)
        self._history(_add(root, "History"), lc)
        self._cache(_add(root, "Cache"), lc)
        if lc is not None:
            self._overlay(_add(root, "Sent"), lc)
            self._components(_add(root, "Components"), lc)
            ids = lc.history.ids()
            snaps = _add(root, f"Snapshots: {len(ids)}")
            for snapshot_id in ids[-5:]:
                snap = lc.history.at_snapshot(snapshot_id)
                _add(snaps, f"{snapshot_id} episode {snap.episode} ({snap.trigger})")
        return root

    def render_text(self, width: int = 100) -> str:
        """The tree as plain text."""
        from rich.console import Console

        console = Console(file=io.StringIO(), width=width, record=True, color_system=None)
        console.print(self.render_tree())
        return console.export_text()

    def print(self) -> None:
        """Print the tree to the console given at construction (or a new one)."""
        from rich.console import Console

        (self.console or Console()).print(self.render_tree())

    @staticmethod
    def _areas(node: Tree, coop: CoopContext) -> None:
        view = coop.snapshot()
        if not view.areas:
            _add(node, "(none)")
        for index, record in enumerate(view.areas):
            span = record.effect_range
            where = "no range" if span is None else f"[{span.earliest}, {span.latest}]"
            cursor = " ← cursor" if view.cursor == index else ""
            _add(
                node,
                f"{type(record.area).__name__} {where} "
                f"{record.life_state.value}/{record.flow_state.value}{cursor}",
            )
        for area in view.pending:
            _add(node, f"{type(area).__name__} (joins at the next render)")
        last = coop.last_collection
        if last is not None:
            _add(
                node,
                f"last collection at render {last.render}: detached {last.detached} "
                f"from {last.start}, promoted {last.promoted}",
            )

    def _cache(self, node: Tree, lc: Lifecycle | None) -> None:
        """Predicted cache reuse of the latest request next to what the provider reported."""
        context = self.context
        request = lc.last_request if lc is not None else None
        items = request.items if request is not None else context[:]
        if request is None:
            stable = len(items)
        else:  # what the request before it sent, it repeats: the part a provider has cached
            stable = min(request.earlier_stable[0], len(items)) if request.earlier_stable else 0
        share = predicted_cache_share(context.adapter, items, stable)
        _add(node, f"predicted: {share:.0%} of the latest request repeats an earlier one "
                   "(cacheable)")
        log = context.usage
        if not len(log):
            _add(node, "reported: no response with usage pushed yet")
            return
        for record in list(log)[-3:]:
            usage = record.usage
            wrote = usage.cache_write_tokens
            writes = "" if wrote is None else f", wrote {wrote}"
            _add(
                node,
                f"reported (response {record.turn}): read {usage.cache_read_tokens} of "
                f"{usage.input_tokens} input tokens ({usage.cache_reuse:.0%}){writes}"
                f"{_server_side(usage)}",
            )

    def _history(self, node: Tree, lc: Lifecycle | None) -> None:
        context = self.context
        owners: dict[int, str] = {}
        if lc is not None:
            for state in lc.states():
                if state.committed is not None:
                    for index in range(*state.committed):
                        owners[index] = f"component {state.key!r}"
            for sending in lc.sendings():
                for index in range(sending.start, sending.end):
                    owners[index] = f"component {sending.key!r}, sent in episode {sending.episode}"
        boundary = context.compactions[-1] if context.compactions else None
        if boundary is not None:
            kind = "a compaction in item" if boundary.at is not None else "a summary before item"
            where = boundary.at if boundary.at is not None else boundary.start
            _add(node, f"requests start at {kind} {where} ({len(context.compactions)} "
                       "provider compaction(s); the items before it stay here, not sent)")
        size = len(context)
        shown = (
            list(range(size))
            if size <= _HEAD + _TAIL + 1
            else [*range(_HEAD), -1, *range(size - _TAIL, size)]
        )
        for index in shown:
            if index < 0:
                _add(node, f"… {size - _HEAD - _TAIL} more items …")
                continue
            item = context[index]
            role = item.get("role") or item.get("type") or "?"
            owner = f"  ({owners[index]})" if index in owners else ""
            _add(node, f"[{index}] {role}: {_short(context.adapter.item_text(item))}{owner}")

    def _overlay(self, node: Tree, lc: Lifecycle) -> None:
        from rich.text import Text

        request = lc.last_request
        if request is None:
            _add(node, "(no render yet)")
            return
        node.label = Text(
            f"Sent in episode {request.episode} (the before components at {request.anchor})"
        )
        if not request.overlay:
            _add(node, "(empty)")
        for item in request.overlay:
            stage = "" if item.phase.stage is None else f" stage {item.phase.stage}"
            text = " ".join(self.context.adapter.item_text(i) for i in item.items)
            _add(node, f"{item.key} {item.phase.placement.value}{stage}: {_short(text)}")

    @staticmethod
    def _components(node: Tree, lc: Lifecycle) -> None:
        states = list(lc.states())
        if not states:
            _add(node, "(none)")
        for state in states:
            tags = f" tags={sorted(state.component.tags)}" if state.component.tags else ""
            _add(
                node,
                f"{state.key}: {_schedule(state.component)}{tags} — "
                f"{describe_next(state, lc.episode)}",
            )


def _server_side(usage: Usage) -> str:
    """What the server did to that request's context, as the response reports it."""
    notes: list[str] = []
    spent = usage.compaction_tokens
    if spent is not None:
        notes.append(f"compaction cost {spent[0]} in / {spent[1]} out")
    if usage.applied_edits:
        notes.append("edits " + ", ".join(str(e.get("type")) for e in usage.applied_edits))
    miss = usage.cache_miss
    if miss is not None:
        missed = "" if miss[1] is None else f" ({miss[1]} tokens)"
        notes.append(f"cache miss: {miss[0]}{missed}")
    return "".join(f"; {note}" for note in notes)


def load_target(path: str | Path) -> Lifecycle | Context:
    """Read a saved Context or lifecycle session, whichever ``path`` holds."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SerializationError(f"{path}: not JSON ({exc})") from exc
    kind = document.get("format") if isinstance(document, dict) else None
    if kind == "hydrangea.context":
        return Context.from_json(text)
    if kind == "hydrangea.lifecycle":
        return Lifecycle.from_json(text)
    raise SerializationError(f"{path}: neither a saved Context nor a saved lifecycle session")


def explore_file(path: str | Path, console: Console | None = None) -> None:
    """Print the tree of a saved Context or lifecycle session (for ``hydrangea explore``)."""
    Explorer(load_target(path), console).print()


def predicted_cache_share(adapter: Adapter, items: Sequence[NativeContent], stable: int) -> float:
    """The share of a request (in characters of its JSON) that is its stable prefix: the
    request of ``items[:stable]`` against the request of all ``items``; what a provider can
    read from its cache next turn, at most."""
    if not items:
        return 0.0
    whole = len(json.dumps(adapter.build_request(items), ensure_ascii=False))
    head = 0
    if stable:
        head = len(json.dumps(adapter.build_request(items[:stable]), ensure_ascii=False))
    return min(head / whole, 1.0) if whole else 0.0
