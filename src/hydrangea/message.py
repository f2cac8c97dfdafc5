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
from typing import TYPE_CHECKING, Annotated, Any, Literal, Self, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hydrangea.errors import (
    HydrangeaError,
    InputTooDeepError,
    MessageValidationError,
    UnencodableTextError,
)
from hydrangea.frozen_json import FrozenJSONArray, FrozenJSONObject, freeze
from hydrangea.text import first_unencodable

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


_TEXTS = (str, bytes)
"""Content taken as it is (a tuple, not a union: a union is built anew at each evaluation)."""


class Role(StrEnum):
    """Who speaks a message."""

    system = "system"
    user = "user"
    assistant = "assistant"


def _library_error(model: type[BaseModel], exc: ValidationError) -> HydrangeaError:
    """The library error for a failed validation: a HydrangeaError the validators raised
    (text that cannot be encoded), else :class:`MessageValidationError` listing every problem."""
    problems: list[str] = []
    for error in exc.errors(include_url=False):
        # pydantic's location also names its union branches ("tuple[...]"): keep fields, indices
        where = ".".join(
            str(part) for part in error["loc"] if isinstance(part, int) or part.isidentifier()
        )
        cause = error.get("ctx", {}).get("error")
        if isinstance(cause, HydrangeaError) and not where:  # already wrapped by a custom init
            return cause
        if isinstance(cause, UnencodableTextError | InputTooDeepError):
            return type(cause)(f"{model.__name__}{' ' + where if where else ''}: {cause}")
        message = str(cause) if isinstance(cause, Exception) else error["msg"]
        problems.append(f"{where or 'value'}: {message}")
    return MessageValidationError(f"invalid {model.__name__}: " + "; ".join(problems))


def _check_text(value: object, where: str) -> None:
    """Walk a validated field value; UnencodableTextError (inside pydantic) for a surrogate."""
    if isinstance(value, str):
        index = first_unencodable(value)
        if index is not None:
            raise UnencodableTextError(
                f"{where} holds a lone surrogate U+{ord(value[index]):04X} at index {index}"
            )
    elif isinstance(value, Mapping):
        for key, inner in value.items():
            _check_text(key, f"{where} key")
            _check_text(inner, f"{where}[{key!r}]")
    elif isinstance(value, list | tuple):
        for index, inner in enumerate(value):
            if not isinstance(inner, BaseModel):  # parts check their own text
                _check_text(inner, f"{where}[{index}]")


_EVERY: dict[type[BaseModel], set[str]] = {}
"""Per model class, the set of all its field names that instances given every field share."""


class _Frozen(BaseModel):
    """Frozen, strict models whose validation errors are library errors.

    Constructing a model (or ``model_validate``) raises :class:`MessageValidationError` (a
    ``TypeError`` and a ``ValueError``) instead of pydantic's ``ValidationError``, and
    :class:`~hydrangea.errors.UnencodableTextError` for text holding a lone surrogate.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    def __init__(self, /, **data: Any) -> None:
        # What BaseModel.__init__ does, one Python frame fewer: messages are made every turn.
        try:
            self.__pydantic_validator__.validate_python(data, self_instance=self)
        except ValidationError as exc:
            raise _library_error(type(self), exc) from exc
        # Given every field (a Message always is), the instance shares its class's one set of
        # the given fields' names (a set of its own is 216 bytes, 45% of a Message a transcript
        # keeps): a frozen model never changes it in place, model_copy() copies it first.
        given, every = self.__pydantic_fields_set__, _EVERY.get(type(self))
        if every is None:
            every = _EVERY.setdefault(type(self), set(type(self).__pydantic_fields__))
        if len(given) == len(every):
            object.__setattr__(self, "__pydantic_fields_set__", every)

    @classmethod
    def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> Self:
        """Validate ``obj`` into this model; library errors as for the constructor."""
        try:
            return super().model_validate(obj, *args, **kwargs)
        except ValidationError as exc:
            raise _library_error(cls, exc) from exc

    @classmethod
    def model_validate_json(
        cls, json_data: str | bytes | bytearray, *args: Any, **kwargs: Any
    ) -> Self:
        """Validate JSON text into this model; library errors as for the constructor."""
        try:
            return super().model_validate_json(json_data, *args, **kwargs)
        except ValidationError as exc:
            raise _library_error(cls, exc) from exc

    @model_validator(mode="after")
    def _encodable(self) -> Self:
        for name, value in self.__dict__.items():
            if type(value) is str and value.isascii():
                continue  # the common case: nothing to walk
            _check_text(value, name)
        return self


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
    name: str | None = Field(default=None, min_length=1)
    """The called tool's name, when the harness knows it. Gemini's ``function_response``
    carries it: a result is stored with it (emplaced without one, with its call's, found by id
    among the items just before), and the request names every response after its paired call
    either way. The other gateways pair by ``call_id`` alone and do not send it."""


Part: TypeAlias = Annotated[
    TextPart | ImagePart | ToolCallPart | ToolResultPart, Field(discriminator="type")
]


class Message(_Frozen):
    """One provider-neutral message: a role and either a string or a sequence of parts (a list
    or a tuple; kept as a tuple).

    >>> Message(role=Role.user, content="hello").text
    'hello'
    """

    role: Role
    content: str | tuple[Part, ...]
    """A string, or the parts as a tuple (a list or any other sequence given is stored as one)."""

    if TYPE_CHECKING:  # what the constructor takes: a list or a tuple of parts alike

        def __init__(self, *, role: Role, content: str | Sequence[Part]) -> None: ...

    @field_validator("content", mode="before")
    @classmethod
    def _sequence_to_tuple(cls, value: object) -> object:
        if isinstance(value, _TEXTS) or type(value) is tuple:  # no ABC check for these
            return value
        if isinstance(value, Sequence):
            return tuple(value)
        return value

    @model_validator(mode="after")
    def _encodable(self) -> Self:
        # The role is a Role (ASCII); parts check their own text: only string content is left.
        content = self.content
        if isinstance(content, str) and not content.isascii():
            _check_text(content, "content")
        return self

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
