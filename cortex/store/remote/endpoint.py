"""Where a remote store is and how to reach it: a ``sparql+http(s)://`` location read into an :class:`Endpoint`
(credentials never shown), and the HTTP authentication it names."""

from __future__ import annotations

import os
import urllib.parse
from dataclasses import dataclass, field

import httpx

from cortex import config
from cortex.errors import InvalidInputError

DEFAULT_TIMEOUT = 30.0
#: The most bytes of one answer read from the server (``max_answer=`` MiB in the location): a whole scope's graph
#: is one answer when an index is rebuilt or a scope exported (about 1.2 KB a memory in N-Triples: ~200,000
#: memories fit in the default).
DEFAULT_MAX_ANSWER = 256 * 1024 * 1024


@dataclass(frozen=True)
class Endpoint:
    """Where a remote store is and how to talk to it (parsed from a ``sparql+http(s)://`` location)."""

    query_url: str
    update_url: str
    gsp_url: str | None
    auth: str | None  # "basic" or "digest"
    username: str | None = field(repr=False)
    password: str | None = field(repr=False)
    timeout: float = DEFAULT_TIMEOUT
    #: The most bytes one answer of the server may hold.
    max_answer: int = DEFAULT_MAX_ANSWER

    @property
    def location(self) -> str:
        """The query endpoint as ``sparql+http(s)://host:port/path``, without credentials."""
        return "sparql+" + self.query_url

    @classmethod
    def parse(cls, text: str) -> "Endpoint":
        """Read a store location; raises :class:`InvalidInputError` (field ``store``) naming what is wrong,
        never echoing the credentials."""
        scheme, sep, _ = text.partition("://")
        if not sep or scheme not in config.REMOTE_SCHEMES:
            raise InvalidInputError("store", f"a remote store location starts with sparql+http:// or sparql+https://"
                                             f", not {scheme!r}")
        try:
            parts = urllib.parse.urlsplit(text[len("sparql+"):])
            host, port = parts.hostname, parts.port
        except ValueError as exc:
            raise InvalidInputError("store", f"is not a valid URL ({str(exc).split(':')[0]})") from None
        if not host:
            raise InvalidInputError("store", "names no host")
        base = f"{parts.scheme}://{host if ':' not in host else '[' + host + ']'}" + (f":{port}" if port else "")
        params = urllib.parse.parse_qs(parts.query, keep_blank_values=True)
        unknown = sorted(set(params) - {"update", "gsp", "auth", "timeout", "max_answer"})
        if unknown:
            raise InvalidInputError("store", f"unknown parameter {unknown[0]!r} (update, gsp, auth, timeout, "
                                             f"max_answer)")

        def endpoint(value: str | None, default: str | None) -> str | None:
            if value is None:
                return default
            if value.startswith(("http://", "https://")):
                return value
            return base + (value if value.startswith("/") else "/" + value)

        def one(name: str) -> str | None:
            values = params.get(name)
            return values[-1] if values else None

        auth = one("auth")
        if auth is not None and auth not in ("basic", "digest"):
            raise InvalidInputError("store", f"auth must be basic or digest, not {auth!r}")
        try:
            timeout = float(one("timeout") or DEFAULT_TIMEOUT)
        except ValueError:
            raise InvalidInputError("store", "timeout must be a number of seconds") from None
        if not 0 < timeout <= 3600:
            raise InvalidInputError("store", "timeout must be between 0 and 3600 seconds")
        raw_answer = one("max_answer")
        if raw_answer is not None and not (raw_answer.isdigit() and 1 <= int(raw_answer) <= 64 * 1024):
            raise InvalidInputError("store", "max_answer must be a number of MiB from 1 to 65536")
        max_answer = int(raw_answer) * 1024 * 1024 if raw_answer is not None else DEFAULT_MAX_ANSWER
        username = urllib.parse.unquote(parts.username) if parts.username else os.environ.get("CORTEX_STORE_USER")
        password = urllib.parse.unquote(parts.password) if parts.password is not None \
            else os.environ.get("CORTEX_STORE_PASSWORD")
        query_url = base + (parts.path or "/sparql")
        return cls(query_url=query_url, update_url=endpoint(one("update"), query_url) or query_url,
                   gsp_url=endpoint(one("gsp"), None), auth=(auth or "basic") if username else None,
                   username=username, password=password, timeout=timeout, max_answer=max_answer)


def http_auth(endpoint: Endpoint) -> httpx.Auth | None:
    """The HTTP authentication of the endpoint's credentials (basic unless it says digest), or None."""
    if endpoint.username is None:
        return None
    password = endpoint.password or ""
    if endpoint.auth == "digest":
        return httpx.DigestAuth(endpoint.username, password)
    return httpx.BasicAuth(endpoint.username, password)
