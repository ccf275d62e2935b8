"""Who the code running now acts for: the agent a verified bearer token names, or nobody in particular (an admin
token, the server's own, the CLI, the Python API).

A surface sets it once, from the token it verified and from nothing a client says otherwise (the HTTP guard,
an MCP tool's context); work it hands to another thread (the capture queue) carries it there. The facade checks
it wherever it resolves the agent an operation acts on (:meth:`cortex.app.kernel.Kernel._agent`), so every
pipeline behind one request (capture, task outcomes, the "used" signal, notes, imports, consolidation) writes
and reads only what its caller may, whatever agent a transcript or a file names. Standard library only, like
:mod:`cortex.provenance`.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

from cortex.errors import NotYoursError

_current: contextvars.ContextVar[str | None] = contextvars.ContextVar("cortex_caller", default=None)


def current() -> str | None:
    """The agent the running code acts for (its token's), or None: an admin, local or in-process caller."""
    return _current.get()


@contextmanager
def acting(agent: str | None) -> Iterator[str | None]:
    """Run the block on behalf of ``agent`` (the agent a verified token names; None: no restriction)."""
    token = _current.set(agent)
    try:
        yield agent
    finally:
        _current.reset(token)


def may(agent: str) -> bool:
    """Whether the running code's caller may read and write ``agent``'s own memory."""
    caller = _current.get()
    return caller is None or caller == agent


def require(agent: str) -> None:
    """Refuse (:class:`NotYoursError`) an agent the caller may not act for: the same answer whether ``agent``
    exists or not, as the surfaces give a token naming another agent."""
    if not may(agent):
        raise NotYoursError(agent, _current.get())

