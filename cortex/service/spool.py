"""The hooks' spool: learnings that could not be delivered wait here and are delivered by the next hook that
reaches the store, or by the next server that starts (``<state>/cortex-spool/``).

A hook must never lose a learning and never block the coding agent. When capture at agent end fails for a
reason that may pass (the server refused or was restarting, the store was locked, a disk error), the agent's
output is written to one file of the spool (atomically, private to the user). Replaying claims a file by
renaming it (so two replayers never take the same one), delivers it, and removes it; a failed delivery puts
it back. Capture stores each marker line once per agent and project (a line already stored is touched, not
stored again), so even a delivery repeated after a crash between delivering and removing adds no memory twice.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

from cortex import jsonsafe
from cortex.files import atomic_write, private_dir

log = logging.getLogger("cortex")

SPOOL_DIR = "cortex-spool"
#: A claimed file older than this was left by a replayer that died: it may be claimed again.
STALE_CLAIM = 300.0

Deliver = Callable[[str, str, "str | None"], None]


class Spool:
    """One directory of undelivered captures."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def put(self, agent: str, output: str, project: str | None = None) -> Path:
        """Keep a capture for later delivery; returns its file."""
        private_dir(self.directory)
        path = self.directory / f"{time.time_ns():020d}-{os.getpid()}-{os.urandom(4).hex()}.json"
        atomic_write(path, json.dumps({"agent": agent, "output": output, "project": project}))
        return path

    def pending(self) -> list[Path]:
        """The files waiting, oldest first (a stale claim counts as waiting)."""
        try:
            names = sorted(os.listdir(self.directory))
        except OSError:
            return []
        now = time.time()
        waiting = []
        for name in names:
            path = self.directory / name
            if name.endswith(".json"):
                waiting.append(path)
            elif name.endswith(".json.claimed"):
                try:
                    if now - path.stat().st_mtime > STALE_CLAIM:
                        waiting.append(path)
                except OSError:
                    pass
        return waiting

    def replay(self, deliver: Deliver) -> int:
        """Deliver every waiting capture, oldest first; stops at the first failure (the rest stay for the next
        time). Returns how many were delivered."""
        delivered = 0
        for path in self.pending():
            claimed = path if path.name.endswith(".claimed") else path.with_name(path.name + ".claimed")
            try:
                os.rename(path, claimed)  # atomic: another replayer that got here first makes this fail
                os.utime(claimed)
                entry = jsonsafe.loads(claimed.read_text(encoding="utf-8"))
                agent, output, project = str(entry["agent"]), str(entry["output"]), entry.get("project")
            except FileNotFoundError:
                continue
            except (OSError, ValueError, KeyError, TypeError) as exc:
                log.warning("spooled capture %s is unreadable (%s): set aside", path.name, exc)
                _set_aside(claimed)
                continue
            try:
                deliver(agent, output, project)
            except Exception:
                os.rename(claimed, claimed.with_name(claimed.name.removesuffix(".claimed")))
                raise
            claimed.unlink(missing_ok=True)
            delivered += 1
        return delivered


def _set_aside(path: Path) -> None:
    try:
        os.rename(path, path.with_name(path.name.replace(".json", ".broken")))
    except OSError:
        pass
