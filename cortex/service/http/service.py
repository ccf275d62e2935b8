"""The server's own routes (:data:`cortex.api.operations.SERVICE_ROUTES`), not operations of the API: liveness,
the capture queue, the consolidation sweep, the tokens, the memory browser's sign-in. They read the services on ``app.state``."""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from cortex.errors import AuthError, InvalidInputError
from cortex.service.auth import Principal, TokenStore, token_id
from cortex.service.http.bodies import SignInBody, TokenBody
from cortex.service.http.routing import Caller, Cx, Queue, operation
from cortex.service.web.signin import clear_cookie_header, cookie_of, set_cookie_header

router = APIRouter()


@operation(router, "healthz")
def healthz(cx: Cx) -> dict[str, Any]:
    return {"status": "ok", "pid": os.getpid(), "store": str(cx.store_path) if cx.store_path else None}


@operation(router, "capture_queue")
def capture_queue(caller: Caller, queue: Queue) -> dict[str, Any]:
    """The capture queue: jobs waiting, running, done and failed, and the last failure; an agent's token sees
    its own jobs only (what its tokens queued), an admin token the whole queue."""
    return queue.status(caller.agent)


@operation(router, "consolidation_sweep")
def consolidation_sweep(request: Request, caller: Caller) -> dict[str, Any]:
    """The periodic consolidation sweep (off unless CORTEX_CONSOLIDATE_EVERY or ``[consolidation] every``
    is set): its interval, its last sweep and failure, sweeps run and put off by the server's work, and the
    scope the next sweep starts with."""
    from cortex.service.sweep import OFF

    sweeper = request.app.state.sweeper
    status: dict[str, Any] = sweeper.status() if sweeper is not None else dict(OFF)
    if not caller.admin:  # the scopes it sweeps and their failures are other agents' business
        status.update(last_error=None, next_scope=None)
    return status


def _admin_only(request: Request, caller: Principal) -> TokenStore:
    """The server's token store, for an admin caller."""
    caller.require_admin("managing tokens")
    tokens: TokenStore | None = request.app.state.tokens
    if tokens is None:
        raise InvalidInputError("tokens", "this server has no token file")
    return tokens


@operation(router, "list_tokens")
def list_tokens(request: Request, caller: Caller) -> list[dict[str, str | None]]:
    """The tokens (id, agent, creation time); admin only."""
    return _admin_only(request, caller).list()


@operation(router, "create_token")
def create_token(request: Request, body: TokenBody, caller: Caller, cx: Cx) -> dict[str, str | None]:
    """A new token (shown only in this answer); admin only. Agents must be declared unless ``force``."""
    store = _admin_only(request, caller)
    if body.agent is not None and not body.force:
        cx.agents.require(body.agent, memory=False)
    created = store.create(body.agent)
    return {"token": created, "id": token_id(created), "agent": body.agent}


@operation(router, "revoke_token")
def revoke_token(request: Request, token_id_: str, caller: Caller) -> dict[str, Any]:
    """Revoke a token by its id; admin only."""
    if not _admin_only(request, caller).revoke(token_id_):
        raise InvalidInputError("token_id", f"no token has the id {token_id_!r}")
    return {"id": token_id_, "revoked": True}


@operation(router, "sign_in")
def sign_in(request: Request, body: SignInBody) -> JSONResponse:
    """Sign the memory browser in: the token is checked like a bearer token and exchanged for a session cookie
    (HttpOnly, SameSite=Strict) and the session's key, to send in ``X-CSRF-Token`` with every request."""
    origin = request.headers.get("origin")
    if origin is not None and urlsplit(origin).netloc != request.headers.get("host"):
        raise AuthError("sign-in from another site")  # a page elsewhere must not sign this browser in
    principal: Principal = request.app.state.authenticate(f"Bearer {body.token}")
    sid, session = request.app.state.web_sessions.create(body.token)
    answer = JSONResponse(_whoami(principal, session.csrf))
    answer.headers["set-cookie"] = set_cookie_header(sid, secure=request.url.scheme == "https")
    answer.headers["cache-control"] = "no-store"
    return answer


@operation(router, "session")
def session(request: Request, caller: Caller) -> JSONResponse:
    """Who the browser's session (or the bearer token) is: ``admin``, ``agent``, and the session's key (which the
    request had to carry already: the cookie alone opens nothing)."""
    current = request.app.state.web_sessions.get(cookie_of(dict(request.scope["headers"])))
    answer = JSONResponse(_whoami(caller, current.csrf if current is not None else None))
    answer.headers["cache-control"] = "no-store"
    return answer


@operation(router, "sign_out")
def sign_out(request: Request, caller: Caller) -> JSONResponse:
    """Sign the browser's session out (its cookie is removed)."""
    request.app.state.web_sessions.drop(cookie_of(dict(request.scope["headers"])))
    answer = JSONResponse({"signed_out": True})
    answer.headers["set-cookie"] = clear_cookie_header(secure=request.url.scheme == "https")
    return answer


def _whoami(principal: Principal, csrf: str | None) -> dict[str, Any]:
    return {"admin": principal.admin, "agent": principal.agent, "token_id": principal.token, "csrf": csrf}
