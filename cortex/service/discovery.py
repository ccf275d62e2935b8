"""The discovery file ``<store>/cortex-server.json``: where the server that owns a store listens.

Written by ``cortex serve`` once it listens, removed on clean exit. Clients (CLI, hooks, ``cortex mcp``) use
the server it names when that process is alive and answers ``/healthz``; a stale file is ignored.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import urllib.request

SERVER_FILE = "cortex-server.json"


@dataclass(frozen=True)
class ServerInfo:
    """A running server: its base URL, pid and the local admin token for clients of the same user."""

    url: str
    pid: int
    token: str


def server_file(store_path: Path) -> Path:
    return Path(store_path) / SERVER_FILE


def write(store_path: Path, info: ServerInfo) -> None:
    """Publish ``info`` atomically, readable by the owner only (it holds a token)."""
    path = server_file(store_path)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump({"url": info.url, "pid": info.pid, "token": info.token}, fh)
    tmp.replace(path)


def remove(store_path: Path, pid: int) -> None:
    """Remove the file if it still names process ``pid``."""
    info = read(store_path)
    if info is not None and info.pid == pid:
        server_file(store_path).unlink(missing_ok=True)


def read(store_path: Path) -> ServerInfo | None:
    try:
        data = json.loads(server_file(store_path).read_text(encoding="utf-8"))
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


def find(store_path: Path, *, timeout: float = 1.0) -> ServerInfo | None:
    """The live server owning ``store_path``, or None (no file, dead pid, or no answer on /healthz)."""
    info = read(store_path)
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
