"""The HTTP API (FastAPI): REST under ``/v1/``, ``/healthz``, OpenAPI at ``/docs``, and the MCP
streamable-HTTP endpoint at ``/mcp``. A thin adapter: every route calls one :class:`cortex.Cortex` method.

The routes are one router a domain of the facade (:mod:`~cortex.service.http.memories`, ``reading``, ``admin``,
``sessions``, ``notes``, ``graph``, ``consolidation``) and the server's own (:mod:`~cortex.service.http.service`),
each endpoint at its route in :mod:`cortex.api.operations`; they reach the facade and the server's services
through ``app.state`` (:mod:`~cortex.service.http.routing`).

Errors are translated once (:mod:`~cortex.service.http.errors`): ``InvalidInputError`` and request validation
-> 422, malformed JSON -> 400, ``AuthError`` -> 401, ``PermissionDeniedError`` (an agent token on an admin route)
-> 403, unknown agent or memory (and another agent's, for an agent token) or consolidation run -> 404, memory
disabled, store locked or an undo that would overwrite later changes -> 409. The body is always
``{"error": {"type", "message", "field"}}``.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi_offline import FastAPIOffline

from cortex import notices
from cortex.api.operations import API_PREFIX
from cortex.core import Cortex
from cortex.errors import AuthError, CortexError
from cortex.service.auth import ADMIN, LOCAL, Principal, TokenStore
from cortex.service.guard import RESOURCE_METADATA, Guard, Limits, origin_of
from cortex.service.http import (
    admin,
    consolidation,
    events,
    generic,
    graph,
    memories,
    notes,
    reading,
    service,
    sessions,
)
from cortex.service.http.bodies import (
    BatchBody,
    Block,
    ConsolidateBody,
    EndAnswer,
    EndBody,
    InjectBody,
    Loose,
    NotesExportBody,
    NotesSyncBody,
    PromoteBody,
    PruneBody,
    PruneResult,
    PurgeBody,
    PurgeResult,
    ReadFilters,
    ReviewBody,
    RoundEndBody,
    StartBody,
    StoreBody,
    SupersedeBody,
    Tags,
    TaskBody,
    TokenBody,
    TranscriptBody,
    UndoBody,
    UpdateBody,
    UseBody,
)
from cortex.service.http.errors import ERROR_DETAILS, error_response, handle_errors, status_of
from cortex.service.http.routing import Caller, Cx, scoped
from cortex.service.queue import CaptureQueue
from cortex.service.web import DocsHeaders, add_web
from cortex.service.web.signin import WebSessions, request_authenticator

__all__ = [
    "API_PREFIX", "ERROR_DETAILS", "BatchBody", "Block", "Caller", "ConsolidateBody", "Cx", "EndAnswer", "EndBody",
    "InFlight", "InjectBody", "Loose", "NotesExportBody", "NotesSyncBody", "PromoteBody", "PruneBody", "PruneResult",
    "PurgeBody", "PurgeResult", "ReadFilters", "ReviewBody", "RoundEndBody", "StartBody", "StoreBody",
    "SupersedeBody", "Tags", "TaskBody", "TokenBody", "TranscriptBody", "UndoBody", "UpdateBody", "UseBody",
    "create_app", "error_response", "scoped", "status_of",
]

log = logging.getLogger("cortex")

#: The routers, the server's own first, then the domains in the order they build on each other.
ROUTERS = (service.router, events.router, admin.router, memories.router, reading.router, sessions.router, notes.router,
           graph.router, consolidation.router)


class _WarningsHeader:
    """Every notice of a request (a write the prune will delete, what a prune deleted), whatever the route, in
    the ``Cortex-Warnings`` response header (plain ASGI: streamed MCP answers pass through untouched)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with notices.collect() as notes:
            async def send_noted(message: Any) -> None:
                if message["type"] == "http.response.start" and notes:
                    header = (notices.HEADER.lower().encode(), notices.encode(notes).encode("ascii"))
                    message = {**message, "headers": [*message.get("headers", []), header]}
                await send(message)

            await self.app(scope, receive, send_noted)


class InFlight:
    """How many HTTP requests the app is serving (``app.state.in_flight``)."""

    def __init__(self) -> None:
        self.count = 0


class _InFlight:
    """Counts the HTTP requests in flight, from their start to their answer's end (plain ASGI, in the event
    loop's thread): the consolidation sweep waits while there is one. The event stream is not one: it stays
    open as long as a browser shows the page (:func:`cortex.service.http.events.long_lived`)."""

    def __init__(self, app: Any, counter: InFlight) -> None:
        self.app, self.counter = app, counter

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or events.long_lived(scope):
            await self.app(scope, receive, send)
            return
        self.counter.count += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.counter.count -= 1


