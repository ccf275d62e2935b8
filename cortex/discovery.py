"""The discovery file ``<state>/cortex-server.json``: where the server that owns a store listens (the state
directory of an embedded store is the store directory, see :mod:`cortex.state`).

Written by ``cortex serve`` once it listens, removed on clean exit. Clients (CLI, hooks, ``cortex mcp``) use
the server it names when that process is alive and answers ``/healthz``; a stale file is ignored.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cortex.files import atomic_write, read_regular
from cortex.state import SERVERS_DIR_ENV as SERVERS_DIR_ENV  # their home was here: re-exported
from cortex.state import server_file
from cortex.state import servers_dir as servers_dir

if TYPE_CHECKING:
    import urllib.request




@dataclass(frozen=True)
class ServerInfo:
    """A running server: its base URL, pid and the local admin token for clients of the same user; whether it
    was started in the background by a client (``auto``: ``cortex serve`` takes its place), when, how long it
    stays idle before it stops, and the store's printable location."""

    url: str
    pid: int
    token: str
    auto: bool = False
    started: float = 0.0
    idle_exit: float | None = None
    store: str = ""
    #: Served by the user's background server among other stores (cortex.service.hub): ``cortex serve`` asks it
    #: to give this store up instead of stopping the process.
    hub: bool = False


def write(state_dir: Path, info: ServerInfo) -> None:
    """Publish ``info`` atomically, readable by the owner only (it holds a token), and register the state
    directory in the user's list of servers."""
    atomic_write(server_file(state_dir), json.dumps(dataclasses.asdict(info)))
    try:
        directory = servers_dir()
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write(_pointer(state_dir, info.pid), json.dumps({"state_dir": str(state_dir.resolve())}))
    except OSError:  # the list is for `cortex server status --all`; the server works without it
        pass


def store_key(state_dir: Path) -> str:
    """A short, stable name of the store whose state directory is ``state_dir`` (a digest of its resolved path):
    the user's pointer to its server and the background server's URL prefix for it."""
    import hashlib

    return hashlib.sha256(str(state_dir.resolve()).encode()).hexdigest()[:16]


def _pointer(state_dir: Path, pid: int) -> Path:
    """The user's pointer to a served store: ``<pid>-<store key>.json`` (one process may serve several stores)."""
    return servers_dir() / f"{pid}-{store_key(state_dir)}.json"


def remove(state_dir: Path, pid: int) -> None:
    """Remove the file if it still names process ``pid``, and the user's pointer to it."""
    info = read(state_dir)
    if info is not None and info.pid == pid:
        server_file(state_dir).unlink(missing_ok=True)
    _pointer(state_dir, pid).unlink(missing_ok=True)


def read(state_dir: Path) -> ServerInfo | None:
    """The discovery file of ``state_dir`` as written, live or not; None when absent or unreadable."""
    try:
        data = json.loads(read_regular(server_file(state_dir), 64 * 1024))
        idle = data.get("idle_exit")
        return ServerInfo(url=str(data["url"]), pid=int(data["pid"]), token=str(data["token"]),
                          auto=bool(data.get("auto", False)), started=float(data.get("started", 0.0)),
                          idle_exit=float(idle) if idle is not None else None, store=str(data.get("store", "")),
                          hub=bool(data.get("hub", False)))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None




def registered() -> list[Path]:
    """The state directories of this user's servers that are still running (stale pointers are removed)."""
    found = []
    try:
        entries = sorted(servers_dir().glob("*.json"))
    except OSError:
        return []
    for entry in entries:
        if not entry.stem[:1].isdigit():
            continue  # e.g. a hub's address (cortex.service.hub)
        try:
            state_dir = Path(json.loads(read_regular(entry, 64 * 1024))["state_dir"])
            pid = int(entry.stem.partition("-")[0])
        except (OSError, ValueError, KeyError, TypeError):
            entry.unlink(missing_ok=True)
            continue
        info = read(state_dir)
        if info is None or info.pid != pid or not alive(pid):
            entry.unlink(missing_ok=True)
            continue
        found.append(state_dir)
    return found


#: What this process is, in a store's holder file and so in the message of whoever waits for the store ("cortex
#: import"): set by the surface that started the process (:func:`set_process_label`), else read from its command.
_label: str | None = None


def set_process_label(label: str) -> None:
    """Name what this process is (``"cortex import"``, ``"cortex hook"``) for a store it opens to write."""
    global _label
    _label = label


def process_label() -> str:
    """What this process is: the label a surface set, else ``python <script>`` (``python`` for ``-c``)."""
    if _label is not None:
        return _label
    import sys

    script = Path(sys.argv[0]).name if sys.argv and sys.argv[0] not in ("", "-c", "-") else ""
    return f"python {script}" if script else "python process"


def local_opener() -> "urllib.request.OpenerDirector":
    """A urllib opener that ignores proxy settings: the server is local, and requests carry its token."""
    import urllib.request

    return urllib.request.build_opener(urllib.request.ProxyHandler({}))


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped by its parent, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat[stat.rindex(")") + 2] != "Z"
    except (OSError, ValueError, IndexError):
        return True


def process_started(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch), from ``/proc``; None where that cannot be read."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        ticks = int(stat[stat.rindex(")") + 2:].split()[19])  # field 22, counted after the command's name
        boot = next(int(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                    if line.startswith("btime "))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def still_running(info: ServerInfo) -> bool:
    """Whether the process that wrote ``info`` still runs, without asking it anything: its pid is alive and the
    process with that pid started before the file was written (a pid the system gave to a later process is not
    the server). False where the start time cannot be read: ask with :func:`find` then."""
    if not alive(info.pid):
        return False
    started = process_started(info.pid)
    return started is not None and started <= info.started + 2.0  # /proc's clock ticks and btime round down


def find(state_dir: Path, *, timeout: float = 1.0) -> ServerInfo | None:
    """The live server of the store whose state directory is ``state_dir``, or None (no file, dead pid, or
    no answer on /healthz)."""
    info = read(state_dir)
    if info is None or not alive(info.pid):
        return None
    import http.client  # here, and not urllib or httpx: this runs on the hook path, where every import counts
    from urllib.parse import urlsplit

    parts = urlsplit(info.url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)
    try:  # (a direct connection: the server is local, whatever proxy the environment names)
        connection.request("GET", parts.path.rstrip("/") + "/healthz")  # a hub serves a store under a prefix
        response = connection.getresponse()
        if response.status == 200 and json.loads(response.read()).get("pid") == info.pid:
            return info
    except (OSError, ValueError, http.client.HTTPException):
        pass
    finally:
        connection.close()
    return None
