"""A deterministic synthetic session of a tool-using coding agent.

``generate(seed)`` returns the same :class:`Transcript` for the same seed and arguments. Sizes,
in tokens of ceil(len/4) (text is built to about four characters per token):

* a system prompt of about 1,500 tokens (1,400 to 1,600);
* turn 0 is the user's task (300 to 600 tokens);
* every later turn is either a *tool step* (the assistant's short reasoning and one tool call,
  then the tool's output of 200 to 5,000 tokens, log-uniform; ``search_docs`` returns two to four
  retrieved documents within the same range) or a *user step* (the assistant's answer of 100 to
  400 tokens, which calls no tool and so ends the model's turn, then a new user request of 50 to
  400 tokens); a tool loop runs 3 to 12 tool steps between two user steps;
* facts: unique marker strings ``FACT-nnn-xxxxxxxx`` planted in the middle of some tool outputs
  and user requests, never in their first sentence (so a first-sentence digest loses them);
* reminders, the lifecycle state each turn's request must carry: a permanent to-do list whose
  text changes at every user step and every eighth tool step, a note with ttl 3 after every file
  write, and a test reminder with ttl 1 and cadence 10.

Each turn's ``events`` are the messages that enter the conversation before that turn's request:
the previous model response and what the harness answers to it.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from hydrangea.message import Message, Role, TextPart, ToolCallPart, ToolResultPart

__all__ = ["Reminder", "Transcript", "Turn", "generate"]

_WORD_TEXT = (
    "the of and to in is for that with on as by this are be from at or an it not which have "
    "value config request handler module parser buffer token cache index record stream client "
    "server worker thread queue retry timeout schema field method return error result status "
    "build deploy commit branch merge patch review test suite assert fixture mock coverage "
    "latency memory budget window prefix suffix render collect promote observe range cursor "
    "summary pointer store fence trust origin publish compact digest header payload session"
)
_WORDS = tuple(_WORD_TEXT.split())

_TOOLS = ("read_file", "run_tests", "grep", "search_docs", "write_file", "shell")
_TOOL_WEIGHTS = (30, 15, 15, 15, 12, 13)
_SYSTEM_TOKENS = (1_400, 1_600)
_TOOL_TOKENS = (200, 5_000)
_LOOP_STEPS = (3, 12)
_TODO_EVERY = 8
_FILE_NOTE_TTL = 3
_TEST_CADENCE = 10


@dataclass(frozen=True, slots=True)
class Reminder:
    """One lifecycle component visible in a turn: a key (stable across versions) and its text."""

    key: str
    text: str


@dataclass(frozen=True, slots=True)
class Turn:
    """One model turn: the messages that arrive before its request, and what the request shows."""

    index: int
    events: tuple[Message, ...]
    reminders: tuple[Reminder, ...]
    facts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Transcript:
    """The whole session; the system prompt is sent first in every request."""

    seed: int
    system_prompt: str
    turns: tuple[Turn, ...]

    @property
    def facts(self) -> tuple[str, ...]:
        """Every fact planted in the session, in order."""
        return tuple(fact for turn in self.turns for fact in turn.facts)


class _Writer:
    """Seeded text of a requested size in tokens (four characters per token)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def words(self, tokens: int) -> str:
        chars = tokens * 4
        out: list[str] = []
        size = 0
        while size < chars:
            word = self.rng.choice(_WORDS)
            out.append(word)
            size += len(word) + 1
        text = " ".join(out)[:chars]
        return text.rstrip() + "." if len(text) > 1 else "ok"

    def body(self, tokens: int, header: str, fact_line: str | None) -> str:
        """``header`` then filler lines; ``fact_line`` (if any) lands in the middle."""
        remaining = max(tokens - (len(header) + 1) // 4 - (len(fact_line or "") + 1) // 4, 8)
        lines: list[str] = []
        while remaining > 0:
            width = min(remaining, self.rng.randint(12, 30))
            lines.append(self.words(width))
            remaining -= width + 1
        if fact_line is not None:
            lines.insert(len(lines) // 2, fact_line)
        return header + "\n" + "\n".join(lines)

    def fit(self, text: str, tokens: int) -> str:
        """``text`` cut or padded with filler to exactly ``tokens * 4`` characters."""
        chars = tokens * 4
        if len(text) < chars:
            text = text + "\n" + self.words((chars - len(text)) // 4 + 2)
        return text[: chars - 1] + "."

    def log_uniform(self, low: int, high: int) -> int:
        return round(math.exp(self.rng.uniform(math.log(low), math.log(high))))


def _fact(rng: random.Random, number: int) -> str:
    return f"FACT-{number:03d}-{rng.getrandbits(32):08x}"


def _todo_text(step: int, done: int, items: int) -> str:
    lines = [f"To-do list (revision {step}):"]
    for n in range(items):
        mark = "x" if n < done else " "
        lines.append(f"- [{mark}] subtask {n + 1}: keep the change small, test it, then review it")
    return "\n".join(lines)


def generate(seed: int, turns: int = 300) -> Transcript:
    """The session for ``seed``: ``turns`` turns, each with its events, reminders and facts."""
    if turns < 1:
        raise ValueError("a session needs at least one turn")
    rng = random.Random(seed)
    writer = _Writer(rng)
    system_tokens = rng.randint(*_SYSTEM_TOKENS)
    system_prompt = writer.fit(
        writer.body(system_tokens, "You are a careful coding agent.", None), system_tokens
    )
    fact_count = 0
    todo_revision = 0
    todo_done = 0
    todo_items = 6
    file_notes: dict[str, tuple[int, str]] = {}
    out: list[Turn] = []
    next_user_step = 0
    for index in range(turns):
        facts: list[str] = []
        events: list[Message] = []
        user_step = index == next_user_step
        if user_step:
            next_user_step = index + 1 + rng.randint(*_LOOP_STEPS)
        if index == 0:
            fact = _fact(rng, fact_count)
            fact_count += 1
            facts.append(fact)
            size = rng.randint(300, 600)
            task = writer.body(
                size,
                "Please refactor the billing service and keep its tests green.",
                f"The staging database password is {fact}.",
            )
            task = writer.fit(task, size)
            events.append(Message(role=Role.user, content=task))
        elif user_step:
            reply = writer.body(rng.randint(100, 400), "Done with the current subtask.", None)
            events.append(Message(role=Role.assistant, content=reply))
            fact_line = None
            if rng.random() < 0.6:
                fact = _fact(rng, fact_count)
                fact_count += 1
                facts.append(fact)
                fact_line = f"Remember that the release ticket is {fact}."
            request = writer.body(rng.randint(50, 400), "Next, please do this.", fact_line)
            events.append(Message(role=Role.user, content=request))
            todo_revision += 1
            todo_items += 1
        else:
            tool = rng.choices(_TOOLS, weights=_TOOL_WEIGHTS)[0]
            path = f"src/billing/mod_{rng.randrange(60):02d}.py"
            call_id = f"call_{index:03d}"
            thought = f"I will run {tool} on {path}. " + writer.words(rng.randint(10, 110))
            call = ToolCallPart(id=call_id, name=tool, arguments={"path": path, "turn": index})
            events.append(Message(role=Role.assistant, content=(TextPart(text=thought), call)))
            fact_line = None
            if rng.random() < 0.45:
                fact = _fact(rng, fact_count)
                fact_count += 1
                facts.append(fact)
                fact_line = f"Observed: the config key for {path} is {fact}."
            size = writer.log_uniform(*_TOOL_TOKENS)
            if tool == "search_docs":
                output = _documents(writer, rng, size, fact_line)
            else:
                output = writer.body(size, f"{tool} {path}: {size} tokens of output.", fact_line)
            output = writer.fit(output, size)
            events.append(
                Message(role=Role.user, content=(ToolResultPart(call_id=call_id, content=output),))
            )
            if tool == "write_file":
                file_notes[path] = (index, f"Note: {path} was modified at turn {index}; "
                                    "re-read it before editing it again.")
            if index % _TODO_EVERY == 0 and todo_done < todo_items:
                todo_done += 1
                todo_revision += 1
        reminders = [Reminder("todo", _todo_text(todo_revision, todo_done, todo_items))]
        for path, (start, text) in sorted(file_notes.items()):
            if index - start < _FILE_NOTE_TTL:
                reminders.append(Reminder(f"file-note:{path}", text))
        if index % _TEST_CADENCE == 0:
            reminders.append(Reminder("run-tests", "Reminder: run the test suite before you "
                                      "declare a subtask done."))
        out.append(Turn(index, tuple(events), tuple(reminders), tuple(facts)))
    return Transcript(seed=seed, system_prompt=system_prompt, turns=tuple(out))


def _documents(writer: _Writer, rng: random.Random, size: int, fact_line: str | None) -> str:
    """Two to four retrieved documents that share ``size`` tokens; the fact goes in one of them."""
    count = rng.randint(2, 4)
    share = size // count
    holder = rng.randrange(count)
    docs = [f"search_docs: {count} documents retrieved."]
    for n in range(count):
        line = fact_line if n == holder else None
        docs.append(writer.body(max(share - 2, 20), f"[document {n + 1}] design note {n}.", line))
    return "\n".join(docs)