def create_app(
    cx: Cortex,
    *,
    tokens: TokenStore | None = None,
    local_token: str | None = None,
    mcp: bool = True,
    allowed_hosts: list[str] | None = None,
    limits: Limits | None = None,
    on_request: Any = None,
    on_startup: Any = None,
    on_shutdown: Any = None,
    watch_notes: bool = False,
    web: bool = True,
) -> FastAPI:
    """The FastAPI app over ``cx``. With ``tokens`` configured (at least one created), every ``/v1`` and
    ``/mcp`` request needs a bearer token; ``local_token`` is an extra admin token (the server's own, shared
    with local clients through the discovery file). ``allowed_hosts`` restricts the Host header (loopback
    names for a loopback bind: a web page cannot reach the API through DNS rebinding). ``limits`` bound the
    request body's size and the time it may take to arrive (:mod:`cortex.service.guard`: checked, with the
    token, before the body is read)."""
    authenticate = _authenticator(tokens, local_token)
    mcp_server = None
    if mcp:
        from cortex.service.mcp import build_mcp

        mcp_server = build_mcp(lambda: cx, lambda request: authenticate(
            request.headers.get("authorization") if request is not None else None))
        mcp_app = mcp_server.streamable_http_app(
            streamable_http_path="/mcp", stateless_http=True, json_response=True,
            transport_security=_transport_security(),
        )
    # Swagger UI and ReDoc served from the fastapi-offline package, not a CDN: /docs works offline
    app = FastAPIOffline(
        title="Cortex", version="0.1.0", lifespan=_lifespan(mcp_server, on_startup, on_shutdown),
        description="Persistent memory for AI agents. REST under /v1, MCP (streamable HTTP) at /mcp.",
    )
    app.state.cx = cx
    app.state.authenticate = authenticate
    app.state.web_sessions = WebSessions()
    app.state.authenticate_request = request_authenticator(authenticate, app.state.web_sessions)
    app.state.tokens = tokens
    app.state.local_token = local_token
    #: whether the server is stopping (``cortex serve`` sets it): open event streams end then
    app.state.stopping = lambda: False
    #: the open event streams, per token and in all (``cortex serve`` bounds them by its --max-concurrency)
    app.state.stream_slots = events.StreamSlots()
    _start_services(app, cx, watch_notes)
    handle_errors(app)
    for router in ROUTERS:
        # the routers' own routes, not include_router: recent FastAPI nests an included router, and app.routes
        # is to list every route (the surfaces' test reads it); no route depends on the app it is in
        app.router.routes.extend(router.routes)
    generic.add_routes(app)  # an operation of the table no router serves: built from its row and its method
    _slashes_in_last_segment(app)
    _resource_metadata(app, mcp_server is not None)
    if mcp_server is not None:
        app.router.routes.extend(mcp_app.routes)  # exactly /mcp; any other path is a JSON 404 of this app
    if web:
        add_web(app)  # the memory browser at / (its screens' paths and /static/), after every API route
    app.add_middleware(DocsHeaders)  # /docs and /redoc: a policy that lets their own inline scripts run, no other
    app.add_middleware(_InFlight, counter=app.state.in_flight)
    app.add_middleware(_WarningsHeader)
    # middlewares run outermost-last-added: the host check, then the guard, before any route or body parsing
    app.add_middleware(Guard, authenticate=app.state.authenticate_request, limits=limits or Limits.from_env(), on_request=on_request)
    if allowed_hosts is not None:
        from starlette.middleware.trustedhost import TrustedHostMiddleware

        app.add_middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts)
    return app


#: Path parameters that are free text and may hold "/" (a session id is the harness's own), when they end their
#: route's path: they take the rest of the path.
FREE_TEXT_SEGMENTS = ("session",)


def _resource_metadata(app: FastAPI, mcp: bool) -> None:
    """OAuth 2.0 protected-resource metadata (RFC 9728), which a 401's ``WWW-Authenticate`` points to: the server's
    API, and with ``mcp`` the MCP endpoint at the path-suffixed address. Cortex issues its bearer tokens itself
    (``cortex token create``): no authorization server is named, and a client sends the token it was given."""

    def document(request: Request, path: str) -> JSONResponse:
        origin = origin_of(request.scope)
        body = {"resource": origin + path, "bearer_methods_supported": ["header"],
                "resource_name": "Cortex MCP server" if path else "Cortex API"}
        return JSONResponse(body, headers={"Cache-Control": "max-age=3600"})

    def server(request: Request) -> JSONResponse:
        return document(request, "")

    def mcp_endpoint(request: Request) -> JSONResponse:
        return document(request, "/mcp")

    app.add_api_route(RESOURCE_METADATA, server, methods=["GET"], include_in_schema=False)
    if mcp:
        app.add_api_route(RESOURCE_METADATA + "/mcp", mcp_endpoint, methods=["GET"], include_in_schema=False)


