"""The activity a write belongs to, recorded in PROV-O with every memory it creates (docs/architecture.md,
"Provenance").

Surfaces say what they are once, around the work they do: the CLI sets ``surface="cli"``, the HTTP server
``http`` (or what the ``Cortex-Surface``, ``Cortex-Event``, ``Cortex-Session`` and ``Cortex-Tool`` request headers
say: a hook or the MCP bridge calling through the server), MCP tools ``mcp`` with the tool's name, hooks ``hook``
with the hook event and the session id. The repository reads :func:`current` when it writes new memories; the
Python API's default is ``surface="python"``. Standard library only: hooks import this.
"""

from __future__ import annotations

import contextvars
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

#: Field values: short printable text (they are provenance, not content).
_VALUE = re.compile(r"[\x21-\x7e][\x20-\x7e]{0,127}")
#: The HTTP headers that carry an activity from a client to the server (a hook's capture names its channel and
#: what it read: a Beads comment's ``bead <id>``).
HEADERS = {"surface": "Cortex-Surface", "event": "Cortex-Event", "session": "Cortex-Session", "tool": "Cortex-Tool",
           "channel": "Cortex-Channel", "file": "Cortex-File", "part": "Cortex-Part"}
#: The environment variables that carry a hook's activity into a process it starts (a detached ``cortex capture``
#: or ``cortex team round-end``): its writes then name the hook, its event and the session, not the CLI.
ENVIRONMENT = {"surface": "CORTEX_ACTIVITY_SURFACE", "event": "CORTEX_ACTIVITY_EVENT",
               "session": "CORTEX_ACTIVITY_SESSION"}
#: The surfaces a process may be told it acts for (only a hook starts processes on an agent's behalf).
_HANDED_ON = {"hook"}


@dataclass(frozen=True)
class Activity:
    """Where a write came from: the surface (python, cli, http, mcp, hook, import), the hook event, the agent
    session id, and the tool (an MCP tool, or a CLI command). A write that changes existing memories also says
    what it did (``action``: update, validate, supersede), for which agent (``agent``: who changed them, which
    for a lead's edit of a team memory is not its author) and when (``at``); the facade sets those."""

    surface: str = "python"
    event: str | None = None
    session: str | None = None
    tool: str | None = None
    action: str | None = None
    agent: str | None = None
    at: datetime | None = None
    #: why an automatic deletion (``action`` prune) deleted what it did: the rule, e.g. its thresholds
    rule: str | None = None
    #: for captured memories: the channel (``marker``, ``transcript``, ``llm``, ``task``), the file read (its name),
    #: what of it (``bytes 0-5120`` of a transcript) and the model of LLM work
    channel: str | None = None
    file: str | None = None
    part: str | None = None
    model: str | None = None
    #: the consolidation run a write belongs to (its id: ``cortex consolidate --undo RUN``)
    run: str | None = None

    def headers(self) -> dict[str, str]:
        """The activity as request headers (what a client forwards to the server: where the call came from)."""
        return {header: value for name, header in HEADERS.items() if (value := getattr(self, name)) is not None}

    @classmethod
    def from_headers(cls, headers: Mapping[str, str], default_surface: str) -> "Activity":
        """The activity a request's headers describe; values that are not short printable text are ignored."""
        values: dict[str, Any] = {}
        for name, header in HEADERS.items():
            value = headers.get(header) or headers.get(header.lower())
            if value is not None and _VALUE.fullmatch(value):
                values[name] = value
        values.setdefault("surface", default_surface)
        return cls(**values)


    def environment(self) -> dict[str, str]:
        """The activity as environment variables (:data:`ENVIRONMENT`) for a process started on its behalf; empty
        unless it is a hook's."""
        if self.surface not in _HANDED_ON:
            return {}
        return {variable: value for name, variable in ENVIRONMENT.items() if (value := getattr(self, name))}

    @classmethod
    def from_environment(cls, env: Mapping[str, str], default_surface: str) -> "Activity":
        """The activity a process was started for (:meth:`environment`), else ``default_surface``'s: a surface
        other than a hook's, or a value that is not short printable text, is ignored."""
        surface = env.get(ENVIRONMENT["surface"])
        if surface not in _HANDED_ON:
            return cls(surface=default_surface)
        values = {name: value for name, variable in ENVIRONMENT.items()
                  if (value := env.get(variable)) is not None and _VALUE.fullmatch(value)}
        return cls(surface=values.get("surface", default_surface), event=values.get("event"),
                   session=values.get("session"))


_current: contextvars.ContextVar[Activity] = contextvars.ContextVar("cortex_activity", default=Activity())


def current() -> Activity:
    """The activity of the code running now."""
    return _current.get()


@contextmanager
def activity(base: Activity | None = None, **changes: str | None) -> Iterator[Activity]:
    """Run the block as ``base`` (default: the current activity) with ``changes`` (values that are not short
    printable text are dropped)."""
    clean: dict[str, Any] = {k: v for k, v in changes.items()
                             if v is None or (isinstance(v, str) and _VALUE.fullmatch(v))}
    token = _current.set(replace(base if base is not None else _current.get(), **clean))
    try:
        yield _current.get()
    finally:
        _current.reset(token)
