"""The periodic consolidation sweep of the process that owns a store (docs/consolidation.md, "The sweep").

Off by default: ``CORTEX_CONSOLIDATE_EVERY`` (or ``every`` in the ``[consolidation]`` table of
``.cortex/config.toml``) turns it on, and :func:`cortex.service.http.create_app` starts a :class:`Sweeper` (so
``cortex serve`` and the hub both sweep the stores they serve). Every interval one sweep consolidates the store's
scopes in turn: each agent with memory and memories stored, then each (non-temporary) team that has a lead, then
the swarm when some agent leads, with ``Cortex.consolidate``. A sweep is bounded (``max_scopes`` scopes); the next
one goes on where it stopped (the checkpoint is kept in ``<state dir>/sweep.json``, with when the next sweep is
due, so a restarted server keeps the rhythm). A sweep never competes with the agents: it waits while a request is
in flight or the capture queue has work, and looks again between scopes. A scope that fails is logged and the
sweep goes on with the next.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cortex.app import Cortex

log = logging.getLogger("cortex")

#: The checkpoint's file in the store's state directory.
STATE_FILE = "sweep.json"
#: Scopes consolidated per sweep at most (the next sweep goes on from there).
MAX_SCOPES = 20
#: The longest a server waits after it starts before its first sweep (a sweep due while it was down).
STARTUP_DELAY = 60.0
#: How soon a sweep the server's work put off is tried again, at most.
RETRY = 5.0

_KINDS = {"agent": 0, "team": 1, "swarm": 2}


def _order(key: str) -> tuple[int, str]:
    """A scope key's place in a sweep: agents, then teams, then the swarm, each by name."""
    kind, _, name = key.partition(":")
    return _KINDS.get(kind, len(_KINDS)), name


