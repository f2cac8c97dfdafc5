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
from typing import Any

from pydantic import BaseModel

from hydrangea.errors import DuplicateToolError, ToolDefinitionError
from hydrangea.gateway import GatewayType
from hydrangea.providers.adapter import Adapter
from hydrangea.providers.registry import adapter_for
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
    specs = [(t.name, t.description, thaw(t.parameters)) for t in declared]
    return adapter_for(gateway).tool_declarations(specs)


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
    adapter = adapter_for(gateway)

    def unique(names: list[str | None], existing: Iterable[Any]) -> None:
        _check_unique(names, existing, adapter)

    adapter.add_tools(out, definitions, unique)
    return out


def thaw(value: Any) -> Any:
    """A plain, mutable deep copy of a frozen JSON value (the SDKs may change what they get)."""
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(item) for item in value]
    return value


def _name(adapter: Adapter, definition: Any) -> str | None:
    if isinstance(definition, BaseModel):
        definition = definition.model_dump(exclude_none=True)
    if not isinstance(definition, Mapping):
        return None
    return adapter.tool_name(definition)


def _check_unique(
    names: list[str | None],
    existing: Iterable[Any],
    adapter: Adapter | None = None,
) -> None:
    seen: set[str] = set()
    if adapter is not None:
        seen = {n for d in existing if (n := _name(adapter, d)) is not None}
    for name in names:
        if name is None:
            continue
        if name in seen:
            raise DuplicateToolError(f"a tool named {name!r} is declared twice")
        seen.add(name)
