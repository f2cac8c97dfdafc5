"""FunctionTool: a tool declared once as a typed Python function.

The function's signature and docstring give the tool's JSON schema (built by pydantic from a
model of the parameters), its description and one description per parameter. The same model
validates the arguments a model sends before the function is called: arguments that do not fit
raise :class:`~hydrangea.errors.ToolError` with a message for the model, never a pydantic error.

>>> @tool
... def add(a: int, b: int = 1) -> int:
...     '''Add two numbers.
...
...     Args:
...         a: The first number.
...         b: The second number.
...     '''
...     return a + b
>>> add.name, add.parameters["required"], add(2, 3)
('add', ['a'], 5)
>>> add.invoke({"a": 2})
3
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Generic, ParamSpec, TypeVar, overload

import pydantic_core
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, JsonSchemaValue
from pydantic_core import CoreSchema

from hydrangea.errors import ToolDefinitionError, ToolError, ToolResultError
from hydrangea.frozen_json import FrozenJSONObject, freeze
from hydrangea.tools.docstring import parse_docstring

__all__ = ["FunctionTool", "result_text", "tool"]

P = ParamSpec("P")
R = TypeVar("R")

_MAX_ERRORS = 8


class _Schema(GenerateJsonSchema):
    """pydantic's JSON schema without the titles it derives from Python names (model tokens)."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def generate(self, schema: CoreSchema, mode: JsonSchemaMode = "validation") -> JsonSchemaValue:
        out = super().generate(schema, mode)
        out.pop("title", None)
        return out


