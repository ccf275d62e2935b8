"""The capture queue of the process that owns a store: transcript captures asked for by hooks run here, one at a
time, after the hook has answered (a language model takes seconds; a hook has milliseconds).

A capture job is (agent, transcript, options); asking again for a transcript already waiting does not queue it
twice. Nothing is lost when the process dies: a capture's checkpoint is written after what it stored, so the next
capture of the transcript (the next Stop, SubagentStop or SessionEnd hook, or ``cortex capture``) reads the
part again (:mod:`cortex.capture.checkpoints`). Other work that takes a model's seconds (a team's round end, a
lead's Stop hook asks for) is queued the same way, by a key, with :meth:`CaptureQueue.put_call`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from cortex.api import MemoryAPI
from cortex.files import confined, input_roots

log = logging.getLogger("cortex")

#: The most jobs waiting (a hook asking beyond it is told so; its transcript is captured by a later run).
MAX_WAITING = 1000


class CaptureQueue:
    """One worker thread running queued jobs in order: ``cx.capture_transcript`` for captures, any callable
    for :meth:`put_call`."""

    def __init__(self, cx: MemoryAPI) -> None:
        self.cx = cx
        #: (key, what it is for the log, the job: returns what the log says it did)
        self._jobs: deque[tuple[tuple[str, ...], str, Callable[[], str]]] = deque()
        self._waiting: set[tuple[str, ...]] = set()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._busy = False
        #: what the worker did: jobs done and failed, and the last failure
        self.done = 0
        self.failed = 0
        self.last_error: str | None = None

    def put(self, agent: str, path: str, **options: Any) -> dict[str, Any]:
        """Queue a capture; returns ``{"queued": bool, "waiting": n}`` (not queued: it already waits, or the
        queue is full)."""

        roots = input_roots()  # the caller's confinement: the worker reads the file under it, not the server's

        def capture() -> str:
            with confined(roots):
                report = self.cx.capture_transcript(agent, path, **options)
            return (f"{len(report.stored)} stored, {len(report.confirmed)} confirmed, refused {report.refused}"
                    f"{' (model part pending)' if report.pending else ''}")

        return self._put(("capture", agent, path), f"capture of {path} for {agent}", capture)

    def put_call(self, key: str, job: Callable[[], Any], what: str | None = None) -> dict[str, Any]:
        """Queue ``job`` (run by the worker, after the jobs before it); ``key`` names it: asking again while a
        job of that key waits does not queue it twice (e.g. ``round-end:TEAM``). Answers as :meth:`put`; what
        ``job`` returns is logged (``str``), a failure is counted and logged."""

        roots = input_roots()

        def call() -> str:
            with confined(roots):
                done = job()
            return done if isinstance(done, str) else "done"

        return self._put(("call", key), what or key, call)

    def _put(self, key: tuple[str, ...], what: str, job: Callable[[], str]) -> dict[str, Any]:
        with self._cond:
            if self._closed:
                return {"queued": False, "waiting": len(self._jobs), "reason": "the server is stopping"}
            if key in self._waiting:
                return {"queued": False, "waiting": len(self._jobs), "reason": "already waiting"}
            if len(self._jobs) >= MAX_WAITING:
                return {"queued": False, "waiting": len(self._jobs), "reason": "the queue is full"}
            self._jobs.append((key, what, job))
            self._waiting.add(key)
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="cortex-capture", daemon=True)
                self._thread.start()
            self._cond.notify()
            return {"queued": True, "waiting": len(self._jobs)}

    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._jobs and not self._closed:
                    self._cond.wait()
                if not self._jobs:
                    return
                key, what, job = self._jobs.popleft()
                self._waiting.discard(key)
                self._busy = True
            try:
                said = job()
                self.done += 1
                log.info("%s: %s", what, said)
            except Exception as exc:  # a job never stops the worker
                self.failed += 1
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.warning("%s failed: %s", what, self.last_error)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def status(self) -> dict[str, Any]:
        """Jobs waiting, running, done and failed."""
        with self._cond:
            return {"waiting": len(self._jobs), "running": self._busy, "done": self.done, "failed": self.failed,
                    "last_error": self.last_error}

    def drain(self, timeout: float = 60.0) -> bool:
        """Wait until nothing waits or runs (True), or ``timeout`` seconds (False)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._jobs or self._busy:
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
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
