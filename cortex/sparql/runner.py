"""Running a judged query within its time-out."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from cortex.errors import InvalidInputError, QueryTimeoutError
from cortex.sparql.results import SparqlResult


def guarded(work: Callable[[], SparqlResult]) -> Callable[[], SparqlResult]:
    """``work`` with the engine's evaluation errors (raised while results are read) as a Cortex error."""
    def call() -> SparqlResult:
        try:
            return work()
        except (RuntimeError, ValueError, TypeError) as exc:
            if isinstance(exc, InvalidInputError):
                raise
            raise InvalidInputError("query", f"failed while it ran: {exc}") from None
    return call


def check_timeout(timeout: Any) -> float:
    """A query's time-out: seconds in (0, 3600]."""
    if isinstance(timeout, bool) or not (isinstance(timeout, (int, float)) and 0 < timeout <= 3600):
        raise InvalidInputError("timeout", f"must be a number of seconds in (0, 3600], not {timeout!r}")
    return float(timeout)


def run(work: Callable[[], SparqlResult], timeout: float | None) -> SparqlResult:
    """``work()``, in a worker thread when there is a ``timeout``: past it, :class:`QueryTimeoutError`. A
    streaming query stops at its next row (:func:`collect` checks the clock); one the engine computes before
    its first row (an aggregate over a large join) cannot be cancelled by pyoxigraph: its daemon thread
    finishes it in the background and the result is dropped (docs/sparql.md)."""
    if timeout is None:
        return work()
    check_timeout(timeout)
    outcome: list[Any] = []

    def target() -> None:
        try:
            outcome.append(work())
        except BaseException as exc:  # handed to the caller's thread
            outcome.append(exc)

    worker = threading.Thread(target=target, name="cortex-sparql", daemon=True)
    worker.start()
    worker.join(timeout)
    if not outcome:
        raise QueryTimeoutError(timeout)
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    result: SparqlResult = outcome[0]
    return result



__all__ = ["check_timeout", "guarded", "run"]
