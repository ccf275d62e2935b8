"""The HTTP API (FastAPI): REST under ``/v1/``, ``/healthz``, OpenAPI at ``/docs``, and the MCP
streamable-HTTP endpoint at ``/mcp``. A thin adapter: every route calls one :class:`cortex.Cortex` method.

Errors are translated once, here: ``InvalidInputError`` and request validation -> 422, malformed JSON -> 400,
``AuthError`` -> 401, ``PermissionDeniedError`` (an agent token on an admin route) -> 403, unknown agent or memory
(and another agent's, for an agent token) or consolidation run -> 404, memory disabled, store locked or an undo
that would overwrite later changes -> 409. The body is always ``{"error": {"type", "message", "field"}}``.
"""

from __future__ import annotations

import contextlib
import logging
import hmac
import io
import json
import os
from pathlib import Path
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal
from urllib.parse import parse_qs

from fastapi import Body, Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi_offline import FastAPIOffline
from pydantic import BaseModel, ConfigDict, Field, StrictBool
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from cortex import config, notices, sparql, transfer
from cortex.consolidation.report import ConsolidationReport, ReviewItem, RunInfo, UndoReport
from cortex.core import Cortex
from cortex.errors import (
    AgentNotFoundError,
    BrokenAgentError,
    AuthError,
    CortexError,
    InvalidInputError,
    MemoryDisabledError,
    MemoryNotFoundError,
    PermissionDeniedError,
    QueryTimeoutError,
    RunNotFoundError,
    StoreLockedError,
    TokenFileError,
    TooBusyError,
    UndoConflictError,
    VersionConflictError,
)
from cortex.model import CaptureReport, ImportReport, IndexStatus, NotesReport, Memory, Page, Provenance, Pruned, SearchResult, WrittenMemory
from cortex.rerank import Reranking
from cortex.service.auth import ADMIN, LOCAL, Principal, TokenStore, token_id
from cortex.service.guard import SPARQL_SLOTS, Guard, Limits
from cortex.validation import Number

API_PREFIX = "/v1"
#: Attributes of Cortex errors sent in ``error.details`` (and set again on the exception by RemoteCortex).
ERROR_DETAILS = ("agent", "memory_id", "expected", "actual")

log = logging.getLogger("cortex")


class _Body(BaseModel):
    """A request body: unknown fields are an error (422 naming the field), never silently dropped."""

    model_config = ConfigDict(extra="forbid")


#: A JSON value Cortex validates itself (so a bad one is a field error that names the problem).
Loose = Any


class StoreBody(_Body):
    content: str = Field(description="What to remember (at most 64 KiB of UTF-8)")
    type: str = Field(config.DEFAULT_TYPE, description="pattern, convention, insight or decision")
    project: str = Field(config.DEFAULT_PROJECT, description="Project the memory belongs to")
    confidence: Number = Field(config.DEFAULT_CONFIDENCE, description="How sure the agent is, 0..1")
    source: str = Field("manual", description="manual, agent_end, task_completion, session_summary, file_index, "
                                              "import or injected: sets the default time to live")
    ttl: str | None = Field(None, description="Time to live, e.g. 12h or 7d, or 'never' (default: the source's)")
    tags: Loose = Field(default_factory=list, description="Lowercase slugs, at most 32")
    metadata: Loose = Field(None, description="A JSON object, at most 8 KiB")
    scope: str = Field("agent", description="agent (its own), team:NAME (a team it is in) or swarm (leads)")


class BatchBody(_Body):
    entries: list[Loose] = Field(description="Entries as for store, plus usage_count, created_at, last_used_at, "
                                             "expires_at and valid_from (imports keep them)")


class UpdateBody(_Body):
    content: str | None = None
    type: str | None = None
    project: str | None = None
    confidence: Number | None = None
    tags: Loose = Field(None, description="The new tags ([] clears them)")
    metadata: Loose = Field(None, description="The new metadata ({} clears it)")
    expected_version: int | None = Field(None, description="Change only if the memory is still at this version "
                                                           "(else 409 VersionConflictError)")


class SupersedeBody(_Body):
    content: str | None = Field(None, description="The new memory's content (or give by)")
    by: str | None = Field(None, description="The id of an existing memory that replaces this one")
    reason: str | None = None
    type: str | None = None
    project: str | None = None
    confidence: Number | None = None
    source: str | None = None
    ttl: str | None = None
    tags: Loose = None
    metadata: Loose = None
    valid_from: str | None = Field(None, description="When the new memory became valid (ISO 8601; default now)")


class InjectBody(_Body):
    content: str
    category: str = Field(description="mistake-pattern, best-practice, codebase-knowledge or preference")
    team: str | None = Field(None, description="Into this team's memory (one the lead leads)")
    to: str | None = Field(None, description="Into this worker's own memory")
    confidence: Number = 0.9
    project: str = config.DEFAULT_PROJECT
    tags: Loose = Field(default_factory=list)


class PurgeBody(_Body):
    agent: str | None = Field(default=None, description="Only this agent's own memories (default: every scope)")


class PurgeResult(BaseModel):
    count: int = Field(description="How many expired memories were deleted")


class PruneBody(_Body):
    min_confidence: Number = config.DEFAULT_MIN_CONFIDENCE
    max_age: str | None = Field(default=None, description="e.g. 30d, 12h, 90m")
    dry_run: bool = False


class StartBody(_Body):
    task: str | None = None
    project: str | None = None
    limit: int | None = None
    max_chars: int | None = None
    tags: Loose = None
    scope: str | None = None
    #: false: the same session's block shown again (resumed, compacted), not a new use
    touch: StrictBool = True


class EndBody(_Body):
    output: str
    project: str | None = None


class TranscriptBody(_Body):
    path: str = Field(description="The transcript's path on the server's machine")
    format: Literal["claude", "codex", "cursor", "gemini", "messages", "text"] | None = Field(
        None, description="Default: detected")
    project: str | None = None
    markers: bool = Field(True, description="Capture marker lines (LEARNED: ...)")
    summary: bool = Field(True, description="With a language model: a session_summary memory")
    tasks: bool = Field(True, description="Record the outcomes of the subagent calls it shows")
    wait: bool = Field(True, description="false: queue it in the server and answer 202 at once")


