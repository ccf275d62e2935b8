"""The discovery file ``<state>/cortex-server.json``: where the server that owns a store listens (the state
directory of an embedded store is the store directory, see :mod:`cortex.state`).

Written by ``cortex serve`` once it listens, removed on clean exit. Clients (CLI, hooks, ``cortex mcp``) use
the server it names when that process is alive and answers ``/healthz``; a stale file is ignored.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cortex.files import atomic_write, read_regular
from cortex.state import server_file

if TYPE_CHECKING:
    import urllib.request


@dataclass(frozen=True)
class ServerInfo:
    """A running server: its base URL, pid and the local admin token for clients of the same user."""

    url: str
    pid: int
    token: str


def write(state_dir: Path, info: ServerInfo) -> None:
    """Publish ``info`` atomically, readable by the owner only (it holds a token)."""
    atomic_write(server_file(state_dir), json.dumps({"url": info.url, "pid": info.pid, "token": info.token}))


def remove(state_dir: Path, pid: int) -> None:
    """Remove the file if it still names process ``pid``."""
    info = read(state_dir)
    if info is not None and info.pid == pid:
        server_file(state_dir).unlink(missing_ok=True)


def read(state_dir: Path) -> ServerInfo | None:
    try:
        data = json.loads(read_regular(server_file(state_dir), 64 * 1024))
        return ServerInfo(url=str(data["url"]), pid=int(data["pid"]), token=str(data["token"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def local_opener() -> "urllib.request.OpenerDirector":
    """A urllib opener that ignores proxy settings: the server is local, and requests carry its token."""
    import urllib.request

    return urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def find(state_dir: Path, *, timeout: float = 1.0) -> ServerInfo | None:
    """The live server of the store whose state directory is ``state_dir``, or None (no file, dead pid, or
    no answer on /healthz)."""
    info = read(state_dir)
    if info is None or not _alive(info.pid):
        return None
    import urllib.error  # here and not httpx: this runs on the hook path, where every import counts
    import urllib.request

    try:
        with local_opener().open(f"{info.url}/healthz", timeout=timeout) as response:
            if json.loads(response.read()).get("pid") == info.pid:
                return info
    except (OSError, ValueError, urllib.error.URLError):
        pass
    return None
