"""Cortex's log records, sent to the MCP client that asked for them (``notifications/message``).

After ``logging/setLevel``, the records of Cortex's loggers (``cortex`` and below) at or above that level go to the
connection that set it, with the spec's syslog level, the logger's name and ``{"message": ...}``. Nothing is sent
before: the spec leaves the default to the server, and a client that never asked has no use for them. Only a
lasting connection is sent anything (``cortex mcp`` over stdio, a client in the same process); ``/mcp`` answers
each request on its own. Every message passes the redactor (a path or an error may hold a token) and is cut to
:data:`MAX_CHARS`; at most :data:`BURST` messages go out at once and :data:`RATE` a second after that (the spec asks
servers to rate-limit), the rest are counted and the count is sent with the next one that passes. A connection
that is gone takes its handler with it: the first send that fails removes it.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any

from cortex.capture.redact import Redactor

__all__ = ["BURST", "MAX_CHARS", "RATE", "LogBridge", "mcp_level", "python_level"]

#: The longest message sent, in characters.
MAX_CHARS = 2000
#: Messages sent at once before the rate applies, and then a second.
BURST = 20
RATE = 5.0
#: The logger whose records (and its children's) are sent.
LOGGER = "cortex"
_LEVELS = ((logging.CRITICAL, "critical"), (logging.ERROR, "error"), (logging.WARNING, "warning"),
           (25, "notice"), (logging.INFO, "info"))
_PYTHON = {"debug": logging.DEBUG, "info": logging.INFO, "notice": 25, "warning": logging.WARNING,
           "error": logging.ERROR, "critical": logging.CRITICAL, "alert": logging.CRITICAL + 5,
           "emergency": logging.CRITICAL + 10}
_REDACTOR = Redactor()


def mcp_level(levelno: int) -> str:
    """The spec's level of a Python record's ``levelno``."""
    return next((name for floor, name in _LEVELS if levelno >= floor), "debug")


def python_level(level: str) -> int:
    """The Python level below which nothing passes the spec's ``level``."""
    return _PYTHON[level]


class LogBridge(logging.Handler):
    """Sends the records of :data:`LOGGER` at or above the client's level to one connection's ``session``, from any
    thread, without waiting for the send."""

    def __init__(self, session: Any, loop: asyncio.AbstractEventLoop, level: str) -> None:
        super().__init__(python_level(level))
        self.session, self.loop = session, loop
        self.tokens, self.stamp, self.dropped = float(BURST), time.monotonic(), 0
        self._lock = threading.Lock()
        self._tasks: set[asyncio.Task[None]] = set()

    def attach(self) -> None:
        """Start sending (and let :data:`LOGGER` pass records of the client's level)."""
        logger = logging.getLogger(LOGGER)
        if logger.getEffectiveLevel() > self.level:
            logger.setLevel(self.level)
        if self not in logger.handlers:
            logger.addHandler(self)

    def detach(self) -> None:
        """Stop sending."""
        logger = logging.getLogger(LOGGER)
        # a new list, not removeHandler's in-place removal: this runs inside emit, while logging iterates the
        # handlers, and removing in place would skip the handler after this one (another connection's)
        logger.handlers = [h for h in logger.handlers if h is not self]

    def _take(self) -> int | None:
        """The messages dropped before this one when it may go now, None when it is over the rate."""
        with self._lock:
            now = time.monotonic()
            self.tokens = min(float(BURST), self.tokens + (now - self.stamp) * RATE)
            self.stamp = now
            if self.tokens < 1:
                self.dropped += 1
                return None
            self.tokens -= 1
            dropped, self.dropped = self.dropped, 0
            return dropped

    def emit(self, record: logging.LogRecord) -> None:
        dropped = self._take()
        if dropped is None:
            return
        try:
            text = _REDACTOR.redact(record.getMessage()).text
        except Exception:  # noqa: BLE001 - a record whose arguments do not format is not worth a client's time
            return
        data: dict[str, Any] = {"message": text[:MAX_CHARS] + ("…" if len(text) > MAX_CHARS else "")}
        if dropped:
            data["dropped"] = dropped  # messages over the rate, left out since the last one sent
        try:
            self.loop.call_soon_threadsafe(self._send, mcp_level(record.levelno), record.name, data)
        except RuntimeError:  # the connection's loop is closed: so is the connection
            self.detach()

    def _send(self, level: Any, logger: str, data: dict[str, Any]) -> None:
        task = self.loop.create_task(self._deliver(level, logger, data))
        self._tasks.add(task)  # held until done: the loop keeps only a weak reference to a task
        task.add_done_callback(self._tasks.discard)

    async def _deliver(self, level: Any, logger: str, data: dict[str, Any]) -> None:
        try:
            await self.session.send_log_message(level, data, logger)
        except Exception:  # noqa: BLE001 - the client went away: stop sending, quietly (logging here would recurse)
            self.detach()
