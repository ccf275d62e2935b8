"""The facade's events: what changed, once it is committed (memories written, an agent's start injected, a capture,
a review item held or decided, a consolidation run), for whoever listens in this process: the server's
``GET /v1/events`` stream, which the memory browser reads to update itself.

A :class:`Bus` numbers the events it is given and hands each one to every :class:`Subscription` that accepts it,
in order. Publishing never blocks and never fails the write it reports: each subscriber has a bounded queue, and
one that does not keep up loses its oldest events (counted in :attr:`Subscription.dropped`) rather than holding
the writer back.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from types import TracebackType
from typing import Any

log = logging.getLogger("cortex")

#: The kinds of event the facade publishes.
KINDS = ("write", "injection", "capture", "review", "consolidation")
#: How many events a subscriber that does not read may have waiting before the oldest are dropped.
QUEUE = 256
#: How many recent events a bus keeps for a subscriber that comes back (``Last-Event-ID``).
HISTORY = 256


@dataclass(frozen=True)
class Event:
    """One thing that happened: its number on its bus, its kind, the agent it was for, the scope it changed
    (``agent:alice``, ``team:backend``, ``swarm``), when, and what else its kind says (ids, session, run...)."""

    id: int
    kind: str
    agent: str | None
    scope: str | None
    at: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The event as JSON: ``{kind, agent, scope, at, ...data}``."""
        return {**self.data, "kind": self.kind, "agent": self.agent, "scope": self.scope, "at": self.at}


class Subscription:
    """The events of a bus one listener accepts, in the order they were published, from a bounded queue.

    Read with :meth:`get` (blocking, with a time-out) or :meth:`drain`; ``wake`` (given to
    :meth:`Bus.subscribe`) is called, in the publisher's thread, each time an event arrives or the subscription
    ends: an event loop's reader wakes on it. Close it (or use it as a context manager) when done."""

    def __init__(self, bus: "Bus", accept: Callable[[Event], bool] | None, capacity: int,
                 wake: Callable[[], object] | None) -> None:
        self._bus = bus
        self._accept = accept
        self._capacity = max(1, capacity)
        self._wake = wake
        self._events: deque[Event] = deque()
        self._ready = threading.Condition(threading.Lock())
        #: How many events this subscriber lost because it did not read them in time.
        self.dropped = 0
        #: Whether it came back (``after``) too late to be given everything it missed (another process's id,
        #: or one older than the bus keeps): its reader should read afresh.
        self.missed = False
        self.closed = False

    def _offer(self, event: Event) -> None:
        """Queue ``event`` when accepted (called by the bus, in order); never raises."""
        try:
            if self._accept is not None and not self._accept(event):
                return
        except Exception:  # noqa: BLE001 - a filter's failure drops its event, never the publisher's write
            log.exception("an event filter failed")
            return
        with self._ready:
            if self.closed:
                return
            if len(self._events) >= self._capacity:
                self._events.popleft()
                self.dropped += 1
            self._events.append(event)
            self._ready.notify_all()
        self._signal()

    def _signal(self) -> None:
        if self._wake is None:
            return
        try:
            self._wake()
        except Exception:  # noqa: BLE001 - e.g. the reader's event loop is closed: it reads no more anyway
            pass

    def get(self, timeout: float | None = None) -> Event | None:
        """The next event, waiting up to ``timeout`` seconds (None: until there is one or the subscription
        ends); None when there is none."""
        with self._ready:
            if not self._events and not self.closed:
                self._ready.wait(timeout)
            return self._events.popleft() if self._events else None

    def drain(self) -> list[Event]:
        """Every event waiting, oldest first (without waiting)."""
        with self._ready:
            out = list(self._events)
            self._events.clear()
            return out

    def close(self) -> None:
        """Stop receiving (idempotent); a reader waiting in :meth:`get` returns."""
        self._bus._unsubscribe(self)
        with self._ready:
            self.closed = True
            self._ready.notify_all()
        self._signal()

    def __enter__(self) -> "Subscription":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class Bus:
    """Publishes events to its subscriptions, in order, without ever blocking or failing the publisher."""

    def __init__(self, *, capacity: int = QUEUE, history: int = HISTORY) -> None:
        self._lock = threading.Lock()
        self._subscriptions: tuple[Subscription, ...] = ()
        self._recent: deque[Event] = deque(maxlen=max(0, history))
        self._next = 1
        self._capacity = capacity
        self.closed = False
        #: Names this bus (this process's life): an event's full id is ``{epoch}-{id}``.
        self.epoch = secrets.token_hex(4)

    def publish(self, kind: str, *, agent: str | None, scope: str | None, at: datetime | str | None = None,
                **data: Any) -> Event | None:
        """Give every subscription that accepts it the event ``kind`` of ``agent`` in ``scope`` (``data``: what
        else it says); the event, or None when the bus is closed or the event could not be made (logged: a
        write is never failed by its event)."""
        try:
            when = at if isinstance(at, str) else (at or datetime.now(timezone.utc)).isoformat()
            with self._lock:
                if self.closed:
                    return None
                event = Event(self._next, kind, agent, scope, when, dict(data))
                self._next += 1
                self._recent.append(event)
                for subscription in self._subscriptions:  # under the lock: every subscriber sees one order
                    subscription._offer(event)
            return event
        except Exception:  # noqa: BLE001 - the change is committed whatever happens to its event
            log.exception("publishing a %s event failed", kind)
            return None

    def subscribe(self, accept: Callable[[Event], bool] | None = None, *, after: str | None = None,
                  wake: Callable[[], object] | None = None, capacity: int | None = None) -> Subscription:
        """A subscription to the events ``accept`` takes (None: all). ``after`` (an event's full id, as
        :meth:`full_id` gives it) first queues the recent events this bus published after that one; an id of
        another bus (an earlier process), or one older than the bus keeps, queues none and sets
        :attr:`Subscription.missed`."""
        subscription = Subscription(self, accept, capacity or self._capacity, wake)
        since = self._since(after)
        with self._lock:
            if self.closed:
                subscription.closed = True
                return subscription
            if after and (since is None or (since + 1 < self._next and
                                            (not self._recent or self._recent[0].id > since + 1))):
                subscription.missed = True
            elif since is not None:
                for event in self._recent:
                    if event.id > since:
                        subscription._offer(event)
            self._subscriptions = (*self._subscriptions, subscription)
        return subscription

    def full_id(self, event: Event) -> str:
        """The id of ``event`` that names this bus too (what ``after`` takes)."""
        return f"{self.epoch}-{event.id}"

    def _since(self, after: str | None) -> int | None:
        if not after:
            return None
        epoch, _, number = after.strip().partition("-")
        return int(number) if epoch == self.epoch and number.isdigit() else None

    def _unsubscribe(self, subscription: Subscription) -> None:
        with self._lock:
            self._subscriptions = tuple(s for s in self._subscriptions if s is not subscription)

    @property
    def subscribers(self) -> int:
        """How many subscriptions are open."""
        return len(self._subscriptions)

    def close(self) -> None:
        """Publish nothing more and end every subscription (their readers return). Idempotent."""
        with self._lock:
            self.closed = True
            subscriptions, self._subscriptions = self._subscriptions, ()
        for subscription in subscriptions:
            subscription.close()
