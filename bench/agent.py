"""An agent-shaped turn on every gateway, side by side with peers and the SDKs' own request work.

Each turn is what a tool-using agent does: a user message, the model's tool call, the tool's
result (200-2,000 characters each, the same texts for every library), then one request.

- hydrangea, full stack: ``ConversationArea.user`` + ``Lifecycle.render()`` (a ttl=1 reminder
  component), the call pushed to the Context, the tool (a ``@tool`` function) run and its result
  emplaced, ``Lifecycle.render().kwargs``. Timed every turn (its cache depends on each turn).
- hydrangea, the Context alone (``hydrangea Context``): the turn's three messages emplaced
  and ``Context.request()``, the like-for-like of a peer's mapping; timed every turn too.
- peers mapping the same history to the provider's request: pydantic-ai (its models' message
  mapping, ``_map_messages`` / ``_map_message``), LangChain (``ChatOpenAI._get_request_payload``,
  Chat and Responses) and the Agents SDK (``Converter.items_to_messages`` for Chat; for
  Responses the runner's ``ItemHelpers.input_to_new_input_list``). Each keeps its own history
  and appends the turn's three messages every turn; the mapping runs in the sampled windows.
- the floor: each SDK's own request work (``chat.completions.create``, ``responses.create``,
  ``messages.create``, genai ``generate_content``) with hydrangea's kwargs, against an instant
  in-process ``httpx.MockTransport``.

Timing: process CPU time of the ``WINDOW`` turns ending at each sampled turn (10 ... 5,000),
interleaved (every library's request of a turn in a shuffled order), the median per turn; before
a sampled turn the heap is collected and frozen (``gc.freeze``), so a collection one library's
garbage triggers is not charged to another. Before every timed job the CPU caches are filled
with the same unrelated data (a copy of a ``FLUSH_BYTES`` buffer, twice the last-level cache of
the machines this runs on), so every job starts from the same cache state: without it a job's
figure depends on whose work preceded it in the shuffle (a peer mapping 15,000 messages at turn
5,000 evicts everything; measured, a hydrangea turn after 40 MB of unrelated reads costs
+450-600 µs at every turn count, which was most of its growth from turn 10 to 5,000). A
peer's or the SDK's first request costs its import and warm-up; the first window is warm.
Memory (``--memory``): tracemalloc's retained size of a hydrangea session (full stack, no
request held) at 1,000 and 10,000 turns against the compact JSON of its items.

Run: ``python bench/agent.py [--turns 5000] [--memory-turns 1000 10000] [--memory-only]``.
Results: ``bench/results/agent.json`` (``--memory-only`` replaces only its ``memory`` rows).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import random
import statistics
import time
import tracemalloc
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results" / "agent.json"
POINTS = (10, 100, 1_000, 2_000, 5_000)
WINDOW = 5
FLUSH_BYTES = 64 << 20
CONTEXT_ALONE = "hydrangea Context"
_FLUSH = bytearray(FLUSH_BYTES)


def flush() -> int:
    """Evict the CPU caches (a copy reads and writes ``FLUSH_BYTES``); the copy's size."""
    return len(bytes(_FLUSH))
GATEWAYS = ("openai", "openai_responses", "anthropic", "gemini")


