"""Signing in to the memory browser: a bearer token exchanged once for a session cookie.

The page never keeps the token. ``POST /v1/session`` with ``{"token": ...}`` checks it like any bearer token and
answers with a cookie (``HttpOnly``, ``SameSite=Strict``, ``Path=/``; ``Secure`` behind HTTPS) naming a session
of this process, and the session's key (``csrf``), which the page keeps in its origin's storage and sends back in
``X-CSRF-Token`` with every request. Each request made with the cookie is authenticated anew with the token the
session holds, so revoking the token signs the session out. ``DELETE /v1/session`` signs out. Sessions live in the
server's memory: a restart signs everyone out.

Why both, on reads too: a browser sends a cookie to every port of its host, so a page or a server on another port
of ``127.0.0.1`` receives (or rides on) it; the key lives in storage that belongs to this origin alone (its port
included), so the cookie alone opens nothing. And the cookie, which no script can read, keeps the session out of
reach of anything that could read the page's storage but not act in it.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any

from cortex.errors import AuthError

#: The session cookie's name.
COOKIE = "cortex_session"
#: The header that carries the session's key, which every request made with the cookie needs.
CSRF_HEADER = "x-csrf-token"
#: How long a session lasts without use (seconds), and at most in all.
IDLE_SECONDS = 12 * 3600
MAX_SECONDS = 7 * 24 * 3600
#: The most sessions kept at once (the oldest go first).
MAX_SESSIONS = 1000


@dataclass
class WebSession:
    """One signed-in browser: the token it signed in with, its CSRF token and its times (monotonic)."""

    token: str
    csrf: str
    created: float = field(default_factory=time.monotonic)
    seen: float = field(default_factory=time.monotonic)


class WebSessions:
    """The browser sessions of one server process (thread-safe)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._sessions: dict[str, WebSession] = {}
        self._lock = threading.Lock()
        self._clock = clock

    def create(self, token: str) -> tuple[str, WebSession]:
        """A new session for ``token`` (already verified): its id (the cookie's value) and the session."""
        now = self._clock()
        session = WebSession(token=token, csrf=secrets.token_urlsafe(32), created=now, seen=now)
        sid = secrets.token_urlsafe(32)
        with self._lock:
            self._expire(now)
            while len(self._sessions) >= MAX_SESSIONS:
                del self._sessions[min(self._sessions, key=lambda k: self._sessions[k].seen)]
            self._sessions[sid] = session
        return sid, session

    def get(self, sid: str | None) -> WebSession | None:
        """The live session of cookie value ``sid``, or None."""
        if not sid:
            return None
        now = self._clock()
        with self._lock:
            session = self._sessions.get(sid)
            if session is None:
                return None
            if _ended(session, now):
                del self._sessions[sid]
                return None
            session.seen = now
            return session

    def drop(self, sid: str | None) -> None:
        """Sign session ``sid`` out (nothing when there is none)."""
        if sid:
            with self._lock:
                self._sessions.pop(sid, None)

    def _expire(self, now: float) -> None:
        for sid in [k for k, s in self._sessions.items() if _ended(s, now)]:
            del self._sessions[sid]


def _ended(session: WebSession, now: float) -> bool:
    """Whether ``session`` went unused too long, or lasted too long in all, at ``now``."""
    return now - session.seen > IDLE_SECONDS or now - session.created > MAX_SECONDS


def cookie_of(headers: Mapping[bytes, bytes]) -> str | None:
    """The session cookie's value in raw ASGI ``headers``, or None."""
    raw = headers.get(b"cookie")
    if raw is None:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw.decode("latin-1"))
    except Exception:  # a malformed Cookie header is no session, not an error
        return None
    morsel = jar.get(COOKIE)
    return morsel.value if morsel is not None else None


def request_authenticator(authenticate: Callable[[str | None], Any], sessions: WebSessions
                          ) -> Callable[[Mapping[bytes, bytes]], Any]:
    """The caller of a request from its raw headers: its ``Authorization`` header when it has one, else its session cookie with the session's key in
    :data:`CSRF_HEADER`, else no token at all."""

    def of_request(headers: Mapping[bytes, bytes]) -> Any:
        header = headers.get(b"authorization")
        if header is not None:
            return authenticate(header.decode("latin-1"))
        sid = cookie_of(headers)
        if sid is None:
            return authenticate(None)
        session = sessions.get(sid)
        if session is None:
            raise AuthError("the browser session has ended: sign in again")
        sent = headers.get(CSRF_HEADER.encode(), b"").decode("latin-1")
        if not hmac.compare_digest(sent.encode(), session.csrf.encode()):
            raise AuthError(f"a request made with the session cookie needs the session's key ({CSRF_HEADER})")
        return authenticate(f"Bearer {session.token}")

    return of_request


def set_cookie_header(sid: str, *, secure: bool) -> str:
    """The ``Set-Cookie`` value of session ``sid``."""
    flags = f"; Max-Age={MAX_SECONDS}; Path=/; HttpOnly; SameSite=Strict" + ("; Secure" if secure else "")
    return f"{COOKIE}={sid}{flags}"


def clear_cookie_header(*, secure: bool) -> str:
    """The ``Set-Cookie`` value that removes the session cookie."""
    return f"{COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict" + ("; Secure" if secure else "")
