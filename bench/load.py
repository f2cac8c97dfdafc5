"""Context.from_json / to_json at 1M items: the previous path and the current one side by side.

The previous ``from_json`` parsed the text, then handed the items to ``Context(gateway, items)``,
whose ``extend`` deep-copies every freshly parsed item (``copy_json``: a ``json.dumps`` and a
``json.loads`` per item) before validating it. A copy of that path is kept below
(``previous_from_json``) so both run in one process on the same text. The current path
validates the parsed items without copying them (see ``hydrangea.providers._json``).

Both must give the same Context: the same items and the same ``to_json`` bytes (checked here).
``to_json`` is timed with the json module and with orjson, the ``fast-json`` extra (the bench
virtualenv has it: ``bench/requirements.txt``), which must give the same bytes (checked).

Run: ``python bench/load.py [--items N]`` (writes bench/results/load.json).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
RESULTS = BENCH / "results" / "load.json"
sys.path.insert(0, str(ROOT / "src"))

from hydrangea.context import Context  # noqa: E402
from hydrangea.errors import InvalidItemError, SerializationError  # noqa: E402
from hydrangea.gateway import GatewayType  # noqa: E402
from hydrangea.message import Message, Role, ToolCallPart, ToolResultPart  # noqa: E402
from hydrangea.providers import _json as codec  # noqa: E402


def previous_from_json(text: str) -> Context:
    """Context.from_json as it was before this change (parse, then the copying constructor)."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SerializationError(f"not a saved Context: invalid JSON ({exc})") from exc
    if not isinstance(document, dict) or document.get("format") != "hydrangea.context":
        raise SerializationError("not a saved Context: the 'format' field is missing")
    if document.get("version") != 1:
        raise SerializationError(f"unsupported Context version {document.get('version')!r}")
    try:
        gateway = GatewayType(document["gateway"])
    except (KeyError, ValueError) as exc:
        raise SerializationError(f"saved Context has no valid gateway: {exc}") from exc
    items = document.get("items")
    if not isinstance(items, list):
        raise SerializationError("saved Context has no 'items' list")
    try:
        return Context(gateway, items)  # extend(): copy_json + validate per item
    except InvalidItemError as exc:
        raise SerializationError(f"saved Context holds an invalid item: {exc}") from exc


def _templates(gateway: GatewayType) -> list[dict[str, Any]]:
    """One turn of an agent in the gateway's native shape: user, tool call, result, answer."""
    context = Context(gateway)
    context.emplace_message(Message(role=Role.user, content="What is the weather in Zürich?"))
    context.emplace_message(Message(role=Role.assistant, content=[
        ToolCallPart(id="call_1", name="weather", arguments={"city": "Zürich", "days": 3}),
    ]))
    context.emplace_message(Message(role=Role.user, content=[
        ToolResultPart(call_id="call_1", content="Sunny, 21.5 °C, wind 3 km/h"),
    ]))
    context.emplace_message(Message(role=Role.assistant, content="It is sunny: 21.5 °C. ☀"))
    return list(context)


def saved_text(gateway: GatewayType, n: int) -> str:
    """A saved Context of ``n`` items (turns of four items, each turn's texts numbered)."""
    turn = [json.dumps(item, ensure_ascii=False, separators=(",", ":"))
            for item in _templates(gateway)]
    parts = []
    for i in range(n):
        parts.append(turn[i % len(turn)].replace("Zürich", f"Zürich {i // len(turn)}"))
    head = json.dumps({"format": "hydrangea.context", "version": 1, "gateway": gateway.value},
                      separators=(",", ":"))
    return head[:-1] + ',"items":[' + ",".join(parts) + "]}"


def best(job: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    seconds, result = float("inf"), None
    for _ in range(repeats):
        result = None
        gc.collect()
        started = time.perf_counter()
        result = job()
        seconds = min(seconds, time.perf_counter() - started)
    return seconds, result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    fast = codec.fast_backend_available()
    rows = []
    for gateway in GatewayType:
        n = args.items if gateway is GatewayType.openai else args.items // 10
        text = saved_text(gateway, n)
        old_s, old = best(lambda t=text: previous_from_json(t), args.repeats)
        new_s, new = best(lambda t=text: Context.from_json(t), args.repeats)
        reference = old.to_json()
        row: dict[str, Any] = {
            "gateway": gateway.value, "items": n, "megabytes": round(len(text) / 1e6, 1),
            "previous_from_json_s": round(old_s, 3),
            "from_json_s": round(new_s, 3),
            "from_json_speedup": round(old_s / new_s, 2),
            "same_items": list(new) == list(old),
        }
        document = _doc(old)
        dump_std, text_std = best(lambda d=document: codec.dumps(d, fast=False), args.repeats)
        row["to_json_json_module_s"] = round(dump_std, 3)
        same_bytes = text_std == reference
        if fast:
            dump_fast, text_fast = best(lambda d=document: codec.dumps(d, fast=True), args.repeats)
            row["to_json_orjson_s"] = round(dump_fast, 3)
            row["to_json_speedup"] = round(dump_std / dump_fast, 2)
            same_bytes = same_bytes and text_fast == reference
        row["same_bytes"] = same_bytes and new.to_json() == reference
        rows.append(row)
        print(json.dumps(row), flush=True)
        del old, new, text, document
    headline = rows[0]
    speedup = headline["from_json_speedup"]
    print(f"from_json at {headline['items']:,} items: {speedup:.1f}x faster than before "
          f"({'met' if speedup >= 3 else 'MISSED'} 3x), same items: {headline['same_items']}, "
          f"same bytes: {headline['same_bytes']}; to_json with orjson: "
          f"{headline.get('to_json_speedup', 'orjson not installed')}x")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        "benchmark": "Context.from_json: previous path (copy per item) vs current, same text; "
                     "to_json with the json module vs orjson (same bytes)",
        "ratio": "previous seconds / current seconds (best of runs, wall time)",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version()},
        "orjson": fast,
        "rows": rows,
    }, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


def _doc(context: Context) -> dict[str, Any]:
    return {"format": "hydrangea.context", "version": 1, "gateway": context.gateway.value,
            "items": list(context)}


if __name__ == "__main__":
    main()
