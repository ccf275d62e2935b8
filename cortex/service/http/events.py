"""``GET /v1/events``: what the facade commits (:mod:`cortex.events`: memories written, agents' starts, captures,
review items, consolidation runs) as server-sent events, for the memory browser's live updates.

Each event is ``id: <bus>-<n>`` and ``data: {kind, agent, scope, at, ...}`` (JSON); a comment every
:data:`KEEP_ALIVE` seconds keeps proxies from closing a quiet stream. An agent's token receives the events of what
it may read (its own memory, its teams', the swarm's), an admin's every one; the browser's session cookie is
accepted with the session's key as on every ``/v1`` route (the page reads the stream with ``fetch``, which can send
the key). A client that reconnects with ``Last-Event-ID`` first receives what it missed, while the server still has it. A subscriber too slow to read loses its oldest
events and is told so (an event of kind ``gap`` with the count), as is one that comes back too late to be given
what it missed (after a restart of the server: ``dropped`` is then -1). The stream ends when the client goes, when the
server stops (within :data:`POLL` seconds of SIGTERM: it never holds a shutdown) and when the store is closed; the
requests-in-flight count of the consolidation sweep leaves it out (:func:`long_lived`).

A stream holds a connection for as long as it is open, and the server has only so many (``--max-concurrency``:
beyond it every route answers 503). So one token holds at most :data:`STREAMS_PER_TOKEN` streams (a browser session
counts towards its token; the page holds one stream per browser, whatever its tabs), and all callers together at
most a quarter of the connections (:class:`StreamSlots`); beyond either a new stream is refused with 429
(:class:`~cortex.errors.TooBusyError`). Refused, not the oldest closed: closing would let anyone holding the token
silently cut the others' live views, and two clients over the bound would take turns closing each other's stream
for ever; a refusal is said once, and the page retries with a growing delay.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from cortex.api.operations import route
from cortex.errors import TooBusyError
from cortex.events import Bus, Subscription
from cortex.service.auth import Principal
from cortex.service.http.routing import Caller, Cx, operation

router = APIRouter()

#: Seconds between keep-alive comments on a quiet stream.
KEEP_ALIVE = 15.0
#: Seconds between two checks that the server is stopping (a stream ends within that of SIGTERM).
POLL = 0.5
#: How long the browser waits before it reconnects (the stream's ``retry:``), in milliseconds.
RETRY_MS = 3000
#: Open event streams one token may hold (its browser sessions included).
STREAMS_PER_TOKEN = 8
#: Open event streams of every caller together, without a server's ``--max-concurrency`` (a quarter of it then).
MAX_STREAMS = 64


class StreamSlots:
    """How many event streams are open, per token and in all: :meth:`take` refuses one beyond either bound."""

    def __init__(self, per_token: int = STREAMS_PER_TOKEN, total: int = MAX_STREAMS) -> None:
        self.per_token, self.total = per_token, total
        self._open: dict[str, int] = {}
        self._lock = threading.Lock()

    def take(self, caller: Principal) -> Callable[[], None]:
        """A slot for a stream of ``caller`` (its token; else its agent, or the admin without tokens), and the
        function that gives it back (once, however often it is called); :class:`TooBusyError` when there is none."""
        key = caller.token or (f"agent:{caller.agent}" if caller.agent else "admin")
        with self._lock:
            if self._open.get(key, 0) >= self.per_token:
                raise TooBusyError(
                    f"this token already holds {self.per_token} open event streams (GET /v1/events), the most one "
                    "token may: close one first (the memory browser holds one per browser, whatever its tabs)")
            if sum(self._open.values()) >= self.total:
                raise TooBusyError(f"the server already holds {self.total} open event streams (GET /v1/events), "
                                   "the most it serves at once: try again later")
            self._open[key] = self._open.get(key, 0) + 1
        given: list[bool] = []

        def give_back() -> None:
            with self._lock:
                if given:
                    return
                given.append(True)
                self._open[key] -= 1
                if not self._open[key]:
                    del self._open[key]

        return give_back

    def held(self) -> int:
        """How many streams are open."""
        with self._lock:
            return sum(self._open.values())


def long_lived(scope: dict[str, Any]) -> bool:
    """Whether the request of ``scope`` is the event stream: open for as long as the client keeps it, so it is
    not work in flight (the consolidation sweep does not wait for it to end)."""
    path: str = scope.get("path", "")
    root = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root):]
    return path == route("events").full_path


class EventStream(Response):
    """The ``text/event-stream`` answer of one subscription (read until the client, the server or the bus
    ends it)."""

    media_type = "text/event-stream"

    def __init__(self, subscription: Subscription, bus: Bus, wake: asyncio.Event,
                 stopping: Callable[[], bool], release: Callable[[], None] = lambda: None) -> None:
        self.status_code = 200
        self.background = None
        self.init_headers({"cache-control": "no-store", "x-accel-buffering": "no"})
        self._subscription, self._bus, self._wake, self._stopping = subscription, bus, wake, stopping
        self._release = release

    def _frames(self, dropped: int) -> bytes:
        """The events waiting, as SSE frames (after a ``gap`` frame when some were dropped)."""
        out = []
        if dropped:
            out.append(f"data: {json.dumps({'kind': 'gap', 'dropped': dropped})}\n\n")
        for event in self._subscription.drain():
            data = json.dumps(event.as_dict(), ensure_ascii=False, default=str)
            out.append(f"id: {self._bus.full_id(event)}\ndata: {data}\n\n")
        return "".join(out).encode("utf-8")

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        loop = asyncio.get_running_loop()
        gone = False

        async def watch() -> None:  # the client's going (uvicorn says it once the connection closes)
            nonlocal gone
            while (await receive())["type"] != "http.disconnect":
                pass
            gone = True
            self._wake.set()

        watcher = asyncio.ensure_future(watch())
        try:
            await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
            await send({"type": "http.response.body", "body": f"retry: {RETRY_MS}\n: live\n\n".encode(),
                        "more_body": True})
            quiet_since, dropped, missed = loop.time(), 0, self._subscription.missed
            while not gone and not self._subscription.closed and not self._stopping():
                self._wake.clear()
                # a gap: events dropped, or a client back too late to be given what it missed (-1: unknown)
                lost, dropped = self._subscription.dropped - dropped, self._subscription.dropped
                if missed:
                    lost, missed = -1, False
                frames = self._frames(lost)
                if not frames and loop.time() - quiet_since >= KEEP_ALIVE:
                    frames = b": keep-alive\n\n"
                if frames:
                    await send({"type": "http.response.body", "body": frames, "more_body": True})
                    quiet_since = loop.time()
                try:
                    await asyncio.wait_for(self._wake.wait(), timeout=POLL)
                except asyncio.TimeoutError:
                    pass
            if not gone:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:  # the connection went while writing
            pass
        finally:
            watcher.cancel()
            self._subscription.close()
            self._release()


@operation(router, "events", responses={200: {"content": {"text/event-stream": {}},
                                              "description": "Server-sent events: `data: {kind, agent, scope, at, "
                                                             "...}` (JSON)"}})
async def events(request: Request, caller: Caller, cx: Cx) -> Response:
    """The live events the caller may read, as server-sent events (``text/event-stream``): memories written,
    agents' starts (the memories injected), captures, review items held or decided, consolidation runs. An agent's
    token receives those of its own memory, its teams' and the swarm's; an admin every one. ``Last-Event-ID``
    (or ``?after=``) first replays what was missed, while the server still has it. One token holds at most 8
    streams at once, all callers together a quarter of the server's connections: beyond, 429."""
    loop = asyncio.get_running_loop()
    wake = asyncio.Event()
    slots: StreamSlots = request.app.state.stream_slots
    release = slots.take(caller)
    try:
        after = request.headers.get("last-event-id") or request.query_params.get("after")
        subscription = cx.subscribe(caller.agent, after=after, wake=lambda: loop.call_soon_threadsafe(wake.set))
    except BaseException:
        release()
        raise
    stopping: Callable[[], bool] = getattr(request.app.state, "stopping", lambda: False)
    return EventStream(subscription, cx.events, wake, stopping, release)
