"""``cortex server status`` and ``cortex server stop``: the Cortex servers of this user, seen and stopped from
outside (the standard library and the discovery file only: these commands load no engine)."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cortex import discovery
from cortex.errors import ServiceError


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
                "idle_exit": self.info.idle_exit, "started": self.info.started,
                "uptime_s": round(time.time() - self.info.started, 1) if self.info.started else None,
                "rss_mib": self.rss_mib}

    def describe(self) -> str:
        """One line for people."""
        how = (f"started in the background by a client, stops after {self.info.idle_exit / 60:.0f} idle minutes"
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
    until its process is gone. Raises :class:`ServiceError` when it is still running after ``timeout``."""
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
