"""The user's background server: one process that serves every store a ``cortex mcp`` session asks for.

``cortex mcp`` (each coding-agent session runs one) needs the store to be served, so that the sessions, the CLI,
the hooks and ``Cortex.open`` share it without locking each other out. Rather than a server per store, it asks
the user's *hub*, starting it when none runs. The hub:

* serves each store under ``/stores/<key>`` (its own app: the store's tokens, agents and discovery file, whose
  URL includes the prefix, so every client finds it as it finds any server);
* loads the embedding model once for all of them (the provider's model is shared by the process);
* stops serving a store after its idle time (30 minutes without a request), and exits when it serves none;
* gives a store up when ``cortex serve`` (or ``cortex server stop``) asks for it: see
  :func:`cortex.service.control.stop`.

A hub serves the stores of sessions with the same Cortex settings: the ``CORTEX_*`` environment, the Python
interpreter and the Cortex installation make its identity (:func:`identity`), so a session with other settings
(another embedding provider, another virtualenv) gets a hub of its own. Its control API (open, release, list)
takes the hub's token, kept in the user's private servers directory next to its address.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import secrets
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cortex import discovery, jsonsafe
from cortex.errors import CortexError, InvalidInputError, StoreLockedError
from cortex.files import atomic_write, private_dir
from cortex.service.control import HubInfo, hub_file, read_hub

log = logging.getLogger("cortex.hub")

#: A hub that has served no store for this long since it started exits (a client that spawned it died).
EMPTY_EXIT = 60.0


@dataclasses.dataclass
class _Served:
    """One store the hub serves."""

    key: str
    state_dir: Path
    cx: Any
    app: Any
    info: discovery.ServerInfo
    idle_exit: float
    last_request: float = dataclasses.field(default_factory=time.monotonic)

    def capturing(self) -> bool:
        """Whether the store's capture queue has work (a store is not idle while it captures)."""
        queue = getattr(getattr(self.app, "state", None), "capture_queue", None)
        if queue is None:
            return False
        status = queue.status()
        return bool(status["waiting"] or status["running"])

    def stop(self) -> None:
        # the discovery file goes last: once it is gone, the store is closed and its lock free
        queue = getattr(getattr(self.app, "state", None), "capture_queue", None)
        watcher = getattr(getattr(self.app, "state", None), "notes_watcher", None)
        sweeper = getattr(getattr(self.app, "state", None), "sweeper", None)
        try:
            if sweeper is not None:
                sweeper.close()  # the scope being consolidated is finished first
            if watcher is not None:
                watcher.close()
            if queue is not None:
                queue.close()  # the capture running finishes first; what waits is read by a later capture
            self.cx.flush()
        finally:
            try:
                self.cx.close()
            finally:
                discovery.remove(self.state_dir, self.info.pid)


