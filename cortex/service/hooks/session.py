"""The one way to the store of a hook call (:class:`HookSession`): the owning server's client, or the store opened
here, reached once, lazily, and closed when the call ends; and each coding agent's name resolved once.

With a running server the hook is a few requests of :class:`cortex.client.RemoteCortex` (inside
:meth:`~cortex.client.RemoteCortex.as_json`: pydantic is never imported), on one connection. The server is taken
from its discovery file when its process runs, without the ``/healthz`` round trip :func:`cortex.discovery.find`
makes: the first request shows whether it answers, and when it does not, the session asks as ``find`` does and
goes on with the store opened here (:meth:`HookSession.ask`). Without a server the store is opened once, with
lexical ranking only (a model load would cost seconds) and the project's agent definitions.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from cortex import config
from cortex.service.harnesses.base import log as _log

if TYPE_CHECKING:
    from cortex.api import MemoryAPI
    from cortex.api.client import RemoteCortex

T = TypeVar("T")

#: The part of a task a block is ranked for (and of a task outcome's task).
MAX_TASK_CHARS = 8000


class Unknown(Exception):
    """The coding agent has no memory here (built-in, undeclared): logged quietly."""


def here() -> Path:
    """The current directory (``/`` when it was deleted under the hook: ``os.getcwd`` fails then)."""
    try:
        return Path(os.getcwd())
    except OSError:
        return Path("/")


def spool_dir(root: Path) -> Path:
    """The directory of the project's spool (beside its store, else in ``.cortex``)."""
    from cortex.service.spool import SPOOL_DIR
    from cortex.state import state_dir_of

    state_dir = state_dir_of(config.default_store_path(root))
    return (state_dir if state_dir is not None else root / ".cortex") / SPOOL_DIR


def _refused() -> tuple[type[Exception], ...]:
    """The errors a server answers with a 4xx status other than a timeout: sending the request again later would
    be refused again (cortex.service.http.status_of)."""
    from cortex import errors

    return (errors.AuthError, errors.PermissionDeniedError, errors.AgentNotFoundError, errors.MemoryNotFoundError,
            errors.RunNotFoundError, errors.StoreLockedError, errors.VersionConflictError, errors.UndoConflictError,
            errors.TooBusyError)


