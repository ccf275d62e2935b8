"""``cortex server status`` and ``cortex server stop``: the Cortex servers of this user, seen and stopped from
outside (the standard library and the discovery file only: these commands load no engine); and how a client
finds and asks the user's background server (:mod:`cortex.service.hub`)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cortex import discovery
from cortex.errors import InvalidInputError, ServiceError, StoreLockedError
from cortex.files import read_regular


@dataclass(frozen=True)
class ServerStatus:
    """A live server and what a user wants to know of it."""

    state_dir: Path
    info: discovery.ServerInfo
    rss_mib: float | None

    def as_json(self) -> dict[str, Any]:
        """The status as JSON values (no token)."""
        return {"store": self.info.store or str(self.state_dir), "state_dir": str(self.state_dir),
                "url": self.info.url, "pid": self.info.pid, "auto": self.info.auto,
                "idle_exit": self.info.idle_exit, "started": self.info.started, "shared": self.info.hub,
                "uptime_s": round(time.time() - self.info.started, 1) if self.info.started else None,
                "rss_mib": self.rss_mib}

    def describe(self) -> str:
        """One line for people."""
        how = (f"the user's background server, which gives it up after {self.info.idle_exit / 60:.0f} idle minutes"
               if self.info.hub and self.info.idle_exit else
               f"started in the background by a client, stops after {self.info.idle_exit / 60:.0f} idle minutes"
               if self.info.auto and self.info.idle_exit else
               "started in the background by a client" if self.info.auto else "started by `cortex serve`")
        memory = f", {self.rss_mib:.0f} MiB resident" if self.rss_mib is not None else ""
        up = f", up {_duration(time.time() - self.info.started)}" if self.info.started else ""
        return f"{self.info.store or self.state_dir}: served on {self.info.url} by pid {self.info.pid} ({how}{up}{memory})"


def status(state_dir: Path) -> ServerStatus | None:
    """The live server owning the store whose state directory is ``state_dir``, or None."""
    info = discovery.find(state_dir)
    return ServerStatus(state_dir, info, _rss_mib(info.pid)) if info is not None else None


def every() -> list[ServerStatus]:
    """Every live server of this user (those registered in :func:`cortex.discovery.servers_dir`)."""
    found = (status(state_dir) for state_dir in discovery.registered())
    return [s for s in found if s is not None]


def stop(server: ServerStatus, *, timeout: float = 30.0) -> None:
    """Stop ``server`` gracefully (SIGTERM: requests in flight finish, the store is flushed and closed) and wait
    until its process is gone. A store the user's background server serves among others is given up by it
    instead (flushed and closed before it answers; the process goes on for the other stores, and exits when
    it serves none). Raises :class:`ServiceError` when it is still running after ``timeout``."""
    if server.info.hub:
        try:
            if release(server.state_dir, timeout=timeout):
                return
        except ServiceError:
            if discovery.alive(server.info.pid):
                raise
            return
    pid = server.info.pid
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    except PermissionError:
        raise ServiceError(f"not allowed to stop pid {pid} (another user's server)") from None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not discovery.alive(pid):
            return
        time.sleep(0.05)
    raise ServiceError(f"the Cortex server pid {pid} did not stop within {timeout:.0f} s of SIGTERM")


def _rss_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


# -- the user's background server (cortex.service.hub) -------------------------------------------------

def identity() -> str:
    """What a hub must share with the session asking it to serve a store: the ``CORTEX_*`` settings in the
    environment, the interpreter and the Cortex installation (a short hex digest)."""
    import cortex

    settings = sorted((k, v) for k, v in os.environ.items() if k.startswith("CORTEX_") and k != "CORTEX_TOKEN")
    material = json.dumps([settings, sys.executable, cortex.__file__, cortex.__version__])
    return hashlib.sha256(material.encode()).hexdigest()[:12]


def hub_file(ident: str | None = None) -> Path:
    """Where the hub of these settings publishes its address and token."""
    return discovery.servers_dir() / f"hub-{ident or identity()}.json"


@dataclasses.dataclass(frozen=True)
class HubInfo:
    """A running hub: its base URL, pid and control token."""

    url: str
    pid: int
    token: str
    started: float = 0.0


def read_hub(path: Path) -> HubInfo | None:
    """The hub a file names, if that process is alive; None otherwise."""
    try:
        data = json.loads(read_regular(path, 64 * 1024))
        info = HubInfo(url=str(data["url"]), pid=int(data["pid"]), token=str(data["token"]),
                       started=float(data.get("started", 0.0)))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return info if discovery.alive(info.pid) else None


def call(info: HubInfo, action: str, body: dict[str, Any], *, timeout: float = 120.0) -> dict[str, Any]:
    """``POST {hub}/control/{action}`` with the hub's token; the answer's JSON. Raises the Cortex error the hub
    names (e.g. :class:`StoreLockedError`), or :class:`ServiceError` when it cannot be reached."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(info.url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)
    try:
        connection.request("POST", f"/control/{action}", body=json.dumps(body).encode(),
                           headers={"Authorization": f"Bearer {info.token}", "Content-Type": "application/json"})
        response = connection.getresponse()
        data = json.loads(response.read() or b"{}")
    except (OSError, ValueError, http.client.HTTPException) as exc:
        raise ServiceError(f"the user's Cortex server (pid {info.pid}) did not answer: {exc}") from None
    finally:
        connection.close()
    if response.status >= 400:
        error = data.get("error", {}) if isinstance(data, dict) else {}
        message = str(error.get("message", f"answered {response.status}"))
        if error.get("type") == "StoreLockedError":
            raise StoreLockedError(Path(str(body.get("store") or body.get("state_dir"))))
        if error.get("type") == "InvalidInputError":
            raise InvalidInputError(str(error.get("field") or "store"), message)
        raise ServiceError(f"the user's Cortex server: {message}")
    return data if isinstance(data, dict) else {}


def release(state_dir: Path, *, timeout: float = 30.0) -> bool:
    """Ask the hub serving the store of ``state_dir`` to give it up (flushed and closed before it answers).
    False when no hub serves it."""
    info = discovery.read(state_dir)
    if info is None or not info.hub:
        return False
    for path in sorted(discovery.servers_dir().glob("hub-*.json")):
        hub = read_hub(path)
        if hub is not None and hub.pid == info.pid:
            call(hub, "release", {"state_dir": str(state_dir)}, timeout=timeout)
            return True
    return False
