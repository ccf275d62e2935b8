"""What every command gets: the store's location, the agent directories and the Cortex a command opens (once)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from cortex import config
from cortex.errors import InvalidInputError

if TYPE_CHECKING:
    from cortex.agents import AgentRegistry
    from cortex.api import MemoryAPI


class _State:
    """The command line's global options, and the Cortex its command opened (closed when the command ends)."""

    def __init__(self, store: str | None, agents_dirs: tuple[Path, ...], embeddings: str = "auto") -> None:
        from cortex.state import state_dir_of

        self.embeddings = embeddings
        self.root = config.find_project_root()
        self.store: Path | str = (store if "://" in store else Path(store)) if store is not None \
            else config.default_store_path(self.root)
        self.state_dir = state_dir_of(self.store)
        # every candidate, existing or not: a server started now must see a directory created later
        self.agent_dirs = list(agents_dirs) or config.agent_dir_candidates(self.root)
        self._cx: MemoryAPI | None = None

    def printable_store(self) -> str:
        """The store's location, fit to print (no credentials)."""
        from cortex.state import printable_location

        return printable_location(self.store)

    def need_state_dir(self) -> Path:
        """The store's state directory (tokens, the server's discovery file), for commands that need one."""
        if self.state_dir is None:
            from cortex.state import printable_location

            raise InvalidInputError("store", f"{printable_location(self.store)} has no local state directory for "
                                             "this command (give --state-dir or $CORTEX_STATE_DIR)")
        return self.state_dir

    def registry(self) -> AgentRegistry:
        """The agents of the discovered directories; their problems are one warning line on stderr, naming the
        first and pointing to `cortex agents check`, which lists them all (every command loads the agents: a
        broken file must not repeat every problem on every command)."""
        from cortex.agents import AgentRegistry

        registry = AgentRegistry()
        problems = registry.load(self.agent_dirs)
        if problems:
            files = list(dict.fromkeys(str(p.path) for p in problems))
            named = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
            click.echo(f"cortex: warning: {len(problems)} problem(s) in {len(files)} agent definition file(s) "
                       f"({named}), not loaded; `cortex agents check` lists them", err=True)
        return registry

    def cortex(self, *, read_only: bool = False) -> MemoryAPI:
        """The running server's client when one owns the store, else the store opened here (see
        :func:`cortex.service.connect.for_cli`)."""
        if self._cx is None:
            from cortex.client import RemoteCortex
            from cortex.service.connect import for_cli

            cx = for_cli(self.store, embeddings=self.embeddings, read_only=read_only, on_wait=_waiting)
            if not isinstance(cx, RemoteCortex):  # the store opened here: it needs the agents
                cx.agents = self.registry()  # type: ignore[attr-defined]
            self._cx = cx
        return self._cx

    def close(self) -> None:
        if self._cx is not None:
            self._cx.close()


def _waiting(exc: Exception) -> None:
    """Say on stderr that a writing command waits for the process holding the store (and for how long)."""
    click.echo(f"cortex: {exc.args[0].split(';')[0]}: waiting up to {config.lock_wait():g} s "
               f"(${config.LOCK_WAIT_ENV})", err=True)


#: Passes a command the :class:`_State` of its command line.
pass_state = click.make_pass_decorator(_State)
