"""Run injection corpora through both framework adapters' tool-output fence; report framing.

Each attack string (alone, and inserted into every context document, as
``tools/tool_fence_corpus.py`` builds them) is returned by a tool through the pydantic-ai
history processor (a ``ToolReturnPart`` of the request about to be sent) and through the Agents
SDK session (a ``function_call_output`` read back with ``get_items`` and through
``fence_model_input``). Every sent output must be one well-formed tool-output fence that gives
back the original exactly, fenced once (processing the sent form again changes nothing); the
framing (exact o200k count of the sent text minus that of the escaped output) is reported per
adapter, with the as-of fence the adapters used before for comparison.

    PYTHONPATH=src python tools/adapter_fence_corpus.py [corpus.json ...]
"""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from agents import Agent
from agents.run_config import CallModelData, ModelInputData
from pydantic_ai.messages import ModelRequest, ToolReturnPart
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RunUsage
from tool_fence_corpus import DEFAULT, strings_of

from hydrangea.asof import OpenAITokenCounter
from hydrangea.asof.fence import data_text, escape_content, fence_body
from hydrangea.integrations.openai_agents import HydrangeaSession
from hydrangea.integrations.pydantic_ai import HistoryProcessor
from hydrangea.tools import TOOL_FENCE_TOKENS, is_fenced_tool_output, unfence_tool_output

TOOL = "fetch_page"


def via_pydantic_ai(strings: list[str]) -> list[str]:
    """What the history processor sends for each string returned by a tool."""
    from pydantic_ai import RunContext

    ctx: RunContext[None] = RunContext(deps=None, model=TestModel(), usage=RunUsage(),
                                       conversation_id="corpus")
    parts = [ToolReturnPart(TOOL, s, tool_call_id=f"call_{n}") for n, s in enumerate(strings)]
    processor = HistoryProcessor()
    (request,) = processor(ctx, [ModelRequest(parts=list(parts))])
    assert isinstance(request, ModelRequest)
    (again,) = HistoryProcessor()(ctx, [request])  # a reloaded history: nothing fenced twice
    assert again is request, "the processor fenced its own output again"
    return [str(p.content) for p in request.parts if isinstance(p, ToolReturnPart)]


def via_agents_sdk(strings: list[str]) -> list[str]:
    """What the Agents SDK session sends for each string returned by a tool."""
    session = HydrangeaSession("corpus")
    items: list[Any] = []
    for n, text in enumerate(strings):
        items.append({"type": "function_call", "call_id": f"call_{n}", "name": TOOL,
                      "arguments": "{}"})
        items.append({"type": "function_call_output", "call_id": f"call_{n}", "output": text})
    asyncio.run(session.add_items(items))
    sent: list[Any] = list(asyncio.run(session.get_items()))
    data = CallModelData(model_data=ModelInputData(input=sent, instructions=None),
                         agent=Agent(name="corpus"), context=None)
    assert session.fence_model_input(data).input == sent, "fence_model_input fenced again"
    return [str(i["output"]) for i in sent if i.get("type") == "function_call_output"]


def run(strings: list[str]) -> Counter[str]:
    """Both adapters over every string; counts and worst framings."""
    counter = OpenAITokenCounter("o200k_base")
    counts: Counter[str] = Counter()
    escaped = [counter.count(escape_content(s)) for s in strings]
    for name, sent in (("pydantic-ai", via_pydantic_ai(strings)),
                       ("agents-sdk", via_agents_sdk(strings))):
        worst = 0
        for original, cost, text in zip(strings, escaped, sent, strict=True):
            counts[f"{name}: results"] += 1
            if not is_fenced_tool_output(text):
                counts[f"{name}: NOT FENCED"] += 1
                continue
            key = "recovered exactly" if unfence_tool_output(text) == original else "NOT RECOVERED"
            counts[f"{name}: {key}"] += 1
            worst = max(worst, counter.count(text) - cost)
        counts[f"{name}: worst framing tokens"] = worst
    old = max(counter.count(data_text([fence_body(s, item_id=f"call_{n}", origin=TOOL,
                                                  kind="tool", published="-")])) - cost
              for n, (s, cost) in enumerate(zip(strings, escaped, strict=True)))
    counts["before (as-of fence): worst framing tokens"] = old
    return counts


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or [DEFAULT]
    strings = [s for path in paths for s in strings_of(path)]
    counts = run(strings)
    print(f"{len(strings)} tool outputs from {', '.join(p.name for p in paths)}")
    for key in sorted(counts):
        print(f"  {key}: {counts[key]}")
    bad = [k for k in counts if "NOT " in k]
    over = any(counts[f"{a}: worst framing tokens"] > TOOL_FENCE_TOKENS
               for a in ("pydantic-ai", "agents-sdk"))
    return 1 if bad or over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
