"""Gemini's function tools: declarations, and where they go (``config["tools"]``).

``config={"tools": [{"function_declarations": [{name, description, parameters_json_schema}]}]}``;
the request's ``config`` may be absent, a dict, or a ``google.genai`` ``GenerateContentConfig``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from hydrangea.errors import MissingExtraError, ToolDefinitionError
from hydrangea.providers.adapter import UniqueNames as Unique

__all__ = ["declarations", "with_declarations"]

def declarations(tools: Sequence[tuple[str, str, Any]]) -> list[dict[str, Any]]:
    """One tool entry holding every function declaration (none for no tools)."""
    if not tools:
        return []
    return [
        {
            "function_declarations": [
                {"name": name, "description": text, "parameters_json_schema": schema}
                for name, text, schema in tools
            ]
        }
    ]


def _names(tools: Iterable[Any]) -> list[str | None]:
    names: list[str | None] = []
    for given in tools:
        entry = given.model_dump(exclude_none=True) if isinstance(given, BaseModel) else given
        if isinstance(entry, Mapping):
            for given_declaration in entry.get("function_declarations") or ():
                declaration = (
                    given_declaration.model_dump(exclude_none=True)
                    if isinstance(given_declaration, BaseModel)
                    else given_declaration
                )
                name = declaration.get("name") if isinstance(declaration, Mapping) else None
                names.append(name if isinstance(name, str) else None)
    return names


def with_declarations(config: object, definitions: list[dict[str, Any]], unique: Unique) -> object:
    """``config`` with ``definitions`` after the tools it holds (never changed in place)."""
    new_names = _names(definitions)
    if config is None:
        return {"tools": definitions}
    if isinstance(config, Mapping):
        existing = list(config.get("tools") or ())
        unique([*_names(existing), *new_names], ())
        return {**config, "tools": [*existing, *definitions]}
    if isinstance(config, BaseModel) and "tools" in type(config).model_fields:
        try:
            from google.genai import types
        except ImportError as exc:  # pragma: no cover - the config object came from this SDK
            raise MissingExtraError("Gemini tools need the 'gemini' extra") from exc
        existing = list(getattr(config, "tools", None) or ())
        unique([*_names(existing), *new_names], ())
        added = [types.Tool.model_validate(d) for d in definitions]
        return config.model_copy(update={"tools": [*existing, *added]})
    raise ToolDefinitionError(
        "the Gemini request's config must be a dict or a GenerateContentConfig, "
        f"got {type(config).__name__}"
    )