def _slashes_in_last_segment(app: FastAPI) -> None:
    """Let each of :data:`FREE_TEXT_SEGMENTS` that ends a route hold "/": the server decodes ``%2F`` before it
    routes, so ``/sessions/ci%2Fjob-7`` arrives as two segments and found no route (404). The route's path (in
    OpenAPI, and what the tests compare with the table) stays as it is; only its matching takes the rest."""
    from starlette.routing import Route

    for route in app.router.routes:
        if not isinstance(route, Route):
            continue
        for name in FREE_TEXT_SEGMENTS:
            one_segment = f"(?P<{name}>[^/]+)$"
            if route.path.endswith(f"/{{{name}}}") and route.path_regex.pattern.endswith(one_segment):
                route.path_regex = re.compile(route.path_regex.pattern[:-len(one_segment)] + f"(?P<{name}>.+)$")


def _authenticator(tokens: TokenStore | None, local_token: str | None) -> Callable[[str | None], Principal]:
    """The caller of an ``Authorization`` header: the server's own token, a token of ``tokens``, or none."""

    def authenticate(authorization: str | None) -> Principal:
        token = None
        if authorization:
            scheme, _, value = authorization.partition(" ")
            if scheme.lower() != "bearer" or not value.strip():
                raise AuthError("the Authorization header must be 'Bearer <token>'")
            token = value.strip()
        if token is None:
            # A server (local_token set) always wants a token: on loopback, a web page could otherwise send
            # simple cross-origin POSTs (touch, prune) that need no CORS preflight. Local clients read the
            # server's token from the discovery file. An app embedded without tokens is open.
            if local_token is not None or (tokens is not None and tokens.configured()):
                raise AuthError("missing bearer token (Authorization: Bearer <token>)")
            return ADMIN
        if local_token is not None and hmac.compare_digest(token.encode(), local_token.encode()):
            return LOCAL
        if tokens is None:
            raise AuthError("invalid bearer token")
        return tokens.verify(token)

    return authenticate


def _lifespan(mcp_server: Any, on_startup: Any, on_shutdown: Any) -> Callable[[FastAPI], Any]:
    """The app's life: the MCP session manager runs while it serves; at its end the sweep, the capture queue and
    the notes watcher stop."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            if mcp_server is not None:
                await stack.enter_async_context(mcp_server.session_manager.run())
            if on_startup is not None:
                on_startup()
            try:
                yield
            finally:
                if app.state.sweeper is not None:
                    app.state.sweeper.close()  # the scope being consolidated is finished, then it stops
                app.state.capture_queue.close()
                if app.state.notes_watcher is not None:
                    app.state.notes_watcher.close()
                if on_shutdown is not None:
                    on_shutdown()

    return lifespan


def _start_services(app: FastAPI, cx: Cortex, watch_notes: bool) -> None:
    """The server's services on ``app.state``: the capture queue, the notes watcher (``watch_notes``), the
    count of requests in flight and the consolidation sweep (when configured)."""
    queue = app.state.capture_queue = CaptureQueue(cx)
    app.state.notes_watcher = None
    if watch_notes:  # the process that owns the store syncs notes as they change
        from cortex.service.watch import NotesWatcher

        try:
            app.state.notes_watcher = NotesWatcher(cx, cx.project_root)
            app.state.notes_watcher.start()
        except Exception as exc:  # an unwatchable directory: the server still serves, sync by hand works
            log.warning("notes are not watched: %s: %s", type(exc).__name__, exc)
    # requests in flight (the _InFlight middleware counts them): the consolidation sweep waits for none
    in_flight = app.state.in_flight = InFlight()
    app.state.sweeper = None
    try:
        every = cx.consolidation.every
    except CortexError as exc:  # a bad setting: the server still serves, without the sweep
        log.warning("the consolidation sweep is off: %s", exc)
        every = None
    if every is not None:  # off by default (CORTEX_CONSOLIDATE_EVERY, [consolidation] every)
        from cortex.service.sweep import Sweeper

        def serving() -> bool:
            status = queue.status()
            return in_flight.count > 0 or bool(status["running"] or status["waiting"])

        app.state.sweeper = Sweeper(cx, every, busy=serving)
        app.state.sweeper.start()


def _transport_security() -> Any:
    # The Host check is the app's (TrustedHostMiddleware, for every route); the SDK's own guard would only
    # cover /mcp and rejects Host headers without a port.
    from mcp.server.transport_security import TransportSecuritySettings

    return TransportSecuritySettings(enable_dns_rebinding_protection=False)