class NotesSyncBody(_Body):
    agent: str | None = Field(None, description="Whose notes (default: every agent's; an agent token: its own)")
    file: str | None = Field(None, description="Only this file (in a notes directory)")


class NotesExportBody(_Body):
    directory: str = Field(description="Where to write the files (a notes directory of the agent, to sync edits)")


class PromoteBody(_Body):
    file: str = Field(description="A file of the agent's notes directory")
    team: str | None = Field(None, description="The team to share it with")
    swarm: bool = Field(False, description="Share it with the swarm (a lead)")


class UseBody(_Body):
    output: str = Field(description="What the agent wrote and did after its start (text, tool calls)")
    session: str | None = Field(None, description="The session of the start (default: the request's)")


class TaskBody(_Body):
    task: str = Field(description="What the task was")
    output: str = Field("", description="What the agent wrote at its end (kept bounded)")
    status: Literal["ok", "failed"] = Field("ok", description="How it ended")
    project: str | None = None


class ConsolidateBody(_Body):
    agent: str | None = Field(default=None, description="An agent's own memory (an agent token: its own, the "
                                                        "default)")
    team: str | None = Field(default=None, description="A team's memory (an admin token, or a lead of the team)")
    swarm: bool = Field(default=False, description="The swarm's memory (an admin token, or a lead)")
    dry_run: bool = Field(default=False, description="Say exactly what the run would do; write nothing")


class UndoBody(_Body):
    run: str = Field(default="last", description="The run's id, as consolidate answered it (e.g. "
                                                 "20261124T190501-3fa9c2), or 'last': the latest run not undone of "
                                                 "the scope named (else of any)")
    agent: str | None = Field(default=None, description="Of this agent's own memory (an agent token: its own, the "
                                                        "default)")
    team: str | None = Field(default=None, description="Of this team's memory (an admin token, or a lead of the "
                                                       "team)")
    swarm: bool = Field(default=False, description="Of the swarm's memory (an admin token, or a lead)")
    force: bool = Field(default=False, description="Undo even when a memory was changed since the run (those "
                                                   "changes are lost)")


class ReviewBody(_Body):
    keep: str = Field(description="The memory the contradiction keeps, as the review lists it")
    supersede: str = Field(description="The memory the contradiction supersedes, as the review lists it")
    accept: bool = Field(default=True, description="true: supersede it by keep; false: keep both, and take the pair "
                                                   "off the list")
    agent: str | None = Field(default=None, description="In this agent's own memory (an agent token: its own, the "
                                                        "default)")
    team: str | None = Field(default=None, description="In this team's memory (an admin token, or a lead of the "
                                                       "team)")
    swarm: bool = Field(default=False, description="In the swarm's memory (an admin token, or a lead)")


class RoundEndBody(_Body):
    dry_run: bool = Field(default=False, description="Say exactly what the round end would do; write nothing")
    wait: bool = Field(default=True, description="false: queue it in the server and answer 202 at once (what a "
                                                 "lead's Stop hook does)")


class EndAnswer(BaseModel):
    """``/end?pruned=true``: what was captured, and what the prune at agent end deleted."""

    memories: list[Memory]
    pruned: list[Pruned]
    redacted: dict[str, int] = Field(default_factory=dict, description="Secrets replaced by placeholders before "
                                     "storing, by rule (e.g. aws-access-key)")


class TokenBody(_Body):
    agent: str | None = Field(default=None, description="The agent the token may use; none: an admin token")
    force: bool = Field(default=False, description="Create it even for an agent that is not declared")


class Block(BaseModel):
    block: str = Field(description="The <agent-memory> block ('' when there is nothing to show)")


class PruneResult(BaseModel):
    count: int = Field(description="How many memories were deleted (with dry_run: would be)")
    ids: list[str]
    dry_run: bool


def _printable(text: str | None) -> str | None:
    """``text`` with anything that is not valid Unicode (a lone surrogate) escaped, so the error can be sent."""
    return None if text is None else text.encode("utf-8", "backslashreplace").decode("utf-8")


def _error(status: int, exc: Exception, kind: str | None = None, field: str | None = None,
           reason: str | None = None) -> JSONResponse:
    reason = reason if reason is not None else getattr(exc, "reason", None)
    body: dict[str, Any] = {"error": {"type": kind or type(exc).__name__, "message": _printable(str(exc)),
                                      "field": _printable(field), "reason": _printable(reason)}}
    details = {name: getattr(exc, name) for name in ERROR_DETAILS if isinstance(getattr(exc, name, None), (str, int))}
    if details:  # what a client needs to act (e.g. retry from the current version), as the exception has it
        body["error"]["details"] = details
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse(body, status_code=status, headers=headers)


def _principal(request: Request) -> Principal:
    principal: Principal = request.app.state.authenticate(request.headers.get("authorization"))
    return principal


#: The caller of a route, from its bearer token.
Caller = Annotated[Principal, Depends(_principal)]


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
    loop's thread): the consolidation sweep waits while there is one."""

    def __init__(self, app: Any, counter: InFlight) -> None:
        self.app, self.counter = app, counter

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.counter.count += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.counter.count -= 1