class Sweeper:
    """Consolidates the store's scopes every ``every`` (seconds or a timedelta), in a daemon thread once
    :meth:`start`-ed; :meth:`run_once` runs one sweep now. ``busy()`` says whether the process is serving (a sweep
    waits for it to be false). The checkpoint lives in ``state_dir`` (default the store's; None: in memory only)."""

    def __init__(self, cx: Cortex, every: float | timedelta, *, busy: Callable[[], bool] | None = None,
                 max_scopes: int = MAX_SCOPES, state_dir: Path | None | bool = True,
                 retry: float | None = None, clock: Callable[[], float] = time.time) -> None:
        self.cx = cx
        self.every = every.total_seconds() if isinstance(every, timedelta) else float(every)
        if self.every <= 0:
            raise ValueError(f"every must be above 0 seconds, not {self.every}")
        if max_scopes < 1:
            raise ValueError(f"max_scopes must be at least 1, not {max_scopes}")
        self.max_scopes = max_scopes
        self._busy = busy or (lambda: False)
        self.retry = min(self.every, RETRY) if retry is None else retry
        self._clock = clock
        where = cx.state_dir if state_dir is True else (state_dir or None)
        self.path: Path | None = Path(where) / STATE_FILE if isinstance(where, (str, Path)) else None
        #: what the sweeps did: sweeps run, turns put off by the server's work, the last failure
        self.runs = 0
        self.skipped_busy = 0
        self.last_error: str | None = None
        self.last_run_at: str | None = None
        #: the scope the next sweep starts with (None: the first)
        self.next_scope: str | None = None
        self.due_at: float | None = None
        self._stop = threading.Event()
        self._sweeping = threading.Lock()
        self._running = False
        self._thread: threading.Thread | None = None
        self._load()

    # -- the checkpoint ----------------------------------------------------------------------------

    def _load(self) -> None:
        if self.path is None:
            return
        from cortex.files import read_regular

        try:
            data = json.loads(read_regular(self.path, 64 * 1024))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            log.warning("sweep checkpoint %s not read (%s: %s): the sweep starts from the first scope", self.path,
                        type(exc).__name__, exc)
            return
        if not isinstance(data, dict):
            return
        if isinstance(data.get("next_scope"), str):
            self.next_scope = data["next_scope"]
        if isinstance(data.get("last_run_at"), str):
            self.last_run_at = data["last_run_at"]
        if isinstance(data.get("due_at"), (int, float)) and not isinstance(data.get("due_at"), bool):
            self.due_at = float(data["due_at"])

    def _save(self) -> None:
        if self.path is None:
            return
        from cortex.files import atomic_write

        try:
            atomic_write(self.path, json.dumps({"next_scope": self.next_scope, "last_run_at": self.last_run_at,
                                                "due_at": self.due_at}))
        except OSError as exc:  # the checkpoint is kept in memory: the sweep goes on
            log.warning("sweep checkpoint %s not written: %s", self.path, exc)

    # -- one sweep ---------------------------------------------------------------------------------

    def scopes(self) -> list[str]:
        """The scopes a sweep covers, in order: ``agent:NAME`` (declared with memory, memories stored),
        ``team:NAME`` (stored, not temporary, with a lead), ``swarm`` (stored, and some agent leads)."""
        declared = [d for d in self.cx.agents.list() if d.memory_enabled]
        stored = set(self.cx.stored_scopes())
        agents = sorted({d.name for d in declared} & set(self.cx.stored_agents()))
        temporary = {t for d in declared for t in d.settings.parents}
        teams = sorted({t for d in declared if d.settings.lead for t in d.settings.teams} - temporary)
        found = [f"agent:{a}" for a in agents] + [f"team:{t}" for t in teams if f"team:{t}" in stored]
        if "swarm" in stored and any(d.settings.lead for d in declared):
            found.append("swarm")
        return found

    def _consolidate(self, key: str) -> Any:
        kind, _, name = key.partition(":")
        if kind == "agent":
            return self.cx.consolidate(name)
        if kind == "team":
            return self.cx.consolidate(team=name)
        return self.cx.consolidate(swarm=True)

    def run_once(self) -> dict[str, Any]:
        """One sweep now: ``{"swept": [scope, ...], "failed": [...], "stopped": None | "busy" | "closing"}``
        (``busy``: the server's work put it off, before any scope or between two)."""
        with self._sweeping:
            if self._busy():
                self.skipped_busy += 1
                return {"swept": [], "failed": [], "stopped": "busy"}
            self._running = True
            try:
                return self._sweep()
            finally:
                self._running = False

    def _sweep(self) -> dict[str, Any]:
        order = self.scopes()
        swept: list[str] = []
        failed: list[str] = []
        stopped: str | None = None
        start = 0
        if self.next_scope is not None:  # the first scope at or after the checkpoint (it may have gone)
            start = next((i for i, key in enumerate(order) if _order(key) >= _order(self.next_scope)), 0)
        for step in range(min(self.max_scopes, len(order))):
            if self._stop.is_set():
                stopped = "closing"
                break
            if step and self._busy():
                self.skipped_busy += 1
                stopped = "busy"
                break
            key = order[(start + step) % len(order)]
            try:
                report = self._consolidate(key)
                swept.append(key)
                if getattr(report, "changed", False) or getattr(report, "pending", None):
                    log.info("sweep: %s consolidated: %d merged, %d superseded, %d created, %d for review%s", key,
                             sum(len(m.merged) for m in report.merges), len(report.superseded), len(report.created),
                             len(report.review), f", pending: {', '.join(report.pending)}" if report.pending else "")
            except Exception as exc:  # one scope never stops the sweep
                failed.append(key)
                self.last_error = f"{key}: {type(exc).__name__}: {exc}"
                log.warning("sweep: consolidating %s failed: %s: %s", key, type(exc).__name__, exc)
            self.next_scope = order[(start + step + 1) % len(order)]
            self._save()
        if swept or failed or stopped is None:
            self.runs += 1
            self.last_run_at = datetime.fromtimestamp(self._clock(), timezone.utc).isoformat(timespec="seconds")
            self._save()
        return {"swept": swept, "failed": failed, "stopped": stopped}

    # -- the thread --------------------------------------------------------------------------------

    def start(self) -> None:
        """Sweep every ``every`` seconds in a daemon thread until :meth:`close`."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="cortex-sweep", daemon=True)
            self._thread.start()

    def _first_due(self) -> float:
        now = self._clock()
        due = now + self.every if self.due_at is None else min(self.due_at, now + self.every)
        return max(due, now + min(self.every, STARTUP_DELAY))

    def _loop(self) -> None:
        due = self._first_due()
        if self.due_at is None:
            self.due_at = due
            self._save()
        while not self._stop.wait(max(0.0, due - self._clock())):
            try:
                done = self.run_once()
            except Exception as exc:  # the store closed under it, a definition broken: the next turn tries again
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.warning("sweep failed: %s", self.last_error)
                done = {"stopped": None}
            if done["stopped"] == "busy":
                due = self._clock() + self.retry
            else:
                due = self.due_at = self._clock() + self.every
                self._save()

    def close(self, timeout: float = 30.0) -> None:
        """Stop: a scope being consolidated is finished (waited for up to ``timeout`` seconds), no other starts."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("the consolidation sweep did not stop within %.0f s", timeout)

    def status(self) -> dict[str, Any]:
        """What ``GET /v1/consolidate/sweep`` answers."""
        return {"enabled": True, "every_seconds": self.every, "last_run_at": self.last_run_at,
                "last_error": self.last_error, "runs": self.runs, "skipped_busy": self.skipped_busy,
                "next_scope": self.next_scope, "running": self._running}


#: What ``GET /v1/consolidate/sweep`` answers when the sweep is off.
OFF = {"enabled": False, "every_seconds": None, "last_run_at": None, "last_error": None, "runs": 0,
       "skipped_busy": 0, "next_scope": None, "running": False}
