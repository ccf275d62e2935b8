"""The capture queue of the process that owns a store: transcript captures asked for by hooks run here, one at a
time, after the hook has answered (a language model takes seconds; a hook has milliseconds).

A job is (agent, transcript, options); asking again for a transcript already waiting does not queue it twice.
Nothing is lost when the process dies: a capture's checkpoint is written after what it stored, so the next
capture of the transcript (the next Stop, SubagentStop or SessionEnd hook, or ``cortex capture``) reads the
part again (:mod:`cortex.capture.checkpoints`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from typing import Any

from cortex.api import MemoryAPI

log = logging.getLogger("cortex")

#: The most jobs waiting (a hook asking beyond it is told so; its transcript is captured by a later run).
MAX_WAITING = 1000


class CaptureQueue:
    """One worker thread running ``cx.capture_transcript`` for queued jobs, in order."""

    def __init__(self, cx: MemoryAPI) -> None:
        self.cx = cx
        self._jobs: deque[tuple[str, str, dict[str, Any]]] = deque()
        self._waiting: set[tuple[str, str]] = set()
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
        with self._cond:
            if self._closed:
                return {"queued": False, "waiting": len(self._jobs), "reason": "the server is stopping"}
            key = (agent, path)
            if key in self._waiting:
                return {"queued": False, "waiting": len(self._jobs), "reason": "already waiting"}
            if len(self._jobs) >= MAX_WAITING:
                return {"queued": False, "waiting": len(self._jobs), "reason": "the queue is full"}
            self._jobs.append((agent, path, options))
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
                agent, path, options = self._jobs.popleft()
                self._waiting.discard((agent, path))
                self._busy = True
            try:
                report = self.cx.capture_transcript(agent, path, **options)
                self.done += 1
                log.info("captured %s for %s: %d stored, %d confirmed, refused %s%s", path, agent,
                         len(report.stored), len(report.confirmed), report.refused,
                         " (model part pending)" if report.pending else "")
            except Exception as exc:  # a job never stops the worker
                self.failed += 1
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.warning("capture of %s for %s failed: %s", path, agent, self.last_error)
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
