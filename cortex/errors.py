"""The one exception tree of Cortex.

Every error Cortex raises on purpose is a :class:`CortexError`. Surfaces translate this tree once each:
the CLI prints one line and exits 1, the HTTP API maps it to a status code (``cortex/service/http.py``), the
MCP server to a ``ToolError``, and hooks log it and exit 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol


class CortexError(Exception):
    """Base class of every error Cortex raises on purpose."""


class InvalidInputError(CortexError, ValueError):
    """A value given to Cortex is not acceptable; ``field`` names which one."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        #: What is wrong, without the field name (``str(exc)`` is ``"{field}: {reason}"``).
        self.reason = message
        super().__init__(f"{field}: {message}")

    def within(self, prefix: str) -> "InvalidInputError":
        """The same error for a field nested under ``prefix`` (e.g. ``entries[3]`` -> ``entries[3].type``)."""
        return InvalidInputError(f"{prefix}.{self.field}", self.reason)


#: The name the core issue uses for field errors; the same class.
InvalidMemoryError = InvalidInputError


class AgentNotFoundError(CortexError, LookupError):
    """The agent is not declared (no Markdown definition and not registered in code)."""

    def __init__(self, agent: str, searched: Sequence[Path] = (), *, token: bool = False) -> None:
        self.agent = agent
        self.searched = list(searched)
        if token:  # the same answer whether it exists or not: a token never learns of other agents
            super().__init__(f"agent {agent!r} is not declared, or not an agent this token may use")
            return
        where = (f"searched {', '.join(str(d) for d in searched)}: add {agent}.md with 'memory: true' to one of "
                 "them" if searched else f"no agent directory was searched: add agent_defs/{agent}.md")
        super().__init__(f"agent {agent!r} is not declared ({where}, or call agents.register)")


class NotYoursError(AgentNotFoundError):
    """The caller's token names another agent than the one an operation (or a pipeline acting for it: a
    capture, an import, a task outcome) would read or write (:mod:`cortex.caller`): refused as a surface refuses a
    token naming another agent, the same answer whether that agent exists or not (HTTP 404)."""

    def __init__(self, agent: str, caller: str | None = None) -> None:
        super().__init__(agent, token=True)
        #: the agent of the token that asked
        self.caller = caller


class MemoryDisabledError(CortexError):
    """The agent is declared but its definition does not enable memory."""

    def __init__(self, agent: str) -> None:
        self.agent = agent
        super().__init__(f"agent {agent!r} does not have memory enabled (set 'memory: true' in its definition)")


class MemoryNotFoundError(CortexError, LookupError):
    """No memory with this id exists for this agent."""

    def __init__(self, agent: str, memory_id: str) -> None:
        self.agent = agent
        self.memory_id = memory_id
        super().__init__(f"agent {agent!r} has no memory with id {memory_id!r}")


class StoreError(CortexError):
    """The store could not be opened, read or written."""


class StoreLockedError(StoreError):
    """Another process (or another open Cortex in this process) holds the on-disk store. ``holder`` says what
    that process is (``"cortex import"``), when it said so (:func:`cortex.store.oxigraph.holder`)."""

    def __init__(self, path: Path, pid: int | None = None, holder: str | None = None) -> None:
        self.path = path
        self.pid = pid
        self.holder = holder
        super().__init__(
            f"store {path} is locked: {describe_holder(pid, holder)}; wait for it to finish, stop it, or send "
            "the operation to the process that owns the store"
        )


class ReadOnlyStoreError(StoreLockedError):
    """A write asked of a Cortex that opened the store read-only, because another process was writing it and
    served nothing (a reader never waits for a writer; a write has to): names that process."""

    def __init__(self, path: Path, pid: int | None = None, holder: str | None = None) -> None:
        self.path = path
        self.pid = pid
        self.holder = holder
        StoreError.__init__(
            self, f"store {path} is open read-only here because {describe_holder(pid, holder)}: this write "
                  "cannot run until it is done (run it again then, or through `cortex serve`)"
        )


def describe_holder(pid: int | None, holder: str | None) -> str:
    """What holds a store, in words: ``"a cortex import (pid 42) is writing"``."""
    if holder is not None and pid is not None:
        return f"a {holder} (pid {pid}) is writing"
    if pid is not None:
        return f"process {pid} is writing"
    return "another process is writing"


class DefinitionProblem(Protocol):
    """One thing wrong with one agent definition file, as the errors below hold it (what
    :class:`cortex.model.AgentProblem` is; this module refers to nothing above it). ``str()`` of it says all."""

    @property
    def path(self) -> Path: ...

    @property
    def field(self) -> str: ...

    @property
    def message(self) -> str: ...


class AgentDefinitionError(CortexError):
    """One or more agent definition files are broken; ``problems`` lists them."""

    def __init__(self, problems: Sequence[DefinitionProblem]) -> None:
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


