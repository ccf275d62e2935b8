"""What the stand-in servers of the memory providers share: a stdlib HTTP server on loopback (an ephemeral port, in a
thread) whose handler records every request it receives (:class:`Request`) before it answers."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol, TypeVar
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    """One request a stand-in received."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any = None


class State(Protocol):
    """What a stand-in's state has: its URL, the requests it received, the lock over them, and an event set when
    it stops (which releases an answer held back)."""

    url: str
    requests: list[Request]
    lock: threading.Lock
    stopping: threading.Event


_S = TypeVar("_S", bound=State)


class Handler(BaseHTTPRequestHandler):
    """A request handler: subclasses implement :meth:`_handle` and read the request with :meth:`_receive`."""

    server: Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def _handle(self, method: str) -> None:
        raise NotImplementedError

    def _receive(self, method: str) -> tuple[str, dict[str, str], Any]:
        """The request's path, query and body (parsed JSON, else text), recorded in the stand-in's requests."""
        split = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(min(length, 64 * 1024 * 1024)) if length else b""
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", errors="replace")
        state = self.server.standin
        with state.lock:
            state.requests.append(Request(method, split.path, query, dict(self.headers.items()), body))
        return split.path, query, body

    def _send(self, status: int, payload: Any, *, raw: bytes | None = None, kind: str = "application/json") -> None:
        data = raw if raw is not None else json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass


class Server(ThreadingHTTPServer):
    daemon_threads = True
    standin: Any

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-answer (one that stops reading a huge body) is not an error here."""


@contextmanager
def run(standin: _S, handler: type[Handler], name: str) -> Iterator[_S]:
    """Serve ``standin`` with ``handler`` on 127.0.0.1 (an ephemeral port) for the ``with`` block."""
    server = Server(("127.0.0.1", 0), handler)
    server.standin = standin
    standin.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, name=name, daemon=True)
    thread.start()
    try:
        yield standin
    finally:
        standin.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(10)
