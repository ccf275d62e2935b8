"""Warnings a caller must see: a write the agent's prune rule will delete, memories deleted by that rule.

The engine says them through :func:`notice`; each surface collects them around the work it does
(:func:`collect`) and shows them its way: the CLI on stderr, the HTTP API in the answer (a ``warnings`` list
and the ``Cortex-Warnings`` header), MCP tools in their result, hooks in their log. Outside any collector a
notice is a :class:`CortexWarning` (``warnings.warn``), so a Python caller sees it too. Standard library only:
hooks import this.
"""

from __future__ import annotations

import contextvars
import json
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

#: The response header that carries the notices of an HTTP request (a JSON list of strings, ASCII).
HEADER = "Cortex-Warnings"

#: The collectors of the running code, innermost last (a route's own, inside the HTTP request's).
_current: contextvars.ContextVar[tuple[list[str], ...]] = contextvars.ContextVar("cortex_notices", default=())


class CortexWarning(UserWarning):
    """A notice raised as a Python warning (no surface collects it)."""


def notice(message: str) -> None:
    """Tell the caller ``message``: into the collector of the running surface, else as a warning."""
    collectors = _current.get()
    if not collectors:
        warnings.warn(message, CortexWarning, stacklevel=_caller_level())
    for collected in collectors:
        if message not in collected:
            collected.append(message)


def _caller_level() -> int:
    """The ``stacklevel`` of :func:`notice`'s warning that names the code that called Cortex: the first frame
    outside the ``cortex`` package, however many of its frames (a facade method, its decorators) are between."""
    frame, level = sys._getframe(2), 2  # the caller of notice is level 2
    while frame.f_back is not None and frame.f_globals.get("__name__", "").partition(".")[0] == "cortex":
        frame, level = frame.f_back, level + 1
    return level


@contextmanager
def collect() -> Iterator[list[str]]:
    """Collect the notices of the block (of every thread it hands a copy of its context to) in a list."""
    notes: list[str] = []
    token = _current.set((*_current.get(), notes))
    try:
        yield notes
    finally:
        _current.reset(token)


def encode(notes: list[str]) -> str:
    """Notices as the value of :data:`HEADER`."""
    return json.dumps(notes, ensure_ascii=True)


def decode(value: str | None) -> list[str]:
    """The notices a :data:`HEADER` value carries (none when it is malformed)."""
    try:
        notes = json.loads(value) if value else []
    except ValueError:
        return []
    return [n for n in notes if isinstance(n, str)] if isinstance(notes, list) else []


#: How the notice of a store that found its content already stored begins (:func:`stored_already`).
_ALREADY = "already stored: memory "


def already_stored(memory_id: str, agent: str, project: str, scope: str) -> str:
    """The notice of a store answered with the existing memory ``memory_id``, which holds exactly the content
    given (``Cortex.store``: one rule on every surface)."""
    return (f"{_ALREADY}{memory_id} of agent {agent!r} holds exactly this content (project {project}, scope "
            f"{scope}): it was returned and nothing was stored")


def stored_already(notes: list[str], memory_id: str) -> bool:
    """Whether ``notes`` (the notices of a store, in process or from a server) say that the store answered with
    the existing memory ``memory_id`` instead of storing a new one."""
    return any(note.startswith(f"{_ALREADY}{memory_id} ") for note in notes)
