"""What the built-in providers share: one HTTP server behind a URL and a key, spoken with httpx, whose answers are
read within a size and a time bound and parsed as bounded JSON, and whose errors never carry the key."""

from __future__ import annotations

import json
import threading
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from cortex import jsonsafe
from cortex.errors import CortexError, ProviderError
from cortex.names import check_agent_name
from cortex.providers.base import MemoryProvider

if TYPE_CHECKING:
    import httpx

#: The agent a Hermes-style call (no agent given) is made for, unless :meth:`HTTPProvider.initialize` names one.
DEFAULT_AGENT = "default"
#: The most bytes of one answer read (a page of hits is far smaller; more is a broken or hostile server).
MAX_ANSWER_BYTES = 8 * 1024 * 1024


class HTTPProvider(MemoryProvider):
    """A provider over one HTTP server: ``url``, a secret ``_key`` and a ``timeout`` for each request as a whole
    (connecting, each read and the full answer). Subclasses send with :meth:`_request` and raise :meth:`_fail`."""

    url: str = ""
    timeout: float = 5.0
    _key: str | None = None

    def _setup(self, url: str, key: str | None, timeout: float) -> None:
        self.url = url.strip().rstrip("/")
        self._key = key or None
        self.timeout = float(timeout)
        self._http: httpx.Client | None = None
        self._lock = threading.Lock()
        self.agent = DEFAULT_AGENT
        self._status: dict[str, Any] = {}

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(url={shown(self.url)!r}, api_key={'set' if self._key else 'none'}, "
                f"timeout={self.timeout:g})")

    def is_available(self) -> bool:
        """True when a ``http(s)://`` URL is configured (no network)."""
        parts = urlsplit(self.url)
        return parts.scheme in ("http", "https") and bool(parts.netloc)

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Remember the agent Hermes-style calls are made for: ``agent`` (Cortex) or ``agent_identity`` (Hermes's
        profile) when it is a valid agent name, else :data:`DEFAULT_AGENT`."""
        for key in ("agent", "agent_identity"):
            value = kwargs.get(key)
            if isinstance(value, str) and value:
                try:
                    self.agent = check_agent_name(value)
                    return
                except CortexError:  # not a Cortex agent name (a Hermes profile may be any text): the next one
                    continue

    def prefetch(self, query: str, *, session_id: str = "", agent: str | None = None) -> str:
        """The hits of :meth:`search` for ``agent`` (default: the initialized agent) as a Markdown list, one
        memory a line ("" for none)."""
        hits = self.search(query, agent=agent or self.agent, limit=10)
        return "\n".join(f"- {' '.join(hit.content.split())}" for hit in hits if hit.content.strip())

    def recall_status(self) -> dict[str, Any]:
        """The last search: ``query``, ``agent``, ``count``, ``state`` (ok / failed), ``ids``, ``seconds``, and
        ``error`` when it failed."""
        return dict(self._status)

    def shutdown(self) -> None:
        """Close the connection pool."""
        with self._lock:
            client, self._http = self._http, None
        if client is not None:
            client.close()

    def _headers(self) -> dict[str, str]:
        return {"Accept": "application/json"}

    def _client(self) -> httpx.Client:
        import httpx

        with self._lock:
            if self._http is None:
                self._http = httpx.Client(base_url=self.url, timeout=self.timeout, follow_redirects=False)
            return self._http

    def _request(self, method: str, path: str, *, body: Any = None, params: dict[str, str] | None = None,
                 headers: dict[str, str] | None = None) -> tuple[int, Any, str]:
        """Send one request; the answer's status, its JSON (``None`` for an empty body) and its text.
        :class:`ProviderError` when the server cannot be reached, takes longer than the time-out, answers more
        than :data:`MAX_ANSWER_BYTES` or something that is not JSON."""
        import httpx

        where = f"{method} {path}"
        deadline = time.monotonic() + self.timeout
        try:
            with self._client().stream(method, path, json=body, params=params,
                                       headers={**self._headers(), **(headers or {})}) as answer:
                data = bytearray()
                for chunk in answer.iter_bytes():
                    data += chunk
                    if len(data) > MAX_ANSWER_BYTES:
                        raise self._fail(f"{where} answered more than {MAX_ANSWER_BYTES} bytes: not read")
                    if time.monotonic() > deadline:
                        raise self._fail(f"{where} did not finish answering within {self.timeout:g} s")
                status = answer.status_code
        except httpx.TimeoutException:
            raise self._fail(f"{where} did not answer within {self.timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise self._fail(f"{shown(self.url)} cannot be reached ({where}): {type(exc).__name__}: {exc}") from None
        text = data.decode("utf-8", errors="replace")
        if not text.strip():
            return status, None, text
        try:
            return status, jsonsafe.loads(text), text
        except jsonsafe.JSONLimitError as exc:
            raise self._fail(f"{where} answered HTTP {status}: {exc}") from None
        except ValueError:
            raise self._fail(f"{where} answered HTTP {status} with something that is not JSON: "
                             f"{head(text)!r}") from None

    def _fail(self, message: str) -> ProviderError:
        """A :class:`ProviderError` whose message cannot carry the key, even if the server echoed it."""
        if self._key:  # as sent, and as a repr or a JSON string would show it
            for form in {self._key, repr(self._key)[1:-1], json.dumps(self._key)[1:-1]}:
                message = message.replace(form, "***")
        return ProviderError(self.name, message)


def shown(url: str) -> str:
    """``url`` without credentials in it (``user:password@`` is dropped)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


def head(text: str, size: int = 200) -> str:
    """``text`` on one line, cut to ``size`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= size else flat[:size] + "..."
