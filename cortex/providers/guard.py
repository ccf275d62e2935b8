"""One provider behind a time-out and a circuit breaker: whatever it does (raise, hang, answer garbage), the caller
gets an answer or a :class:`~cortex.errors.ProviderError` within the time-out, and never a secret in a message.

Each call runs in a daemon thread of its own, so a call that hangs keeps only that thread (it ends with the
process); a provider with :data:`MAX_IN_FLIGHT` calls still hanging is not called again until one returns. After
``threshold`` consecutive failures the breaker opens and the provider is skipped for ``cooldown`` seconds; the
first call after that is a trial, and one success closes the breaker (JiuwenSwarm's rail: 5 failures, 120 s).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from cortex.errors import ProviderError
from cortex.providers.base import MemoryProvider

log = logging.getLogger("cortex")

_T = TypeVar("_T")

#: Calls of one provider that may still be running (hung) before it is not called again until one returns.
MAX_IN_FLIGHT = 4
#: How long the text of a provider's last error may be in health answers and logs.
MAX_ERROR = 300


@dataclass
class _Outcome:
    value: Any = None
    error: BaseException | None = None


class Guarded:
    """``provider`` with a time-out, a breaker and a health record. ``secrets`` are the configured values (API
    keys) that never appear in an error this reports; ``clock`` is monotonic seconds (a test's own clock)."""

    def __init__(self, provider: MemoryProvider, *, timeout: float, threshold: int = 5, cooldown: float = 120.0,
                 secrets: Iterable[str] = (), clock: Callable[[], float] = time.monotonic,
                 name: str | None = None) -> None:
        self.provider = provider
        #: the label of its hits: the name it was configured by (else its own ``name``)
        self.name = name or _name_of(provider)
        self.timeout = timeout
        self.threshold = threshold
        self.cooldown = cooldown
        self._secrets = tuple(s for s in secrets if s and len(s) >= 4)
        self._clock = clock
        self._lock = threading.Lock()
        self.failures = 0  # consecutive
        self.open_until: float | None = None
        self.last_error: str | None = None
        self.last_ok: float | None = None
        self.calls = 0
        self.errors = 0
        self._in_flight = 0
        self.available = True

    def call(self, what: str, fn: Callable[..., Any], *args: Any, timeout: float | None = None,
             check: Callable[[Any], _T] | None = None, **kwargs: Any) -> _T:
        """``fn(*args, **kwargs)`` (a method of the provider), or :class:`ProviderError` when the breaker is open,
        the provider is still stuck in earlier calls, the call raises, or it takes longer than the time-out.
        ``check`` turns the answer into what the caller needs, raising ValueError (a failure too) when it cannot."""
        with self._lock:
            now = self._clock()
            if self.open_until is not None and now < self.open_until:
                raise ProviderError(self.name, f"skipped: {self.failures} failures in a row, retried in "
                                               f"{self.open_until - now:.0f} s")
            if self._in_flight >= MAX_IN_FLIGHT:
                self._failed(f"{self._in_flight} earlier calls still have not returned")
                raise ProviderError(self.name, f"{what} skipped: {self._in_flight} earlier calls still have not "
                                               "returned")
            self._in_flight += 1
            self.calls += 1
        outcome = _Outcome()
        done = threading.Event()

        def run() -> None:
            try:
                outcome.value = fn(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - whatever a provider raises is its failure, reported below
                outcome.error = exc
            finally:
                with self._lock:
                    self._in_flight -= 1
                done.set()

        threading.Thread(target=run, name=f"cortex-provider-{self.name}", daemon=True).start()
        limit = self.timeout if timeout is None else timeout
        if not done.wait(limit):
            message = f"{what} took longer than {limit:g} s"
        elif outcome.error is not None:
            message = f"{what} failed: {type(outcome.error).__name__}: {outcome.error}"
        else:
            try:
                value = check(outcome.value) if check is not None else outcome.value
            except ValueError as exc:
                message = f"{what} answered {exc}"
            except Exception as exc:  # noqa: BLE001 - an answer whose parts raise when read is garbage too
                message = f"{what} answered something that cannot be read: {type(exc).__name__}: {exc}"
            else:
                with self._lock:
                    self.failures = 0
                    self.open_until = None
                    self.last_ok = self._clock()
                return value
        message = self.scrub(message)
        with self._lock:
            self._failed(message)
        log.warning("memory provider %s: %s", self.name, message)
        raise ProviderError(self.name, message)

    def _failed(self, message: str) -> None:
        self.errors += 1
        self.failures += 1
        self.last_error = message
        if self.failures >= self.threshold:
            self.open_until = self._clock() + self.cooldown

    def scrub(self, text: str) -> str:
        """``text`` without any configured secret, cut to :data:`MAX_ERROR` characters."""
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text if len(text) <= MAX_ERROR else text[:MAX_ERROR - 1] + "…"

    def health(self) -> dict[str, Any]:
        """The provider's state: ``ok``, ``failing`` (failed lately, breaker closed), ``open`` (skipped until the
        cool-down ends) or ``unavailable`` (not configured), with its last error and its breaker's figures."""
        with self._lock:
            now = self._clock()
            open_for = self.open_until - now if self.open_until is not None and now < self.open_until else None
            state = ("unavailable" if not self.available else "open" if open_for is not None
                     else "failing" if self.failures else "ok")
            return {"name": self.name, "state": state, "last_error": self.last_error,
                    "breaker": {"failures": self.failures, "threshold": self.threshold,
                                "open_for_s": round(open_for, 1) if open_for is not None else None,
                                "cooldown_s": self.cooldown},
                    "calls": self.calls, "errors": self.errors, "in_flight": self._in_flight,
                    "timeout_s": self.timeout}


def _name_of(provider: object) -> str:
    try:
        name = provider.name  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - a property of a plugin may raise
        name = None
    return name if isinstance(name, str) and name else type(provider).__name__
