"""The HTTP service's front door: an ASGI middleware in front of every route that checks, before any byte of a
request body is read, that the caller has a valid token, that the body is not larger than allowed, and that it
arrives in time.

Why here and not in the routes: FastAPI reads and parses a JSON body before it resolves the route's
dependencies (where the token used to be checked), so a 400 MB body without a token was read, parsed and held
in memory before the 401. This guard answers 401 from the headers alone, 413 from ``Content-Length`` (or as
soon as a chunked body passes the limit), and 408 when the body does not arrive within the time-out.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from cortex import caller, provenance
from cortex.errors import AuthError, CortexError, TokenFileError, TooBusyError

log = logging.getLogger("cortex.serve")

MAX_BODY_ENV = "CORTEX_MAX_BODY_BYTES"
BODY_TIMEOUT_ENV = "CORTEX_BODY_TIMEOUT"
HEADER_TIMEOUT_ENV = "CORTEX_HEADER_TIMEOUT"
#: A batch of 10,000 memories of 1 KB is ~11 MB of JSON.
DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024
DEFAULT_BODY_TIMEOUT = 30.0
#: Seconds a connection may take to send a request's line and headers, from its opening or its first byte
DEFAULT_HEADER_TIMEOUT = 10.0
#: Paths that need a token; everything else (/healthz, /docs, /openapi.json, the memory browser's page) is public.
PROTECTED = ("/v1", "/mcp")
#: Protected paths that take no token: signing in to the browser (the token is in the body, checked by the route).
SIGN_IN = "/v1/session"
#: Where the OAuth 2.0 protected-resource metadata (RFC 9728) is served: for the whole server, and suffixed with
#: a protected path (``/.well-known/oauth-protected-resource/mcp``) for the resource at that path.
RESOURCE_METADATA = "/.well-known/oauth-protected-resource"


_HOST = re.compile(r"[A-Za-z0-9.\-]{1,253}(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]{2,45}\](:[0-9]{1,5})?")


def origin_of(scope: Any) -> str:
    """The scheme, host and port a request was sent to (``http://127.0.0.1:8080``), as the client named them."""
    headers = dict(scope.get("headers") or ())
    host = headers.get(b"host", b"").decode("latin-1")
    if not _HOST.fullmatch(host):  # never echo what is not a host name or address into a header
        server = scope.get("server") or ("127.0.0.1", 80)
        host = f"{server[0]}:{server[1]}"
    return f"{scope.get('scheme', 'http')}://{host}"


def metadata_url(scope: Any) -> str:
    """The protected-resource metadata that describes the resource ``scope``'s request was for: the MCP
    endpoint's for ``/mcp``, the server's otherwise."""
    path = scope.get("path", "")
    suffix = "/mcp" if path == "/mcp" or path.startswith("/mcp/") else ""
    return origin_of(scope) + RESOURCE_METADATA + suffix


def challenge(scope: Any) -> str:
    """The ``WWW-Authenticate`` value of a 401 (RFC 6750 with RFC 9728's ``resource_metadata``)."""
    return f'Bearer resource_metadata="{metadata_url(scope)}"'


@dataclass(frozen=True)
class Limits:
    """How much a request may send, and how long it may take to send it (its headers: ``cortex serve``'s
    connections, :func:`cortex.service.server.serve`; its body: :class:`Guard`)."""

    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    header_timeout: float = DEFAULT_HEADER_TIMEOUT

    @classmethod
    def from_env(cls, max_body_bytes: int | None = None, body_timeout: float | None = None) -> "Limits":
        """Explicit values, else ``$CORTEX_MAX_BODY_BYTES`` / ``$CORTEX_BODY_TIMEOUT`` / ``$CORTEX_HEADER_TIMEOUT``,
        else the defaults."""
        env = os.environ.get
        if max_body_bytes is None:
            max_body_bytes = int(env(MAX_BODY_ENV) or DEFAULT_MAX_BODY_BYTES)
        if body_timeout is None:
            body_timeout = float(env(BODY_TIMEOUT_ENV) or DEFAULT_BODY_TIMEOUT)
        header_timeout = float(env(HEADER_TIMEOUT_ENV) or DEFAULT_HEADER_TIMEOUT)
        return cls(max_body_bytes=max_body_bytes, body_timeout=body_timeout, header_timeout=header_timeout)


#: SPARQL queries one token may run at once (``CORTEX_SPARQL_PER_TOKEN``).
DEFAULT_QUERIES_PER_TOKEN = 2
QUERIES_PER_TOKEN_ENV = "CORTEX_SPARQL_PER_TOKEN"


class QuerySlots:
    """How many SPARQL queries each caller runs at once, over HTTP and MCP together: beyond the bound a query is
    refused at once (:class:`TooBusyError`, HTTP 429) rather than queued behind the caller's own expensive ones."""

    def __init__(self, per_caller: int | None = None) -> None:
        self._per_caller = per_caller
        self._running: dict[str, int] = {}
        self._lock = threading.Lock()

    def bound(self) -> int:
        if self._per_caller is not None:
            return self._per_caller
        try:
            return max(1, int(os.environ.get(QUERIES_PER_TOKEN_ENV) or DEFAULT_QUERIES_PER_TOKEN))
        except ValueError:
            return DEFAULT_QUERIES_PER_TOKEN

    @contextmanager
    def hold(self, caller: Any) -> Iterator[None]:
        """One slot of ``caller`` (a :class:`~cortex.service.auth.Principal`: its token, else its agent) while the
        block runs."""
        key = caller.token or (f"agent:{caller.agent}" if caller.agent else "admin")
        bound = self.bound()
        with self._lock:
            if self._running.get(key, 0) >= bound:
                raise TooBusyError(f"this token already runs {bound} SPARQL quer{'y' if bound == 1 else 'ies'}: "
                                   f"wait for one to end (at most {bound} at once, {QUERIES_PER_TOKEN_ENV})")
            self._running[key] = self._running.get(key, 0) + 1
        try:
            yield
        finally:
            with self._lock:
                self._running[key] -= 1
                if not self._running[key]:
                    del self._running[key]


#: The slots of this process's HTTP and MCP surfaces.
SPARQL_SLOTS = QuerySlots()


class _TooLarge(BaseException):  # not Exception: the framework's body parser turns those into a 400
    pass


class _TooSlow(BaseException):
    pass


async def send_error(send: Any, status: int, kind: str, message: str, scope: Any = None) -> None:
    """Send a complete ``{"error": ...}`` response (the service's error shape); a 401 to ``scope``'s request
    names where its resource's metadata is."""
    body = json.dumps({"error": {"type": kind, "message": message, "field": None, "reason": None}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", challenge(scope).encode("latin-1") if scope else b"Bearer"))
    headers.append((b"connection", b"close"))  # an unread body must not be taken for the next request
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


#: The most bytes a request's headers may hold (answered 431 beyond). uvicorn's h11 holds its incomplete headers
#: to this bound, but a request whose line and headers arrive in one read (100 KB over loopback) bypasses it.
MAX_HEADER_BYTES = 16 * 1024


class Guard:
    """ASGI middleware: token from the headers first (``authenticate(headers)``: the bearer token, or the
    browser's session cookie with its key), then a bounded, timed body."""

    def __init__(self, app: Any, authenticate: Callable[[Any], Any], limits: Limits,
                 on_request: Callable[[], None] | None = None) -> None:
        self.app = app
        self.authenticate = authenticate
        self.limits = limits
        self.on_request = on_request

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.on_request is not None:
            self.on_request()
        if sum(len(k) + len(v) + 4 for k, v in scope["headers"]) > MAX_HEADER_BYTES:
            await send_error(send, 431, "HeadersTooLarge", f"the request's headers are over {MAX_HEADER_BYTES} bytes")
            return
        headers = dict(scope["headers"])
        path = scope.get("path", "")
        who = None  # the agent the verified token names (cortex.caller): never what a header says otherwise
        if path.startswith(PROTECTED) and not (path == SIGN_IN and scope.get("method") == "POST"):
            try:
                who = self.authenticate(headers).agent
            except TokenFileError as exc:
                await send_error(send, 503, "TokenFileError", str(exc))
                return
            except AuthError as exc:
                await send_error(send, 401, "AuthError", str(exc), scope)
                return
            except CortexError as exc:
                await send_error(send, 500, type(exc).__name__, str(exc))
                return
        limit = self.limits.max_body_bytes
        declared = headers.get(b"content-length")
        if declared is not None:
            try:
                size = int(declared)
            except ValueError:
                await send_error(send, 400, "InvalidRequest", "Content-Length is not a number")
                return
            if size > limit:
                await send_error(send, 413, "PayloadTooLarge",
                                 f"request body of {size} bytes is over the limit of {limit} bytes "
                                 f"(cortex serve --max-body-bytes, ${MAX_BODY_ENV})")
                return
        received = 0
        started = body_done = False
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.limits.body_timeout

        async def bounded_receive() -> Any:
            nonlocal received, body_done
            if body_done:  # the app waits for a disconnect now: no time limit on that
                return await receive()
            remaining = deadline - loop.time()
            try:
                message = await asyncio.wait_for(receive(), timeout=max(remaining, 0.001))
            except asyncio.TimeoutError:
                raise _TooSlow() from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise _TooLarge()
                body_done = not message.get("more_body", False)
            return message

        async def tracking_send(message: Any) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        # the request's activity (PROV-O): what a hook, the MCP bridge or the CLI says it is, else plain HTTP
        wanted = {name.lower().encode(): name for name in provenance.HEADERS.values()}
        said = {wanted[k]: v.decode("latin-1") for k, v in headers.items() if k in wanted}
        try:
            with provenance.activity(provenance.Activity.from_headers(said, "http")), caller.acting(who):
                await self.app(scope, bounded_receive, tracking_send)
        except _TooLarge:
            if not started:
                await send_error(send, 413, "PayloadTooLarge",
                                 f"request body is over the limit of {limit} bytes "
                                 f"(cortex serve --max-body-bytes, ${MAX_BODY_ENV})")
        except _TooSlow:
            if not started:
                await send_error(send, 408, "RequestTimeout",
                                 f"the request body did not arrive within {self.limits.body_timeout:g} s")
