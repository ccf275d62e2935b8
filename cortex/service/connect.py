"""How a client process reaches the store: through the running server when there is one, else by opening
the store itself (waiting while another short-lived process holds it), or, for the CLI when an embedding model
would have to be loaded, through a server it starts in the background (the model is then loaded once per
machine session, not once per command)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cortex import config
from cortex.errors import ServiceError, StoreLockedError
from cortex.state import is_remote, state_dir_of

if TYPE_CHECKING:
    from cortex.store import Location
    from cortex.api import MemoryAPI
    from cortex.api.client import RemoteCortex

#: An auto-started server stops after this many seconds without a request.
AUTO_SERVER_IDLE = 1800.0


def owner_client(state_dir: Path | None) -> RemoteCortex | None:
    """:func:`cortex.api.client.owner_client`, without importing the client and the table of operations when no
    live process wrote the discovery file (the hook and the CLI without a server never need them)."""
    from cortex import discovery

    info = discovery.read(state_dir) if state_dir is not None else None
    if info is None or not discovery.alive(info.pid):
        return None  # what owner_client answers then, too
    from cortex.api.client import owner_client as client_of

    return client_of(state_dir)


def connect(location: Location, *, embeddings: str = "auto", wait: float | None = None, read_only: bool = False,
            on_wait: Callable[[StoreLockedError], None] | None = None) -> MemoryAPI:
    """The server's client if one owns the store, else the store opened here. While another process holds
    the store without serving it: a reader (``read_only``) opens it read-only at once and answers from what
    that process has committed (:meth:`Cortex.open`'s ``read_only``: a reader never waits for a writer); a
    writer retries for ``wait`` seconds (default :func:`cortex.config.lock_wait`; ``on_wait`` is told once,
    when the wait starts), then raises :class:`StoreLockedError` naming that process."""
    state_dir = state_dir_of(location)
    client = owner_client(state_dir)
    if client is not None:
        return client
    from cortex.app import Cortex  # here: a client of a running server never imports the engine

    deadline = time.monotonic() + (config.lock_wait() if wait is None else wait)
    told = False
    while True:
        try:  # a remote store's indexes are kept in its state directory, when it has one
            return Cortex.open(location, embeddings=embeddings, state_dir=state_dir if is_remote(location) else None,
                               client=False)
        except StoreLockedError as exc:
            client = owner_client(state_dir)
            if client is not None:
                return client
            if read_only and exc.pid != os.getpid() and not is_remote(location):
                return Cortex.open(location, embeddings=embeddings, client=False, read_only=True)
            if time.monotonic() >= deadline:
                raise
            if on_wait is not None and not told:
                on_wait(exc)
                told = True
            time.sleep(0.05)


def for_cli(location: Location, *, embeddings: str, read_only: bool,
            on_wait: Callable[[StoreLockedError], None] | None = None) -> MemoryAPI:
    """The CLI's way to the store: the running server's client when one owns it, else the store opened here
    (a command never starts a server: the default model loads in about a second, and a server left behind
    would hold the store against the user's next `cortex serve` or `Cortex.open`); a reading command
    (``read_only``) opens it read-only while another process writes it, a writing one waits (:func:`connect`).
    A read-only command on an embedded store that does not exist yet answers from an empty in-memory store
    instead of creating one (a remote store always answers for itself, whatever its state directory holds)."""
    state_dir = state_dir_of(location)
    if read_only and not is_remote(location) and state_dir is not None and not state_dir.exists():
        from cortex.app import Cortex  # (no store, so no server owning it)

        return Cortex.open(None, embeddings="none", client=False)
    return connect(location, embeddings=embeddings, read_only=read_only, on_wait=on_wait)


def ensure_server(store_path: Path, *, agent_dirs: Sequence[Path] = (), embeddings: str = "auto",
                  timeout: float = 60.0, idle_exit: float = AUTO_SERVER_IDLE,
                  location: Location | None = None) -> RemoteCortex:
    """A client of the server owning ``store_path``; when none runs, the user's background server (the hub of
    this session's settings, :mod:`cortex.service.hub`, started when none runs) is asked to serve the store.

    Several processes may call this at once (each coding-agent session starts its own ``cortex mcp``): every
    one may spawn a hub, the first to take the hub's lock runs, the others exit, and all callers end up with
    the one hub serving the store. It stops serving the store after ``idle_exit`` seconds without a request, and
    exits when it serves none. While another process holds the store without serving it, this waits.
    ``store_path`` is the store's state directory (where its server publishes itself); ``location`` the store
    when it is not that directory (a remote store: ``sparql+http://...``).
    """
    import subprocess
    import sys

    from cortex import discovery
    from cortex.files import private_dir
    from cortex.service import control

    state_dir = Path(store_path)
    client = owner_client(state_dir)
    if client is not None:
        return client
    ident = control.identity()
    hub_path = control.hub_file(ident)
    log_path = private_dir(discovery.servers_dir()) / f"hub-{ident}.log"
    request = {"store": str(location if location is not None else store_path), "state_dir": str(state_dir),
               "agent_dirs": [str(Path(d).resolve()) for d in agent_dirs],
               "embeddings": config.resolve_embeddings(embeddings), "idle_exit": idle_exit}
    deadline = time.monotonic() + timeout
    spawned_at = -1e9
    last: Exception | None = None
    while time.monotonic() < deadline:
        client = owner_client(state_dir)
        if client is not None:
            return client
        running = control.read_hub(hub_path)
        if running is None:
            if time.monotonic() - spawned_at > 5:  # none, or the one spawned lost the race and is gone
                with open(log_path, "ab") as log:
                    subprocess.Popen([sys.executable, "-m", "cortex.cli", "server", "hub", "--id", ident],
                                     stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
                spawned_at = time.monotonic()
            time.sleep(0.05)
            continue
        try:
            control.call(running, "open", request)
        except (StoreLockedError, ServiceError) as exc:
            # a process holds the store without serving it (wait for it), or the hub is exiting because it
            # served nothing any more (the next round starts another)
            last = exc
            time.sleep(0.1)
    detail = f": {last}" if last is not None else ""
    raise ServiceError(f"no Cortex server for {store_path} answered within {timeout:.0f} s{detail}")


class Reconnecting:
    """The methods of a :class:`RemoteCortex`, made again through ``start`` (and retried once) when the server
    stopped answering: an auto-started server exits when idle, and a long MCP session outlives it."""

    def __init__(self, start: Callable[[], RemoteCortex]) -> None:
        self._start = start
        self._client = start()

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        if not callable(attribute):
            return attribute

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return getattr(self._client, name)(*args, **kwargs)
            except ServiceError:
                self._client.close()
                self._client = self._start()
                return getattr(self._client, name)(*args, **kwargs)

        return call
