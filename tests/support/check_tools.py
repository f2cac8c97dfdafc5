"""Tool definitions checked against each official SDK's own tool types.

Each definition is validated with the SDK's type (a TypedDict through pydantic's TypeAdapter, or
google-genai's pydantic models) and must come back unchanged, so a misspelt or extra key fails
rather than being dropped quietly.
"""

from __future__ import annotations

from typing import Any, assert_never

from pydantic import TypeAdapter

from hydrangea.gateway import GatewayType


def validate_tool(gateway: GatewayType, definition: dict[str, Any]) -> None:
    """Raise unless ``definition`` is one tool entry of ``gateway``'s ``tools`` list."""
    match gateway:
        case GatewayType.openai:
            from openai.types.chat import ChatCompletionFunctionToolParam

            checked = TypeAdapter(ChatCompletionFunctionToolParam).validate_python(definition)
            assert checked == definition, "changed under validation (extra keys?)"
            assert set(definition["function"]) <= {"name", "description", "parameters", "strict"}
        case GatewayType.openai_responses:
            from openai.types.responses import FunctionToolParam

            responses = TypeAdapter(FunctionToolParam).validate_python(definition)
            assert responses == definition, "changed under validation (extra keys?)"
        case GatewayType.anthropic:
            from anthropic.types import ToolParam

            anthropic_tool = TypeAdapter(ToolParam).validate_python(definition)
            assert anthropic_tool == definition, "changed under validation (extra keys?)"
        case GatewayType.gemini:
            from google.genai import types

            parsed = types.Tool.model_validate(definition)
            assert parsed.model_dump(exclude_none=True) == definition, "extra keys?"
            for declaration in definition["function_declarations"]:
                types.FunctionDeclaration.model_validate(declaration)
        case _:
            assert_never(gateway)