def texts(turn: int) -> tuple[str, str, str]:
    """The user message, the call's argument and the tool's result of ``turn``."""
    rng = random.Random(turn)
    return tuple(  # type: ignore[return-value]
        f"{kind} {turn}: " + "lorem ipsum dolor sit amet " * (rng.randint(200, 2000) // 27)
        for kind in ("question", "query", "result")
    )


# -- hydrangea -----------------------------------------------------------------------------


class Hydrangea:
    """The full stack for one gateway: CoopContext + ConversationArea + Lifecycle + a tool."""

    def __init__(self, gateway: str) -> None:
        from hydrangea import (
            Component,
            Context,
            ConversationArea,
            CoopContext,
            GatewayType,
            Lifecycle,
        )
        from hydrangea.tools import tool

        self.gateway = GatewayType(gateway)
        self.coop = CoopContext(Context(self.gateway))
        self.conversation = ConversationArea()
        self.coop.register(self.conversation)
        self.lifecycle = Lifecycle(self.coop)
        self.lifecycle.add(Component("Answer briefly.", ttl=1, cadence=1, key="style"))
        self.kwargs: dict[str, Any] = {}

        @tool
        def lookup(query: str) -> str:
            """Look the query up."""
            return self.result

        self.tool = lookup
        self.result = ""

    def turn(self, turn: int) -> None:
        from hydrangea.message import Message, Role, ToolCallPart, ToolResultPart

        user, query, self.result = texts(turn)
        context = self.coop.context
        self.conversation.user(user)
        self.lifecycle.render()  # the user message enters; the model is asked here
        call = ToolCallPart(id=f"call_{turn}", name="lookup", arguments={"query": query})
        context.emplace_message(Message(role=Role.assistant, content=(call,)))
        output = self.tool.invoke(call.arguments)
        result = ToolResultPart(call_id=call.id, content=output)
        context.emplace_message(Message(role=Role.user, content=(result,)))
        self.kwargs = self.lifecycle.render().kwargs


class HydrangeaContext:
    """The Context alone, the like of what a peer's mapping does: the turn's three messages
    emplaced, then ``Context.request()`` (no area, no lifecycle, no tool run)."""

    def __init__(self, gateway: str) -> None:
        from hydrangea import Context, GatewayType

        self.context = Context(GatewayType(gateway))

    def turn(self, turn: int) -> None:
        from hydrangea.message import Message, Role, ToolCallPart, ToolResultPart

        user, query, result = texts(turn)
        call = ToolCallPart(id=f"call_{turn}", name="lookup", arguments={"query": query})
        self.context.emplace_messages((
            Message(role=Role.user, content=user),
            Message(role=Role.assistant, content=(call,)),
            Message(role=Role.user, content=(ToolResultPart(call_id=call.id, content=result),)),
        ))
        self.context.request()


# -- the SDKs' own request work against an instant transport ---------------------------------

_BODIES: dict[str, dict[str, Any]] = {
    "openai": {"id": "c", "object": "chat.completion", "created": 0, "model": "m",
               "choices": [{"index": 0, "finish_reason": "stop",
                            "message": {"role": "assistant", "content": "ok"}}]},
    "openai_responses": {"id": "r", "object": "response", "created_at": 0, "model": "m",
                         "status": "completed", "output": [], "parallel_tool_calls": True,
                         "tool_choice": "auto", "tools": []},
    "anthropic": {"id": "m", "type": "message", "role": "assistant", "model": "m",
                  "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
                  "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}},
    "gemini": {"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}}]},
}


def sdk_call(gateway: str) -> Callable[[dict[str, Any]], object]:
    """The SDK's request function for ``gateway`` over an instant in-process transport."""
    import importlib

    # (the Anthropic SDK now ships on httpx2, the same API under another name)
    httpx: Any = importlib.import_module("httpx2" if gateway == "anthropic" else "httpx")
    body = json.dumps(_BODIES[gateway]).encode()
    transport = httpx.MockTransport(
        lambda request: httpx.Response(200, content=body,
                                       headers={"content-type": "application/json"}))
    client = httpx.Client(transport=transport)
    if gateway in ("openai", "openai_responses"):
        import openai

        sdk = openai.OpenAI(api_key="x", http_client=client, max_retries=0)
        if gateway == "openai":
            return lambda kw: sdk.chat.completions.create(model="m", **kw)
        return lambda kw: sdk.responses.create(model="m", **kw)
    if gateway == "anthropic":
        import anthropic

        claude = anthropic.Anthropic(api_key="x", http_client=client, max_retries=0)
        return lambda kw: claude.messages.create(model="m", max_tokens=64, **kw)
    from google import genai
    from google.genai import types

    gemini = genai.Client(api_key="x", http_options=types.HttpOptions(httpx_client=client))
    return lambda kw: gemini.models.generate_content(model="m", **kw)


# -- peers -----------------------------------------------------------------------------------


class PydanticAI:
    """pydantic-ai's ModelMessage history, mapped by the gateway's model."""

    def __init__(self, gateway: str) -> None:
        from pydantic_ai.models import ModelRequestParameters
        from pydantic_ai.tools import ToolDefinition

        self.gateway = gateway
        self.messages: list[Any] = []
        self.loop = asyncio.new_event_loop()
        schema = {"type": "object", "properties": {"query": {"type": "string"}}}
        self.params = ModelRequestParameters(
            function_tools=[ToolDefinition(name="lookup", parameters_json_schema=schema)])
        self.model = self._model()

    def _model(self) -> Any:
        if self.gateway in ("openai", "openai_responses"):
            from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
            from pydantic_ai.providers.openai import OpenAIProvider

            provider = OpenAIProvider(api_key="x")
            kind = OpenAIChatModel if self.gateway == "openai" else OpenAIResponsesModel
            return kind("gpt-4o", provider=provider)
        if self.gateway == "anthropic":
            from pydantic_ai.models.anthropic import AnthropicModel
            from pydantic_ai.providers.anthropic import AnthropicProvider

            return AnthropicModel("claude-sonnet-4-5", provider=AnthropicProvider(api_key="x"))
        from pydantic_ai.models.google import GoogleModel
        from pydantic_ai.providers.google import GoogleProvider

        return GoogleModel("gemini-2.5-flash", provider=GoogleProvider(api_key="x"))

    def append(self, turn: int) -> None:
        from pydantic_ai import messages as m

        user, query, result = texts(turn)
        call = f"call_{turn}"
        self.messages += [
            m.ModelRequest(parts=[m.UserPromptPart(content=user)]),
            m.ModelResponse(parts=[m.ToolCallPart("lookup", {"query": query}, call)]),
            m.ModelRequest(parts=[m.ToolReturnPart("lookup", result, call)]),
        ]

    def request(self) -> object:
        model, messages, params = self.model, self.messages, self.params
        match self.gateway:
            case "openai":
                job = model._map_messages(messages, params)
            case "openai_responses":
                job = model._map_messages(messages, {}, params)
            case "anthropic":
                job = model._map_message(messages, params, {})
            case _:
                job = model._map_messages(messages, params)
        return self.loop.run_until_complete(job)


class LangChain:
    """LangChain's BaseMessage history, turned into the OpenAI payload by ChatOpenAI."""

    def __init__(self, gateway: str) -> None:
        from langchain_openai import ChatOpenAI

        self.messages: list[Any] = []
        self.model = ChatOpenAI(model="gpt-4o", api_key="x",  # type: ignore[arg-type]
                                use_responses_api=gateway == "openai_responses")

    def append(self, turn: int) -> None:
        from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

        user, query, result = texts(turn)
        call = {"name": "lookup", "args": {"query": query}, "id": f"call_{turn}"}
        self.messages += [HumanMessage(user), AIMessage("", tool_calls=[call]),
                          ToolMessage(result, tool_call_id=f"call_{turn}")]

    def request(self) -> object:
        return self.model._get_request_payload(self.messages)


class Agents:
    """The Agents SDK's input items (Responses shape), as its runner maps them per request."""

    def __init__(self, gateway: str) -> None:
        self.gateway = gateway
        self.items: list[Any] = []

    def append(self, turn: int) -> None:
        user, query, result = texts(turn)
        self.items += [
            {"role": "user", "content": user},
            {"type": "function_call", "call_id": f"call_{turn}", "name": "lookup",
             "arguments": json.dumps({"query": query})},
            {"type": "function_call_output", "call_id": f"call_{turn}", "output": result},
        ]

    def request(self) -> object:
        from agents.items import ItemHelpers
        from agents.models.chatcmpl_converter import Converter

        if self.gateway == "openai":
            return Converter.items_to_messages(self.items)
        return ItemHelpers.input_to_new_input_list(self.items)


# -- the run ---------------------------------------------------------------------------------


def run(turns: int) -> dict[str, Any]:
    points = [p for p in POINTS if p <= turns]
    windows = {t for p in points for t in range(p - WINDOW + 1, p + 1)}
    hydrangea = {g: Hydrangea(g) for g in GATEWAYS}
    bare = {g: HydrangeaContext(g) for g in GATEWAYS}
    floors = {g: sdk_call(g) for g in GATEWAYS}
    peers: dict[str, Any] = {}
    makers: list[tuple[str, Callable[[str], Any], tuple[str, ...]]] = [
        ("pydantic-ai", PydanticAI, GATEWAYS),
        ("LangChain", LangChain, ("openai", "openai_responses")),
        ("Agents SDK", Agents, ("openai", "openai_responses")),
    ]
    skipped: dict[str, str] = {}
    for name, make, gateways in makers:
        for g in gateways:
            try:
                peer = make(g)
                peer.append(1)
                peer.request()  # a peer that cannot map this history is left out, and said so
                peer.messages.clear() if hasattr(peer, "messages") else peer.items.clear()
                peers[f"{name}|{g}"] = peer
            except Exception as error:  # noqa: BLE001 (reported in the results)
                skipped[f"{name}|{g}"] = f"{type(error).__name__}: {error}"[:200]
    samples: dict[str, dict[int, list[int]]] = {}
    clock = time.process_time_ns
    gc.collect()
    for turn in range(1, turns + 1):
        timed = turn in windows
        point = min((p for p in points if p >= turn), default=turns)
        jobs: list[tuple[str, Callable[[], object]]] = []
        for g, h in hydrangea.items():
            jobs.append((f"hydrangea|{g}", lambda h=h, turn=turn: h.turn(turn)))
        for g, c in bare.items():
            jobs.append((f"{CONTEXT_ALONE}|{g}", lambda c=c, turn=turn: c.turn(turn)))
        for key, peer in peers.items():
            if timed:
                jobs.append((key, lambda p=peer, turn=turn: (p.append(turn), p.request())))
            else:
                peer.append(turn)
        random.Random(turn).shuffle(jobs)
        if timed:  # every library's turn starts from an empty young generation, the heap
            gc.collect()  # built so far frozen: no one pays for the collection of another's
            gc.freeze()
        for key, job in jobs:
            if timed:
                flush()
            started = clock()
            job()
            spent = clock() - started
            if timed:
                samples.setdefault(key, {}).setdefault(point, []).append(spent)
        if timed:
            for g, call in floors.items():
                flush()
                started = clock()
                call(hydrangea[g].kwargs)
                samples.setdefault(f"SDK floor|{g}", {}).setdefault(point, []).append(
                    clock() - started)
    rows = []
    for key, by_point in sorted(samples.items()):
        library, gateway = key.split("|")
        row: dict[str, Any] = {"library": library, "gateway": gateway}
        for p, values in by_point.items():
            row[f"us_t{p}"] = round(statistics.median(values) / 1e3, 1)
        rows.append(row)
    base = {r["gateway"]: r for r in rows if r["library"] == "hydrangea"}
    alone = {r["gateway"]: r for r in rows if r["library"] == CONTEXT_ALONE}
    for row in rows:
        mine, own = base[row["gateway"]], alone[row["gateway"]]
        for p in points:
            key = f"us_t{p}"
            if row["library"] == "SDK floor":
                row[f"hydrangea_pct_t{p}"] = round(100 * mine[key] / row[key], 2)
            elif row["library"] == CONTEXT_ALONE:
                row[f"share_of_full_t{p}"] = round(row[key] / mine[key], 2)
            elif row["library"] != "hydrangea":
                row[f"ratio_t{p}"] = round(row[key] / mine[key], 2)
                row[f"ratio_context_t{p}"] = round(row[key] / own[key], 2)
    contexts = {g: h.coop.context for g, h in hydrangea.items()}
    for measured, held in ((base, contexts), (alone, {g: c.context for g, c in bare.items()})):
        for row in measured.values():
            row["t_last_over_t10"] = round(row[f"us_t{points[-1]}"] / row["us_t10"], 2)
            counts = held[row["gateway"]]._requests
            row["incremental"], row["from_scratch"] = counts.incremental, counts.from_scratch
    return {"rows": rows, "points": points, "skipped": skipped}


def memory(turns: int, gateway: str) -> dict[str, Any]:
    """tracemalloc's retained bytes of a full-stack session of ``turns`` vs its items' JSON
    (after one turn of another session, so the modules' import is not counted)."""
    Hydrangea(gateway).turn(1)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    session = Hydrangea(gateway)
    for turn in range(1, turns + 1):
        session.turn(turn)
    session.kwargs = {}
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    top = tracemalloc.take_snapshot().statistics("filename")[:4]
    tracemalloc.stop()
    compact = len(json.dumps(list(session.coop.context), separators=(",", ":"),
                             ensure_ascii=False).encode())
    return {"gateway": gateway, "turns": turns, "retained_bytes": held, "json_bytes": compact,
            "ratio": round(held / compact, 2),
            "top": [f"{s.traceback[0].filename.split('site-packages/')[-1]}: {s.size}"
                    for s in top]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=5_000)
    parser.add_argument("--memory-turns", type=int, nargs="*", default=[1_000, 10_000])
    parser.add_argument("--memory-only", action="store_true",
                        help="measure only the memory rows (the timing rows stay as they were)")
    args = parser.parse_args()
    started = time.perf_counter()
    if args.memory_only:
        result = json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {}
        result.setdefault("rows", [])
        result.setdefault("skipped", [])
    else:
        result = run(args.turns)
    result["memory"] = [memory(n, g) for n in args.memory_turns for g in GATEWAYS]
    result["seconds"] = round(time.perf_counter() - started, 1)
    result["generated"] = datetime.now(UTC).isoformat(timespec="seconds")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    for row in result["rows"]:
        print(row)
    for row in result["memory"]:
        print(row)
    print(f"skipped: {result['skipped']}; {result['seconds']} s")


if __name__ == "__main__":
    main()