def status_of(exc: CortexError) -> int:
    """The HTTP status for a Cortex error."""
    if isinstance(exc, InvalidInputError):
        return 422
    if isinstance(exc, TokenFileError):
        return 503
    if isinstance(exc, AuthError):
        return 401
    if isinstance(exc, PermissionDeniedError):
        return 403
    if isinstance(exc, (AgentNotFoundError, MemoryNotFoundError, RunNotFoundError)):
        return 404
    if isinstance(exc, (MemoryDisabledError, StoreLockedError, VersionConflictError, BrokenAgentError,
                        UndoConflictError)):
        return 409
    if isinstance(exc, QueryTimeoutError):
        return 503
    if isinstance(exc, TooBusyError):
        return 429
    return 500


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
) -> FastAPI:
    """The FastAPI app over ``cx``. With ``tokens`` configured (at least one created), every ``/v1`` and
    ``/mcp`` request needs a bearer token; ``local_token`` is an extra admin token (the server's own, shared
    with local clients through the discovery file). ``allowed_hosts`` restricts the Host header (loopback
    names for a loopback bind: a web page cannot reach the API through DNS rebinding). ``limits`` bound the
    request body's size and the time it may take to arrive (:mod:`cortex.service.guard`: checked, with the
    token, before the body is read)."""

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

    mcp_server = None
    if mcp:
        from cortex.service.mcp import build_mcp

        mcp_server = build_mcp(lambda: cx, lambda request: authenticate(
            request.headers.get("authorization") if request is not None else None))
        mcp_app = mcp_server.streamable_http_app(
            streamable_http_path="/mcp", stateless_http=True, json_response=True,
            transport_security=_transport_security(),
        )

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

    # Swagger UI and ReDoc served from the fastapi-offline package, not a CDN: /docs works offline
    app = FastAPIOffline(
        title="Cortex", version="0.1.0", lifespan=lifespan,
        description="Persistent memory for AI agents. REST under /v1, MCP (streamable HTTP) at /mcp.",
    )
    app.state.authenticate = authenticate
    from cortex.service.queue import CaptureQueue

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

    @app.get(f"{API_PREFIX}/consolidate/sweep", tags=["consolidation"])
    def consolidation_sweep(caller: Caller) -> dict[str, Any]:
        """The periodic consolidation sweep (off unless CORTEX_CONSOLIDATE_EVERY or ``[consolidation] every``
        is set): its interval, its last sweep and failure, sweeps run and put off by the server's work, and the
        scope the next sweep starts with."""
        from cortex.service.sweep import OFF

        return app.state.sweeper.status() if app.state.sweeper is not None else dict(OFF)

    @app.exception_handler(CortexError)
    async def cortex_error(request: Request, exc: CortexError) -> JSONResponse:
        return _error(status_of(exc), exc, field=getattr(exc, "field", None))

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errors):
            return _error(400, ValueError("request body is not valid JSON"), "InvalidJSON")
        first = errors[0] if errors else {}
        loc = ".".join(str(p) for p in first.get("loc", ())[1:]) or (
            "body" if first.get("loc", ())[:1] == ("body",) else None)
        reason = str(first.get("msg", "invalid request"))
        return _error(422, ValueError(f"{loc}: {reason}" if loc else reason), "InvalidInputError", loc, reason)

    def scoped(caller: Principal, agent: str) -> str:
        if not caller.may_use(agent):
            raise AgentNotFoundError(agent, token=True)  # 404, never a hint that the agent exists
        return agent

    @app.get("/healthz", tags=["service"])
    def healthz() -> dict[str, Any]:
        return {"status": "ok", "pid": os.getpid(), "store": str(cx.store_path) if cx.store_path else None}

    v1 = API_PREFIX

    @app.get(f"{v1}/info", tags=["service"])
    def info(caller: Caller) -> dict[str, Any]:
        """The store's location and the embedding model."""
        return cx.info()

    @app.get(f"{v1}/agents/resolve", tags=["agents"])
    def resolve_agent(caller: Caller, name: Annotated[str, Query(max_length=200)]) -> dict[str, str | None]:
        """The declared agent with memory that a coding agent's name stands for (itself or an alias), or null."""
        try:
            resolved = cx.resolve_agent(name)
        except BrokenAgentError as exc:
            if caller.may_use(exc.agent):
                raise
            resolved = None  # never a hint of a definition the caller may not use
        return {"agent": resolved if resolved is not None and caller.may_use(resolved) else None}

    @app.get(f"{v1}/agents", tags=["agents"])
    def list_agents(caller: Caller) -> list[dict[str, Any]]:
        """The declared agents the caller may use, with their memory counts."""
        return [a for a in cx.describe_agents() if caller.may_use(a["name"])]

    @app.post(f"{v1}/agents/{{agent}}/memories", status_code=201, tags=["memories"])
    def store(agent: str, body: StoreBody, caller: Caller) -> WrittenMemory:
        """Store one memory (``warnings``: e.g. that the prune at the agent's next agent_end will delete it)."""
        with notices.collect() as notes:
            memory = cx.store(scoped(caller, agent), body.content, type=body.type, project=body.project,
                              confidence=body.confidence, source=body.source, ttl=body.ttl, tags=body.tags,
                              metadata=body.metadata, scope=body.scope)
        return WrittenMemory.of(memory, notes)

    @app.post(f"{v1}/agents/{{agent}}/memories/batch", status_code=201, tags=["memories"])
    def store_many(agent: str, body: BatchBody, caller: Caller) -> list[Memory]:
        """Store a batch atomically."""
        return cx.store_many(scoped(caller, agent), body.entries)

    @app.get(f"{v1}/agents/{{agent}}/memories", tags=["memories"])
    def recall(agent: str, caller: Caller, filters: Annotated[ReadFilters, Depends()], query: str | None = None,
               type: str | None = None, project: str | None = None,
               limit: int = config.DEFAULT_LIMIT) -> list[Memory]:
        """AND-token recall over the agent's own, its teams' and the swarm's memories (current ones unless
        include_expired / include_superseded; as_of: what was recorded and valid then)."""
        return cx.recall(scoped(caller, agent), query, type=type, project=project, limit=limit, **filters.given())

    @app.get(f"{v1}/agents/{{agent}}/search", tags=["memories"])
    def search(agent: str, caller: Caller, filters: Annotated[ReadFilters, Depends()],
               query: Annotated[str, Query()], mode: str = config.DEFAULT_SEARCH_MODE,
               limit: int = config.DEFAULT_LIMIT, project: str | None = None, type: str | None = None,
               explain: bool = False,
               rerank: Annotated[str, Query(description="true, false, or a JSON object of Reranking settings")]
               = "true") -> SearchResult:
        """Ranked search (hybrid, semantic, bm25 or all), with the filters of recall."""
        return cx.search(scoped(caller, agent), query, mode=mode, limit=limit, project=project, type=type,
                         explain=explain, rerank=_reranking(rerank), **filters.given())

    @app.get(f"{v1}/agents/{{agent}}/list", tags=["memories"])
    def list_memories(agent: str, caller: Caller, cursor: str | None = None, limit: int = 50,
                      scope: str | None = None, tags: Tags = None, type: str | None = None,
                      project: str | None = None, source: str | None = None, include_expired: bool = False,
                      include_superseded: bool = False) -> Page:
        """Every memory the agent can see, newest first, a page at a time (pass next_cursor back as cursor)."""
        return cx.list_memories(scoped(caller, agent), scope=scope, type=type, project=project,
                                tags=_tag_list(tags), source=source, include_expired=include_expired,
                                include_superseded=include_superseded, cursor=cursor, limit=limit)

    @app.patch(f"{v1}/agents/{{agent}}/memories/{{memory_id}}", tags=["lifecycle"])
    def update(agent: str, memory_id: str, body: UpdateBody, caller: Caller) -> WrittenMemory:
        """Change fields in place: version + 1, the earlier version kept (history)."""
        with notices.collect() as notes:
            memory = cx.update(scoped(caller, agent), memory_id, content=body.content, type=body.type,
                               project=body.project, confidence=body.confidence, tags=body.tags,
                               metadata=body.metadata, expected_version=body.expected_version)
        return WrittenMemory.of(memory, notes)

    @app.get(f"{v1}/agents/{{agent}}/memories/{{memory_id}}/history", tags=["lifecycle"])
    def history(agent: str, memory_id: str, caller: Caller) -> list[Memory]:
        """Every version of the memory, oldest first (the current one last)."""
        return cx.history(scoped(caller, agent), memory_id)

    @app.get(f"{v1}/agents/{{agent}}/memories/{{memory_id}}/provenance", tags=["lifecycle"])
    def provenance(agent: str, memory_id: str, caller: Caller) -> Provenance:
        """Where a memory comes from (PROV-O): the agent it is attributed to, the activity that generated it
        (surface, hook event, session, tool), the memories it was derived from, its earlier versions."""
        return cx.provenance(scoped(caller, agent), memory_id)

    @app.post(f"{v1}/agents/{{agent}}/memories/{{memory_id}}/supersede", status_code=201, tags=["lifecycle"])
    def supersede(agent: str, memory_id: str, body: SupersedeBody, caller: Caller) -> WrittenMemory:
        """Replace the memory by new content (or by an existing memory): returns the replacing memory."""
        fields = body.model_dump(exclude_none=True, exclude={"content", "by", "reason"})
        with notices.collect() as notes:
            memory = cx.supersede(scoped(caller, agent), memory_id, body.content, by=body.by, reason=body.reason,
                                  **fields)
        return WrittenMemory.of(memory, notes)

    @app.post(f"{v1}/agents/{{agent}}/memories/{{memory_id}}/validate", tags=["lifecycle"])
    def validate(agent: str, memory_id: str, caller: Caller) -> Memory:
        """Confirm the memory: its decay clock restarts, confidence + 0.05 (at most 1)."""
        return cx.validate(scoped(caller, agent), memory_id)

    @app.post(f"{v1}/agents/{{lead}}/inject", status_code=201, tags=["lifecycle"])
    def inject(lead: str, body: InjectBody, caller: Caller) -> WrittenMemory:
        """A lead's learning for the swarm (default), one of its teams, or one worker."""
        with notices.collect() as notes:
            memory = cx.inject_learning(scoped(caller, lead), body.content, body.category, team=body.team,
                                        to=body.to, confidence=body.confidence, project=body.project, tags=body.tags)
        return WrittenMemory.of(memory, notes)

    @app.post(f"{v1}/purge-expired", tags=["lifecycle"])
    def purge_expired(caller: Caller, body: Annotated[PurgeBody, Body()] = PurgeBody()) -> PurgeResult:
        """Delete the memories whose time to live has run out; admin only."""
        caller.require_admin("purge-expired")
        return PurgeResult(count=cx.purge_expired(body.agent))

    @app.get(f"{v1}/agents/{{agent}}/memories/{{memory_id}}", tags=["memories"])
    def get(agent: str, memory_id: str, caller: Caller) -> Memory:
        memory = cx.get(scoped(caller, agent), memory_id)
        if memory is None:
            raise MemoryNotFoundError(agent, memory_id)
        return memory

    @app.post(f"{v1}/agents/{{agent}}/memories/{{memory_id}}/touch", tags=["memories"])
    def touch(agent: str, memory_id: str, caller: Caller) -> Memory:
        return cx.touch(scoped(caller, agent), memory_id)

    @app.delete(f"{v1}/agents/{{agent}}/memories/{{memory_id}}", status_code=204, tags=["memories"])
    def forget(agent: str, memory_id: str, caller: Caller) -> Response:
        if not cx.forget(scoped(caller, agent), memory_id):
            raise MemoryNotFoundError(agent, memory_id)
        return Response(status_code=204)

    @app.get(f"{v1}/agents/{{agent}}/stats", tags=["memories"])
    def stats(agent: str, caller: Caller) -> dict[str, int]:
        return cx.stats(scoped(caller, agent))

    @app.post(f"{v1}/agents/{{agent}}/prune", tags=["memories"])
    def prune(agent: str, caller: Caller, body: Annotated[PruneBody, Body()] = PruneBody()) -> PruneResult:
        ids = cx.prune_candidates(scoped(caller, agent), body.min_confidence, body.max_age, delete=not body.dry_run)
        return PruneResult(count=len(ids), ids=ids, dry_run=body.dry_run)

    @app.post(f"{v1}/agents/{{agent}}/transcripts", tags=["prompt"], response_model=CaptureReport,
              responses={202: {"description": "Queued (wait=false): captured by the server's queue"}})
    def capture_transcript(agent: str, body: TranscriptBody, caller: Caller) -> Any:
        """Capture a session transcript that this server's machine holds (Claude Code JSONL, Codex CLI session,
        JSON messages, plain text) for the agent, from its checkpoint on: marker lines, with a language model
        learnings and a session summary, subagent task outcomes, the "used" signal. ``wait=false`` queues it in
        the server (202, ``{"queued", "waiting"}``): what hooks do, so that the model's seconds are not theirs."""
        name = scoped(caller, agent)
        caller.require_transcript(body.path)
        options: dict[str, Any] = {"format": body.format, "project": body.project, "markers": body.markers,
                                   "summary": body.summary, "tasks": body.tasks}
        if not body.wait:
            cx.resolve_agent(name)  # an unknown store agent fails now, not in the queue
            return JSONResponse(queue.put(name, body.path, **options), status_code=202)
        return cx.capture_transcript(name, body.path, **options)

    @app.post(f"{v1}/notes/sync", tags=["notes"])
    def sync_notes(body: NotesSyncBody, caller: Caller) -> list[NotesReport]:
        """Index the agents' Markdown notes (one agent's, or one file of a notes directory): unchanged chunks
        keep their memory, changed ones are superseded, removed ones leave recall. An agent's token syncs its
        own notes only."""
        agent = scoped(caller, body.agent) if body.agent is not None else None
        if agent is None and not caller.admin:
            agent = caller.agent
        return cx.sync_notes(agent, file=body.file)

    @app.post(f"{v1}/agents/{{agent}}/notes/promote", tags=["notes"])
    def promote_notes(agent: str, body: PromoteBody, caller: Caller) -> NotesReport:
        """Move a notes file's memories to a team the agent is in, or the swarm (a lead)."""
        return cx.promote_notes(scoped(caller, agent), body.file, team=body.team, swarm=body.swarm)

    @app.post(f"{v1}/agents/{{agent}}/notes/export", tags=["notes"])
    def export_notes(agent: str, body: NotesExportBody, caller: Caller) -> list[str]:
        """Write the agent's memories as editable Markdown files in a directory of the server's machine (an
        admin token: it writes files); a later sync of that directory applies the edits."""
        caller.require_admin("writing notes files on the server's machine")
        return cx.export_notes(agent, body.directory)

    @app.get(f"{v1}/capture/queue", tags=["prompt"])
    def capture_queue(caller: Caller) -> dict[str, Any]:
        """The capture queue: jobs waiting, running, done and failed."""
        return queue.status()

    @app.post(f"{v1}/agents/{{agent}}/used", tags=["prompt"])
    def record_use(agent: str, body: UseBody, caller: Caller) -> list[Memory]:
        """Mark the memories shown at the agent's latest start (in ``session``, default the request's
        ``Cortex-Session``) that ``output`` drew on: usedCount + 1 (the "used" signal ranking prefers)."""
        return cx.record_use(scoped(caller, agent), body.output, session=body.session)

    @app.get(f"{v1}/agents/{{agent}}/usage", tags=["memories"])
    def usage_stats(agent: str, caller: Caller) -> dict[str, dict[str, int]]:
        """Per source of the agent's memories: how many, how many shown and used, and the times of each."""
        return cx.usage_stats(scoped(caller, agent))

    @app.post(f"{v1}/agents/{{agent}}/tasks", status_code=201, tags=["prompt"])
    def record_task(agent: str, body: TaskBody, caller: Caller) -> WrittenMemory:
        """Record a finished task's outcome (a task_completion memory; a failed one says what went wrong)."""
        with notices.collect() as notes:
            memory = cx.record_task(scoped(caller, agent), body.task, body.output, body.status, project=body.project)
        return WrittenMemory.of(memory, notes)

    @app.post(f"{v1}/agents/{{agent}}/start", tags=["prompt"])
    def start(agent: str, caller: Caller, body: Annotated[StartBody, Body()] = StartBody()) -> Block:
        """The <agent-memory> block to inject at agent start (touches what it shows)."""
        return Block(block=cx.agent_start(scoped(caller, agent), body.task, body.project, body.limit, body.max_chars,
                                          tags=body.tags, scope=body.scope, touch=body.touch))

    @app.post(f"{v1}/agents/{{agent}}/end", tags=["prompt"])
    def end(agent: str, body: EndBody, caller: Caller, pruned: bool = False) -> list[Memory] | EndAnswer:
        """Capture marker lines from the agent's output, then prune with the agent's ``cortex.prune`` settings
        (what it deleted is in the ``Cortex-Warnings`` header, and recorded as a ``prune`` activity). With
        ``pruned=true`` the answer is an object: the captured ``memories`` and the ``pruned`` ones."""
        captured = cx.agent_end(scoped(caller, agent), body.output, body.project)
        return EndAnswer(memories=list(captured), pruned=captured.pruned, redacted=captured.redacted) if pruned \
            else list(captured)

    def consolidating(caller: Principal, agent: str | None, team: str | None, swarm: bool) -> str | None:
        """The agent a consolidation route names, once the caller may (:meth:`Principal.require_consolidation`)."""
        return caller.require_consolidation(agent, team, swarm, cx.describe_agents)

    @app.post(f"{v1}/consolidate", tags=["consolidation"])
    def consolidate(caller: Caller,
                    body: Annotated[ConsolidateBody, Body()] = ConsolidateBody()) -> ConsolidationReport:
        """Consolidate one scope in one run (docs/consolidation.md): near duplicates merged, contradictions the
        language model finds superseded or listed for review, the agent's recent sessions distilled. ``run`` in
        the answer is the id to undo it with (null for a dry run or a run that changed nothing). Name exactly one
        of ``agent``, ``team`` or ``swarm``. An agent token consolidates its own agent (the default when it names
        none); a team's memory needs an admin token or a lead of the team's, the swarm's an admin's or a lead's
        (403 otherwise)."""
        agent = consolidating(caller, body.agent, body.team, body.swarm)
        return cx.consolidate(agent, team=body.team, swarm=body.swarm, dry_run=body.dry_run)

    @app.post(f"{v1}/consolidate/undo", tags=["consolidation"])
    def undo_consolidation(caller: Caller, body: Annotated[UndoBody, Body()] = UndoBody()) -> UndoReport:
        """Undo a consolidation run: what it changed back as it was, what it created removed; its record stays,
        marked undone. 404 for a run the store has no record of, 409 (nothing changed) when a memory changed
        since, unless ``force``. The same rule as consolidate: an agent token undoes its own agent's runs (naming
        no scope: its own), a team's or the swarm's need an admin token or a lead's; naming no scope, an admin
        undoes the latest run of any scope."""
        agent = consolidating(caller, body.agent, body.team, body.swarm)
        return cx.undo_consolidation(body.run, agent=agent, team=body.team, swarm=body.swarm, force=body.force)

    @app.get(f"{v1}/consolidate/runs", tags=["consolidation"])
    def consolidation_runs(caller: Caller, agent: str | None = None, team: str | None = None,
                           swarm: bool = False) -> list[RunInfo]:
        """The consolidation runs of one scope (an admin naming none: of every scope), the latest first, undone
        ones too. Who may: as for consolidate."""
        name = consolidating(caller, agent, team, swarm)
        return cx.consolidation_runs(name, team=team, swarm=swarm)

    @app.get(f"{v1}/review", tags=["consolidation"])
    def review(caller: Caller, agent: str | None = None, team: str | None = None,
               swarm: bool = False) -> list[ReviewItem]:
        """The contradictions consolidation found and did not apply, still open (both memories current): decide
        one with ``POST /v1/review``. Name one scope; who may: as for consolidate."""
        name = consolidating(caller, agent, team, swarm)
        return cx.review(name, team=team, swarm=swarm)

    @app.post(f"{v1}/review", tags=["consolidation"])
    def resolve_review(caller: Caller, body: ReviewBody) -> ConsolidationReport:
        """Decide a contradiction the review lists: ``accept`` (the default) supersedes ``supersede`` by ``keep``,
        ``accept=false`` keeps both and takes the pair off the list. Either is a run of its own (kind ``review``,
        ``run`` in the answer), undone like any other. 422 when the review lists no such pair. Who may: as for
        consolidate."""
        name = consolidating(caller, body.agent, body.team, body.swarm)
        return cx.resolve_review(body.keep, body.supersede, accept=body.accept, agent=name, team=body.team,
                                 swarm=body.swarm)

    @app.post(f"{v1}/teams/{{team}}/round-end", tags=["consolidation"], response_model=ConsolidationReport,
              responses={202: {"description": "Queued (wait=false): run by the server's queue"}})
    def team_round_end(team: str, caller: Caller,
                       body: Annotated[RoundEndBody, Body()] = RoundEndBody()) -> Any:
        """The end of a round of the team: its lead's extractor distils the round's task outcomes and the members'
        new learnings into the team memory (one run, undone like any other; needs a language model). An admin
        token or the token of a lead of the team (403 otherwise). ``wait=false`` queues it in the server (202,
        ``{"queued", "waiting"}``): what a lead's Stop hook does, so that the model's seconds are not its."""
        consolidating(caller, None, team, False)
        if not body.wait:
            return JSONResponse(queue_round_end(team, body.dry_run), status_code=202)
        return cx.team_round_end(team, dry_run=body.dry_run)

    def queue_round_end(team: str, dry_run: bool) -> dict[str, Any]:
        """Check now what can be checked without the model, then queue the round end."""
        if dry_run:
            raise InvalidInputError("wait", "a dry run answers with what it would do: send it with wait true")
        if cx.llm is None:
            raise InvalidInputError("llm", "a team's round end needs a language model (CORTEX_LLM_URL)")
        if team in {t for d in cx.agents.list() if d.memory_enabled for t in d.settings.parents}:
            raise InvalidInputError("team", f"team {team!r} is temporary: it reads its parent's memory and has no "
                                            "extractor")

        def round_end() -> str:
            report = cx.team_round_end(team)
            return (f"run {report.run}: {len(report.created)} created, {len(report.superseded)} superseded, "
                    f"{len(report.confirmed)} confirmed, {len(report.evicted)} evicted"
                    f"{', pending: ' + ', '.join(report.pending) if report.pending else ''}")

        return queue.put_call(f"round-end:{team}", round_end, f"round end of team {team}")

    def admin_only(caller: Principal) -> TokenStore:
        caller.require_admin("managing tokens")
        if tokens is None:
            raise InvalidInputError("tokens", "this server has no token file")
        return tokens

    @app.get(f"{v1}/tokens", tags=["tokens"])
    def list_tokens(caller: Caller) -> list[dict[str, str | None]]:
        """The tokens (id, agent, creation time); admin only."""
        return admin_only(caller).list()

    @app.post(f"{v1}/tokens", status_code=201, tags=["tokens"])
    def create_token(body: TokenBody, caller: Caller) -> dict[str, str | None]:
        """A new token (shown only in this answer); admin only. Agents must be declared unless ``force``."""
        store = admin_only(caller)
        if body.agent is not None and not body.force:
            cx.agents.require(body.agent, memory=False)
        created = store.create(body.agent)
        return {"token": created, "id": token_id(created), "agent": body.agent}

    @app.delete(f"{v1}/tokens/{{token_id_}}", tags=["tokens"])
    def revoke_token(token_id_: str, caller: Caller) -> dict[str, Any]:
        """Revoke a token by its id; admin only."""
        if not admin_only(caller).revoke(token_id_):
            raise InvalidInputError("token_id", f"no token has the id {token_id_!r}")
        return {"id": token_id_, "revoked": True}

    @app.get(f"{v1}/agents/{{agent}}/index", tags=["service"])
    def index_status(agent: str, caller: Caller) -> IndexStatus:
        """What the agent's derived index holds, against the store."""
        return cx.index_status(scoped(caller, agent))

    @app.get(f"{v1}/scopes", tags=["service"])
    def stored_scopes(caller: Caller) -> list[str]:
        """Every scope with memories in the store (agent names, team:NAME, swarm); admin only."""
        caller.require_admin("listing every scope")
        return cx.stored_scopes()

    async def sparql_request(request: Request, caller: Principal) -> Response:
        """The SPARQL protocol's query operation (GET ?query=, POST form query=, POST
        application/sparql-query, or a JSON body {query, agent, limit, timeout})."""
        params: dict[str, Any] = dict(request.query_params)
        if request.method == "POST":
            kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
            body = await request.body()
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError:
                raise InvalidInputError("query", "the request body is not UTF-8") from None
            if kind == "application/sparql-query":
                params["query"] = text
            elif kind == "application/x-www-form-urlencoded":
                params.update({k: v[-1] for k, v in parse_qs(text, keep_blank_values=True).items()})
            elif kind == "application/json":
                try:
                    doc = json.loads(text) if text else {}
                except ValueError:
                    return _error(400, ValueError("request body is not valid JSON"), "InvalidJSON")
                if not isinstance(doc, dict):
                    raise InvalidInputError("body", "must be a JSON object {query, agent, limit, timeout}")
                params.update(doc)
            else:
                raise InvalidInputError("content-type", f"send the query as application/sparql-query, a form "
                                                        f"(query=...) or JSON, not {kind or 'nothing'}")
        unknown = sorted(set(params) - {"query", "agent", "limit", "timeout", "format"})
        if unknown:
            raise InvalidInputError(unknown[0], "unknown parameter; the query route takes query, agent, limit, "
                                                "timeout and format")
        agent = caller.agent if caller.agent is not None else params.get("agent") or None
        if caller.agent is not None and params.get("agent") not in (None, "", caller.agent):
            raise AgentNotFoundError(str(params["agent"]))  # 404, as for any agent the token may not use
        limit = _bounded(params.get("limit"), "limit", sparql.configured_limit(), int)
        timeout = _bounded(params.get("timeout"), "timeout", sparql.configured_timeout(), float)
        with SPARQL_SLOTS.hold(caller):
            result = await run_in_threadpool(cx.sparql, params.get("query", ""), agent=agent, limit=limit,
                                             timeout=timeout)
        headers = {"Cortex-Truncated": "true" if result.truncated else "false"}
        wanted = params.get("format") or request.headers.get("accept")
        if params.get("format") is None and (not wanted or wanted.strip() == "application/json"):
            return JSONResponse(result.to_json(), headers=headers)  # Cortex's clients: the result and truncated
        kinds = ("graph",) if result.kind == "graph" else ("solutions",)
        name = sparql.check_format(params["format"]) if params.get("format") is not None \
            else sparql.negotiate(wanted, kinds) or result.default_format()
        return Response(result.serialize(name), media_type=sparql.media_type(name), headers=headers)

    @app.get(f"{v1}/export", tags=["rdf"])
    def export(caller: Caller, agent: str | None = None, team: str | None = None, all: bool = False,
               format: str = "trig") -> Response:
        """The graph of one agent (`agent=`), one team (`team=`) or every scope (`all=true`) as RDF: `trig`
        (default), `nquads`, `turtle` (one scope) or `jsonld`; lossless (docs/export.md). An agent token may
        export its own agent; the rest needs an admin token."""
        caller.require_export(agent, cx.resolve_agent)
        out = io.BytesIO()
        count = cx.export(out, agent=agent, team=team, all=all, format=format)
        media = transfer.MEDIA_TYPES[transfer.format_of(format)]
        return Response(out.getvalue(), media_type=media, headers={"Cortex-Quads": str(count)})

    @app.post(f"{v1}/import", tags=["rdf"], status_code=201)
    async def import_rdf(request: Request, caller: Caller, format: str | None = None, agent: str | None = None,
                         team: str | None = None) -> dict[str, Any]:
        """Import an export (the body; `format=` or the Content-Type names its format): checked whole first,
        then written in one transaction, or nothing with a report naming each focus node, property and problem
        (422). Admin only."""
        caller.require_admin("import")
        kinds = {media: name for name, media in transfer.MEDIA_TYPES.items()}
        fmt = format or kinds.get(request.headers.get("content-type", "").split(";")[0].strip().lower())
        if fmt is None:
            raise InvalidInputError("format", "give format= (trig, nquads, turtle, jsonld) or its Content-Type")
        body = await request.body()
        counts = await run_in_threadpool(cx.import_rdf, body, format=fmt, agent=agent, team=team)
        return {"imported": counts}

    @app.post(f"{v1}/import/{{system}}", tags=["rdf"])
    async def import_from(system: str, request: Request, caller: Caller, agent: str, dry_run: bool = False,
                          name: Annotated[str | None, Query(max_length=1000)] = None) -> ImportReport:
        """Import another memory system's file (the body) into the agent's memory (docs/capture.md, "Importers"):
        `beads` (knowledge.jsonl, its archive, bd export), `mem0` (get_all's JSON), `mcp-memory` (memory.jsonl),
        `claude` (CLAUDE.md, MEMORY.md or a topic file of the memory directory). `name=`: the file's name, kept in
        the memories' origin. The server reads no path: a directory is sent a file a request (what the client
        does). Idempotent, the file checked whole then written at once; `dry_run=true` writes nothing. The report
        lists what was imported, skipped (already there) and failed (file and line, why)."""
        body = await request.body()
        return await run_in_threadpool(cx.import_from, system, body, agent=scoped(caller, agent), dry_run=dry_run,
                                       name=name)

    @app.get(f"{v1}/agents/{{agent}}/export/beads", tags=["rdf"])
    def export_beads(agent: str, caller: Caller) -> Response:
        """The agent's current memories as a Beads knowledge log (JSONL, oldest first, one line a key; docs/capture.md,
        "Beads"). `cortex export beads DIR` writes it to a directory, merged with what is there and rotated."""
        from cortex.importers.beads import encode

        lines = cx.beads_lines(scoped(caller, agent))
        return Response("".join(f"{encode(line)}\n" for line in lines), media_type="application/x-ndjson",
                        headers={"Cortex-Lines": str(len(lines))})

    @app.get(f"{v1}/validate-store", tags=["rdf"])
    def validate_store(caller: Caller, agent: str | None = None, team: str | None = None) -> dict[str, Any]:
        """Check the store (or one agent's or team's graph) against the SHACL shapes of what Cortex writes:
        `{"conforms": bool, "violations": [{focus, path, message}]}`. Admin only."""
        caller.require_admin("validate-store")
        found = cx.validate_store(agent=agent, team=team)
        return {"conforms": not found,
                "violations": [{"focus": v.focus, "path": v.path, "message": v.message} for v in found]}

    @app.get(f"{v1}/sparql", tags=["sparql"])
    async def sparql_get(request: Request, caller: Caller) -> Response:
        """A read-only SPARQL query (`query=`), scoped to the graphs an agent token's agent reads (an admin
        token sees the whole store, or names `agent=`); results by `Accept` (SPARQL JSON/XML/CSV/TSV, Turtle,
        N-Triples) or `format=`; at most `limit` rows and `timeout` seconds (the server's caps)."""
        return await sparql_request(request, caller)

    @app.post(f"{v1}/sparql", tags=["sparql"])
    async def sparql_post(request: Request, caller: Caller) -> Response:
        """The same query as GET, in the body: `application/sparql-query`, a form (`query=`), or JSON
        `{query, agent, limit, timeout}` (answered as `{head, results|boolean, truncated}` or
        `{ntriples, truncated}` when the client accepts application/json)."""
        return await sparql_request(request, caller)

    @app.post(f"{v1}/agents/{{agent}}/reindex", tags=["service"])
    def reindex(agent: str, caller: Caller, force: bool = False) -> dict[str, int]:
        scoped(caller, agent)
        caller.require_admin("reindex")
        return cx.reindex(agent, force=force)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 404:
            message = f"no route {request.method} {request.url.path} (the API is described at /docs)"
            return _error(404, LookupError(message), "NotFound")
        if exc.status_code == 405:
            return _error(405, LookupError(f"{request.method} is not allowed on {request.url.path}"), "MethodNotAllowed")
        if exc.status_code == 400 and "parsing the body" in str(exc.detail):
            return _error(400, ValueError("request body is not valid JSON in UTF-8"), "InvalidJSON")
        return _error(exc.status_code, RuntimeError(str(exc.detail)), "HTTPError")

    if mcp_server is not None:
        app.router.routes.extend(mcp_app.routes)  # exactly /mcp; any other path is a JSON 404 of this app
    app.add_middleware(_InFlight, counter=in_flight)
    app.add_middleware(_WarningsHeader)
    # middlewares run outermost-last-added: the host check, then the guard, before any route or body parsing
    app.add_middleware(Guard, authenticate=authenticate, limits=limits or Limits.from_env(), on_request=on_request)
    if allowed_hosts is not None:
        from starlette.middleware.trustedhost import TrustedHostMiddleware

        app.add_middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts)
    return app


