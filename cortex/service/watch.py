"""The notes watcher of the process that owns a store: a Markdown notes file written, changed, moved or deleted
is synced within a moment (docs/capture.md, "Markdown notes"), with watchdog.

It watches ``.cortex/notes/`` of the store's project (created when missing) and every notes directory the agents
list, recursively; events are gathered for :data:`SETTLE` seconds (an editor writes a file in several steps), then
each file is synced once. At start, one full sync catches what changed while nothing watched.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from cortex.app import Cortex
from cortex.errors import CortexError

log = logging.getLogger("cortex")

#: Seconds a burst of events on files is gathered before they are synced.
SETTLE = 0.3


class NotesWatcher:
    """Syncs notes files as they change, for the agents of ``cx`` (a store served by this process)."""

    def __init__(self, cx: Cortex, root: Path) -> None:
        self.cx, self.root = cx, root
        self._pending: dict[str, float] = {}
        self._cond = threading.Condition()
        self._closed = False
        self._observer: Any = None
        self._thread: threading.Thread | None = None
        #: files synced, and the last failure (the server's status)
        self.synced = 0
        self.last_error: str | None = None

    def directories(self) -> list[Path]:
        """What is watched: the project's ``.cortex/notes`` and every agent's existing notes directories."""
        base = self.root / ".cortex" / "notes"
        out = [base]
        for agent in self.cx.describe_agents():
            if agent.get("problems") or not agent.get("memory_enabled"):
                continue
            for directory in self.cx.notes_dirs(agent["name"]):
                path = Path(directory)
                if path.is_dir() and not path.resolve().is_relative_to(base.resolve()):
                    out.append(path)
        return out

    def start(self) -> None:
        """Watch (in watchdog's thread) and sync (in this watcher's), after one full sync."""
        from watchdog.events import FileSystemEvent, FileSystemEventHandler
        from watchdog.observers import Observer

        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                for raw in (event.src_path, getattr(event, "dest_path", "")):
                    path = os.fsdecode(raw) if raw else ""
                    if path.lower().endswith(".md") and event.event_type != "opened" \
                            and event.event_type != "closed_no_write":
                        watcher.changed(path)

        base = self.root / ".cortex" / "notes"
        try:
            base.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            log.warning("notes: cannot create %s: %s", base, exc)
        self._observer = Observer()
        for directory in self.directories():
            if directory.is_dir():
                self._observer.schedule(Handler(), str(directory), recursive=True)
        self._observer.daemon = True
        self._observer.start()
        self._thread = threading.Thread(target=self._work, name="cortex-notes", daemon=True)
        self._thread.start()

    def changed(self, path: str) -> None:
        """A notes file changed: sync it once events on it settle."""
        with self._cond:
            self._pending[path] = time.monotonic() + SETTLE
            self._cond.notify()

    def _work(self) -> None:
        try:
            self.cx.sync_notes()
        except Exception as exc:  # the server goes on; the next change syncs again
            self.last_error = f"{type(exc).__name__}: {exc}"
            log.warning("notes: the sync at start failed: %s", self.last_error)
        while True:
            with self._cond:
                while not self._closed and (not self._pending or min(self._pending.values()) > time.monotonic()):
                    wait = min(self._pending.values()) - time.monotonic() if self._pending else None
                    self._cond.wait(wait)
                if self._closed:
                    return
                now = time.monotonic()
                ready = [p for p, at in self._pending.items() if at <= now]
                for path in ready:
                    del self._pending[path]
            for path in ready:
                self._sync(path)

    def _sync(self, path: str) -> None:
        try:
            self.cx.sync_notes(file=path)
            self.synced += 1
        except CortexError as exc:  # a file of no agent's notes directory, an agent's broken definition
            log.info("notes: %s not synced: %s", path, exc)
        except Exception as exc:
            self.last_error = f"{type(exc).__name__}: {exc}"
            log.warning("notes: %s not synced: %s", path, self.last_error)

    def close(self) -> None:
        """Stop watching; a sync running finishes first."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(5)
        if self._thread is not None:
            self._thread.join(30)
