"""The engine switch: which memories answer and receive writes, Cortex's own store, external memory providers, both,
or none (JiuwenSwarm's ``memory.engine``), and the providers themselves behind time-outs and breakers.

Settings (the environment wins over the ``[providers]`` table of ``.cortex/config.toml``):

- ``CORTEX_ENGINE`` / ``engine``: ``builtin`` (default: Cortex's store only), ``both`` (reads merge the store's
  memories with the providers' hits, :mod:`cortex.providers.merge`; writes go to the store and are mirrored to the
  providers in the background), ``external`` (only the providers answer and receive writes), ``none`` (reads are
  empty and every write is refused).
- ``CORTEX_PROVIDERS`` / ``providers``: the providers, a comma list (built in: ``mem0``, ``openviking``; others
  are entry points of the group ``cortex.providers``, :mod:`cortex.providers.registry`).
- ``CORTEX_PROVIDER_TIMEOUT`` / ``timeout``: seconds a provider may take per call (default 5).
- ``CORTEX_PROVIDER_WEIGHT`` / ``weight``: a provider's weight in the merged ranking against Cortex's 1 (0.5).
- a built-in provider's own settings (``CORTEX_MEM0_URL``, ``CORTEX_MEM0_API_KEY``, ... or ``[providers.mem0]``
  ``url``, ``api_key``, ...); a plugin's ``[providers.NAME]`` table is passed to its ``initialize``.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from cortex.errors import ProviderError
from cortex.model import Memory
from cortex.providers import registry
from cortex.providers.base import WRITE_ORIGIN, MemoryProvider, ProviderHit, finite_score, split_context
from cortex.providers.guard import Guarded
from cortex.providers.settings import (  # noqa: F401 - the settings' names, where they were first defined
    ENGINE_ENV,
    ENGINES,
    OPTIONS,
    PROVIDERS_ENV,
    TIMEOUT_ENV,
    WEIGHT_ENV,
    EngineSettings,
    engine_settings,
    is_secret,
)

log = logging.getLogger("cortex")

#: consecutive failures that open a provider's breaker, and how long it then stays open (JiuwenSwarm's figures)
BREAKER_FAILURES = 5
BREAKER_COOLDOWN = 120.0
#: Writes waiting to be mirrored before new ones are dropped (and counted).
MIRROR_QUEUE = 10_000
#: Actions whose writes are not mirrored: they change what Cortex counts (uses, validations), not what is known.
UNMIRRORED = frozenset({"use", "validate", "start"})
#: The agent a health probe searches as (a valid agent name that holds nothing).
PROBE_AGENT = "cortex-health"


class Engine:
    """The providers of one :class:`EngineSettings`, loaded and initialized, each behind a :class:`Guarded`; what
    reads and writes ask of them. ``redact`` is applied to everything sent to a provider."""

    def __init__(self, settings: EngineSettings, *, redact: Callable[[str], str] = lambda text: text,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self._redact = redact
        self.providers: list[Guarded] = []
        for name in settings.providers if settings.external else ():
            self.providers.append(self._start(name, clock))
        self._mirror = _Mirror(self)

    def _start(self, name: str, clock: Callable[[], float]) -> Guarded:
        options = dict(self.settings.options.get(name, {}))
        secrets = [str(v) for k, v in options.items() if is_secret(k) and v]
        try:
            provider = registry.load(name, options if name in registry.BUILTIN else {})
        except Exception as exc:  # noqa: BLE001 - a provider that cannot be loaded is unavailable, not fatal
            guarded = Guarded(MemoryProvider(), timeout=self.settings.timeout, secrets=secrets, name=name,
                              clock=clock)
            guarded.available = False
            guarded.last_error = guarded.scrub(f"could not be loaded: {exc}")
            log.warning("memory provider %s %s", name, guarded.last_error)
            return guarded
        guarded = Guarded(provider, timeout=self.settings.timeout, threshold=BREAKER_FAILURES,
                          cooldown=BREAKER_COOLDOWN, secrets=secrets, name=name, clock=clock)
        try:
            guarded.available = bool(guarded.call("is_available", _method(provider, "is_available", True)))
            if not guarded.available:
                guarded.last_error = "not available: is it configured (its URL, its key)?"
                log.warning("memory provider %s is %s", name, guarded.last_error)
            else:
                plugin_options = {} if name in registry.BUILTIN else options
                guarded.call("initialize", _method(provider, "initialize"), f"cortex-{os.getpid()}", platform="cortex",
                             hermes_home="", agent_context="primary", **plugin_options)
        except ProviderError:
            pass  # counted and kept as the provider's last error; reads skip it while its breaker is open
        return guarded

    @property
    def usable(self) -> list[Guarded]:
        """The providers that are loaded and configured."""
        return [g for g in self.providers if g.available]

    # -- reads ----------------------------------------------------------------------------------------------------
    def search(self, agent: str, query: str, limit: int) -> "PendingSearch":
        """Ask every usable provider for ``agent``'s hits for ``query`` (redacted), each in a thread of its own;
        the answer is collected with :meth:`PendingSearch.collect` (which waits at most the time-out)."""
        return PendingSearch(self, agent, self._redact(query), limit)

    # -- writes -------------------------------------------------------------------------------------------------
    def mirror(self, action: str, agent: str | None, written: Sequence[Memory], removed: Sequence[tuple[str, str]]
               ) -> None:
        """Queue the mirroring of a committed write: each of ``written`` added or replaced, each ``(scope, id)`` of
        ``removed`` removed, at every usable provider, in the background and in order."""
        if action in UNMIRRORED or not self.usable or not (written or removed):
            return
        self._mirror.put((action, agent, list(written), list(removed)))

    def write(self, memories: Sequence[Memory]) -> list[str]:
        """Send ``memories`` to every usable provider now (the ``external`` engine's store); the names of the
        providers that took them all. ProviderError when none did."""
        accepted: list[str] = []
        failures: list[str] = []
        for guarded in self.usable:
            try:
                for memory in memories:
                    self.send(guarded, "add", memory.agent, memory)
                accepted.append(guarded.name)
            except ProviderError as exc:
                failures.append(str(exc))
        if not accepted:
            names = ", ".join(g.name for g in self.providers)
            raise ProviderError(names, "the write reached no provider, nothing was stored: "
                                       + ("; ".join(failures) or "none is available"))
        return accepted

    def remove(self, agent: str, memory_id: str) -> bool:
        """Ask every usable provider to remove the memory Cortex stored there as ``memory_id`` (the ``external``
        engine's forget); whether one of them took the request."""
        done = False
        for guarded in self.usable:
            try:
                self.send(guarded, "remove", agent, None, ("agent", memory_id))
                done = True
            except ProviderError:
                pass
        return done

    def send(self, guarded: Guarded, action: str, agent: str | None, memory: Memory | None,
             removed: tuple[str, str] | None = None) -> None:
        """One ``on_memory_write`` to one provider (redacted content; the memory's fields in ``metadata``)."""
        if memory is not None:
            content = self._redact(memory.content)
            metadata: dict[str, Any] = {"write_origin": WRITE_ORIGIN, "agent": memory.agent,
                                        "memory_id": memory.id, "scope": memory.scope, "type": memory.type.value,
                                        "project": memory.project, "tags": list(memory.tags),
                                        "source": memory.source.value}
        else:
            assert removed is not None
            content = ""
            metadata = {"write_origin": WRITE_ORIGIN, "agent": agent, "memory_id": removed[1], "scope": removed[0]}
        guarded.call(f"on_memory_write {action}", _method(guarded.provider, "on_memory_write"), action, "memory",
                     content, metadata)

    # -- state ------------------------------------------------------------------------------------------------------
    def health(self, probe: bool = True) -> dict[str, Any]:
        """The engine, each provider's state (:meth:`Guarded.health`) and the mirror's figures. With ``probe``,
        each provider whose breaker is closed is asked a one-hit search first (in parallel, within the time-out),
        so that the state says how it answers now, not only how it answered this process's earlier calls; the
        probe's outcome is its ``probe``."""
        probed = self.search(PROBE_AGENT, "cortex health check", 1).collect()[1] if probe and self.usable else {}
        providers = []
        for guarded in self.providers:
            state = guarded.health()
            if guarded.name in probed and guarded.available:
                state["probe"] = probed[guarded.name]
            providers.append(state)
        return {"engine": self.settings.engine, "timeout_s": self.settings.timeout, "providers": providers,
                "mirror": self._mirror.figures()}

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until every queued mirror write was sent (or failed); False when ``timeout`` passed first."""
        return self._mirror.drain(timeout)

    def close(self) -> None:
        """Send what is queued (within the time-out), then shut the providers down. Idempotent."""
        self._mirror.close(self.settings.timeout)
        for guarded in self.usable:
            try:
                guarded.call("shutdown", _method(guarded.provider, "shutdown"), timeout=min(self.settings.timeout, 2.0))
            except ProviderError:
                pass
        self.providers = []


def _method(provider: object, name: str, default: object = None) -> Callable[..., Any]:
    """The provider's method ``name``, or one that returns ``default`` (a Hermes provider need not have the
    optional ones)."""
    method = getattr(provider, name, None)
    return method if callable(method) else (lambda *args, **kwargs: default)


class PendingSearch:
    """Providers' searches running in the background; :meth:`collect` gathers them."""

    def __init__(self, engine: Engine, agent: str, query: str, limit: int) -> None:
        self._deadline = time.monotonic() + engine.settings.timeout + 0.25
        self._results: dict[str, list[ProviderHit]] = {}
        self.status: dict[str, str] = {}
        self._threads: list[threading.Thread] = []
        for guarded in engine.providers:
            if not guarded.available:
                self.status[guarded.name] = "unavailable"
                continue
            thread = threading.Thread(target=self._ask, args=(guarded, agent, query, limit), daemon=True,
                                      name=f"cortex-search-{guarded.name}")
            self.status[guarded.name] = "timed out"
            self._threads.append(thread)
            thread.start()

    def _ask(self, guarded: Guarded, agent: str, query: str, limit: int) -> None:
        provider = guarded.provider

        def hits(answer: object) -> list[ProviderHit]:
            found = _hits(answer, limit)
            if found is None:
                raise ValueError(f"{type(answer).__name__}, not a list of hits")
            return found

        def text_hits(text: object) -> list[ProviderHit]:
            if not isinstance(text, str):
                raise ValueError(f"{type(text).__name__}, not text")
            return [ProviderHit(id=str(i), content=part) for i, part in enumerate(split_context(text)[:limit])]

        try:
            if callable(getattr(provider, "search", None)):
                found = guarded.call("search", provider.search, query, agent=agent, limit=limit, check=hits)
            else:  # a Hermes provider as it is: its prefetch's text
                found = guarded.call("prefetch", provider.prefetch, query, session_id=agent, check=text_hits)
            self._results[guarded.name] = found
            self.status[guarded.name] = "ok"
        except ProviderError as exc:
            self.status[guarded.name] = str(exc).removeprefix(f"memory provider {guarded.name}: ")

    def collect(self) -> tuple[dict[str, list[ProviderHit]], dict[str, str]]:
        """Each provider's hits that came in time (by provider, in configuration order) and each one's status."""
        for thread in self._threads:
            thread.join(max(0.0, self._deadline - time.monotonic()))
        return dict(self._results), dict(self.status)


def _hits(answer: object, limit: int) -> list[ProviderHit] | None:
    """A provider's answer as hits (ProviderHit, or mappings with ``content``/``memory``/``text`` and ``id``);
    None when it is not a list of such."""
    if not isinstance(answer, (list, tuple)):
        return None
    out: list[ProviderHit] = []
    for i, item in enumerate(answer):
        if isinstance(item, Mapping):
            text = item.get("content", item.get("memory", item.get("text")))
            item = ProviderHit(id=str(item.get("id", i)), content=text if isinstance(text, str) else "",
                               score=item.get("score"))
        if not isinstance(item, ProviderHit) or not isinstance(item.content, str) or not isinstance(item.id, str):
            return None
        # plain values only: what the request's thread does with a hit (merge, render, JSON) must not raise
        hit = ProviderHit(id=str.__str__(item.id), content=str.__str__(item.content),
                          score=finite_score(item.score),
                          created_at=_moment(item.created_at),
                          metadata=dict(item.metadata) if isinstance(item.metadata, dict) else {})
        if hit.content.strip():
            out.append(hit)
        if len(out) >= limit:
            break
    return out


def _moment(value: object) -> datetime | None:
    """A provider's creation time when it is an aware datetime, else None."""
    if not isinstance(value, datetime):
        return None
    try:
        return value if value.utcoffset() is not None else None
    except Exception:  # noqa: BLE001 - a tzinfo of a plugin may raise
        return None


class _Mirror:
    """The background sender of mirrored writes: one thread, one bounded queue, in order."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._queue: queue.Queue[tuple[str, str | None, list[Memory], list[tuple[str, str]]] | None] = \
            queue.Queue(MIRROR_QUEUE)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.sent = self.failed = self.dropped = 0

    def put(self, job: tuple[str, str | None, list[Memory], list[tuple[str, str]]]) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="cortex-mirror", daemon=True)
                self._thread.start()
        try:
            self._queue.put_nowait(job)
        except queue.Full:
            self.dropped += 1
            log.warning("memory providers: %d writes waiting to be mirrored; one more was dropped", MIRROR_QUEUE)

    def _run(self) -> None:
        while True:
            job = self._queue.get()
            try:
                if job is None:
                    return
                action, agent, written, removed = job
                for guarded in self._engine.usable:
                    for memory in written:
                        self._one(guarded, _write_action(action, memory), agent, memory, None)
                    for pair in removed:
                        self._one(guarded, "remove", agent, None, pair)
            finally:
                self._queue.task_done()

    def _one(self, guarded: Guarded, action: str, agent: str | None, memory: Memory | None,
             removed: tuple[str, str] | None) -> None:
        try:
            self._engine.send(guarded, action, agent, memory, removed)
            self.sent += 1
        except ProviderError:
            self.failed += 1

    def figures(self) -> dict[str, int]:
        return {"queued": self._queue.qsize(), "sent": self.sent, "failed": self.failed, "dropped": self.dropped}

    def drain(self, timeout: float | None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._queue.unfinished_tasks:
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True

    def close(self, timeout: float) -> None:
        if self._thread is not None:
            self.drain(timeout)
            try:
                self._queue.put_nowait(None)
            except queue.Full:
                pass


def _write_action(action: str, memory: Memory) -> str:
    """``add`` for a memory this write created, ``remove`` for one it ended (superseded, expired), else ``replace``."""
    if memory.superseded_by is not None or memory.valid_until is not None:
        return "remove"
    return "add" if memory.version == 1 and action not in ("update",) else "replace"


def removed_pairs(scope: str, ids: Iterable[str], present: Iterable[str]) -> list[tuple[str, str]]:
    """``(scope, id)`` of the ``ids`` a write committed that are no longer in the store (deleted)."""
    kept = set(present)
    return [(scope, i) for i in ids if i not in kept]

