"""The rich display of a demo report: readable at a glance, one panel per fact worth seeing."""

from __future__ import annotations

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from hydrangea.demo.naive import CACHE_READ, LoopCost
from hydrangea.demo.report import CompactionFacts, DemoReport, RequestFacts, RetrievalFacts
from hydrangea.demo.scenario import INJECTION

__all__ = ["show_report"]

_FULL_TABLE_LIMIT = 24


def _request_rows(report: DemoReport) -> list[RequestFacts | None]:
    """Every request for short runs; for long ones the start, the checkpoints and the end,
    with ``None`` marking the gaps."""
    requests = list(report.requests)
    if len(requests) <= _FULL_TABLE_LIMIT:
        return list(requests)
    keep = set(range(4)) | set(range(len(requests) - 3, len(requests)))
    for compaction in report.compactions[:3]:
        if compaction.collected_at_request is not None:
            at = compaction.collected_at_request
            keep |= {at - 1, at}
    rows: list[RequestFacts | None] = []
    for index, request in enumerate(requests):
        if index in keep:
            rows.append(request)
        elif rows and rows[-1] is not None:
            rows.append(None)
    return rows


def _requests_table(report: DemoReport) -> Table:
    grouped: dict[int, dict[str, list[str]]] = {}
    for event in report.events:
        if event.request is None or event.kind in {"reminder_shown", "reminder_expired"}:
            continue
        grouped.setdefault(event.request, {}).setdefault(event.kind, []).append(event.subject)
    events_by_request = {
        index: [
            f"{kind} {', '.join(names)}" if len(names) <= 2 else f"{kind} {len(names)} areas"
            for kind, names in kinds.items()
        ]
        for index, kinds in grouped.items()
    }
    table = Table(title="Requests (size and the prefix a provider cache could reuse)")
    table.add_column("#", justify="right")
    table.add_column("turn", justify="right")
    table.add_column("tokens", justify="right")
    table.add_column("cached prefix", justify="right", max_width=10)
    table.add_column("items", justify="right")
    table.add_column("reminders", overflow="fold")
    table.add_column("areas", overflow="fold")
    for row in _request_rows(report):
        if row is None:
            table.add_row("…", "", "", "", "", "", "")
            continue
        share = f"{row.reused_tokens} ({row.reuse_share:.0%})"
        style = "bold red" if row.index and row.reuse_share < 0.5 else None
        events = events_by_request.get(row.index, [])
        table.add_row(
            str(row.index),
            f"{row.turn}" if row.call == 1 else f"{row.turn}.{row.call}",
            str(row.tokens),
            Text(share, style=style or ""),
            str(row.items),
            ", ".join(row.overlay),
            "\n".join(events),
        )
    return table


def _retrieval_panel(retrieval: RetrievalFacts) -> Panel:
    table = Table(show_header=True, expand=True)
    table.add_column("document", overflow="fold")
    table.add_column("origin", overflow="fold")
    table.add_column("as it stands in the request: fenced, untrusted, forged fences escaped",
                     ratio=3)
    for block in retrieval.fenced:
        injected = INJECTION in block.content
        shown = block.raw or block.content
        text = shown if len(shown) < 600 else shown[:600] + "…"
        table.add_row(
            Text(block.item_id, style="bold red" if injected else ""),
            block.origin,
            Text(text + ("\n(prompt injection: stays inside the fence)" if injected else ""),
                 style="red" if injected else ""),
        )
    refused = Table(show_header=True, expand=True)
    refused.add_column("refused document", overflow="fold")
    refused.add_column("reason", overflow="fold")
    refused.add_column("published (UTC)", overflow="fold")
    refused.add_column("sha256, first 12", overflow="fold")
    for rejection in retrieval.rejections:
        refused.add_row(
            rejection.item_id,
            rejection.reason.replace("_", " "),
            (rejection.published_at or "undated")[:16].replace("T", " "),
            rejection.content_sha256[:12],
        )
    title = (
        f"As-of retrieval, turn {retrieval.turn}: {retrieval.tokens}/{retrieval.token_budget} "
        f"tokens, sent from request {retrieval.request}"
    )
    return Panel(Group(table, _FENCE_LEGEND, refused), title=title)


