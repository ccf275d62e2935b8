"""How a client process reaches the store: through the running server when there is one, else by opening
the store itself (waiting while another short-lived process holds it), or, for the CLI when an embedding model
would have to be loaded, through a server it starts in the background (the model is then loaded once per
machine session, not once per command)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cortex import config
from cortex.client import owner_client
from cortex.errors import ServiceError, StoreLockedError
from cortex.state import is_remote, server_log, state_dir_of

if TYPE_CHECKING:
    from cortex.store import Location
    from cortex.api import MemoryAPI
    from cortex.client import RemoteCortex

#: An auto-started server stops after this many seconds without a request.
AUTO_SERVER_IDLE = 1800.0


def connect(location: Location, *, embeddings: str = "auto", wait: float | None = None) -> MemoryAPI:
    """The server's client if one owns the store, else the store opened here. While another process holds
    the store without serving it, retries for ``wait`` seconds (default :func:`cortex.config.lock_wait`),
    then raises :class:`StoreLockedError`."""
    state_dir = state_dir_of(location)
    client = owner_client(state_dir)
    if client is not None:
        return client
    from cortex.core import Cortex  # here: a client of a running server never imports the engine

    deadline = time.monotonic() + (config.lock_wait() if wait is None else wait)
    while True:
        try:  # a remote store's indexes are kept in its state directory, when it has one
            return Cortex.open(location, embeddings=embeddings, state_dir=state_dir if is_remote(location) else None,
                               client=False)
        except StoreLockedError:
            client = owner_client(state_dir)
            if client is not None:
                return client
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.05)


def for_cli(location: Location, *, embeddings: str, read_only: bool) -> MemoryAPI:
    """The CLI's way to the store: the running server's client when one owns it, else the store opened here
    (a command never starts a server: the default model loads in about a second, and a server left behind
    would hold the store against the user's next `cortex serve` or `Cortex.open`). A read-only command on an
    embedded store that does not exist yet answers from an empty in-memory store instead of creating one (a
    remote store always answers for itself, whatever its state directory holds)."""
    state_dir = state_dir_of(location)
    if read_only and not is_remote(location) and state_dir is not None and not state_dir.exists():
        from cortex.core import Cortex  # (no store, so no server owning it)

        return Cortex.open(None, embeddings="none", client=False)
    return connect(location, embeddings=embeddings)


def ensure_server(store_path: Path, *, agent_dirs: Sequence[Path] = (), embeddings: str = "auto",
                  timeout: float = 60.0, idle_exit: float = AUTO_SERVER_IDLE) -> RemoteCortex:
    """A client of the server owning ``store_path``, starting one in the background when none runs.

    Several processes may call this at once (each coding-agent session starts its own ``cortex mcp``): every
    one may spawn a server, the first to open the store wins, the others exit on the store lock, and all
    callers end up with the winner. An auto-started server exits after ``idle_exit`` seconds without requests.
    """
    import subprocess
    import sys

    from cortex.files import private_dir

    state_dir = Path(store_path)
    client = owner_client(state_dir)
    if client is not None:
        return client
    private_dir(state_dir)
    log_path = server_log(state_dir)
    dirs = [arg for d in agent_dirs for arg in ("--agents-dir", str(Path(d).resolve()))]
    command = [sys.executable, "-m", "cortex.cli", "--store", str(store_path), *dirs, "--embeddings", embeddings,
               "serve", "--port", "0", "--idle-exit", str(idle_exit), "--auto"]

    def spawn() -> subprocess.Popen[bytes]:
        with open(log_path, "ab") as log:
            return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                    start_new_session=True)

    child = spawn()
    deadline = time.monotonic() + timeout
    exited_at: float | None = None
    while time.monotonic() < deadline:
        client = owner_client(state_dir)
        if client is not None:
            return client
        if child.poll() is not None:
            # Ours lost the race to another server (which is about to publish itself), or a short-lived process
            # held the store: give the winner a moment, then try again.
            exited_at = exited_at or time.monotonic()
            if time.monotonic() - exited_at > 2:
                child, exited_at = spawn(), None
        time.sleep(0.1)
    tail = log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-2:]
    raise ServiceError(f"no Cortex server for {store_path} answered within {timeout:.0f} s: " + " | ".join(tail))


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