@dataclass(frozen=True, slots=True, eq=False)
class FunctionTool(Generic[P, R]):
    """A tool made from a typed function (sync or ``async def``); call it like the function.

    Build one with :func:`tool` (a decorator) or :meth:`from_function`. :attr:`parameters` is
    the JSON schema of the arguments, :meth:`invoke` validates a model's arguments and calls the
    function (for an async function it returns the coroutine), and
    :func:`~hydrangea.tools.tool_definitions` gives the definition each gateway wants.
    """

    function: Callable[P, R]
    """The function itself."""
    name: str
    """The tool's name as the model sees it (the function's ``__name__`` unless given)."""
    description: str
    """What the model reads about the tool (the docstring's summary unless given)."""
    parameters: FrozenJSONObject
    """The JSON schema of the arguments: an object with one property per parameter."""
    is_async: bool
    """Whether calling the function returns a coroutine."""
    _arguments: type[BaseModel]
    _fields: tuple[tuple[str, str], ...]
    trusted: bool = False
    """Whether the tool's output is the harness's own text, sent to the model as it is. By
    default (``False``) a tool's output is outside text: :class:`~hydrangea.areas.ToolLoopArea`
    sends it fenced as untrusted data (:func:`~hydrangea.tools.fence_tool_output`)."""

    @classmethod
    def from_function(
        cls,
        function: Callable[P, R],
        *,
        name: str | None = None,
        description: str | None = None,
        trusted: bool = False,
    ) -> FunctionTool[P, R]:
        """Declare ``function`` as a tool (``trusted``: its output is sent unfenced, see
        :attr:`trusted`).

        Every parameter needs a type annotation pydantic can describe in JSON schema
        (``Annotated[..., Field(...)]`` constraints and descriptions are kept); defaults make a
        parameter optional. ``*args``, ``**kwargs`` and positional-only parameters are refused
        with :class:`~hydrangea.errors.ToolDefinitionError`, as is a name that is empty.
        """
        if not callable(function):
            raise ToolDefinitionError(f"a tool must be a function, got {type(function).__name__}")
        tool_name = name if name is not None else getattr(function, "__name__", "")
        if not isinstance(tool_name, str) or not tool_name or not tool_name.isidentifier():
            raise ToolDefinitionError(
                f"a tool needs a name made of letters, digits and underscores, got {tool_name!r}"
            )
        doc = parse_docstring(inspect.getdoc(function))
        model, fields = _arguments_model(function, tool_name, doc.parameters)
        try:
            schema = model.model_json_schema(schema_generator=_Schema)
        except Exception as exc:
            if type(exc).__module__.startswith("pydantic"):
                raise ToolDefinitionError(
                    f"tool {tool_name!r} has a parameter type with no JSON schema: {exc}"
                ) from exc
            raise
        try:
            frozen = freeze(schema, f"the schema of tool {tool_name!r}")
        except ValueError as exc:
            raise ToolDefinitionError(str(exc)) from exc
        assert isinstance(frozen, FrozenJSONObject)
        return cls(
            function=function,
            name=tool_name,
            description=doc.description if description is None else description,
            parameters=frozen,
            is_async=_is_async(function),
            _arguments=model,
            _fields=fields,
            trusted=trusted,
        )

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Call the function directly, as if it were not a tool."""
        return self.function(*args, **kwargs)

    def arguments(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """``arguments`` (a model's JSON object) validated and converted to the parameter types.

        Validation is pydantic's strict JSON mode, so it follows the schema the model was shown:
        ``"3"`` is not an integer, ``1`` is not a boolean, unknown names are refused; strings
        become dates, enums and the like as their schema says.

        Raises :class:`~hydrangea.errors.ToolError` naming each argument that does not fit (at
        most eight), which a tool loop returns to the model as an error result.
        """
        if not isinstance(arguments, Mapping):
            raise ToolError(
                f"invalid arguments for tool {self.name!r}: expected a JSON object, "
                f"got {type(arguments).__name__}"
            )
        try:
            text = json.dumps(arguments, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ToolError(f"invalid arguments for tool {self.name!r}: not JSON ({exc})") from None
        try:
            validated = self._arguments.model_validate_json(text, strict=True)
        except ValidationError as exc:
            raise ToolError(_describe(self.name, exc)) from None
        return {parameter: getattr(validated, attribute) for attribute, parameter in self._fields}

    def invoke(self, arguments: Mapping[str, Any]) -> R:
        """Validate ``arguments`` (see :meth:`arguments`) and call the function with them."""
        values = self.arguments(arguments)
        return self.function(**values)  # type: ignore[call-arg]

    def __repr__(self) -> str:
        kind = ("async " if self.is_async else "") + ("trusted " if self.trusted else "")
        return f"FunctionTool({kind}{self.name})"


@overload
def tool(function: Callable[P, R], /) -> FunctionTool[P, R]: ...


@overload
def tool(
    *, name: str | None = None, description: str | None = None, trusted: bool = False
) -> Callable[[Callable[P, R]], FunctionTool[P, R]]: ...


def tool(
    function: Callable[P, R] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    trusted: bool = False,
) -> FunctionTool[P, R] | Callable[[Callable[P, R]], FunctionTool[P, R]]:
    """Decorator: ``@tool`` or ``@tool(name=..., description=..., trusted=...)`` over a typed
    function (``trusted=True``: the harness's own output, sent unfenced).

    Shorthand for :meth:`FunctionTool.from_function`; the decorated name is the tool, and still
    calls the function.
    """
    if function is not None:
        return FunctionTool.from_function(
            function, name=name, description=description, trusted=trusted
        )

    def decorate(fn: Callable[P, R]) -> FunctionTool[P, R]:
        return FunctionTool.from_function(fn, name=name, description=description, trusted=trusted)

    return decorate


def result_text(value: object, tool_name: str = "tool") -> str:
    """The text a tool result carries: a ``str`` as it is, anything else as compact JSON.

    JSON values, pydantic models, dataclasses, datetimes and the like are serialized by pydantic;
    a value it cannot serialize raises :class:`~hydrangea.errors.ToolResultError`.
    """
    if isinstance(value, str):
        return value
    try:
        return pydantic_core.to_json(value).decode("utf-8")
    except pydantic_core.PydanticSerializationError as exc:
        raise ToolResultError(
            f"tool {tool_name!r} returned a {type(value).__name__}, which is not JSON: {exc}"
        ) from exc


# -- internals ---------------------------------------------------------------------------------


def _is_async(function: Callable[..., object]) -> bool:
    if inspect.iscoroutinefunction(function):
        return True
    call = getattr(function, "__call__", None)  # noqa: B004 - a callable object's method
    return call is not None and inspect.iscoroutinefunction(call)


def _arguments_model(
    function: Callable[..., object], tool_name: str, described: Mapping[str, str]
) -> tuple[type[BaseModel], tuple[tuple[str, str], ...]]:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(f"tool {tool_name!r} has no readable signature: {exc}") from exc
    target: object = function
    if not (inspect.isfunction(function) or inspect.ismethod(function)):
        target = getattr(function, "__call__", function)  # noqa: B004 - a callable object
    try:
        hints = typing.get_type_hints(target, include_extras=True)
    except Exception as exc:  # any failure to resolve a string annotation
        raise ToolDefinitionError(
            f"tool {tool_name!r}: its annotations cannot be resolved ({exc})"
        ) from exc
    definitions: dict[str, Any] = {}
    fields: list[tuple[str, str]] = []
    for index, parameter in enumerate(signature.parameters.values()):
        kind = parameter.kind
        if kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise ToolDefinitionError(
                f"tool {tool_name!r}: *args and **kwargs cannot be described to a model "
                f"({parameter.name})"
            )
        if kind is parameter.POSITIONAL_ONLY:
            raise ToolDefinitionError(
                f"tool {tool_name!r}: positional-only parameter {parameter.name!r} cannot be "
                "passed by name"
            )
        if parameter.name not in hints:
            raise ToolDefinitionError(
                f"tool {tool_name!r}: parameter {parameter.name!r} has no type annotation"
            )
        annotation = hints[parameter.name]
        attribute = f"p{index}"
        extra: dict[str, Any] = {"alias": parameter.name}
        if parameter.name in described and not _has_description(annotation):
            extra["description"] = described[parameter.name]
        default = ... if parameter.default is parameter.empty else parameter.default
        definitions[attribute] = (annotation, Field(default, **extra))
        fields.append((attribute, parameter.name))
    try:
        model = create_model(
            f"{tool_name}_arguments",
            __config__=ConfigDict(extra="forbid", populate_by_name=False),
            **definitions,
        )
    except Exception as exc:
        if type(exc).__module__.startswith("pydantic"):
            raise ToolDefinitionError(
                f"tool {tool_name!r} has a parameter type pydantic cannot validate: {exc}"
            ) from exc
        raise
    return model, tuple(fields)


def _has_description(annotation: object) -> bool:
    if typing.get_origin(annotation) is not Annotated:
        return False
    metadata: tuple[object, ...] = getattr(annotation, "__metadata__", ())
    return any(isinstance(meta, FieldInfo) and meta.description for meta in metadata)


def _describe(tool_name: str, exc: ValidationError) -> str:
    problems: list[str] = []
    for error in exc.errors(include_url=False, include_input=False)[:_MAX_ERRORS]:
        where = ".".join(str(part) for part in error["loc"]) or "(arguments)"
        message = error["msg"]
        if error["type"] == "extra_forbidden":
            message = "not a parameter of this tool"
        problems.append(f"{where}: {message}")
    more = exc.error_count() - len(problems)
    if more > 0:
        problems.append(f"... and {more} more")
    return f"invalid arguments for tool {tool_name!r}: " + "; ".join(problems)