class HookSession:
    """The connection of one hook call to the project's store: opened on first use, once (a failure to open is
    not retried within the call), and closed by :meth:`close` without an fsync (committed writes survive the
    process; a hook does not pay for one)."""

    def __init__(self, root: Path, *, read_only: bool = False) -> None:
        self.root = root
        #: The call only reads: without a server, a store another process writes is opened read-only.
        self.read_only = read_only
        #: Whether the session talks to a server (known once it is open).
        self.remote = False
        self._cx: MemoryAPI | None = None
        self._failed: BaseException | None = None
        self._answered = False  # a server taken from its discovery file answered a request
        self._found_dead = False
        self._json = contextlib.ExitStack()
        self._names: dict[str, str | None | BaseException] = {}
        self._hints: dict[str, str] = {}
        self._hinted: set[str] = set()

    def _state_dir(self) -> Path | None:
        from cortex.state import state_dir_of

        return state_dir_of(config.default_store_path(self.root))

    def _discovered(self) -> RemoteCortex | None:
        """The client of the server the store's discovery file names, when the process that wrote it still runs
        (:func:`cortex.discovery.still_running`: nothing asked yet, and the local token is never sent to a process
        that took over a dead server's pid); else, and after that server did not answer, the server
        :func:`cortex.api.client.owner_client` finds (``/healthz``)."""
        from cortex import discovery

        state_dir = self._state_dir()
        if self._found_dead:
            from cortex.api.client import owner_client

            return owner_client(state_dir)
        info = discovery.read(state_dir) if state_dir is not None else None
        if info is None or not discovery.alive(info.pid):
            return None  # no server: the client module is not imported
        from cortex.api.client import TOKEN_ENV, RemoteCortex, owner_client

        if not discovery.still_running(info):  # the pid may be another process's now: ask the server (/healthz)
            return owner_client(state_dir)
        return RemoteCortex(info.url, token=os.environ.get(TOKEN_ENV) or info.token)

    def _adopt(self, client: RemoteCortex) -> RemoteCortex:
        self._json.enter_context(client.as_json())
        self._cx, self.remote = client, True
        return client

    def open(self) -> MemoryAPI:
        """The server's client, or the store opened here (with the project's agent definitions); raises what
        opening raised, the same error again on a later call."""
        if self._cx is not None:
            return self._cx
        if self._failed is not None:
            raise self._failed
        try:
            client = self._discovered()
            if client is not None:
                return self._adopt(client)
            from cortex.core import Cortex
            from cortex.service.connect import connect

            cx = connect(config.default_store_path(self.root), embeddings="none", read_only=self.read_only)
            if not isinstance(cx, Cortex):
                from cortex.api.client import RemoteCortex

                assert isinstance(cx, RemoteCortex)
                return self._adopt(cx)  # a server took the store meanwhile: it knows the agents
            from cortex.agents import AgentRegistry

            registry = AgentRegistry()
            for problem in registry.load(config.discover_agent_dirs(self.root)):
                _log(self.root, f"agent definition problem: {problem}")
            cx.agents = registry
            self._cx = cx
            return cx
        except BaseException as exc:
            self._failed = exc
            raise

    def server(self) -> RemoteCortex | None:
        """The client of the server that owns the store, or None when none does; does not open the store."""
        if self._cx is None and self._failed is None:
            client = self._discovered()
            if client is not None:
                self._adopt(client)
        if self.remote:
            from cortex.api.client import RemoteCortex

            assert isinstance(self._cx, RemoteCortex)
            return self._cx
        return None

    def ask(self, act: Callable[[MemoryAPI], T]) -> T:
        """``act`` on the open session. When the first request to a server taken from its discovery file finds
        nobody answering, the server is looked for as :func:`cortex.discovery.find` does, and without one
        ``act`` runs again on the store opened here."""
        cx = self.open()
        try:
            result = act(cx)
        except Exception as exc:
            from cortex.errors import ServiceError

            if not (self.remote and not self._answered and not self._found_dead and isinstance(exc, ServiceError)):
                raise
            self._found_dead = True
            if self.server_answers():
                raise
            self._drop()
            return act(self.open())
        self._answered = True
        return result

    def server_answers(self) -> bool:
        """Whether a live server of the store answers its ``/healthz``."""
        from cortex import discovery

        state_dir = self._state_dir()
        return state_dir is not None and discovery.find(state_dir) is not None

    def hint(self, agent_type: str, name: str) -> None:
        """``agent_type`` stood for ``name`` when the agent's block was shown in this session: with a server the
        name is taken without asking (a request saved); the server refusing it as unknown or without memory has it
        resolved again."""
        self._hints[agent_type] = name

    def agent(self, agent_type: str) -> str | None:
        """The declared agent with memory that ``agent_type`` stands for (None: a built-in or undeclared coding
        agent), asked once per call (an error too: raised again)."""
        if agent_type not in self._names:
            hint = self._hints.pop(agent_type, None)
            if hint is not None and self.server() is not None:
                self._names[agent_type] = hint
                self._hinted.add(agent_type)
            else:
                try:
                    self._names[agent_type] = self.ask(lambda cx: cx.resolve_agent(agent_type))
                except Exception as exc:
                    self._names[agent_type] = exc
        found = self._names[agent_type]
        if isinstance(found, BaseException):
            raise found
        return found

    def with_agent(self, agent_type: str, act: Callable[[MemoryAPI, str], T]) -> T:
        """``act(cx, name)`` with the agent ``agent_type`` stands for; :class:`Unknown` when it has no memory."""
        name = self.agent(agent_type)
        if name is None:
            raise Unknown(agent_type)
        try:
            return self.ask(lambda cx: act(cx, name))
        except Exception as exc:
            from cortex.errors import AgentNotFoundError, MemoryDisabledError

            if agent_type not in self._hinted or not isinstance(exc, (AgentNotFoundError, MemoryDisabledError)):
                raise
            self._hinted.discard(agent_type)
            del self._names[agent_type]  # the definitions changed since the block was shown: ask
            return self.with_agent(agent_type, act)

    def transient(self, exc: BaseException) -> bool:
        """Whether a failed delivery may succeed later (then the capture is spooled rather than dropped)."""
        from cortex.errors import BrokenAgentError, EngineOffError, InvalidInputError, MemoryDisabledError

        # a broken definition is fixed by editing the file: the capture waits for it (the error names the file)
        if isinstance(exc, BrokenAgentError):
            return True
        # an engine that stores nothing (none, external) must not keep the capture on disk to store it later
        if isinstance(exc, (InvalidInputError, MemoryDisabledError, EngineOffError, Unknown)):
            return False
        return not (self.remote and isinstance(exc, _refused()))

    def _drop(self) -> None:
        cx, self._cx, self.remote = self._cx, None, False
        self._json.close()
        if cx is not None:
            cx.close(flush=False)

    def close(self) -> None:
        """Close the connection (or the store), when one was opened."""
        self._drop()

    def __enter__(self) -> "HookSession":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
