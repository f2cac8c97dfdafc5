"""AsOfArea: renders the messages of one as-of build (``hydrangea.asof.BuiltContext``).

The build already did the hard part: nothing published after its ``as_of`` is in it, outside
text is fenced as untrusted data, and the messages fit its token budget. The area only places
those messages in the Context, once, at the next render.
"""

from __future__ import annotations

from collections.abc import Sequence

from hydrangea.areas._common import anchored_life
from hydrangea.asof.result import BuiltContext
from hydrangea.context.area import AreaFlowState, AreaLifeState, ContextAreaImplementation
from hydrangea.message import Message
from hydrangea.providers.native import NativeContent

__all__ = ["AsOfArea"]


class AsOfArea:
    """Places a :class:`~hydrangea.asof.BuiltContext`'s messages in the Context for one turn.

    Lifetime: the area renders once. Without an ``anchor`` it retires right away, so the next
    collection whose tail reaches it reclaims its messages together with everything after them
    (the model's reply included), unless a retained area has rendered after it (the collector's
    walk from the tail stops at the first retained area). With an ``anchor``
    (typically the current conversation segment, see
    :class:`~hydrangea.areas.CompactionArea`) it stays retained, rendering nothing more, until
    the anchor retires; its messages are then reclaimed with the anchor's range.
    :meth:`promote` keeps nothing: retrieved text is for the turns it was built for (what the
    build compacted or dropped stays in its record store; build again for a later turn).
    """

    __slots__ = ("_anchor", "_built", "_label", "_rendered")

    def __init__(
        self,
        built: BuiltContext,
        *,
        anchor: ContextAreaImplementation | None = None,
        label: str = "as-of",
    ) -> None:
        """``built`` is the build to show; ``label`` names the area in reprs and displays."""
        if not isinstance(built, BuiltContext):
            raise TypeError(f"AsOfArea needs a BuiltContext, got {type(built).__name__}")
        self._built = built
        self._anchor = anchor
        self._label = label
        self._rendered = False

    @property
    def life_state(self) -> AreaLifeState:
        """``retain`` until rendered (and, with an anchor, until the anchor retires)."""
        return anchored_life(self._rendered, self._anchor)

    @property
    def flow_state(self) -> AreaFlowState:
        """Always ``yielded``."""
        return AreaFlowState.yielded

    @property
    def built(self) -> BuiltContext:
        """The build whose messages this area shows."""
        return self._built

    @property
    def label(self) -> str:
        """The name given at construction."""
        return self._label

    @property
    def rendered(self) -> bool:
        """Whether the build's messages have been placed in the Context."""
        return self._rendered

    def observe(self, context: Sequence[NativeContent]) -> None:
        """Nothing to watch: the messages were placed once and never change."""
        _ = context

    def render(self) -> list[Message]:
        """The build's messages the first time, nothing afterwards."""
        if self._rendered:
            return []
        self._rendered = True
        return list(self._built.messages)

    def promote(self) -> tuple[Message, ...]:
        """Nothing: the records behind the build are kept by its record store."""
        return ()

    def gc_prologue(self) -> None:
        """No resources to release."""

    def __repr__(self) -> str:
        return (
            f"AsOfArea({self._label!r}, {len(self._built.messages)} messages, "
            f"{self._built.tokens}/{self._built.token_budget} tokens)"
        )
