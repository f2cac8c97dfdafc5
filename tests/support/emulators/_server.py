"""The loopback server, scripted replies and canonical hashing the three emulators share.

Nothing here knows a provider: a provider emulator subclasses :class:`LoopbackEmulator` and
implements :meth:`LoopbackEmulator.handle`, which gets the parsed JSON body of one request and
returns an :class:`Answer` (status, JSON body or a server-sent event stream).
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

logger = logging.getLogger(__name__)

MAX_BODY_BYTES = 16 * 1024 * 1024
"""A request body larger than this is answered with 413 and not parsed."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call a scripted reply makes: the tool's name and its JSON arguments."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Reply:
    """What the emulated model answers to one request.

    ``text`` (may be empty when there are tool calls) and ``tool_calls`` in that order. Every
    reply also carries the provider's bound reasoning (a thinking block, a reasoning item, a
    thought signature), minted by the emulator.
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    redacted_thinking: bool = False
    """Anthropic only: also send a ``redacted_thinking`` block after the thinking block."""


def text(value: str) -> Reply:
    """A reply that is only text."""
    return Reply(text=value)


def tool_call(name: str, /, **arguments: Any) -> Reply:
    """A reply that calls one tool."""
    return Reply(tool_calls=(ToolCall(name, dict(arguments)),))


@dataclass(frozen=True, slots=True)
class Received:
    """One request the emulator received, and what it answered."""

    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    status: int


@dataclass(frozen=True, slots=True)
class Rejection:
    """A request the emulator refused: where in the request, which rule, the message sent."""

    request: int
    status: int
    path: str
    rule: str
    message: str


@dataclass(frozen=True, slots=True)
class Answer:
    """A status and a JSON body, or (``stream`` set) a list of server-sent events."""

    status: int
    body: Any
    stream: tuple[str, ...] | None = None
    headers: tuple[tuple[str, str], ...] = ()


class RequestRefused(Exception):
    """Raised inside a handler to answer with a provider error; recorded as a rejection."""

    def __init__(self, status: int, path: str, rule: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.path = path
        self.rule = rule
        self.message = message


def canonical(value: Any, drop: frozenset[str] = frozenset()) -> Any:
    """``value`` with the keys in ``drop`` and every ``None`` value left out, recursively."""
    if isinstance(value, dict):
        return {
            str(k): canonical(v, drop) for k, v in value.items() if k not in drop and v is not None
        }
    if isinstance(value, list | tuple):
        return [canonical(v, drop) for v in value]
    return value


def digest(value: Any) -> str:
    """A stable hash of a JSON value (keys sorted, no whitespace)."""
    text_ = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text_.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Chain:
    """The elements of one request in order (path, canonical value) and the running hash after
    each: ``hashes[k]`` covers elements ``0..k``. Two requests agree on a prefix up to element
    ``k`` exactly when their ``hashes[k]`` are equal."""

    paths: tuple[str, ...]
    hashes: tuple[str, ...]

    @classmethod
    def of(cls, elements: Iterable[tuple[str, Any]]) -> Chain:
        """Hash ``elements`` (path, canonical value) in order."""
        paths: list[str] = []
        hashes: list[str] = []
        running = ""
        for path, value in elements:
            running = hashlib.sha256((running + digest(value)).encode()).hexdigest()
            paths.append(path)
            hashes.append(running)
        return cls(tuple(paths), tuple(hashes))

    def before(self, k: int) -> str:
        """The hash of every element before element ``k``."""
        return self.hashes[k - 1] if k > 0 else ""

    def first_difference(self, other: Chain, upto: int) -> str:
        """The path (in ``self``) of the first of the first ``upto`` elements of ``other`` that
        ``self`` does not repeat."""
        for k in range(upto):
            if k >= len(self.hashes) or self.hashes[k] != other.hashes[k]:
                return self.paths[k] if k < len(self.paths) else other.paths[k]
        return "(none)"


def mint(prefix: str) -> str:
    """A fresh opaque token (signature, encrypted content, id)."""
    return prefix + secrets.token_urlsafe(24)


def rough_tokens(value: Any) -> int:
    """A deterministic token estimate for ``usage`` (4 characters a token)."""
    return max(1, len(json.dumps(value, ensure_ascii=False)) // 4)


class LoopbackEmulator:
    """A ThreadingHTTPServer on 127.0.0.1 (a free port) answering with scripted replies.

    Use as a context manager; ``url`` is set while it runs. ``replies`` are consumed one per
    model call; when they run out, ``default`` answers (if given) or the request gets HTTP 500
    and is recorded in ``errors``. At most ``max_requests`` requests are served (then 429).
    """

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        default: Reply | None = None,
        max_requests: int = 1000,
    ) -> None:
        self._replies = list(replies)
        self._default = default
        self._max_requests = max_requests
        self._lock = threading.RLock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.url = ""
        self.requests: list[Received] = []
        """Every request received, in order, with the status it got."""
        self.rejections: list[Rejection] = []
        """Every request refused under a provider rule, in order."""
        self.errors: list[str] = []
        """Problems of the emulator's own (no reply left, unparsable body, unknown path)."""

    # the provider's part -------------------------------------------------------------------
    def handle(self, method: str, path: str, headers: dict[str, str], body: Any) -> Answer:
        """Answer one request (called under the emulator's lock)."""
        raise NotImplementedError

    def client(self, **kwargs: Any) -> Any:
        """The provider's official SDK client pointed at this emulator (no retries)."""
        raise NotImplementedError

    def refusal_body(self, refused: RequestRefused) -> Any:
        """The provider's error body for ``refused``."""
        return {"error": {"message": refused.message}}

    # shared ----------------------------------------------------------------------------------
    def next_reply(self) -> Reply:
        """The next scripted reply (or the default); refuses with 500 when none is left."""
        if self._replies:
            return self._replies.pop(0)
        if self._default is not None:
            return self._default
        raise RequestRefused(500, "", "script", "the emulator has no scripted reply left")

    def add_replies(self, replies: Iterable[Reply]) -> None:
        """Append replies to the script."""
        with self._lock:
            self._replies.extend(replies)

    @property
    def accepted(self) -> list[Received]:
        """The requests answered with a 2xx status."""
        return [r for r in self.requests if 200 <= r.status < 300]

    def _serve(
        self, method: str, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[Answer, Any]:
        with self._lock:
            index = len(self.requests)
            body: Any = None
            if index >= self._max_requests:
                answer = Answer(429, {"error": {"message": "emulator request limit reached"}})
                self.errors.append(f"request {index}: over max_requests")
            else:
                try:
                    body = json.loads(raw) if raw else None
                    answer = self.handle(method, path, headers, body)
                except json.JSONDecodeError as exc:
                    self.errors.append(f"request {index}: body is not JSON ({exc})")
                    answer = Answer(400, {"error": {"message": "body is not JSON"}})
                except RequestRefused as refused:
                    if refused.status == 500:
                        self.errors.append(f"request {index}: {refused.message}")
                    else:
                        self.rejections.append(
                            Rejection(
                                index,
                                refused.status,
                                refused.path,
                                refused.rule,
                                refused.message,
                            )
                        )
                    answer = Answer(refused.status, self.refusal_body(refused))
            self.requests.append(Received(index, method, path, headers, body, answer.status))
            return answer, body

    def __enter__(self) -> Self:
        emulator = self

        class Handler(BaseHTTPRequestHandler):
            timeout = 30

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                if length > MAX_BODY_BYTES:
                    self.send_error(413)
                    return
                raw = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                answer, _ = emulator._serve(self.command, self.path, headers, raw)
                self.send_response(answer.status)
                for name, value in answer.headers:
                    self.send_header(name, value)
                if answer.stream is not None:
                    payload = "".join(answer.stream).encode()
                    self.send_header("content-type", "text/event-stream")
                else:
                    payload = json.dumps(answer.body).encode()
                    self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_DELETE = do_PATCH = do_PUT = do_POST

            def log_message(self, format: str, *args: Any) -> None:
                logger.debug("emulator: " + format, *args)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        host, port = self._server.server_address[:2]
        self.url = f"http://{host!s}:{port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None


def sse(events: Iterable[tuple[str | None, Any]]) -> tuple[str, ...]:
    """Server-sent events from (event name or None, JSON data) pairs."""
    out: list[str] = []
    for name, data in events:
        head = f"event: {name}\n" if name is not None else ""
        out.append(f"{head}data: {json.dumps(data)}\n\n")
    return tuple(out)
