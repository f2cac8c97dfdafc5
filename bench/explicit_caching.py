"""Responses requests with and without GPT-5.6 explicit caching, side by side.

A tool loop on ``Context(GatewayType.openai_responses)``: each turn appends the model's
reasoning and function call and the tool's output (``input_text`` parts; ``--string-outputs``:
a string, which is not marked, so the anchor stays on the one user message far behind), then
builds one ``request()``. Two sessions of the same items run interleaved, one plain and one with
``OpenAIExplicitCaching`` (breakpoints placed); the median CPU microseconds per request over
the ``WINDOW`` turns ending at each sampled turn is printed for both, with their ratio.

``--plain-only`` times the plain session alone (for a checkout without explicit caching: run
the script with each checkout's ``src`` first on ``PYTHONPATH`` to compare the plain path).

Run: ``PYTHONPATH=src python bench/explicit_caching.py [--turns 2000] [--plain-only]``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from typing import Any

from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.message import Message, Role, ToolResultPart

WINDOW = 50


def _turn(ctx: Context, n: int, *, strings: bool) -> None:
    """The model's reasoning and call answering the last request, then the tool's output."""
    ctx.push_back([
        {"type": "reasoning", "id": f"rs_{n}", "summary": [], "encrypted_content": f"e{n}"},
        {"type": "function_call", "id": f"fc_{n}", "call_id": f"c{n}", "name": "read",
         "arguments": '{"path": "a.txt"}', "status": "completed"},
    ])
    text = "contents " * 60
    if strings:  # a string output: not markable, the anchor stays on the user message
        result = ToolResultPart(call_id=f"c{n}", content=text)
        ctx.emplace_message(Message(role=Role.user, content=(result,)))
    else:
        part = {"type": "input_text", "text": text}
        ctx.extend([{"type": "function_call_output", "call_id": f"c{n}", "output": [part]}])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--plain-only", action="store_true")
    parser.add_argument("--string-outputs", action="store_true")
    args = parser.parse_args()
    policy: Any = None
    if not args.plain_only:
        from hydrangea.providers.openai import OpenAIExplicitCaching

        policy = OpenAIExplicitCaching(model="gpt-5.6-sol")
    sessions = {"plain": (Context(GatewayType.openai_responses), None)}
    if policy is not None:
        sessions["explicit"] = (Context(GatewayType.openai_responses), policy)
    samples = {n for n in (100, 500, 1000, 2000, 5000) if n <= args.turns}
    times: dict[str, list[float]] = {name: [] for name in sessions}
    for ctx, caching in sessions.values():
        ctx.emplace_message(Message(role=Role.system, content="You are a coding agent. " * 30))
        ctx.emplace_message(Message(role=Role.user, content="Read every file. " * 20))
        ctx.request(caching=caching, model="gpt-5.6-sol")
    for n in range(1, args.turns + 1):
        timed = any(0 <= s - n < WINDOW for s in samples)
        for name, (ctx, caching) in sessions.items():
            _turn(ctx, n, strings=args.string_outputs)
            if not timed:
                ctx.request(caching=caching, model="gpt-5.6-sol")
                continue
            gc.collect()
            start = time.process_time()
            ctx.request(caching=caching, model="gpt-5.6-sol")
            times[name].append((time.process_time() - start) * 1e6)
        if n in samples:
            row = {name: statistics.median(values[-WINDOW:]) for name, values in times.items()}
            ratio = f"  explicit/plain {row['explicit'] / row['plain']:.2f}" if policy else ""
            cells = "  ".join(f"{name} {value:7.1f} µs" for name, value in row.items())
            print(f"turn {n:5d}  {cells}{ratio}")


if __name__ == "__main__":
    main()