class BrokenAgentError(AgentDefinitionError):
    """The agent asked for is not declared because a definition file that would declare it is broken (named
    after it, or not readable far enough to say which agent it declares); ``problems`` say where and what."""

    def __init__(self, agent: str, problems: Sequence[DefinitionProblem], *, named: bool = True) -> None:
        self.agent = agent
        self.problems = problems
        listed = "; ".join(str(p) for p in problems)
        if named:
            what = f"agent {agent!r} cannot be used: its definition is broken: {listed}"
        else:
            what = (f"agent {agent!r} is not declared, and a definition file that may declare it is broken: "
                    f"{listed}")
        CortexError.__init__(self, f"{what} (fix the file; `cortex agents check` lists every problem)")


class AuthError(CortexError):
    """A request carried no token, or one that is not valid."""


class TokenFileError(AuthError):
    """The token file cannot be read or is malformed: no token can be checked until it is fixed."""


class PermissionDeniedError(CortexError):
    """The caller may not do this: an agent token on an admin operation, an agent writing to a team it is not
    in, changing a shared memory it neither wrote nor leads. ``field`` names what was refused, when one was."""

    def __init__(self, message: str, field: str | None = None) -> None:
        self.field = field
        super().__init__(f"{field}: {message}" if field else message)


class VersionConflictError(CortexError):
    """An update named the version it expected, and the memory is at another one (changed meanwhile)."""

    def __init__(self, memory_id: str, expected: int, actual: int) -> None:
        self.field = "expected_version"
        self.memory_id, self.expected, self.actual = memory_id, expected, actual
        state = "no longer exists" if actual == 0 else f"is at version {actual}, not {expected}"
        super().__init__(f"expected_version: memory {memory_id!r} {state}: read it again and retry")


class RunNotFoundError(CortexError, LookupError):
    """``consolidate --undo`` (or ``capture --undo``) named a run the store has no record of."""

    def __init__(self, run: str, where: str = "", *, kind: str = "consolidation",
                 hint: str = "`cortex consolidate --runs` lists them") -> None:
        self.field = "run"
        self.run = run
        super().__init__(f"run: no {kind} run {run!r}{where}; {hint}")


class SessionNotFoundError(CortexError, LookupError):
    """The session log has no session with this id for this agent (:meth:`cortex.Cortex.session_detail`)."""

    def __init__(self, agent: str, session: str) -> None:
        self.field = "session"
        self.agent = agent
        super().__init__(f"session: agent {agent!r} has no session {session[:128]!r} on record; "
                         "`cortex sessions AGENT` lists them")


class UndoConflictError(CortexError):
    """An undo would overwrite changes made after the run (or the run was undone already): nothing was changed."""

    def __init__(self, message: str) -> None:
        self.field = "run"
        super().__init__(f"run: {message}")


class QueryTimeoutError(CortexError):
    """A SPARQL query ran longer than its time-out (nothing was changed: queries are read-only)."""

    def __init__(self, seconds: float) -> None:
        self.field = "timeout"
        super().__init__(f"timeout: the query ran longer than {seconds:g} s; narrow it or raise the time-out")


class TooBusyError(CortexError):
    """A caller already runs as many of an expensive operation (SPARQL queries) as one caller may at once."""

    def __init__(self, message: str) -> None:
        self.field = None
        super().__init__(message)


class MissingExtraError(CortexError):
    """What was asked needs an optional part of Cortex that is not installed here; the message names the
    ``pip install 'cortex[extra]'`` that adds it (``extra`` names the extra)."""

    def __init__(self, extra: str, needed_for: str) -> None:
        self.extra = extra
        super().__init__(f"{needed_for} needs the optional {extra!r} part of Cortex: pip install 'cortex[{extra}]'")


class ServiceError(CortexError):
    """The Cortex server could not be reached or answered something unexpected."""


class ProviderError(CortexError):
    """A memory provider failed or answered something unusable; ``provider`` names it."""

    def __init__(self, provider: str, message: str) -> None:
        self.provider = provider
        super().__init__(f"memory provider {provider}: {message}")


class EngineOffError(CortexError):
    """The memory engine does not take this write (``CORTEX_ENGINE=none``, or ``external`` for a write only Cortex's
    own store can do); ``engine`` names it."""

    def __init__(self, engine: str, what: str) -> None:
        self.engine = engine
        super().__init__(f"the memory engine is {engine!r} (CORTEX_ENGINE): {what}")


class LLMError(CortexError):
    """The language model could not be used: it refused the request (an HTTP 4xx other than 429: a wrong model
    name, key or URL) or answered something that is not a chat completion."""


class LLMUnavailableError(LLMError):
    """The language model could not be reached for now (connection refused, time-out, HTTP 5xx or 429): this
    may pass, and the caller may retry later."""


class LLMOutputError(LLMError):
    """The language model answered, but not with the JSON asked for, even after being told what was wrong
    once."""
