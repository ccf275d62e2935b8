"""The capture queue of the process that owns a store: transcript captures asked for by hooks run here, one at a
time, after the hook has answered (a language model takes seconds; a hook has milliseconds).

A capture job is (agent, transcript, options); asking again for a transcript already waiting does not queue it
twice. Nothing is lost when the process dies: a capture's checkpoint is written after what it stored, so the next
capture of the transcript (the next Stop, SubagentStop or SessionEnd hook, or ``cortex capture``) reads the
part again (:mod:`cortex.capture.checkpoints`). Other work that takes a model's seconds (a team's round end, a
lead's Stop hook asks for) is queued the same way, by a key, with :meth:`CaptureQueue.put_call`.

A job runs for the caller that queued it (:mod:`cortex.caller`: an agent's token reaches its own agent only, in
the worker as in the request). The queue is shared, so each agent has a share of it (``CORTEX_QUEUE_PER_AGENT``
jobs waiting at once, default a tenth of it): one agent's token cannot fill it for the others, and what admins
and the server's own clients queue is counted apart from what agents queue. An agent's token sees its own jobs
only (:meth:`CaptureQueue.status`).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from cortex import caller
from cortex.api import MemoryAPI
from cortex.errors import TooBusyError
from cortex.files import confined, input_roots

log = logging.getLogger("cortex")

#: The most jobs waiting (a hook asking beyond it is told so; its transcript is captured by a later run).
MAX_WAITING = 1000
#: The most jobs one agent's token may have waiting (``CORTEX_QUEUE_PER_AGENT``; default a tenth of the queue).
PER_AGENT_ENV = "CORTEX_QUEUE_PER_AGENT"
DEFAULT_PER_AGENT = MAX_WAITING // 10


def per_agent_share() -> int:
    """The jobs one agent may have waiting: ``$CORTEX_QUEUE_PER_AGENT`` (1 to :data:`MAX_WAITING`), else
    :data:`DEFAULT_PER_AGENT`."""
    try:
        return min(MAX_WAITING, max(1, int(os.environ.get(PER_AGENT_ENV) or DEFAULT_PER_AGENT)))
    except ValueError:
        return DEFAULT_PER_AGENT


class _Job:
    """A queued job: its key, what it is for the log, the work (returns what the log says it did), and the
    agent of the token that queued it (None: an admin, the server's own clients)."""

    __slots__ = ("key", "owner", "run", "what")

    def __init__(self, key: tuple[str, ...], what: str, run: Callable[[], str], owner: str | None) -> None:
        self.key, self.what, self.run, self.owner = key, what, run, owner


class _Counts:
    """What the worker did for one owner (or for all): jobs done and failed, and the last failure."""

    __slots__ = ("done", "failed", "last_error")

    def __init__(self) -> None:
        self.done = 0
        self.failed = 0
        self.last_error: str | None = None


class CaptureQueue:
    """One worker thread running queued jobs in order: ``cx.capture_transcript`` for captures, any callable
    for :meth:`put_call`; each for the caller that queued it."""

    def __init__(self, cx: MemoryAPI, *, per_agent: int | None = None) -> None:
        self.cx = cx
        self._per_agent = per_agent
        self._jobs: deque[_Job] = deque()
        #: the keys waiting, with the owner that queued each (a key is queued once per owner)
        self._waiting: set[tuple[str | None, tuple[str, ...]]] = set()
        #: jobs waiting by owner (None: admins and the server's own clients)
        self._owned: dict[str | None, int] = {}
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._running: _Job | None = None
        self._all = _Counts()
        self._by_owner: dict[str | None, _Counts] = {}

    @property
    def done(self) -> int:
        """Jobs done, all owners."""
        return self._all.done

    @property
    def failed(self) -> int:
        """Jobs failed, all owners."""
        return self._all.failed

    @property
    def last_error(self) -> str | None:
        """The last failure, of any owner."""
        return self._all.last_error

    def put(self, agent: str, path: str, **options: Any) -> dict[str, Any]:
        """Queue a capture (run, later, for the caller queuing it); returns ``{"queued": bool, "waiting": n}``
        (not queued: it already waits, or the queue is full). :class:`TooBusyError` when the caller's agent has
        its share of the queue waiting already."""

        roots = input_roots()  # the caller's confinement: the worker reads the file under it, not the server's

        def capture() -> str:
            with confined(roots):
                report = self.cx.capture_transcript(agent, path, **options)
            return (f"{len(report.stored)} stored, {len(report.confirmed)} confirmed, refused {report.refused}"
                    f"{' (model part pending)' if report.pending else ''}")

        return self._put(("capture", agent, path), f"capture of {path} for {agent}", capture)

    def put_call(self, key: str, job: Callable[[], Any], what: str | None = None) -> dict[str, Any]:
        """Queue ``job`` (run by the worker, after the jobs before it, for the caller queuing it); ``key`` names
        it: asking again while a job of that key waits does not queue it twice (e.g. ``round-end:TEAM``).
        Answers as :meth:`put`; what ``job`` returns is logged (``str``), a failure is counted and logged."""

        roots = input_roots()

        def call() -> str:
            with confined(roots):
                done = job()
            return done if isinstance(done, str) else "done"

        return self._put(("call", key), what or key, call)

    def _put(self, key: tuple[str, ...], what: str, job: Callable[[], str]) -> dict[str, Any]:
        owner = caller.current()
        with self._cond:
            mine = self._owned.get(owner, 0)
            waiting = mine if owner is not None else len(self._jobs)
            if self._closed:
                return {"queued": False, "waiting": waiting, "reason": "the server is stopping"}
            if (owner, key) in self._waiting:
                return {"queued": False, "waiting": waiting, "reason": "already waiting"}
            if owner is not None:
                share = self._per_agent if self._per_agent is not None else per_agent_share()
                if mine >= share:
                    raise TooBusyError(f"agent {owner!r} has {mine} jobs waiting in the capture queue, its share "
                                       f"({share}, {PER_AGENT_ENV}): wait for them to run (the transcript's next "
                                       "capture reads what this one would have)")
            # agents together, and admins, each have the whole bound: agents cannot fill it for an admin
            agents = len(self._jobs) - self._owned.get(None, 0)
            if (owner is None and self._owned.get(None, 0) >= MAX_WAITING) or (owner is not None
                                                                               and agents >= MAX_WAITING):
                return {"queued": False, "waiting": waiting, "reason": "the queue is full"}
            self._jobs.append(_Job(key, what, job, owner))
            self._waiting.add((owner, key))
            self._owned[owner] = mine + 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="cortex-capture", daemon=True)
                self._thread.start()
            self._cond.notify()
            return {"queued": True, "waiting": mine + 1 if owner is not None else len(self._jobs)}

    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._jobs and not self._closed:
                    self._cond.wait()
                if not self._jobs:
                    return
                job = self._running = self._jobs.popleft()
                self._waiting.discard((job.owner, job.key))
                self._owned[job.owner] -= 1
                if not self._owned[job.owner]:
                    del self._owned[job.owner]
            counts = (self._all, self._by_owner.setdefault(job.owner, _Counts()))
            try:
                with caller.acting(job.owner):  # the job may do what its caller may, no more
                    said = job.run()
                for c in counts:
                    c.done += 1
                log.info("%s: %s", job.what, said)
            except Exception as exc:  # a job never stops the worker
                error = f"{type(exc).__name__}: {exc}"
                for c in counts:
                    c.failed += 1
                    c.last_error = error
                log.warning("%s failed: %s", job.what, error)
            finally:
                with self._cond:
                    self._running = None
                    self._cond.notify_all()

    def status(self, agent: str | None = None) -> dict[str, Any]:
        """Jobs waiting, running, done and failed, and the last failure: all of them, or (``agent``: what an
        agent's token is shown) only the jobs that agent's tokens queued."""
        with self._cond:
            if agent is None:
                counts, waiting, running = self._all, len(self._jobs), self._running is not None
            else:
                counts = self._by_owner.get(agent) or _Counts()
                waiting = self._owned.get(agent, 0)
                running = self._running is not None and self._running.owner == agent
            return {"waiting": waiting, "running": running, "done": counts.done, "failed": counts.failed,
                    "last_error": counts.last_error}

    def drain(self, timeout: float = 60.0) -> bool:
        """Wait until nothing waits or runs (True), or ``timeout`` seconds (False)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._jobs or self._running is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return True

    def close(self, timeout: float = 30.0) -> None:
        """Finish the running job (the waiting ones are captured by a later run), then stop the worker."""
        with self._cond:
            self._closed = True
            self._jobs.clear()
            self._waiting.clear()
            self._owned.clear()
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