#: Tags in a query string: ``tags=a&tags=b`` or ``tags=a,b``.
Tags = Annotated[list[str] | None, Query(description="Only memories with all of these tags (repeat, or a,b)")]


class ReadFilters:
    """The filters every read route takes (a FastAPI dependency: query parameters)."""

    def __init__(
        self,
        tags: Tags = None,
        scope: Annotated[str | None, Query(description="agent, team:NAME or swarm (default: all it reads)")] = None,
        source: str | None = None,
        include_expired: bool = False,
        include_superseded: bool = False,
        as_of: Annotated[str | None, Query(description="ISO 8601: what was recorded and valid then")] = None,
    ) -> None:
        self.values = {"tags": _tag_list(tags), "scope": scope, "source": source, "include_expired": include_expired,
                       "include_superseded": include_superseded, "as_of": as_of}

    def given(self) -> dict[str, Any]:
        return self.values


def _bounded(value: Any, field: str, cap: float, kind: type) -> Any:
    """A query's limit or timeout: the server's cap unless the request asks for less."""
    if value is None or value == "":
        return kind(cap)
    try:
        number = kind(value)
    except (TypeError, ValueError, OverflowError):
        raise InvalidInputError(field, f"must be a number, not {value!r}") from None
    if not 0 < number <= cap:
        raise InvalidInputError(field, f"must be above 0 and at most {cap:g} (the server's cap)")
    return number


