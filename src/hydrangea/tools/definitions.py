"""Each gateway's tool definitions, and adding them to a request's keyword arguments.

* ``openai``: ``tools=[{"type": "function", "function": {name, description, parameters}}]``
* ``openai_responses``: ``tools=[{"type": "function", name, description, parameters,
  "strict": False}]``
* ``anthropic``: ``tools=[{name, description, input_schema}]``
* ``gemini``: ``config={"tools": [{"function_declarations": [{name, description,
  parameters_json_schema}]}]}``

:func:`with_tools` merges them into the keyword arguments a request builder returned
(``context.request()``, ``lifecycle.render().kwargs``), keeping any tools already there and
refusing a name given twice.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, assert_never

from pydantic import BaseModel

from hydrangea.errors import DuplicateToolError, MissingExtraError, ToolDefinitionError
from hydrangea.gateway import GatewayType
from hydrangea.tools.function import FunctionTool

__all__ = ["tool_definitions", "with_tools"]


def tool_definitions(
    gateway: GatewayType, tools: Iterable[FunctionTool[..., Any]]
) -> list[dict[str, Any]]:
    """The value of ``tools`` for ``gateway``'s SDK call (for Gemini: of ``config["tools"]``).

    Raises :class:`~hydrangea.errors.DuplicateToolError` when two tools share a name.
    """
    declared = list(tools)
    for item in declared:
        if not isinstance(item, FunctionTool):
            raise ToolDefinitionError(
                f"expected a FunctionTool (see hydrangea.tools.tool), got {type(item).__name__}"
            )
    _check_unique([t.name for t in declared], ())
    match gateway:
        case GatewayType.openai:
            return [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": thaw(t.parameters),
                    },
                }
                for t in declared
            ]
        case GatewayType.openai_responses:
            return [
                {
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": thaw(t.parameters),
                    "strict": False,
                }
                for t in declared
            ]
        case GatewayType.anthropic:
            return [
                {"name": t.name, "description": t.description, "input_schema": thaw(t.parameters)}
                for t in declared
            ]
        case GatewayType.gemini:
            if not declared:
                return []
            return [
                {
                    "function_declarations": [
                        {
                            "name": t.name,
                            "description": t.description,
                            "parameters_json_schema": thaw(t.parameters),
                        }
                        for t in declared
                    ]
                }
            ]
        case _:
            assert_never(gateway)


def with_tools(
    kwargs: Mapping[str, Any], gateway: GatewayType, tools: Iterable[FunctionTool[..., Any]]
) -> dict[str, Any]:
    """A copy of ``kwargs`` with ``tools`` declared the way ``gateway`` wants (see the list above).

    ``kwargs`` itself is not changed. Tools already in it are kept, before the new ones; a name
    declared twice raises :class:`~hydrangea.errors.DuplicateToolError`. For Gemini the tools go
    into ``config``, which may be absent, a dict, or a ``google.genai`` ``GenerateContentConfig``.
    """
    definitions = tool_definitions(gateway, tools)
    out = dict(kwargs)
    if not definitions:
        return out
    match gateway:
        case GatewayType.openai | GatewayType.openai_responses | GatewayType.anthropic:
            existing = list(out.get("tools") or ())
            _check_unique([_name(gateway, d) for d in definitions], existing, gateway)
            out["tools"] = [*existing, *definitions]
        case GatewayType.gemini:
            out["config"] = _gemini_config(out.get("config"), definitions)
        case _:
            assert_never(gateway)
    return out


def thaw(value: Any) -> Any:
    """A plain, mutable deep copy of a frozen JSON value (the SDKs may change what they get)."""
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(item) for item in value]
    return value


def _name(gateway: GatewayType, definition: Any) -> str | None:
    if isinstance(definition, BaseModel):
        definition = definition.model_dump(exclude_none=True)
    if not isinstance(definition, Mapping):
        return None
    if gateway is GatewayType.openai and isinstance(definition.get("function"), Mapping):
        name = definition["function"].get("name")
    else:
        name = definition.get("name")
    return name if isinstance(name, str) else None


def _check_unique(
    names: list[str | None],
    existing: Iterable[Any],
    gateway: GatewayType | None = None,
) -> None:
    seen: set[str] = set()
    if gateway is not None:
        seen = {n for d in existing if (n := _name(gateway, d)) is not None}
    for name in names:
        if name is None:
            continue
        if name in seen:
            raise DuplicateToolError(f"a tool named {name!r} is declared twice")
        seen.add(name)


def _gemini_names(tools: Iterable[Any]) -> list[str | None]:
    names: list[str | None] = []
    for given in tools:
        entry = given.model_dump(exclude_none=True) if isinstance(given, BaseModel) else given
        if isinstance(entry, Mapping):
            for declaration in entry.get("function_declarations") or ():
                names.append(_name(GatewayType.gemini, declaration))
    return names


def _gemini_config(config: object, definitions: list[dict[str, Any]]) -> object:
    new_names = _gemini_names(definitions)
    if config is None:
        return {"tools": definitions}
    if isinstance(config, Mapping):
        existing = list(config.get("tools") or ())
        _check_unique([*_gemini_names(existing), *new_names], ())
        return {**config, "tools": [*existing, *definitions]}
    if isinstance(config, BaseModel) and "tools" in type(config).model_fields:
        try:
            from google.genai import types
        except ImportError as exc:  # pragma: no cover - the config object came from this SDK
            raise MissingExtraError("Gemini tools need the 'gemini' extra") from exc
        existing = list(getattr(config, "tools", None) or ())
        _check_unique([*_gemini_names(existing), *new_names], ())
        added = [types.Tool.model_validate(d) for d in definitions]
        return config.model_copy(update={"tools": [*existing, *added]})
    raise ToolDefinitionError(
        "the Gemini request's config must be a dict or a GenerateContentConfig, "
        f"got {type(config).__name__}"
    )
