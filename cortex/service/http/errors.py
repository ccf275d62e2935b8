"""The HTTP API's one translation of errors: every failure is answered ``{"error": {"type", "message", "field",
"reason"[, "details"]}}`` with the status of :func:`status_of` (a Cortex error), 422 (request validation), 400
(malformed JSON) or the router's own 404 and 405."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

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


async def _cortex_error(request: Request, exc: CortexError) -> JSONResponse:
    return error_response(status_of(exc), exc, field=getattr(exc, "field", None))


async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    errors = exc.errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        return error_response(400, ValueError("request body is not valid JSON"), "InvalidJSON")
    first = errors[0] if errors else {}
    loc = ".".join(str(p) for p in first.get("loc", ())[1:]) or (
        "body" if first.get("loc", ())[:1] == ("body",) else None)
    reason = str(first.get("msg", "invalid request"))
    return error_response(422, ValueError(f"{loc}: {reason}" if loc else reason), "InvalidInputError", loc, reason)


async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
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
