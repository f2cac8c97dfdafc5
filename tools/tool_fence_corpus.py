"""Run injection corpora through every gateway's tool-result slot and report counts.

Each attack string (alone, and inserted at the start, middle and end of every context document
the corpus ships) is returned by a tool of a :class:`~hydrangea.areas.ToolLoopArea`; the request
each gateway would send is read back, and every tool-result slot must hold one well-formed
fence that gives back the original exactly, with no ``¤`` inside its body (none after NFKC
either: the output cannot close its fence), at most ``TOOL_FENCE_TOKENS`` o200k tokens of
framing.

    PYTHONPATH=src python tools/tool_fence_corpus.py [corpus.json ...]

A corpus is BIPIA's layout (``{"attacks": [{"text": ...}], "contexts": [{"context": ...}]}``)
or a plain JSON list of strings (e.g. AgentDojo injection goals); the default is
``../shared/eval/injection_bipia/bipia.json``. Evaluation data is read, never copied.
"""

from __future__ import annotations

import json
import sys
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

from hydrangea.areas import ToolLoopArea
from hydrangea.asof import OpenAITokenCounter
from hydrangea.asof.fence import escape_content
from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, ToolCallPart
from hydrangea.tools import (
    TOOL_FENCE_TOKENS,
    fence_tool_output,
    is_fenced_tool_output,
    tool,
    unfence_tool_output,
)

DEFAULT = Path(__file__).resolve().parents[3] / "shared/eval/injection_bipia/bipia.json"
BATCH = 200


def strings_of(path: Path) -> list[str]:
    """The attack strings of a corpus file, alone and inserted into its context documents."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, list):
        return [str(s) for s in data]
    attacks = [a["text"] for a in data["attacks"]]
    contexts = [c["context"] for c in data.get("contexts", [])]
    out = list(attacks)
    for context in contexts:
        middle = len(context) // 2
        for attack in attacks:
            out.append(f"{attack}\n{context}")
            out.append(f"{context[:middle]} {attack} {context[middle:]}")
            out.append(f"{context}\n{attack}")
    return out


def slots(gateway: GatewayType, request: dict[str, Any]) -> list[str]:
    """The texts of every tool-result slot of a request, in order."""
    found: list[str] = []
    if gateway is GatewayType.openai:
        found = [m["content"] for m in request["messages"] if m["role"] == "tool"]
    elif gateway is GatewayType.openai_responses:
        found = [i["output"] for i in request["input"] if i.get("type") == "function_call_output"]
    elif gateway is GatewayType.anthropic:
        found = [b["content"] for m in request["messages"] if isinstance(m["content"], list)
                 for b in m["content"] if b.get("type") == "tool_result"]
    else:
        for content in request["contents"]:
            for part in content["parts"]:
                if "function_response" in part:
                    (value,) = part["function_response"]["response"].values()
                    found.append(value)
    return found


def _fetcher(batch: list[str]) -> Any:
    @tool
    def fetch(n: int) -> str:
        """Fetch document ``n``.

        Args:
            n: Its index.
        """
        return batch[n]

    return fetch


def run(strings: list[str]) -> Counter[str]:
    """Send every string through every gateway; count the outcomes."""
    counts: Counter[str] = Counter()
    counter = OpenAITokenCounter("o200k_base")
    worst = 0
    for text in strings:
        framing = counter.count(fence_tool_output(text)) - counter.count(escape_content(text))
        worst = max(worst, framing)
    counts["worst framing tokens"] = worst
    for gateway in GatewayType:
        for start in range(0, len(strings), BATCH):
            batch = strings[start : start + BATCH]
            fetch = _fetcher(batch)

            context = Context(gateway)
            context.emplace_message(Message(role=Role.user, content="Read the documents."))
            loop = ToolLoopArea([fetch])
            calls = tuple(ToolCallPart(id=f"c{n}", name="fetch", arguments={"n": n})
                          for n in range(len(batch)))
            reply = Message(role=Role.assistant, content=calls)
            context.emplace_message(reply)
            loop.route(reply)
            context.emplace_messages(loop.render())
            sent = slots(gateway, context.request())
            for original, slot in zip(batch, sent, strict=True):
                counts[f"{gateway.value}: results"] += 1
                if not is_fenced_tool_output(slot):
                    counts[f"{gateway.value}: NOT FENCED"] += 1
                    continue
                body = slot.split("\n", 1)[1].rsplit("\n", 1)[0]
                if "¤" in body or "¤" in unicodedata.normalize("NFKC", body):
                    counts[f"{gateway.value}: FENCE CLOSABLE"] += 1
                if unfence_tool_output(slot) == original:
                    counts[f"{gateway.value}: recovered exactly"] += 1
                else:
                    counts[f"{gateway.value}: NOT RECOVERED"] += 1
    return counts


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or [DEFAULT]
    strings = [s for path in paths for s in strings_of(path)]
    counts = run(strings)
    print(f"{len(strings)} tool outputs from {', '.join(p.name for p in paths)}")
    for key in sorted(counts):
        print(f"  {key}: {counts[key]}")
    bad = [k for k in counts if "NOT " in k or "CLOSABLE" in k]
    over = counts["worst framing tokens"] > TOOL_FENCE_TOKENS
    return 1 if bad or over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
