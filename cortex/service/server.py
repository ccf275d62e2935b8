"""``cortex serve``: one process owns the store and serves the HTTP API and MCP over it.

It opens the store (failing with :class:`StoreLockedError` when another process holds it), refuses to
listen beyond loopback unless tokens exist, publishes the discovery file once it listens, and on SIGTERM or
SIGINT stops accepting, flushes and closes the store, and removes the discovery file.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import logging
import os
import secrets
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cortex import config, discovery, provenance
from cortex.app import Cortex
from cortex.errors import AuthError, InvalidInputError, StoreLockedError
from cortex.service import control
from cortex.service.auth import TokenStore
from cortex.service.guard import MAX_HEADER_BYTES, Limits
from cortex.state import state_dir_of
from cortex.store import Location

if TYPE_CHECKING:
    import uvicorn

log = logging.getLogger("cortex.serve")
LOOPBACK_NAMES = ["127.0.0.1", "localhost", "::1", "[::1]"]
DEFAULT_MAX_CONCURRENCY = 256


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _server_class() -> type:
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn re-raises SIGTERM/SIGINT after its graceful shutdown, so the process would die of the
        signal; a requested stop that shut down cleanly exits 0 instead."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            with super().capture_signals():
                yield
                self._captured_signals.clear()

    return Server


def _housekeeping(cx: Cortex, state_dir: Path) -> None:
    """Deliver the hooks' spooled captures; once the embedding model has loaded, embed what was stored without
    vectors meanwhile."""
    from cortex.service.spool import SPOOL_DIR, Spool

    def deliver(agent_type: str, output: str, project: str | None) -> None:
        agent = cx.resolve_agent(agent_type)
        if agent is None:
            log.warning("spooled capture for %r dropped: no agent with memory has that name or alias", agent_type)
            return
        cx.agent_end(agent, output, project)

    try:
        with provenance.activity(surface="hook", event="spool-replay"):  # captures a hook could not deliver
            delivered = Spool(state_dir / SPOOL_DIR).replay(deliver)
        if delivered:
            log.warning("delivered %d spooled capture(s)", delivered)
    except Exception as exc:  # noqa: BLE001 - the spool waits for the next chance
        log.warning("replaying the spool stopped: %s", exc)
    provider = cx.embeddings
    if provider is None:
        return
    deadline = time.monotonic() + 600
    while not getattr(provider, "ready", True) and time.monotonic() < deadline:
        time.sleep(0.2)
    try:
        embedded = cx.embed_missing()
        if embedded:
            log.warning("embedded %d memories stored while the model was loading", embedded)
    except Exception as exc:  # noqa: BLE001 - housekeeping must never take the server down
        log.warning("embedding the memories without vectors failed: %s", exc)


def serve(
    location: Location,
    *,
    agent_dirs: Iterable[Path] = (),
    host: str = "127.0.0.1",
    port: int = 8765,
    embeddings: str = "auto",
    idle_exit: float | None = None,
    max_body_bytes: int | None = None,
    body_timeout: float | None = None,
    max_concurrency: int | None = None,
    auto: bool = False,
    announce: Callable[[str], None] | None = None,
) -> bool:
    """Run the server over the store at ``location`` until SIGTERM/SIGINT (or ``idle_exit`` seconds without a
    request). Tokens and the discovery file live in the store's state directory. ``auto``: started in the
    background by a client (a later ``cortex serve`` takes its place).

    One process owns a store: a server a client started is stopped and this one takes its place; when a server
    started by ``cortex serve`` already owns it, ``announce`` hears where and the answer is False (nothing
    done); another process holding the store is waited for as long as :func:`cortex.config.lock_wait`."""
    from cortex.service.http import create_app

    state_dir = state_dir_of(location)
    if state_dir is None:
        raise InvalidInputError("store", "a server needs a state directory for its tokens and discovery file: a "
                                         "store directory, or --state-dir / $CORTEX_STATE_DIR with a remote store")
    tokens = TokenStore(state_dir)
    if not _take_over(state_dir, tokens, host, auto, announce):
        return False
    sock = _listen(host, port)
    cx = _open_when_free(location, sock, agent_dirs=agent_dirs, embeddings=embeddings, state_dir=state_dir,
                         auto=auto)
    warm_up = getattr(cx.embeddings, "warm_up", None)
    if warm_up is not None:
        warm_up()  # requests never wait for the model: until it is loaded, writes skip vectors, searches use bm25
    bound_port = sock.getsockname()[1]
    shown_host = f"[{host.strip('[]')}]" if sock.family == socket.AF_INET6 else host
    info = discovery.ServerInfo(url=f"http://{shown_host}:{bound_port}", pid=os.getpid(),
                                token=secrets.token_urlsafe(32), auto=auto, started=time.time(),
                                idle_exit=idle_exit, store=str(cx.info()["store"]))
    last_request = [time.monotonic()]

    def started() -> None:
        discovery.write(state_dir, info)
        print(f"cortex: serving {cx.info()['store']} on {info.url} (pid {info.pid}); memory browser at "
              f"{info.url}/ (sign in with a token: cortex token create --admin)", file=sys.stderr,
              flush=True)  # the store's printable location: never its credentials
        threading.Thread(target=_housekeeping, args=(cx, state_dir), name="cortex-housekeeping", daemon=True).start()

    def stopped() -> None:
        discovery.remove(state_dir, info.pid)
        try:
            cx.flush()
        finally:
            cx.close()

    def note_activity() -> None:
        last_request[0] = time.monotonic()

    limits = Limits.from_env(max_body_bytes, body_timeout)
    app = create_app(cx, tokens=tokens, local_token=info.token,
                     allowed_hosts=LOOPBACK_NAMES if is_loopback(host) else None,
                     limits=limits, on_request=note_activity,
                     on_startup=started, on_shutdown=stopped, watch_notes=True)
    # event streams hold their connection while open: at most a quarter of them, the rest for every other route
    app.state.stream_slots.total = max(1, (max_concurrency or DEFAULT_MAX_CONCURRENCY) // 4)

    server = _uvicorn_server(app, max_concurrency, limits.header_timeout)
    app.state.stopping = lambda: server.should_exit  # SIGTERM: open event streams end at once
    if idle_exit:
        _stop_when_idle(server, idle_exit, last_request)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        if not server.started:  # the lifespan never ran: release the store here
            stopped()
    return True


def _uvicorn_server(app: Any, max_concurrency: int | None, header_timeout: float) -> "uvicorn.Server":
    """The uvicorn server of ``app`` (see :func:`_server_class`), its connections by :func:`_protocol_class`."""
    import uvicorn

    # beyond max_concurrency connections or requests in flight uvicorn answers 503 at once instead of queueing
    # without bound; timeout_keep_alive well above the clients' 5 s keep-alive expiry (httpx's default): with both
    # at 5 s, a client could reuse a connection in the instant the server closed it, and see a connection reset.
    # h11_max_incomplete_event_size: a request line and headers larger than 16 KiB get 400 (h11's default, said)
    settings = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=10,
                              limit_concurrency=max_concurrency or DEFAULT_MAX_CONCURRENCY, timeout_keep_alive=30,
                              h11_max_incomplete_event_size=MAX_HEADER_BYTES, http=_protocol_class(header_timeout))
    server: uvicorn.Server = _server_class()(settings)
    return server


def _protocol_class(header_timeout: float) -> type:
    """uvicorn's h11 connection, with a time-out for the request's line and headers, which uvicorn lacks: a
    connection that never sends a request, or sends its headers a byte at a time, would hold one of the
    ``--max-concurrency`` connections for ever (255 of them and every route answers 503). uvicorn's keep-alive
    time-out only runs between two requests and ends at the first byte received. Here the headers must be whole
    within ``header_timeout`` seconds of the connection's opening, or of the first byte of a next request."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Protocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:  # the request's headers are in: its body has its own time-out
                self._disarm()
            elif self.conn.trailing_data[0] and self._header_timer is None:  # a next request begun
                self._arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self.conn.their_state is h11.IDLE and self.conn.trailing_data[0]:  # a pipelined request begun
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._header_timer = self.loop.call_later(header_timeout, self._too_slow)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _too_slow(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    return Protocol


def _take_over(state_dir: Path, tokens: TokenStore, host: str, auto: bool,
               announce: Callable[[str], None] | None) -> bool:
    """Whether this server may go on: it refuses to listen beyond loopback without tokens, stops a server a
    client started, and gives way (False, ``announce`` hears where) to one ``cortex serve`` started."""
    if not is_loopback(host) and not tokens.configured():
        raise AuthError(
            f"refusing to listen on {host} without tokens: create one with `cortex token create --admin` "
            "(or --agent NAME), or listen on 127.0.0.1"
        )
    owner = control.status(state_dir)
    if owner is not None and not auto and owner.info.auto:
        (announce or log.warning)(f"taking over from the server pid {owner.info.pid} a client started")
        control.stop(owner)
    elif owner is not None:
        (announce or log.warning)(f"{owner.info.store or state_dir} is already served on {owner.info.url} (pid "
                                  f"{owner.info.pid}); `cortex server stop` stops it")
        return False
    return True


def _listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` (not yet listening); :class:`InvalidInputError` when it cannot be."""
    if not 0 <= port <= 65535:
        raise InvalidInputError("port", f"must be 0-65535, not {port}")
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # accepted connections inherit it: without, a response written in two parts waits ~40 ms for a delayed ACK
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        hint = " (another server? `cortex server status --all`; --port N, or --port 0 for any free port)" \
            if exc.errno == errno.EADDRINUSE else ""
        raise InvalidInputError("port", f"cannot listen on {host}:{port}: {exc.strerror}{hint}") from None
    return sock


def _open_when_free(location: Location, sock: socket.socket, *, agent_dirs: Iterable[Path], embeddings: str,
                    state_dir: Path, auto: bool) -> Cortex:
    """The Cortex over the store, waiting as long as :func:`cortex.config.lock_wait` for another process to
    let it go (closing ``sock`` when it does not)."""
    # a server a client starts gives way at once: the one that won the race is about to publish itself
    deadline = time.monotonic() + (0.0 if auto else config.lock_wait())
    while True:
        try:
            return Cortex.open(location, agent_dirs=list(agent_dirs), embeddings=embeddings, state_dir=state_dir,
                               client=False)
        except StoreLockedError:
            if time.monotonic() >= deadline:
                sock.close()
                raise
            time.sleep(0.1)


def _stop_when_idle(server: "uvicorn.Server", idle_exit: float, last_request: list[float]) -> None:
    """Stop ``server`` (a uvicorn server) once no request came for ``idle_exit`` seconds."""
    def watch() -> None:
        while not server.should_exit:
            time.sleep(min(1.0, idle_exit))
            if time.monotonic() - last_request[0] > idle_exit:
                log.warning("no request for %.0f s: stopping", idle_exit)
                server.should_exit = True

    threading.Thread(target=watch, daemon=True).start()