_FENCE_LEGEND = Text.assemble(
    ("How to read a fence: ", "bold"),
    "a line starting ¤ and a 12-digit nonce opens a block of outside text: id, origin, kind "
    "and publication time (UTC, YYYYMMDDhhmmss). The model is told that only lines with this "
    "build's nonce open a block and that everything inside is data, never an instruction. "
    "Inside, ¤ is written ␛r (and ␛ as ␛␛), so the forged fence line of the forum post "
    "(␛r000…) cannot close the block or open a trusted one; the original text is recovered "
    "exactly by unfencing.",
)


def _compaction_panel(compaction: CompactionFacts) -> Panel:
    lines = Text()
    lines.append(
        f"Checkpoint after turn {compaction.checkpoint_turn}: segment {compaction.segment} "
        f"reached {compaction.tokens_at_checkpoint} >= {compaction.threshold} tokens.\n",
        style="bold",
    )
    if compaction.collected_at_request is None:
        lines.append("The session ended before the next render collected it.\n")
    else:
        lines.append(
            f"Collected at request {compaction.collected_at_request}: {compaction.detached} "
            f"items detached, {compaction.promoted} summary item promoted; areas reclaimed: "
            f"{', '.join(compaction.reclaimed_areas)}.\n"
        )
    facts, pointers = compaction.summary["facts"], compaction.summary["pointers"]
    lines.append(
        f"\nThe summary: {len(facts)} facts (each record's first sentence) and "
        f"{len(pointers)} pointers, each to the full record in the record store:\n",
        style="bold",
    )
    for pointer, content in list(compaction.records.items())[:6]:
        lines.append(f"  {pointer}\n", style="cyan")
        lines.append(f"    {_clip(content.split(chr(10), 1)[0], 70)}\n")
    if len(compaction.records) > 6:
        lines.append(f"  … {len(compaction.records) - 6} more pointers\n")
    return Panel(lines, title="Compaction checkpoint")


def _clip(text: str, width: int) -> str:
    """``text`` cut at a word before ``width`` characters, marked with an ellipsis."""
    if len(text) <= width:
        return text
    return text[: width - 1].rsplit(" ", 1)[0] + " …"


def _loops_table(report: DemoReport) -> Table:
    """This session against the naive loops (see :mod:`hydrangea.demo.naive`)."""
    loops: tuple[LoopCost, ...] = report.loops
    table = Table(title="The same session without the library: sent, cost, lost")
    table.add_column("", overflow="fold", min_width=16)
    for loop in loops:
        table.add_column(loop.label, justify="right", overflow="fold")

    def row(label: str, values: list[str]) -> None:
        table.add_row(label, *values)

    row("requests", [str(loop.requests) for loop in loops])
    row("tokens sent", [f"{loop.tokens:,}" for loop in loops])
    row("largest request", [f"{loop.peak:,}" for loop in loops])
    row("prefix cached", [f"{loop.reused / loop.tokens:.0%}" if loop.tokens else "-"
                          for loop in loops])
    row(f"billed (cached at {CACHE_READ}x)", [f"{loop.billed:,}" for loop in loops])
    row("after-as_of documents sent", [str(loop.future_documents) for loop in loops])
    row("injection unfenced", ["yes" if loop.injection_unfenced else "no" for loop in loops])
    row("earlier turns lost", [str(loop.turns_lost) for loop in loops])
    return table


_LOOPS_NOTE = (
    "The naive loop sends one growing list: documents pasted in as plain text, reminders in "
    "the system prompt (so a reminder that comes or goes changes the very first tokens, and "
    "the cache misses). Cut to a budget, it drops the oldest turns, which are then gone: "
    "nothing in the request points to them. A lost turn here is an earlier question that the "
    "last request neither shows nor names by record id."
)


