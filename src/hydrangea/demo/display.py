"""The rich display of a demo report: readable at a glance, one panel per fact worth seeing."""

from __future__ import annotations

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

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
    table.add_column("turn.call")
    table.add_column("tokens", justify="right")
    table.add_column("cached prefix", justify="right")
    table.add_column("items", justify="right")
    table.add_column("reminders in overlay")
    table.add_column("areas")
    for row in _request_rows(report):
        if row is None:
            table.add_row("…", "", "", "", "", "", "")
            continue
        share = f"{row.reused_tokens} ({row.reuse_share:.0%})"
        style = "bold red" if row.index and row.reuse_share < 0.5 else None
        events = events_by_request.get(row.index, [])
        table.add_row(
            str(row.index),
            f"{row.turn}.{row.call}",
            str(row.tokens),
            Text(share, style=style or ""),
            str(row.items),
            ", ".join(row.overlay),
            "\n".join(events),
        )
    return table


def _retrieval_panel(retrieval: RetrievalFacts) -> Panel:
    table = Table(show_header=True, expand=True)
    table.add_column("document")
    table.add_column("origin")
    table.add_column("as it stands in the request: fenced, untrusted, forged fences escaped")
    for block in retrieval.fenced:
        injected = INJECTION in block.content
        shown = block.raw or block.content
        text = shown if len(shown) < 360 else shown[:360] + "…"
        table.add_row(
            Text(block.item_id, style="bold red" if injected else ""),
            block.origin,
            Text(text + ("\n(prompt injection: stays inside the fence)" if injected else ""),
                 style="red" if injected else ""),
        )
    refused = Table(show_header=True, expand=True)
    refused.add_column("refused document")
    refused.add_column("reason")
    refused.add_column("published")
    refused.add_column("content sha256")
    for rejection in retrieval.rejections:
        refused.add_row(
            rejection.item_id,
            rejection.reason,
            rejection.published_at or "undated",
            rejection.content_sha256[:16] + "…",
        )
    title = (
        f"As-of retrieval, turn {retrieval.turn} (as of {retrieval.as_of}; "
        f"{retrieval.tokens}/{retrieval.token_budget} tokens; first sent in request "
        f"{retrieval.request})"
    )
    return Panel(Group(table, refused), title=title)


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
    facts = compaction.summary["facts"]
    lines.append(f"\nSummary ({len(facts)} facts):\n", style="bold")
    for fact in facts[:6]:
        lines.append(f"  - {fact}\n")
    if len(facts) > 6:
        lines.append(f"  … {len(facts) - 6} more\n")
    lines.append("\nPointers → full records in the record store:\n", style="bold")
    for pointer, content in list(compaction.records.items())[:6]:
        first = content.split("\n", 1)[0]
        lines.append(f"  {pointer}", style="cyan")
        lines.append(f" → {first[:70]}{'…' if len(first) > 70 else ''}\n")
    if len(compaction.records) > 6:
        lines.append(f"  … {len(compaction.records) - 6} more pointers\n")
    return Panel(lines, title="Compaction checkpoint")


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
