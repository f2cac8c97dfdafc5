"""Reading a tool's descriptions from its Google-style docstring.

The summary (everything before the first section header) describes the tool; the ``Args:``
section describes each parameter::

    Look up the forecast.

    Args:
        city: The city, in English.
        days (int): How many days ahead,
            from 1 to 7.

Other sections (``Returns:``, ``Raises:``, ``Examples:`` ...) are left out of what the model is
shown. This is the docstring style the library's own API reference uses.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

__all__ = ["ToolDocstring", "parse_docstring"]

_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Returns?|Yields?|Raises|"
    r"Examples?|Notes?|Attributes|Warnings?|See Also|Todo|References)\s*:\s*$"
)
_ARG_SECTIONS = frozenset(
    {"Args", "Arguments", "Parameters", "Params", "Keyword Args", "Keyword Arguments"}
)
_ENTRY = re.compile(r"^\*{0,2}(?P<name>\w+)\s*(?:\([^)]*\))?\s*:\s*(?P<text>.*)$")


@dataclass(frozen=True, slots=True)
class ToolDocstring:
    """A docstring split into the tool's description and one description per parameter."""

    description: str
    parameters: dict[str, str] = field(default_factory=dict)


def parse_docstring(docstring: str | None) -> ToolDocstring:
    """Split ``docstring`` (Google style) into the summary and the ``Args:`` entries."""
    if not docstring:
        return ToolDocstring("")
    lines = inspect.cleandoc(docstring).splitlines()
    summary: list[str] = []
    parameters: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    indent: int | None = None
    for line in lines:
        header = _SECTION.match(line)
        if header:
            section, current, indent = header.group(1), None, None
            continue
        if section is None:
            summary.append(line)
            continue
        if section not in _ARG_SECTIONS or not line.strip():
            continue
        depth = len(line) - len(line.lstrip())
        if indent is None:
            indent = depth
        entry = _ENTRY.match(line.strip()) if depth <= indent else None
        if entry:
            current = entry.group("name")
            parameters[current] = entry.group("text").strip()
        elif current is not None:
            parameters[current] = f"{parameters[current]} {line.strip()}".strip()
    return ToolDocstring("\n".join(summary).strip(), parameters)