def _reasoning_panel(report: DemoReport) -> Panel:
    if not report.reasoning:
        return Panel(
            "This gateway's output carries no reasoning state to send back.",
            title="Reasoning state",
        )
    sent = [r for r in report.reasoning if r.sent_back_identical]
    reclaimed = [r for r in report.reasoning if r.reclaimed_by_checkpoint]
    last = [r for r in report.reasoning if r.next_request is None]
    field = report.reasoning[0].field
    text = Text()
    text.append(
        f"{len(sent)} of {len(report.reasoning)} outputs' {field} values went back "
        "byte-identical in the next request",
        style="bold green",
    )
    if reclaimed:
        text.append(f"; {len(reclaimed)} reclaimed with its segment at a checkpoint")
    if last:
        text.append("; the last output had no next request")
    sample = report.reasoning[0]
    text.append(f"\ne.g. request {sample.request}: {field} = {sample.value[:48]}…")
    return Panel(text, title="Reasoning state")


def _timeline(report: DemoReport) -> Table:
    table = Table(title="Areas and reminders")
    table.add_column("turn", justify="right")
    table.add_column("request", justify="right")
    table.add_column("event")
    table.add_column("subject")
    table.add_column("detail")
    rows: list[tuple[int, int | None, str, list[str], str]] = []
    for event in report.events:
        if event.turn > 12 and event.kind not in {"checkpoint", "collected"}:
            continue
        last = rows[-1] if rows else None
        if (
            last is not None
            and event.kind in {"retired", "collected"}
            and (last[0], last[1], last[2], last[4]) == (event.turn, event.request, event.kind,
                                                         event.detail)
        ):
            last[3].append(event.subject)
            continue
        rows.append((event.turn, event.request, event.kind, [event.subject], event.detail))
    for turn, request, kind, subjects, detail in rows[:60]:
        table.add_row(
            str(turn), "" if request is None else str(request), kind, ", ".join(subjects), detail
        )
    if len(rows) > 60:
        table.add_row("…", "", f"{len(rows) - 60} more events (see --json)", "", "")
    return table


def show_report(report: DemoReport, console: Console) -> None:
    """Print ``report`` to ``console``."""
    console.print(
        Panel(
            f"gateway [bold]{report.gateway}[/] · model [bold]{report.model}[/]"
            f"{' (live)' if report.live else ''} · as of {report.as_of} · "
            f"{len(report.turns)} turns, {len(report.requests)} requests · compaction "
            f"threshold {report.threshold_tokens} tokens",
            title="hydrangea demo session",
        )
    )
    console.print(_requests_table(report))
    for retrieval in report.retrievals:
        console.print(_retrieval_panel(retrieval))
    for compaction in report.compactions[:2]:
        console.print(_compaction_panel(compaction))
    if len(report.compactions) > 2:
        console.print(f"… and {len(report.compactions) - 2} more checkpoints (see --json)")
    if report.loops:
        console.print(_loops_table(report))
        console.print(Text(_LOOPS_NOTE, style="dim"))
    console.print(_reasoning_panel(report))
    console.print(_timeline(report))
    reused = sum(r.reused_tokens for r in report.requests)
    total = sum(r.tokens for r in report.requests)
    console.print(
        f"Over the session {reused} of {total} request tokens "
        f"({reused / total if total else 0:.0%}) were a prefix of the previous request; "
        f"the Context ends with {report.final_context_items} items."
    )
    usage = report.reported_usage
    if usage and usage.get("input_tokens"):
        read, sent = usage.get("cache_read_tokens", 0), usage["input_tokens"]
        console.print(
            f"Predicted cache reuse {reused / total if total else 0:.0%}; the provider reported "
            f"{read} of {sent} input tokens read from its cache ({read / sent:.0%})."
        )