class Hub:
    """The ASGI app of the hub: ``/healthz``, ``/control/{open,release,list}`` and ``/stores/<key>/...``."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token
        self.stores: dict[str, _Served] = {}
        self.lock = threading.RLock()  # the dict of stores (held briefly; read without it in the event loop)
        self._opening = threading.Lock()  # one store opened at a time (opening may take seconds)
        self.started = time.monotonic()
        self.served_any = False
        self.exit = threading.Event()
        #: whether the hub is stopping (its server's SIGTERM): the stores' event streams end then
        self.stopping: Callable[[], bool] = self.exit.is_set

    # -- control ---------------------------------------------------------------------------------

    def open(self, store: str, agent_dirs: Sequence[str], embeddings: str, idle_exit: float,
             state: str | None = None) -> discovery.ServerInfo:
        """Serve ``store`` (a store location; its state directory ``state``, by default the one
        :func:`cortex.state.state_dir_of` gives) unless something already does; its server's info."""
        from cortex.app import Cortex
        from cortex.service.auth import TokenStore
        from cortex.service.guard import Limits
        from cortex.service.http import create_app
        from cortex.service.server import LOOPBACK_NAMES, _housekeeping
        from cortex.state import state_dir_of

        location: Any = store if "://" in store else Path(store)
        state_dir = Path(state) if state else state_dir_of(location)
        if state_dir is None:
            raise InvalidInputError("store", f"{store} has no state directory to publish its server in")
        key = discovery.store_key(state_dir)
        with self._opening:
            served = self.stores.get(key)
            if served is not None:
                served.last_request = time.monotonic()
                return served.info
            owner = discovery.find(state_dir)
            if owner is not None:
                return owner
            private_dir(state_dir)
            cx = Cortex.open(location, agent_dirs=[Path(d) for d in agent_dirs], embeddings=embeddings,
                             state_dir=state_dir, client=False)  # StoreLockedError: the caller waits and retries
            warm_up = getattr(cx.embeddings, "warm_up", None)
            if warm_up is not None:
                warm_up()  # the model is the process's: loaded once for every store
            info = discovery.ServerInfo(url=f"{self.url}/stores/{key}", pid=os.getpid(),
                                        token=secrets.token_urlsafe(32), auto=True, started=time.time(),
                                        idle_exit=idle_exit, store=str(cx.info()["store"]), hub=True)
            served = _Served(key, state_dir, cx, None, info, idle_exit)

            def note_activity(served: _Served = served) -> None:
                served.last_request = time.monotonic()

            served.app = create_app(cx, tokens=TokenStore(state_dir), local_token=info.token, mcp=False,
                                    allowed_hosts=LOOPBACK_NAMES, limits=Limits.from_env(None, None),
                                    on_request=note_activity, watch_notes=True)
            served.app.state.stopping = lambda: self.stopping()
            with self.lock:
                self.stores[key] = served
                self.served_any = True
            discovery.write(state_dir, info)
        log.warning("serving %s at %s", info.store, info.url)
        threading.Thread(target=_housekeeping, args=(cx, state_dir), name="cortex-housekeeping", daemon=True).start()
        return info

    def release(self, state_dir: Path) -> bool:
        """Stop serving the store of ``state_dir`` (flushed and closed); False when it was not served here."""
        with self.lock:
            served = self.stores.pop(discovery.store_key(state_dir), None)
        if served is None:
            return False
        served.stop()
        log.warning("no longer serving %s", served.info.store)
        self._exit_when_empty()
        return True

    def _exit_when_empty(self) -> None:
        with self.lock:
            if not self.stores and (self.served_any or time.monotonic() - self.started > EMPTY_EXIT):
                self.exit.set()

    def watch(self) -> None:
        """Release the stores idle for longer than their idle time; set :attr:`exit` once none is served."""
        while not self.exit.wait(1.0):
            now = time.monotonic()
            with self.lock:
                idle = [s.state_dir for s in self.stores.values() if now - s.last_request > s.idle_exit
                        and not s.capturing()]
            for state_dir in idle:
                log.warning("no request for a while: releasing %s", state_dir)
                self.release(state_dir)
            self._exit_when_empty()

    def close(self) -> None:
        """Release every store (at shutdown)."""
        with self.lock:
            served = list(self.stores.values())
            self.stores.clear()
        for s in served:
            try:
                s.stop()
            except Exception as exc:  # noqa: BLE001 - close the others whatever one does
                log.warning("closing %s failed: %s", s.info.store, exc)

    # -- ASGI ------------------------------------------------------------------------------------

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        path: str = scope.get("path", "")
        if path.startswith("/stores/"):
            key, _, _rest = path[len("/stores/"):].partition("/")
            served = self.stores.get(key)  # one dict read: atomic, and the event loop must not wait on a lock
            if served is None:
                await _json(send, 503, {"error": {"type": "ServiceError", "message":
                                                  "this store is no longer served here: ask for it again"}})
                return
            child = dict(scope, root_path=scope.get("root_path", "") + f"/stores/{key}")
            await served.app(child, receive, send)
            return
        if scope["type"] != "http":
            return
        if path == "/healthz":
            await _json(send, 200, {"status": "ok", "pid": os.getpid(), "stores": len(self.stores)})
            return
        action = path.removeprefix("/control/")
        if scope.get("method") != "POST" or action not in ("open", "release", "list"):
            await _json(send, 404, {"error": {"type": "NotFound", "message": f"no {path}"}})
            return
        headers = dict(scope.get("headers") or [])
        if headers.get(b"authorization", b"") != f"Bearer {self.token}".encode():
            await _json(send, 401, {"error": {"type": "AuthError", "message": "the hub's token is required"}})
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body") or len(body) > 1 << 20:
                break
        import anyio

        try:
            request = jsonsafe.loads(body or b"{}")
            answer = await anyio.to_thread.run_sync(self._control, action, request)
        except CortexError as exc:
            status = 409 if isinstance(exc, StoreLockedError) else 422 if isinstance(exc, InvalidInputError) else 500
            await _json(send, status, {"error": {"type": type(exc).__name__, "message": str(exc),
                                                 "field": getattr(exc, "field", None)}})
            return
        except (ValueError, KeyError, TypeError) as exc:
            await _json(send, 422, {"error": {"type": "InvalidInputError", "message": f"bad request: {exc}"}})
            return
        await _json(send, 200, answer)

    def _control(self, action: str, request: dict[str, Any]) -> dict[str, Any]:
        if action == "open":
            info = self.open(str(request["store"]), [str(d) for d in request.get("agent_dirs", [])],
                             str(request.get("embeddings", "auto")), float(request.get("idle_exit", 1800.0)),
                             str(request["state_dir"]) if request.get("state_dir") else None)
            return {"url": info.url, "pid": info.pid}
        if action == "release":
            return {"released": self.release(Path(str(request["state_dir"])))}
        with self.lock:
            return {"stores": [s.info.store for s in self.stores.values()]}

    async def _lifespan(self, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.close()
                await send({"type": "lifespan.shutdown.complete"})
                return


async def _json(send: Any, status: int, data: Any) -> None:
    body = json.dumps(data).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def run(ident: str) -> int:
    """``cortex server hub``: run the hub of these settings until it serves nothing (or SIGTERM). Exits 0 at
    once when another hub of the same settings runs (the one that won the race)."""
    import fcntl

    import uvicorn

    from cortex.service.server import _server_class

    directory = private_dir(discovery.servers_dir())
    lock = open(directory / f"hub-{ident}.lock", "a+")  # noqa: SIM115 - held for the life of the process
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    hub = Hub(url, secrets.token_urlsafe(32))
    path = hub_file(ident)

    settings = uvicorn.Config(hub, log_level="warning", lifespan="on", timeout_graceful_shutdown=10,
                              timeout_keep_alive=30)
    server = _server_class()(settings)
    hub.stopping = lambda: bool(server.should_exit) or hub.exit.is_set()

    def publish_then_watch() -> None:
        while not server.started and not server.should_exit:
            time.sleep(0.02)
        atomic_write(path, json.dumps(dataclasses.asdict(HubInfo(url, os.getpid(), hub.token, time.time()))))
        print(f"cortex: the user's server for these settings listens on {url} (pid {os.getpid()})",
              file=sys.stderr, flush=True)
        hub.watch()
        server.should_exit = True

    threading.Thread(target=publish_then_watch, name="cortex-hub", daemon=True).start()
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        hub.close()
        with contextlib.suppress(OSError):
            existing = read_hub(path)
            if existing is None or existing.pid == os.getpid():
                path.unlink(missing_ok=True)
    return 0