def _tag_list(tags: Any) -> Any:
    """Tags from a query string: comma-separated values split (a body gives a JSON list, as it is)."""
    if isinstance(tags, str):
        tags = [tags]
    if isinstance(tags, list) and all(isinstance(t, str) for t in tags):
        return [part.strip() for t in tags for part in t.split(",") if part.strip()]
    return tags


def _reranking(value: str) -> Reranking | bool:
    """``rerank`` of the search route: ``true``/``false`` or a JSON object of :class:`Reranking` fields."""
    import json

    lowered = value.strip().lower()
    if lowered in ("true", "1", "yes", "on"):
        return True
    if lowered in ("false", "0", "no", "off"):
        return False
    try:
        fields = json.loads(value)
    except (ValueError, RecursionError):
        raise InvalidInputError("rerank", "must be true, false or a JSON object of reranking settings") from None
    if not isinstance(fields, dict):
        raise InvalidInputError("rerank", "must be true, false or a JSON object of reranking settings")
    try:
        return Reranking(**fields)
    except TypeError as exc:
        raise InvalidInputError("rerank", f"unknown reranking setting: {exc}") from None


def _transport_security() -> Any:
    # The Host check is the app's (TrustedHostMiddleware, for every route); the SDK's own guard would only
    # cover /mcp and rejects Host headers without a port.
    from mcp.server.transport_security import TransportSecuritySettings

    return TransportSecuritySettings(enable_dns_rebinding_protection=False)
