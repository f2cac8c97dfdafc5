"""Provider-neutral messages.

A :class:`Message` is what areas and builders produce. It says *who* speaks (:class:`Role`) and
*what* they say: a plain string, or a sequence of parts (text, image, tool call, tool result).
Gateway adapters in :mod:`hydrangea.context` turn messages into each provider's wire shape.

Where each kind of part may appear is checked here, once, so that no adapter has to guess:

* a system message carries text only;
* tool calls are spoken by the assistant;
* tool results are returned by the user side (the caller's harness).

Messages are immutable and hashable, tool calls included: :attr:`ToolCallPart.arguments` is kept
as a deep-frozen copy of the JSON object it was given (a read-only ``dict`` subclass whose nested
objects and arrays are read-only too), so changing the dict passed to the constructor does not
reach the part, and the part's own arguments refuse changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from hydrangea.frozen_json import FrozenJSONArray, FrozenJSONObject, freeze

__all__ = [
    "FrozenJSONArray",
    "FrozenJSONObject",
    "ImagePart",
    "Message",
    "Part",
    "Role",
    "TextPart",
    "ToolCallPart",
    "ToolResultPart",
]


class Role(StrEnum):
    """Who speaks a message."""

    system = "system"
    user = "user"
    assistant = "assistant"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextPart(_Frozen):
    """A run of plain text."""

    type: Literal["text"] = "text"
    text: str


class ImagePart(_Frozen):
    """An image, given either by URL or as raw bytes with their media type."""

    type: Literal["image"] = "image"
    url: str | None = None
    data: bytes | None = None
    media_type: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> ImagePart:
        if (self.url is None) == (self.data is None):
            raise ValueError("an ImagePart needs exactly one of url or data")
        if self.data is not None and not self.media_type:
            raise ValueError("an ImagePart with data needs a media_type such as 'image/png'")
        if self.media_type is not None and not self.media_type.startswith("image/"):
            raise ValueError(f"media_type must be an image type, got {self.media_type!r}")
        return self


class ToolCallPart(_Frozen):
    """The assistant asks the harness to run a tool. ``arguments`` is a JSON object.

    The constructor takes any JSON object (a ``dict`` of strings, numbers, booleans, ``None``,
    lists and dicts); the part keeps a deep-frozen copy (:class:`FrozenJSONObject`), so it is
    hashable and its arguments cannot be changed after the fact.

    >>> part = ToolCallPart(id="c1", name="search", arguments={"q": ["kyoto"]})
    >>> part.arguments == {"q": ["kyoto"]}, hash(part) == hash(part.model_copy())
    (True, True)
    """

    type: Literal["tool_call"] = "tool_call"
    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    arguments: Mapping[str, Any] = Field(default_factory=FrozenJSONObject)

    @field_validator("arguments", mode="after")
    @classmethod
    def _freeze_arguments(cls, value: Mapping[str, Any]) -> FrozenJSONObject:
        frozen = freeze(value, "arguments")
        assert isinstance(frozen, FrozenJSONObject)
        return frozen


class ToolResultPart(_Frozen):
    """The harness returns the result of the tool call ``call_id``."""

    type: Literal["tool_result"] = "tool_result"
    call_id: str = Field(min_length=1)
    content: str
    is_error: bool = False


Part: TypeAlias = Annotated[
    TextPart | ImagePart | ToolCallPart | ToolResultPart, Field(discriminator="type")
]


class Message(_Frozen):
    """One provider-neutral message: a role and either a string or a tuple of parts.

    >>> Message(role=Role.user, content="hello").text
    'hello'
    """

    role: Role
    content: str | tuple[Part, ...]

    @field_validator("content", mode="before")
    @classmethod
    def _sequence_to_tuple(cls, value: object) -> object:
        if isinstance(value, Sequence) and not isinstance(value, str | bytes):
            return tuple(value)
        return value

    @model_validator(mode="after")
    def _parts_fit_role(self) -> Message:
        if isinstance(self.content, str):
            return self
        if not self.content:
            raise ValueError("a Message needs at least one part")
        for part in self.content:
            if self.role is Role.system and not isinstance(part, TextPart):
                raise ValueError(f"a system message carries text only, got a {part.type} part")
            if isinstance(part, ToolCallPart) and self.role is not Role.assistant:
                raise ValueError("tool calls are spoken by the assistant role only")
            if isinstance(part, ToolResultPart) and self.role is not Role.user:
                raise ValueError("tool results are returned in a user-role message only")
        return self

    @property
    def parts(self) -> tuple[Part, ...]:
        """The content as parts; a plain string is one :class:`TextPart`."""
        if isinstance(self.content, str):
            return (TextPart(text=self.content),)
        return self.content

    @property
    def text(self) -> str:
        """The concatenated text of the text parts and tool results (images and calls omitted)."""
        if isinstance(self.content, str):
            return self.content
        chunks: list[str] = []
        for part in self.content:
            if isinstance(part, TextPart):
                chunks.append(part.text)
            elif isinstance(part, ToolResultPart):
                chunks.append(part.content)
        return "\n".join(chunks)
