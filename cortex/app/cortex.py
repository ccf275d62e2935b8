"""The :class:`Cortex` facade: the one entry point of every surface, composed of one module per domain."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal, overload

from cortex.agents import AgentRegistry
from cortex.app.consolidation import ConsolidationOps
from cortex.app.graph import GraphOps
from cortex.app.notes import NotesOps
from cortex.app.sessions import SessionOps
from cortex.embeddings import EmbeddingProvider, make_provider
from cortex.errors import StoreLockedError
from cortex.model import utcnow
from cortex.search import Fusion
from cortex.store import Location, open_store
from cortex.vocab import DEFAULT_NS, Vocabulary

if TYPE_CHECKING:
    from cortex.api.client import RemoteCortex

log = logging.getLogger("cortex")


class Cortex(SessionOps, NotesOps, GraphOps, ConsolidationOps):
    """Persistent memory for AI agents, on an RDF store.

    Open with :meth:`Cortex.open`; use as a context manager or call :meth:`close`. Thread-safe: operations
    are serialised inside one process (the store admits one writing process anyway).
    """

    @overload
    @classmethod
    def open(cls, path: Location, *, agent_dirs: Iterable[str | os.PathLike[str]] | None = None,
             ns: str = DEFAULT_NS, state_dir: str | os.PathLike[str] | None = None,
             clock: Callable[[], datetime] = utcnow, embeddings: EmbeddingProvider | str | None = "auto",
             fusion: Fusion | None = None, client: Literal[False], read_only: bool = False) -> "Cortex": ...

    @overload
    @classmethod
    def open(cls, path: Location, *, agent_dirs: Iterable[str | os.PathLike[str]] | None = None,
             ns: str = DEFAULT_NS, state_dir: str | os.PathLike[str] | None = None,
             clock: Callable[[], datetime] = utcnow, embeddings: EmbeddingProvider | str | None = "auto",
             fusion: Fusion | None = None, client: bool = True, read_only: bool = False) -> "Cortex | RemoteCortex": ...

    @classmethod
    def open(
        cls,
        path: Location,
        *,
        agent_dirs: Iterable[str | os.PathLike[str]] | None = None,
        ns: str = DEFAULT_NS,
        state_dir: str | os.PathLike[str] | None = None,
        clock: Callable[[], datetime] = utcnow,
        embeddings: EmbeddingProvider | str | None = "auto",
        fusion: Fusion | None = None,
        client: bool = True,
        read_only: bool = False,
    ) -> "Cortex | RemoteCortex":
        """Open (creating if needed) the store at ``path``: a directory for the embedded on-disk store, None
        for an in-memory one (see :func:`cortex.store.open_store`).

        ``state_dir`` is where derived indexes are kept (default: the store directory; a store without one
        rebuilds its indexes when opened). ``agent_dirs`` are the directories whose Markdown definitions are
        loaded; problems in them are logged and kept in ``cx.agents.problems``. ``embeddings`` is a
        provider, a provider name for :func:`cortex.embeddings.make_provider` (``auto``: the local model when
        the ``semantic`` extra is installed; ``local``, ``openai``, ``hash``, ``none``) or None.

        One process owns a store: when a running Cortex server (``cortex serve``, or one a client started)
        owns it, the answer is that server's client, a :class:`~cortex.api.client.RemoteCortex` with the same
        :class:`~cortex.api.MemoryAPI` (the server's agents, model and clock apply; ``$CORTEX_TOKEN`` or the
        server's local token). ``client=False`` refuses that and always opens the store here. Raises
        :class:`StoreLockedError` when another process holds the store and serves nothing.

        ``read_only`` opens an on-disk store without its lock, as it is while another process writes it (what a
        reader does then, :func:`cortex.service.connect.connect`): reads answer from what that process had
        committed, indexes are loaded without saving anything, reads skip their touches, and a write raises
        :class:`~cortex.errors.ReadOnlyStoreError` naming the writer.
        """
        try:
            store = open_store(path, Vocabulary(ns), read_only=read_only)
        except StoreLockedError:
            owner = _owner_client(path, state_dir) if client else None
            if owner is None:
                raise
            log.info("%s is owned by a running Cortex server: using it", owner.url)
            return owner
        try:
            provider = make_provider(embeddings) if isinstance(embeddings, str) else embeddings
            registry = AgentRegistry()
            if agent_dirs is not None:
                for problem in registry.load(agent_dirs):
                    log.warning("agent definition problem: %s", problem)
            return cls(store, registry, state_dir=state_dir, clock=clock, embeddings=provider, fusion=fusion)
        except BaseException:
            store.close()
            raise

    def __enter__(self) -> "Cortex":
        return self


def _owner_client(path: Location, state_dir: str | os.PathLike[str] | None) -> RemoteCortex | None:
    """The client of the live Cortex server that owns the store at ``path``, or None."""
    from cortex.api.client import owner_client
    from cortex.state import state_dir_of

    return owner_client(Path(state_dir) if state_dir is not None else state_dir_of(path))
