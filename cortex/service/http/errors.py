"""The HTTP API's one translation of errors: every failure is answered ``{"error": {"type", "message", "field",
"reason"[, "details"]}}`` with the status of :func:`status_of` (a Cortex error), 422 (request validation), 400
(malformed JSON) or the router's own 404 and 405. The SPARQL endpoint follows the SPARQL 1.1 protocol: 400 for a
malformed query or parameter, and a text body unless the client speaks Cortex's JSON (:func:`protocol_error`)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from cortex.service.guard import challenge
from cortex.errors import (
    AgentNotFoundError,
    AuthError,
    BrokenAgentError,
    CortexError,
    InvalidInputError,
    MemoryDisabledError,
    MemoryNotFoundError,
    MissingExtraError,
    PermissionDeniedError,
    QueryTimeoutError,
    RunNotFoundError,
    SessionNotFoundError,
    StoreLockedError,
    TokenFileError,
    TooBusyError,
    UndoConflictError,
    VersionConflictError,
)

#: Attributes of Cortex errors sent in ``error.details`` (and set again on the exception by RemoteCortex).
ERROR_DETAILS = ("agent", "memory_id", "expected", "actual")


class ErrorDetail(BaseModel):
    """What went wrong: the error's type (``MemoryNotFoundError``, ``InvalidInputError``...), its message, the
    request field it names and why, and what a client needs to act on it (``details``: e.g. the current version)."""

    type: str
    message: str | None = None
    field: str | None = None
    reason: str | None = None
    details: dict[str, str | int] | None = None


class ErrorResponse(BaseModel):
    """The body of every error the API answers (the SPARQL endpoint's are text unless the client sent JSON)."""

    error: ErrorDetail = Field(description="what went wrong")


_MEANINGS = {400: "Malformed request (not JSON, or a malformed SPARQL query)", 401: "No token, or an unknown one",
             403: "The token may not do this", 404: "No such agent, memory, run or session for this token",
             409: "Conflict: a stale version, a locked store, memory switched off, a broken agent definition",
             422: "Invalid input: the field and the reason are named", 429: "Too busy: retry later",
             503: "A query took too long, or the token file is unreadable"}
#: The error answers every route declares in the OpenAPI, with their one body (a generated client types them).
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorResponse, "description": meaning} for status, meaning in _MEANINGS.items()}


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
    if isinstance(exc, (AgentNotFoundError, MemoryNotFoundError, RunNotFoundError, SessionNotFoundError)):
        return 404
    if isinstance(exc, (MemoryDisabledError, StoreLockedError, VersionConflictError, BrokenAgentError,
                        UndoConflictError)):
        return 409
    if isinstance(exc, QueryTimeoutError):
        return 503
    if isinstance(exc, TooBusyError):
        return 429
    if isinstance(exc, MissingExtraError):  # the server lacks an optional part: not the request's fault
        return 501
    return 500


def _printable(text: str | None) -> str | None:
    """``text`` with anything that is not valid Unicode (a lone surrogate) escaped, so the error can be sent."""
    return None if text is None else text.encode("utf-8", "backslashreplace").decode("utf-8")


def error_response(status: int, exc: Exception, kind: str | None = None, field: str | None = None,
                   reason: str | None = None) -> JSONResponse:
    """The answer for ``exc``: its type (or ``kind``), message, field and reason, and the details a client needs."""
    reason = reason if reason is not None else getattr(exc, "reason", None)
    body: dict[str, Any] = {"error": {"type": kind or type(exc).__name__, "message": _printable(str(exc)),
                                      "field": _printable(field), "reason": _printable(reason)}}
    details = {name: getattr(exc, name) for name in ERROR_DETAILS if isinstance(getattr(exc, name, None), (str, int))}
    if details:  # what a client needs to act (e.g. retry from the current version), as the exception has it
        body["error"]["details"] = details
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse(body, status_code=status, headers=headers)


def _sparql_route(request: Request) -> bool:
    """Whether ``request`` is to the SPARQL protocol's endpoint (its errors follow the protocol)."""
    return request.url.path.rstrip("/").endswith("/sparql")


def protocol_error(request: Request, status: int, exc: Exception, kind: str | None = None,
                   field: str | None = None, reason: str | None = None) -> Response:
    """An error of the SPARQL endpoint: a text body (what SPARQL clients show), or Cortex's JSON error to a
    client that sent JSON or accepts only ``application/json`` (Cortex's own client)."""
    accept = request.headers.get("accept", "").strip()
    sent = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if accept == "application/json" or sent == "application/json":
        return error_response(status, exc, kind, field, reason)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    text = _printable(str(exc)) or (kind or type(exc).__name__)
    return PlainTextResponse(f"{kind or type(exc).__name__}: {text}\n", status_code=status, headers=headers)


async def _cortex_error(request: Request, exc: CortexError) -> Response:
    field = getattr(exc, "field", None)
    if _sparql_route(request):  # the protocol: a malformed query or parameter is 400
        status = 400 if isinstance(exc, InvalidInputError) else status_of(exc)
        return protocol_error(request, status, exc, field=field)
    answer = error_response(status_of(exc), exc, field=field)
    if answer.status_code == 401:
        answer.headers["WWW-Authenticate"] = challenge(request.scope)
    return answer


async def _validation_error(request: Request, exc: RequestValidationError) -> Response:
    errors = exc.errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        return error_response(400, ValueError("request body is not valid JSON"), "InvalidJSON")
    first = errors[0] if errors else {}
    loc = ".".join(str(p) for p in first.get("loc", ())[1:]) or (
        "body" if first.get("loc", ())[:1] == ("body",) else None)
    reason = str(first.get("msg", "invalid request"))
    error = ValueError(f"{loc}: {reason}" if loc else reason)
    if _sparql_route(request):
        return protocol_error(request, 400, error, "InvalidInputError", loc, reason)
    return error_response(422, error, "InvalidInputError", loc, reason)


async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
    if exc.status_code == 404:
        message = f"no route {request.method} {request.url.path} (the API is described at /docs)"
        return error_response(404, LookupError(message), "NotFound")
    if exc.status_code == 405:
        return error_response(405, LookupError(f"{request.method} is not allowed on {request.url.path}"),
                              "MethodNotAllowed")
    if exc.status_code == 400 and "parsing the body" in str(exc.detail):
        return error_response(400, ValueError("request body is not valid JSON in UTF-8"), "InvalidJSON")
    return error_response(exc.status_code, RuntimeError(str(exc.detail)), "HTTPError")


def handle_errors(app: FastAPI) -> None:
    """Answer every error of ``app``'s routes as above."""
    app.exception_handler(CortexError)(_cortex_error)
    app.exception_handler(RequestValidationError)(_validation_error)
    app.exception_handler(StarletteHTTPException)(_http_error)
