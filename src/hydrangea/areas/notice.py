"""OneShotNoticeArea: one message, rendered once; the area then retires and promotes nothing."""

from __future__ import annotations

from collections.abc import Sequence

from hydrangea.areas._common import anchored_life
from hydrangea.context.area import AreaFlowState, AreaLifeState, ContextAreaImplementation
from hydrangea.errors import ContextStateError
from hydrangea.message import Message, Role
from hydrangea.providers.native import NativeContent

__all__ = ["OneShotNoticeArea"]


class OneShotNoticeArea:
    """Publishes one notice at the next render, then retires.

    Nothing of it survives a collection: once a later collection's tail covers the notice, it
    is detached and :meth:`promote` returns nothing. Note that a retired notice rendered after
    every retained area's output is itself the tail: the next render reclaims it together with
    whatever followed it (the model's reply included). Give it an ``anchor`` to tie it to a
    longer-lived area instead. Use it for information that matters for the
    coming turns only (a resumed session, a changed tool list). Text that must stay for the whole
    session belongs in the Context before the first area renders, or in a retained area.

    >>> area = OneShotNoticeArea("Tools changed: search_docs is available.")
    >>> [m.text for m in area.render()], area.life_state.value
    (['Tools changed: search_docs is available.'], 'retired')
    """

    __slots__ = ("_anchor", "_message", "_rendered")

    def __init__(
        self,
        content: str | Message,
        *,
        role: Role = Role.user,
        anchor: ContextAreaImplementation | None = None,
    ) -> None:
        """``content`` is the notice text (sent with ``role``) or a complete message.

        With an ``anchor`` the rendered notice stays retained until the anchor retires, so it
        is reclaimed with the anchor's range rather than on its own at the next render.
        """
        if isinstance(content, Message):
            self._message = content
        else:
            self._message = Message(role=role, content=content)
        self._anchor = anchor
        self._rendered = False

    @property
    def life_state(self) -> AreaLifeState:
        """``retain`` until the notice has rendered (and its anchor, if any, retired)."""
        return anchored_life(self._rendered, self._anchor)

    @property
    def flow_state(self) -> AreaFlowState:
        """Always ``yielded``: a notice never holds the cursor."""
        return AreaFlowState.yielded

    @property
    def message(self) -> Message:
        """The notice."""
        return self._message

    def observe(self, context: Sequence[NativeContent]) -> None:
        """Nothing to watch: a notice never renders twice."""
        _ = context

    def render(self) -> list[Message]:
        """The notice the first time; nothing afterwards while an anchor keeps the area retained.
        A call on a retired notice is an error."""
        if self._rendered:
            if self.life_state is AreaLifeState.retain:
                return []
            raise ContextStateError("OneShotNoticeArea already rendered its notice")
        self._rendered = True
        return [self._message]

    def promote(self) -> tuple[Message, ...]:
        """Nothing survives the notice."""
        return ()

    def gc_prologue(self) -> None:
        """No resources to release."""

    def __repr__(self) -> str:
        return f"OneShotNoticeArea({self._message.text[:40]!r}, {self.life_state.value})"
