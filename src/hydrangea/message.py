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

import math
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Annotated, Any, Literal, NoReturn, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

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


def _read_only(kind: str) -> NoReturn:
    raise TypeError(f"a {kind} is read-only: build a new ToolCallPart to change the arguments")


class FrozenJSONObject(dict[str, Any]):
    """A read-only JSON object (what :attr:`ToolCallPart.arguments` holds).

    It is a ``dict`` (``json.dumps``, ``==`` with plain dicts and key order work as usual) whose
    methods that would change it raise ``TypeError``; its values are JSON scalars,
    :class:`FrozenJSONObject` and :class:`FrozenJSONArray`. It hashes by content, consistently
    with ``==``. ``dict(obj)`` or ``obj.copy()`` give a mutable shallow copy.
    """

    __slots__ = ()

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))

    def __setitem__(self, key: str, value: Any) -> NoReturn:
        _read_only("FrozenJSONObject")

    def __delitem__(self, key: str) -> NoReturn:
        _read_only("FrozenJSONObject")

    def __ior__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        _read_only("FrozenJSONObject")

    def clear(self) -> NoReturn:
        """Refused: the object is read-only."""
        _read_only("FrozenJSONObject")

    def pop(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Refused: the object is read-only."""
        _read_only("FrozenJSONObject")

    def popitem(self) -> NoReturn:
        """Refused: the object is read-only."""
        _read_only("FrozenJSONObject")

    def setdefault(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Refused: the object is read-only."""
        _read_only("FrozenJSONObject")

    def update(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Refused: the object is read-only."""
        _read_only("FrozenJSONObject")

    def __copy__(self) -> FrozenJSONObject:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenJSONObject:
        return self

    def __reduce__(self) -> tuple[type[FrozenJSONObject], tuple[dict[str, Any]]]:
        return (FrozenJSONObject, (dict(self),))


class FrozenJSONArray(list[Any]):
    """A read-only JSON array inside a :class:`FrozenJSONObject`.

    It is a ``list`` (``==`` with plain lists works) whose changing methods raise ``TypeError``;
    it hashes by content.
    """

    __slots__ = ()

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self))

    def __setitem__(self, index: Any, value: Any) -> NoReturn:
        _read_only("FrozenJSONArray")

    def __delitem__(self, index: Any) -> NoReturn:
        _read_only("FrozenJSONArray")

    def __iadd__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        _read_only("FrozenJSONArray")

    def __imul__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        _read_only("FrozenJSONArray")

    def append(self, value: Any) -> NoReturn:
        """Refused: the array is read-only."""
        _read_only("FrozenJSONArray")

    def extend(self, values: Any) -> NoReturn:
        """Refused: the array is read-only."""
        _read_only("FrozenJSONArray")

    def insert(self, index: Any, value: Any) -> NoReturn:
        """Refused: the array is read-only."""
        _read_only("FrozenJSONArray")

    def pop(self, *args: Any) -> NoReturn:
        """Refused: the array is read-only."""
        _read_only("FrozenJSONArray")

    def remove(self, value: Any) -> NoReturn:
        """Refused: the array is read-only."""
        _read_only("FrozenJSONArray")

    def clear(self) -> NoReturn:
        """Refused: the array is read-only."""
        _read_only("FrozenJSONArray")

    def sort(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Refused: the array is read-only."""
        _read_only("FrozenJSONArray")

    def reverse(self) -> NoReturn:
        """Refused: the array is read-only."""
        _read_only("FrozenJSONArray")

    def __copy__(self) -> FrozenJSONArray:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenJSONArray:
        return self

    def __reduce__(self) -> tuple[type[FrozenJSONArray], tuple[list[Any]]]:
        return (FrozenJSONArray, (list(self),))


def _freeze(value: object, where: str) -> Any:
    """A deep, read-only copy of the JSON value ``value``; ValueError naming ``where`` if it is
    not one (tuples are taken as arrays)."""
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where} is {value!r}, which is not a JSON number")
        return value
    if isinstance(value, Mapping):
        frozen: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"{where} has the key {key!r}; JSON object keys are strings")
            frozen[key] = _freeze(item, f"{where}[{key!r}]")
        return FrozenJSONObject(frozen)
    if isinstance(value, list | tuple):
        return FrozenJSONArray(_freeze(item, f"{where}[{n}]") for n, item in enumerate(value))
    raise ValueError(f"{where} holds a {type(value).__name__}, which is not a JSON value")


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
        frozen = _freeze(value, "arguments")
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
