"""The memory browser: the web page ``cortex serve`` serves at ``/`` (docs/web.md).

One static page and its scripts and styles, shipped in the package (``static/``; no build step, nothing fetched
from another host). The page reads and changes memories through the same ``/v1`` API as every other client,
signed in with a session cookie (:mod:`~cortex.service.web.signin`). The server only hands out files: every
path of the page (``/agents``, ``/memories/<agent>/<id>``...) answers the same ``index.html`` and the page's
script shows the screen the path names, so that a screen's URL survives a reload.

Every answer of the page carries a Content-Security-Policy without ``unsafe-inline`` (scripts and styles only
from this server's files) and the usual hardening headers; the page writes every memory's text as text. The API's
own documentation pages (``/docs``, ``/redoc``, FastAPI's) get a policy of their own (:class:`DocsHeaders`).
"""

from __future__ import annotations

import base64
import hashlib
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response

from cortex.errors import InvalidInputError

#: Where the page's files are (in the package).
STATIC = Path(__file__).parent / "static"
#: The first path segment of every screen of the page (the rest of such a path is the screen's own).
SCREENS = ("agents", "search", "memories", "sessions", "review", "team", "runs", "admin")
#: The page's Content-Security-Policy: its own files only, no inline script or style, no framing, no other host.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
#: Headers of every answer of the page.
PAGE_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
    "permissions-policy": "camera=(), microphone=(), geolocation=()",
}
_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
          ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml", ".png": "image/png",
          ".ico": "image/x-icon", ".json": "application/json"}


@lru_cache(maxsize=256)
def _asset(relative: str) -> tuple[bytes, str, str]:
    """The bytes, content type and ETag of the page's file at ``relative`` (under :data:`STATIC`)."""
    path = (STATIC / relative).resolve()
    if STATIC.resolve() not in path.parents or not path.is_file() or path.suffix not in _TYPES:
        raise FileNotFoundError(relative)
    data = path.read_bytes()
    return data, _TYPES[path.suffix], '"' + hashlib.sha256(data).hexdigest()[:32] + '"'


def _file(request: Request, relative: str) -> Response:
    try:
        data, kind, etag = _asset(relative)
    except FileNotFoundError:
        return Response(b'{"error": {"type": "NotFound", "message": "no such file", "field": null}}', 404,
                        media_type="application/json", headers=PAGE_HEADERS)
    headers = {**PAGE_HEADERS, "etag": etag, "cache-control": "no-cache"}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    return Response(data, media_type=kind, headers=headers)


def add_web(app: FastAPI) -> None:
    """Serve the memory browser on ``app``: ``/`` and every screen's path answer the page, ``/static/...`` its
    files."""

    async def page(request: Request, rest: str = "") -> Response:
        return _file(request, "index.html")

    async def asset(request: Request, path: str) -> Response:
        if "\\" in path or "\0" in path or any(part in ("", ".", "..") for part in path.split("/")):
            raise InvalidInputError("path", "not a file of the page")
        return _file(request, path)

    both = ["GET", "HEAD"]  # HEAD as GET (uvicorn sends no body): a link checker or a probe gets 200, not 405
    app.add_api_route("/", page, methods=both, include_in_schema=False)
    app.add_api_route("/static/{path:path}", asset, methods=both, include_in_schema=False)
    for name in SCREENS:  # each screen by name: any other path stays the API's JSON 404
        app.add_api_route(f"/{name}", page, methods=both, include_in_schema=False)
        app.add_api_route(f"/{name}/{{rest:path}}", page, methods=both, include_in_schema=False)


def static_files() -> dict[str, Path]:
    """Every file the page serves, by its path under ``/static/`` (what the tests compare with the repository)."""
    return {str(p.relative_to(STATIC)): p for p in sorted(STATIC.rglob("*")) if p.is_file() and p.suffix in _TYPES}


#: The pages of the API's documentation (FastAPI's Swagger UI and ReDoc, served offline).
DOCS_PAGES = ("/docs", "/docs/oauth2-redirect", "/redoc")
_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.DOTALL)


def docs_policy(html: bytes) -> str:
    """The Content-Security-Policy of a documentation page ``html``: this server's files, and of its inline
    scripts exactly those it holds (by their hash: any other inline script is refused). Styles may be inline:
    Swagger UI and ReDoc add their own as they run. ReDoc runs its search in a worker made from a blob."""
    hashes = [f"'sha256-{base64.b64encode(hashlib.sha256(body).digest()).decode()}'"
              for body in _INLINE_SCRIPT.findall(html)]
    scripts = " ".join(["'self'", *hashes])
    return (f"default-src 'none'; script-src {scripts}; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
            "connect-src 'self'; font-src 'self'; worker-src 'self' blob:; form-action 'self'; base-uri 'none'; "
            "frame-ancestors 'none'")


class DocsHeaders:
    """ASGI middleware: the documentation pages (:data:`DOCS_PAGES`) answered with :func:`docs_policy` and the
    page's other hardening headers (``X-Frame-Options: DENY``...). FastAPI writes them with inline scripts, so the
    page's own policy (no inline script at all) would stop them."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] not in DOCS_PAGES:
            await self.app(scope, receive, send)
            return
        start: dict[str, Any] = {}
        body = bytearray()

        async def held(message: dict[str, Any]) -> None:  # the page whole (a few KB), then its policy from it
            if message["type"] == "http.response.start":
                start.update(message)
                return
            body.extend(message.get("body", b""))
            if message.get("more_body"):
                return
            headers = [(k, v) for k, v in start.get("headers", []) if k.lower() not in _HARDENED]
            policy = {**PAGE_HEADERS, "content-security-policy": docs_policy(bytes(body))}
            headers += [(k.encode(), v.encode()) for k, v in policy.items()]
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": bytes(body)})

        await self.app(scope, receive, held)


_HARDENED = {name.encode() for name in PAGE_HEADERS}
