"""A tiny HTTP server on 127.0.0.1 that records request bodies and answers with canned JSON.

Used by the end-to-end tests: a real SDK client is pointed at ``server.base_url`` and the test
reads back exactly what the SDK sent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Captured:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class CaptureServer:
    """Answers every request with the next canned reply (status, JSON body) in order.

    A reply body that is a ``str`` is sent as ``text/event-stream`` (a recorded SSE stream)."""

    replies: list[tuple[int, Any]]
    captured: list[Captured] = field(default_factory=list)
    base_url: str = ""


@contextmanager
def capture_server(replies: list[tuple[int, Any]]) -> Iterator[CaptureServer]:
    """Start a server on a free loopback port for the duration of the ``with`` block."""
    state = CaptureServer(replies=list(replies))
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            with lock:
                state.captured.append(
                    Captured(
                        self.command, self.path, {k.lower(): v for k, v in self.headers.items()},
                        body,
                    )
                )
                status, reply = state.replies.pop(0) if state.replies else (500, {"error": "none"})
            # a str reply is a server-sent event stream, sent as it is
            streamed = isinstance(reply, str)
            payload = str(reply).encode() if streamed else json.dumps(reply).encode()
            self.send_response(status)
            kind = "text/event-stream" if streamed else "application/json"
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_PATCH = do_DELETE = do_GET = do_POST

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    host, port = server.server_address[:2]
    state.base_url = f"http://{host!s}:{port}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
