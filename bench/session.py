"""The whole agent turn over a long lifecycle session, side by side with egregore 0.1.5a0.

One turn is everything an agent does around one model call, timed as one piece:

- hydrangea: queue the user message (``ConversationArea.user``), add the components the
  schedule adds this turn, ``Lifecycle.render()``, build the SDK kwargs (``request.kwargs``),
  ``push_back`` of the model's reply (a native dict of the gateway) and ``route`` of it to the
  conversation area;
- egregore: ``context.add_user``, the same component schedule (``pact_insert``), the message
  scheduler's ``render()`` (it advances the episode), the translator's request for the provider
  (``GeneralPurposeTranslator.translate_to_native``) and ``context.add_assistant`` of the reply.

The schedule is the same for both: before the first render 5 sticky components (``ttl=1,
cadence=1``) and 5 cyclic ones (``ttl=2, cadence=5``); a temporary one (``ttl=3``) every third
turn; a permanent one every tenth turn. egregore's components are inserted at ``"d0, 0, 1"``
(attached to the newest message, where hydrangea's overlay sits).

Reported: per-turn time at turns 10, 100 and 1,000 (the fastest of the 10 turns ending there:
the least disturbed measurement of the same work on a shared machine; process CPU time, which
other load disturbs far less than wall time), the total time of the session (hydrangea's
session, a third of a second, runs ``--repeat`` times per gateway, the gateways in turn, and the
session with the smallest total is reported, every total listed beside it; egregore's session of
some minutes runs once), the ratios
egregore / hydrangea (total, and at turn 1,000) and hydrangea's own
turn-1,000 / turn-10 ratio, for each gateway; then 10,000 turns of hydrangea alone (OpenAI Chat
Completions). egregore's request does not depend on the provider (its translator writes one
any-llm request shape and only names the provider), so it runs one session in which each turn
builds the request for ``openai``, ``anthropic`` and ``google``, each timed; the Responses API
is compared with egregore's ``openai`` request.

egregore is never a dependency of the project: it lives in its own virtualenv,
``/tmp/egregore-venv`` (created on first use: ``pip install egregore==0.1.5a0``), and runs in a
subprocess of this script (``--egregore-worker``). Its debug ``print`` output goes to
``/dev/null``. Results: ``bench/results/session.json``.

A session that has not reached its last turn after a CPU budget stops there and the report says
how far it got (``--long-budget``, 90 s, for the 10,000-turn run; ``--egregore-budget``, 300 s);
the comparison then covers the turns both reached. The loop holds each request's kwargs until
the next one is built (``kwargs = request.kwargs``), as an agent loop does; the Context then
serves its requests with two top-level lists brought up to date in turn instead of copying the
history into a new one each time (see "What you may mutate" in the providers guide).

Run: ``python bench/session.py [--turns 1000] [--long-turns 10000] [--egregore-turns 1000]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
RESULTS = BENCH / "results" / "session.json"
EGREGORE_VENV = Path("/tmp/egregore-venv")
EGREGORE = "egregore==0.1.5a0"
WINDOW = 10
POINTS = (10, 100, 1_000, 10_000)
STICKY, CYCLIC = 5, 5
EGREGORE_PROVIDERS = {"openai": "openai", "openai_responses": "openai",
                      "anthropic": "anthropic", "gemini": "google"}


def schedule(turn: int) -> list[tuple[str, int | None, int | None, str | None]]:
    """The components added before the render of ``turn``: (text, ttl, cadence, key)."""
    added: list[tuple[str, int | None, int | None, str | None]] = []
    if turn == 1:
        added += [(f"sticky note {i}", 1, 1, f"sticky{i}") for i in range(STICKY)]
        added += [(f"cyclic note {i}", 2, 5, f"cyclic{i}") for i in range(CYCLIC)]
    if turn % 3 == 0:
        added.append((f"temporary note {turn}", 3, None, None))
    if turn % 10 == 0:
        added.append((f"fact learned at turn {turn}", None, None, None))
    return added


def at(samples: list[int], turn: int) -> float | None:
    """The fastest of the WINDOW turns ending at ``turn`` (1-based), in milliseconds."""
    if turn > len(samples):
        return None
    return min(samples[turn - WINDOW : turn]) / 1e6


# -- hydrangea ----------------------------------------------------------------------------------


def _reply(gateway: Any, text: str) -> dict[str, Any]:
    from hydrangea.gateway import GatewayType

    match gateway:
        case GatewayType.openai:
            return {"role": "assistant", "content": text}
        case GatewayType.openai_responses:
            return {"type": "message", "role": "assistant", "status": "completed",
                    "id": f"msg_{abs(hash(text)):x}",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}
        case GatewayType.anthropic:
            return {"role": "assistant", "content": [{"type": "text", "text": text}]}
        case GatewayType.gemini:
            return {"role": "model", "parts": [{"text": text}]}
    raise AssertionError(gateway)


def hydrangea_session(gateway_name: str, turns: int, budget_s: float = 0.0) -> dict[str, Any]:
    """Per-turn CPU nanoseconds of the whole hydrangea turn (stops once the turns took
    ``budget_s`` seconds in all, if given)."""
    from hydrangea.areas import ConversationArea
    from hydrangea.context import Context
    from hydrangea.coop import CoopContext
    from hydrangea.gateway import GatewayType
    from hydrangea.lifecycle import Component, Lifecycle
    from hydrangea.message import Message, Role

    gateway = GatewayType(gateway_name)
    conversation = ConversationArea()
    coop = CoopContext(Context(gateway))
    coop.register(conversation)
    lifecycle = Lifecycle(coop)
    samples: list[int] = []
    clock = time.process_time_ns
    kwargs: dict[str, Any] = {}
    spent, budget = 0, int(budget_s * 1e9)
    for turn in range(1, turns + 1):
        reply_text = f"answer {turn}"
        started = clock()
        conversation.user(f"question {turn}")
        for text, ttl, cadence, key in schedule(turn):
            lifecycle.add(Component(text, ttl=ttl, cadence=cadence, key=key))
        request = lifecycle.render()
        kwargs = request.kwargs
        coop.context.push_back(_reply(gateway, reply_text))
        conversation.route(Message(role=Role.assistant, content=reply_text))
        samples.append(clock() - started)
        spent += samples[-1]
        if budget and spent > budget:
            break
    return {"samples": samples, "history_items": len(coop.context),
            "last_request_size": len(json.dumps(kwargs))}


# -- egregore (runs in its own virtualenv) ------------------------------------------------------


def egregore_worker(turns: int, budget_s: float) -> None:
    """Run the egregore session; print per-turn CPU nanoseconds per provider as JSON on stdout
    (stopping once the turns took ``budget_s`` seconds in all)."""
    import logging

    # this script's folder holds bench/tokenizers.py, which must not shadow a package egregore uses
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != BENCH]
    real_stdout = sys.stdout
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - egregore prints debug lines
    logging.disable(logging.CRITICAL)
    from egregore.core.agent.message_scheduler import MessageScheduler
    from egregore.core.context_management import Context, TextContent
    from egregore.providers.core.translation import GeneralPurposeTranslator

    context = Context()
    scheduler = MessageScheduler(context)
    providers = sorted(set(EGREGORE_PROVIDERS.values()))
    translators = {name: GeneralPurposeTranslator(name) for name in providers}
    samples: dict[str, list[int]] = {name: [] for name in providers}
    failures = 0
    clock = time.process_time_ns
    last: dict[str, Any] = {}
    spent, budget = 0, int(budget_s * 1e9)
    for turn in range(1, turns + 1):
        started = clock()
        context.add_user(f"question {turn}")
        for text, ttl, cadence, key in schedule(turn):
            fields: dict[str, Any] = {"content": text}
            if ttl is not None:
                fields["ttl"] = ttl
            if cadence is not None:
                fields["cadence"] = cadence
            if key is not None:
                fields["key"] = key
            result = context.pact_insert("d0, 0, 1", TextContent(**fields))
            failures += not result.success
        thread = scheduler.render()
        shared = clock() - started
        own: dict[str, int] = {}
        for name, translator in translators.items():
            begun = clock()
            last = translator.translate_to_native(thread, model="model")
            own[name] = clock() - begun
        begun = clock()
        context.add_assistant(f"answer {turn}")
        shared += clock() - begun
        for name in providers:
            samples[name].append(shared + own[name])
        spent += shared + max(own.values())
        if budget and spent > budget:
            break
    messages = last.get("messages", [])
    real_stdout.write(json.dumps({
        "samples": samples,
        "insert_failures": failures,
        "last_request_messages": len(messages),
        "last_request_size": len(json.dumps(last, default=str)),
        "version": _version("egregore"),
    }))
    real_stdout.flush()


def ensure_egregore() -> Path:
    python = EGREGORE_VENV / "bin" / "python"
    if not python.exists():
        print(f"creating {EGREGORE_VENV} with {EGREGORE} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(EGREGORE_VENV)], check=True)
    probe = subprocess.run([str(python), "-c", "import egregore"], capture_output=True,
                           check=False)
    if probe.returncode != 0:
        subprocess.run([str(python), "-m", "pip", "install", "-q", EGREGORE], check=True)
    return python


def egregore_session(turns: int, budget_s: float) -> dict[str, Any]:
    python = ensure_egregore()
    done = subprocess.run(
        [str(python), str(Path(__file__).resolve()), "--egregore-worker", str(turns),
         "--egregore-budget", str(budget_s)],
        capture_output=True, text=True, check=True, cwd=str(ROOT),
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


# -- report -------------------------------------------------------------------------------------


def summary(samples: list[int]) -> dict[str, Any]:
    wanted = sorted({*(p for p in POINTS if p <= len(samples)), len(samples)})
    points = {str(p): round(v, 4) for p in wanted if (v := at(samples, p)) is not None}
    step = max(WINDOW, len(samples) // 40 // WINDOW * WINDOW)
    curve = {str(t): round(v, 4) for t in range(step, len(samples) + 1, step)
             if (v := at(samples, t)) is not None}
    return {"turns": len(samples), "total_s": round(sum(samples) / 1e9, 4),
            "turn_ms": points, "curve_ms": curve}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--turns", type=int, default=1_000)
    parser.add_argument("--long-turns", type=int, default=10_000,
                        help=f"turns of the hydrangea-alone session (at least {WINDOW})")
    parser.add_argument("--egregore-turns", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=5,
                        help="hydrangea sessions per gateway; the least disturbed one is reported")
    parser.add_argument("--long-budget", type=float, default=90.0,
                        help="stop the long hydrangea session after this many CPU seconds")
    parser.add_argument("--egregore-budget", type=float, default=300.0,
                        help="stop the egregore session after this many CPU seconds")
    parser.add_argument("--egregore-worker", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    for name in ("turns", "long_turns", "egregore_turns"):
        if getattr(args, name) < WINDOW:
            parser.error(f"--{name.replace('_', '-')} must be at least {WINDOW} (the window)")
    if args.egregore_worker:
        egregore_worker(args.egregore_worker, args.egregore_budget)
        return
    sys.path.insert(0, str(ROOT / "src"))
    from hydrangea.gateway import GatewayType

    gc.disable()
    rows: list[dict[str, Any]] = []
    hydrangea: dict[str, dict[str, Any]] = {}
    hydrangea_samples: dict[str, list[int]] = {}
    totals: dict[str, list[float]] = {gateway.value: [] for gateway in GatewayType}
    for _ in range(args.repeat):  # the gateways in turn, so that a busy spell hits them alike
        for gateway in GatewayType:
            run = hydrangea_session(gateway.value, args.turns)
            total = sum(run["samples"])
            totals[gateway.value].append(round(total / 1e9, 4))
            best = hydrangea_samples.get(gateway.value)
            if best is None or total < sum(best):
                hydrangea_samples[gateway.value] = run["samples"]
                hydrangea[gateway.value] = {**summary(run["samples"]),
                                            "history_items": run["history_items"]}
            gc.collect()
    for name, summarized in hydrangea.items():
        print(f"hydrangea {name} (least disturbed of {args.repeat}; totals {totals[name]}): "
              f"{summarized}", flush=True)
    long_run = hydrangea_session(GatewayType.openai.value, args.long_turns, args.long_budget)
    long_summary = summary(long_run["samples"])
    gc.enable()
    print(f"hydrangea openai, up to {args.long_turns} turns: {long_summary}", flush=True)
    started = time.perf_counter()
    egregore = egregore_session(args.egregore_turns, args.egregore_budget)
    egregore_wall = time.perf_counter() - started
    egregore_summary = {name: summary(s) for name, s in egregore["samples"].items()}
    print(f"egregore ({egregore_wall:.0f} s wall): {egregore_summary}", flush=True)
    for gateway in GatewayType:
        ours_samples = hydrangea_samples[gateway.value]
        theirs_samples = egregore["samples"][EGREGORE_PROVIDERS[gateway.value]]
        common = min(len(ours_samples), len(theirs_samples))  # egregore may stop early
        ours, theirs = summary(ours_samples[:common]), summary(theirs_samples[:common])
        last = str(common)
        row: dict[str, Any] = {
            "gateway": gateway.value,
            "egregore_provider": EGREGORE_PROVIDERS[gateway.value],
            "turns_compared": common,
            "hydrangea_total_s": ours["total_s"],
            "hydrangea_session_totals_s": totals[gateway.value],
            "egregore_total_s": theirs["total_s"],
            "hydrangea_turn_ms": ours["turn_ms"],
            "egregore_turn_ms": theirs["turn_ms"],
            "hydrangea_curve_ms": ours["curve_ms"],
            "egregore_curve_ms": theirs["curve_ms"],
            "total_ratio_egregore_over_hydrangea": round(theirs["total_s"] / ours["total_s"], 2),
            "last_turn_ratio_egregore_over_hydrangea": round(
                theirs["turn_ms"][last] / ours["turn_ms"][last], 2),
            "hydrangea_last_turn_over_turn_10": round(
                ours["turn_ms"][last] / ours["turn_ms"]["10"], 2),
            "egregore_last_turn_over_turn_10": round(
                theirs["turn_ms"][last] / theirs["turn_ms"]["10"], 2),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    reached = long_summary["turns"]
    long_ratio = long_summary["turn_ms"][str(reached)] / long_summary["turn_ms"]["10"]
    print(f"hydrangea alone: {reached} of {args.long_turns} turns within {args.long_budget:.0f} "
          f"CPU s; turn {reached} / turn 10 = {long_ratio:.2f} (target 1.5)", flush=True)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        "benchmark": "whole agent turn (user message, lifecycle render, SDK kwargs, push_back "
                     "of the reply, route) over a long session, hydrangea vs egregore",
        "ratio": "egregore / hydrangea (same schedule); turn N / turn 10 for growth",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version()},
        "schedule": {"sticky": STICKY, "cyclic": f"{CYCLIC} x ttl=2 cadence=5",
                     "temporary": "ttl=3 every 3rd turn", "permanent": "every 10th turn"},
        "window": WINDOW,
        "hydrangea_sessions_per_gateway": args.repeat,
        "egregore": {"version": egregore["version"], "wall_s": round(egregore_wall, 1),
                     "insert_failures": egregore["insert_failures"],
                     "last_request_messages": egregore["last_request_messages"]},
        "rows": rows,
        "hydrangea_long": {"gateway": "openai", "turns_wanted": args.long_turns,
                           "cpu_budget_s": args.long_budget, **long_summary,
                           "last_turn_over_turn_10": round(long_ratio, 2)},
        "egregore_turns_wanted": args.egregore_turns,
        "egregore_cpu_budget_s": args.egregore_budget,
    }, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


if __name__ == "__main__":
    main()
