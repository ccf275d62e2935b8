"""What the stand-in models of the real agents' tests share (:mod:`tests.anthropic_standin`,
:mod:`tests.responses_standin`, :mod:`tests.gemini_standin`): an HTTP server on 127.0.0.1 and a free port, answering
from a thread while open, keeping every request's body in ``requests`` and path in ``paths``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


def send(handler: BaseHTTPRequestHandler, data: bytes, kind: str, code: int = 200) -> None:
    """Answer a request with ``data`` of media type ``kind`` (JSON, or a whole SSE stream at once)."""
    handler.send_response(code)
    handler.send_header("Content-Type", kind)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


class ModelStandIn:
    """The server (``with`` starts it); a subclass gives its protocol's :meth:`handler` and the :data:`PATH` its
    clients' base URL ends with."""

    #: what :attr:`url` adds to ``http://127.0.0.1:PORT``
    PATH = ""

    def __init__(self, answer: Callable[[dict[str, Any]], Any]) -> None:
        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        """The request handler class of this protocol, bound to this stand-in."""
        raise NotImplementedError

    @property
    def url(self) -> str:
        """The base URL the agent is given: ``http://127.0.0.1:PORT`` and :data:`PATH`."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}{self.PATH}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._thread.join()
        self._server.server_close()
