"""Tools declared once as typed Python functions.

* :func:`tool` / :meth:`FunctionTool.from_function`: a sync or async function becomes a tool;
  its JSON schema comes from the signature (through pydantic), its descriptions from the
  docstring (Google style, :mod:`hydrangea.tools.docstring`).
* :func:`tool_definitions` and :func:`with_tools`: the tool definitions in each gateway's shape,
  merged into the keyword arguments of a request.
* :func:`fence_tool_output` / :func:`unfence_tool_output` (and ``*_content`` for structured
  results): tool output as untrusted data, fenced inside the tool-result slot, recovered
  exactly; :func:`tool_exchange` brings editable text into a conversation that way.
* :class:`~hydrangea.areas.ToolLoopArea` takes FunctionTools, validates the model's arguments
  against the schema before calling, and returns bad arguments to the model as an error result.
"""

from hydrangea.errors import DuplicateToolError, ToolDefinitionError, ToolError, ToolResultError
from hydrangea.tools.definitions import tool_definitions, with_tools
from hydrangea.tools.docstring import ToolDocstring, parse_docstring
from hydrangea.tools.exchange import tool_exchange
from hydrangea.tools.fence import (
    TOOL_FENCE_TOKENS,
    TOOL_NONCE_LENGTH,
    fence_tool_content,
    fence_tool_output,
    is_fenced_tool_output,
    unfence_tool_content,
    unfence_tool_output,
)
from hydrangea.tools.function import FunctionTool, result_text, tool

__all__ = [
    "TOOL_FENCE_TOKENS",
    "TOOL_NONCE_LENGTH",
    "DuplicateToolError",
    "FunctionTool",
    "ToolDefinitionError",
    "ToolDocstring",
    "ToolError",
    "ToolResultError",
    "fence_tool_content",
    "fence_tool_output",
    "is_fenced_tool_output",
    "parse_docstring",
    "result_text",
    "tool",
    "tool_definitions",
    "tool_exchange",
    "unfence_tool_content",
    "unfence_tool_output",
    "with_tools",
]
