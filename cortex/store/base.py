"""The storage interface every backend implements: the embedded pyoxigraph store (:mod:`cortex.store.oxigraph`) and a
remote SPARQL 1.1 server shared by several Cortex processes (:mod:`cortex.store.remote`).

A backend stores memories as RDF, one named graph per :class:`~cortex.model.Scope`, encoded by
:mod:`cortex.store.rdf`. It knows nothing about agents' definitions, matching or ranking: the repository
(:mod:`cortex.memories`) and the engine above it do. Every write method is atomic: after a crash either all
of its triples are in the store or none are (a remote write too big for one request: see docs/scale-out.md); and
every write records, in the same operation, a numbered change in the store's log (:meth:`MemoryStore.changes`),
so whoever keeps derived data can tell exactly what changed since it last looked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pyoxigraph import Quad, RdfFormat, Triple

from cortex.model import Memory, Scope
from cortex.provenance import Activity
from cortex.vocab import Vocabulary


@dataclass(frozen=True)
class Change:
    """One logged write: its sequence number in the scope, a random token that only this change carries (a
    store restored from a backup, or another store, cannot show the same token for the same number), and the
    ids it changed (None: too many to list). On a shared store, ``after``: the latest changes its writer had
    applied (``"<seq> <token>"`` values of the scope's head, which this change replaced)."""

    seq: int
    token: str
    ids: tuple[str, ...] | None = ()
    after: tuple[str, ...] = ()


@runtime_checkable
class MemoryStore(Protocol):
    """What Cortex needs from an RDF store."""

    #: Whether other processes may write to the store at the same time (a remote SPARQL server): then derived
    #: indexes check the change log before every operation, and log records are numbered by the server, so
    #: two racing writers may share a number (told apart by their tokens).
    shared: bool
    #: Whether :meth:`query` binds ``substitutions`` itself; otherwise the caller writes them into the query's
    #: text (a ``VALUES`` clause) and passes none.
    substitutes: bool
    #: Whether the store was opened read-only (an embedded store another process was writing): its writes raise
    #: :class:`~cortex.errors.ReadOnlyStoreError`, and derived indexes are loaded without saving anything.
    read_only: bool

    @property
    def location(self) -> str:
        """Where the store is, fit to print (never with credentials)."""

    @property
    def vocab(self) -> Vocabulary:
        """The IRIs the store writes (graphs, memories, predicates)."""

    @property
    def local_path(self) -> Path | None:
        """The directory of an embedded on-disk store, or None (in memory, or remote)."""

    def add(self, scope: Scope, memories: Sequence[Memory], activity: Activity | None = None,
            extra: Sequence[Triple] = ()) -> Change:
        """Write every triple of ``memories`` into ``scope`` in one atomic operation; returns the change. With
        ``activity``, the write's ``prov:Activity`` and ``prov:wasGeneratedBy`` from each memory go with it.
        ``extra``: other triples of the scope's graph written in the same operation (an import's entity nodes,
        the relations between them and the ``agentmem:about`` links of its memories); ``memories`` may then be
        empty. They are not memories: the index and the log's ids do not see them."""

    def get_many(self, scope: Scope, memory_ids: Sequence[str]) -> list[Memory | None]:
        """Read memories of one scope, in the order asked (None where there is none)."""

    def contents(self, scope: Scope, memory_ids: Sequence[str]) -> list[str | None]:
        """The content of each memory (None where it does not exist), in the order asked."""

    def iter_memories(self, scope: Scope) -> Iterator[Memory]:
        """Every readable memory of the scope (used to rebuild derived indexes and to export)."""

    def count(self, scope: Scope) -> int:
        """How many memory subjects the scope's graph holds (readable or not)."""

    def write(self, scope: Scope, adds: Sequence[Memory], replaces: Sequence[tuple[Memory, Memory, bool]],
              deletes: Sequence[str] = (), activity: Activity | None = None,
              derived: Sequence[tuple[str, str]] = (), unlink: Sequence[tuple[str, str]] = (),
              extra: Sequence[Quad] = (), retract: Sequence[Quad] = ()) -> Change:
        """In one atomic operation: add ``adds``, for each ``(old, new, archive)`` replace every triple of
        ``old`` by those of ``new`` (keeping ``old`` as an earlier version when ``archive``), and remove the
        memories ``deletes``. Every replacement requires the store to still hold ``old.version`` (see
        :meth:`versions`): otherwise raises :class:`~cortex.errors.VersionConflictError` (actual version 0 when
        the memory is gone) and writes nothing. Used by update, supersession, validation, injection and by a
        forget that reinstates the memories its victims had superseded. ``activity``: as for :meth:`add`, for
        ``adds``; ``derived``: (memory, the memory it was derived from) pairs, written as ``prov:wasDerivedFrom``.
        A replacement keeps the memory's provenance links and uses (:attr:`MemoryCodec.kept`); ``unlink`` removes
        such ``derived`` pairs again (an undone consolidation). ``extra``: quads of any graph written with it (a
        consolidation run's record in the provenance graph); ``retract``: quads of any graph removed with it, before
        ``extra`` is inserted (a secret scan's rewrite of earlier versions and records)."""

    def load(self, data: Mapping[Scope, Sequence[Quad]], check: Callable[[], Mapping[Scope, Sequence[str]]],
             source: tuple[bytes, RdfFormat] | None = None) -> dict[Scope, Change]:
        """Add the quads of each scope and one logged change per scope, all or nothing (an import: every scope
        of a file). ``check()`` judges the data and returns the ids of the memories of each scope; nothing is
        committed unless it returns (a backend may write while it runs, behind a journal it undoes when it
        raises). ``source``: the file's bytes and format when they hold exactly ``data`` (a backend may load
        them directly)."""

    def export(self, scope: Scope) -> Iterator[Quad]:
        """Every quad of the scope's graph (memories and their earlier versions), streamed."""

    def versions(self, scope: Scope, memory_id: str) -> list[Memory]:
        """The earlier versions of a memory (kept by updates), oldest first."""

    def touch(self, scope: Scope, memory_ids: Sequence[str], now: datetime) -> Change:
        """Atomically add one to usageCount and set lastUsedAt to ``now`` for each existing memory."""

    def delete(self, scope: Scope, memory_ids: Sequence[str]) -> Change:
        """Atomically remove every triple of the given memories."""

    def last_change(self, scope: Scope) -> Change | None:
        """The scope's latest logged change (without its ids), or None when none was logged."""

    def change(self, scope: Scope, seq: int) -> Change | None:
        """The scope's logged change number ``seq`` (without its ids), or None when the log does not hold it."""

    def changes(self, scope: Scope, after: int, upto: int | None = None) -> list[Change]:
        """The scope's logged changes numbered above ``after`` (and up to ``upto``), in order, with their ids
        (one per record: on a shared store two records may share a number)."""

    def log_heads(self, scopes: Sequence[Scope]) -> dict[Scope, list[Change]]:
        """The latest changes of each scope (number and token, without ids): one cheap query telling whether
        anything changed since a reader knew every one of them. On a shared store, several when writers raced
        or nobody who applied them has written since; the embedded store's latest change otherwise."""

    def records(self, scope: Scope, tokens: Sequence[str]) -> list[Change]:
        """The scope's logged changes with these tokens, with their ids (those the log still holds)."""

    def compact(self, scope: Scope, below: int) -> None:
        """Forget the scope's log records numbered below ``below`` (their changes are in a saved snapshot)."""

    def find_content(self, scope: Scope, content: str, project: str) -> list[str]:
        """Ids of the scope's memories with exactly this content in this project."""

    def scopes(self) -> list[Scope]:
        """The scopes whose graphs hold data."""

    def query(self, sparql: str, substitutions: Mapping[str, Any] | None = None, **dataset: Any) -> Any:
        """Run a read-only SPARQL query; ``substitutions`` binds variables (by name, without ``?``) to
        pyoxigraph terms; ``dataset``: ``default_graph`` and ``named_graphs`` (the graphs the query may see,
        overriding its FROM clauses) or ``use_default_graph_as_union``. Returns pyoxigraph's result object
        (solutions, boolean or triples)."""

    def confines_queries(self) -> bool:
        """Whether :meth:`query` runs a query on exactly the dataset it is given (the engine's options, or the
        query's ``FROM``/``FROM NAMED`` and the protocol's graphs on a server): a server that reads every graph
        whatever the query names cannot be given an agent's query."""

    def flush(self) -> None:
        """Push buffered writes to durable storage."""

    def close(self, flush: bool = True) -> None:
        """Release the store (and its lock); with ``flush``, force committed writes to disk first."""
