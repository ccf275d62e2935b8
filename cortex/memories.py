"""The repository: the only writer of memories. It owns the store, the derived indexes, the order in which a
write reaches them, and the embedding policy; everything above it (the engine, the facade) reads through it.

The write protocol, for every kind of write (new memories, touches, deletions; later updates, supersessions,
injections, imports), is carried out by :meth:`MemoryRepository._commit` alone:

1. the scope's index is loaded and brought up to the store's latest change (so a write is never applied to
   it twice, nor missed);
2. vectors of new content are computed (before anything is written: a provider failure stores the memories
   without vectors, to be embedded later) and appended to the scope's vector log (flushed to the OS);
3. the store write runs: one atomic call that also logs the change, numbered, with the ids it changed;
4. the index applies the change and records its number; many changes since the snapshot fold into a new one.

A crash before 3 changes nothing in the store (a logged vector without its memory is ignored); a crash after 3
leaves a logged change that the next load applies (see :mod:`cortex.index.manager`).

Readers never wait for the slow part of a write. Vectors (step 2's computation) are made *before* the lock is
taken; only steps 1-4 run under it, each in milliseconds. A long writer (an import, a big ``store_many``) commits
in batches of at most :data:`WRITE_BATCH` memories, each one atomic write with its own vectors, and lets the lock
go between batches (:meth:`OperationLock.pause` hands it to a waiting reader first): a read waits for one batch at
most. A crash in the middle leaves the batches done, each whole. ``reindex`` and background embedding embed with
the lock released and attach each batch's vectors under a short hold.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from pyoxigraph import Quad, RdfFormat, Triple

from cortex import provenance
from cortex.embeddings import EmbeddingError, EmbeddingProvider, check_vectors, embed_documents
from cortex.index.manager import IndexManager
from cortex.index.memory_index import MemoryIndex
from cortex.index.vectors import Embedded
from cortex.model import Filters, GeneratedBy, IndexStatus, Memory, Provenance, Revision, Scope
from cortex.state import index_root
from cortex.store.base import Change, MemoryStore
from cortex.store.rdf import MemoryCodec
from cortex.vocab import parse_date_time

log = logging.getLogger("cortex")

#: Memories without a vector that a search embeds on the spot; with more, it asks for ``cortex reindex``.
MAX_LAZY_EMBED = 256
#: Memories read and embedded per batch by ``reindex``.
REINDEX_BATCH = 256
#: Memories a long writer (an import, a big ``store_many``) commits per atomic write: the most a reader waits for.
WRITE_BATCH = 1000
#: Memories embedded per call within a batch (the progress callback hears each).
EMBED_BATCH = 128
#: Vectors computed ahead of a write (:meth:`MemoryRepository.embed_ahead`) kept at most.
AHEAD_KEPT = 4096

Vectors = tuple[str, Embedded]  # (model, the vectors of each memory: one row, and the later windows of long ones)


class OperationLock:
    """A re-entrant lock that calls ``on_begin`` each time a thread takes it from free: the start of one
    operation, however many methods it then calls (a shared store is checked once per operation).

    Python's locks are not fair: a writer that lets go between two batches and takes the lock again at once could
    keep a waiting reader out for a whole import. :meth:`pause` lets such a writer hand the lock over first."""

    def __init__(self, on_begin: Callable[[], None]) -> None:
        self._lock = threading.RLock()
        self._depth = 0
        self._on_begin = on_begin
        self._turns = threading.Condition(threading.Lock())
        self._waiting = 0  # threads blocked in __enter__
        self._taken = 0  # times the lock was taken from free

    def __enter__(self) -> "OperationLock":
        if not self._lock.acquire(blocking=False):
            with self._turns:
                self._waiting += 1
            try:
                self._lock.acquire()
            finally:
                with self._turns:
                    self._waiting -= 1
        self._depth += 1
        if self._depth == 1:
            with self._turns:
                self._taken += 1
                self._turns.notify_all()
            try:
                self._on_begin()
            except BaseException:
                self._depth -= 1
                self._lock.release()
                raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        self._lock.release()

    def pause(self, timeout: float = 0.05) -> None:
        """Between two batches of a long writer (which must not hold the lock): when threads are waiting for the
        lock, wait until one of them has taken it (at most ``timeout`` seconds), so it goes first."""
        with self._turns:
            if self._waiting:
                taken = self._taken
                self._turns.wait_for(lambda: self._taken != taken, timeout)


class WriteJournal:
    """What the writes of a block did, memory by memory: each memory it created (as it is after the last write),
    each existing one it changed (as it was before the first write and after the last) and each it deleted (as it
    was before). What an undoable run records (:mod:`cortex.capture.runs`); :meth:`MemoryRepository.recording`
    fills it."""

    def __init__(self) -> None:
        self.created: dict[tuple[Scope, str], Memory] = {}
        self.changed: dict[tuple[Scope, str], tuple[Memory, Memory]] = {}
        self.deleted: dict[tuple[Scope, str], Memory] = {}

    @property
    def empty(self) -> bool:
        """Whether the block wrote nothing."""
        return not (self.created or self.changed or self.deleted)

    def note_created(self, scope: Scope, memories: Sequence[Memory]) -> None:
        for memory in memories:
            self.created[(scope, memory.id)] = memory

    def note_changed(self, scope: Scope, pairs: Sequence[tuple[Memory, Memory]]) -> None:
        for before, after in pairs:
            key = (scope, after.id)
            if key in self.created:
                self.created[key] = after
            else:
                self.changed[key] = (self.changed[key][0] if key in self.changed else before, after)

    def note_deleted(self, scope: Scope, memories: Sequence[Memory]) -> None:
        for memory in memories:
            key = (scope, memory.id)
            if self.created.pop(key, None) is None:
                self.deleted[key] = self.changed.pop(key)[0] if key in self.changed else memory


#: The journal the writes of the running block note themselves in (None: none is recorded).
_journal: contextvars.ContextVar[WriteJournal | None] = contextvars.ContextVar("cortex_write_journal", default=None)


class MemoryRepository:
    """Memories of every scope: reads through the derived indexes, writes in the protocol's order.

    Thread-safe: every method holds :attr:`lock` (re-entrant, so the facade can hold it across a composite
    operation such as capture, which reads, writes and prunes).
    """

    def __init__(self, store: MemoryStore, state_dir: Path | None, embeddings: EmbeddingProvider | None) -> None:
        self.store = store
        self.state_dir = state_dir
        #: The embedding provider (None: lexical search only).
        self.embeddings = embeddings
        self._indexes = IndexManager(store, index_root(state_dir))
        self._codec = MemoryCodec(store.vocab)  # the SPARQL texts of provenance reads
        self.lock = OperationLock(self._indexes.begin_operation)
        self._ahead: dict[tuple[str, str], Embedded] = {}  # (model, content) -> its vectors (see embed_ahead)
        self._ahead_lock = threading.Lock()
        #: The write path's redaction step (the facade installs it: :mod:`cortex.capture.scrub`): every memory an
        #: ``add`` or ``write`` creates or changes passes it before anything is written or embedded.
        self.redact: Callable[[Sequence[Memory]], list[Memory]] | None = None
        #: Told of each committed write (its scope and the ids it wrote), after it is applied: the facade's events
        #: (:mod:`cortex.events`) report what was committed, never what failed.
        self.on_commit: Callable[[Scope, Sequence[str]], None] | None = None
        #: Asked before every write (add, write, delete); raises to refuse it (the facade's engine switch: no
        #: write reaches the store when the engine is ``none`` or ``external``).
        self.admit: Callable[[], None] | None = None

    # -- reads -----------------------------------------------------------------------------------

    @property
    def codec(self) -> MemoryCodec:
        """How memories are written as RDF (for a caller that plans a rewrite of stored quads)."""
        return self._codec

    def index(self, scope: Scope) -> MemoryIndex:
        """The scope's derived index (loaded, and repaired if needed, on first use). Read-only for callers."""
        with self.lock:
            return self._indexes.get(scope)

    def get(self, scope: Scope, memory_id: str) -> Memory | None:
        """One memory, read from the store."""
        with self.lock:
            return self.store.get_many(scope, [memory_id])[0]

    def load(self, scope: Scope, memory_ids: Sequence[str]) -> list[Memory]:
        """The memories with these ids, in order (missing ones left out).

        The index holds every field, kept equal to the store (change log + recovery), so a memory costs no store
        read at all. On a shared store, whose other writers this process sees only at its next check, the
        content is read from the store, so a memory they removed is left out as the store says.
        """
        with self.lock:
            index = self._indexes.get(scope)
            records = index.records(memory_ids)
            contents = self.store.contents(scope, memory_ids) if self.store.shared else None
            memories = []
            for k, record in enumerate(records):
                if record is None:
                    continue
                content = record.pop("content")
                if contents is not None:
                    content = contents[k]
                    if content is None:
                        continue
                author = record["author"] or scope.name
                record.update(agent=scope.name if scope.kind == "agent" else author, author=author,
                              scope=scope.relative, content=content, origin="cortex")
                memories.append(Memory.trusted(record))
            return memories

    def load_many(self, wanted: Sequence[tuple[Scope, str]]) -> list[Memory]:
        """The memories named by (scope, id), in order (missing ones left out)."""
        with self.lock:
            by_scope: dict[Scope, list[str]] = {}
            for scope, memory_id in wanted:
                by_scope.setdefault(scope, []).append(memory_id)
            found = {(scope, m.id): m for scope, ids in by_scope.items() for m in self.load(scope, ids)}
            return [found[key] for key in wanted if key in found]

    def locate(self, scopes: Sequence[Scope], memory_id: str) -> Scope | None:
        """Which of ``scopes`` holds the memory (ids are unique across scopes), or None."""
        with self.lock:
            return next((s for s in scopes if memory_id in self._indexes.get(s)), None)

    def history(self, scope: Scope, memory_id: str) -> list[Memory]:
        """Every version of the memory, oldest first, the current one last (empty when there is none)."""
        with self.lock:
            current = self.store.get_many(scope, [memory_id])[0]
            if current is None:
                return []
            keep = {"usage_count": current.usage_count, "last_used_at": current.last_used_at,
                    "scope": current.scope, "agent": current.agent}
            earlier = [v.model_copy(update=keep) for v in self.store.versions(scope, memory_id)
                       if v.version < current.version]
            return [*earlier, current]

    def provenance(self, scope: Scope, memory: Memory) -> Provenance:
        """The memory's PROV-O provenance as the store holds it."""
        codec = self._codec
        with self.lock:
            rows = list(self.store.query(codec.provenance_query(scope, memory.id)))
            versions = [v.version for v in self.store.versions(scope, memory.id)]
        derived: list[str] = []
        names = {p.value: name for name, p in codec.activity_fields.items()}
        activities: dict[str, dict[str, Any]] = {}
        prefix = f"{self.store.vocab.ns}:agent:"
        for row in rows:
            if row["d"] is not None:
                found = self.store.vocab.memory_id(scope, row["d"].value)
                if found is not None:
                    derived.append(found)
                continue
            fields = activities.setdefault(row["a"].value, {"activity": row["a"].value})
            predicate, value = row["p"].value, row["o"].value
            if predicate in names:
                fields[names[predicate]] = value
            elif predicate == codec.p_action.value:
                fields["action"] = value
            elif predicate == codec.p_rule.value:
                fields["rule"] = value
            elif predicate == codec.p_started.value:
                fields["started_at"] = parse_date_time(value)
            elif predicate == codec.p_associated.value:
                fields["associated_with"] = value[len(prefix):] if value.startswith(prefix) else value
        created = next((a for a in activities.values() if "action" not in a), None)
        if created is not None:  # when and for whom: its memories' (an import may say so explicitly)
            created.setdefault("started_at", memory.created_at)
            created.setdefault("associated_with", memory.author)
        changes = sorted((Revision(**a) for a in activities.values() if "action" in a),
                         key=lambda r: (r.started_at or memory.created_at, r.activity))
        return Provenance(memory_id=memory.id, scope=scope.relative, attributed_to=memory.author,
                          generated_by=GeneratedBy(**created) if created is not None else None,
                          derived_from=sorted(set(derived)), superseded_by=memory.superseded_by,
                          versions=sorted(versions), changes=changes)

    def find_content(self, scope: Scope, content: str, project: str, now: datetime) -> list[str]:
        """Ids of the scope's current memories (not expired at ``now``, not superseded) with exactly this
        content in this project."""
        with self.lock:
            index = self._indexes.get(scope)
            found = [i for i in self.store.find_content(scope, content, project) if i in index]
            if not found:
                return []
            keep = index.keep(np.array([index.doc_of[i] for i in found], dtype=np.int64), Filters(now=now))
            return [i for i, kept in zip(found, keep) if kept]

    def scopes(self) -> list[Scope]:
        """The scopes that have data in the store."""
        with self.lock:
            return self.store.scopes()

    def status(self, scope: Scope) -> IndexStatus:
        """What the scope's derived index holds, against the store."""
        with self.lock:
            index = self._indexes.get(scope)
            return IndexStatus(
                scope=scope.key, memories=len(index), stored=self.store.count(scope), vectors=index.vector_count(),
                vector_model=index.vector_model, rebuilds=self._indexes.rebuilds.get(scope, 0),
                seq=index.seq, pending=self._indexes.pending(scope),
            )

    # -- writes ----------------------------------------------------------------------------------

    @contextmanager
    def recording(self) -> Iterator[WriteJournal]:
        """Note in a fresh :class:`WriteJournal` what every write of the block (in this thread or task) does."""
        journal = WriteJournal()
        token = _journal.set(journal)
        try:
            yield journal
        finally:
            _journal.reset(token)

    def _commit(
        self,
        scope: Scope,
        memory_ids: Sequence[str],
        write: Callable[[], Change],
        apply: Callable[[MemoryIndex], None],
        vectors: Vectors | None = None,
        *,
        embedded: Sequence[Memory] = (),
        long: bool = False,
    ) -> None:
        """Carry out one write in the protocol's order (see the module's docstring). ``vectors`` are those of
        the ``embedded`` memories' contents; ``long``: a write of a long writer (it may checkpoint the index)."""
        index = self._indexes.get(scope)
        ids = [m.id for m in embedded]
        if vectors is not None:
            self._indexes.log_vectors(scope, vectors[0], ids, [m.content for m in embedded], vectors[1])
        change = write()
        apply(index)
        if vectors is not None:
            index.set_vectors(vectors[0], ids, vectors[1])
        self._indexes.applied(scope, change, len(memory_ids), long=long)
        if self.on_commit is not None:
            self.on_commit(scope, memory_ids)

    def _redacted(self, memories: Sequence[Memory]) -> list[Memory]:
        return self.redact(memories) if self.redact is not None and memories else list(memories)

    def add(self, scope: Scope, memories: Sequence[Memory], extra: Sequence[Triple] = (), *,
            batch: int | None = None, progress: Callable[[str, int, int | None], None] | None = None) -> list[Memory]:
        """Store new memories in one atomic write (embedding them first, without holding the lock, when a provider
        is configured). ``extra``: other triples of the scope's graph written in the same write (an import's
        entities and relations, see :meth:`MemoryStore.add`). Returns the memories as written (through
        :attr:`redact`).

        With ``batch`` (a long writer: an import, a big ``store_many``), in consecutive atomic writes of at most
        ``batch`` memories, the lock let go between them; each triple of ``extra`` about one of the memories (its
        subject is the memory's node) goes with that memory, the others with the first write, so a crash leaves
        the batches done, each whole and consistent. ``progress(stage, done, total)`` hears ``embed`` and
        ``write`` (memories)."""
        if self.admit is not None:
            self.admit()
        if not memories and not extra:
            return []
        memories = self._redacted(memories)
        size = max(1, batch or len(memories) or 1)
        chunks = [list(memories[i:i + size]) for i in range(0, len(memories), size)] or [[]]
        extras: list[list[Triple]] = [list(extra)] + [[] for _ in chunks[1:]]
        if len(chunks) > 1 and extra:
            vocab = self.store.vocab
            where = {vocab.memory(scope, m.id).value: k for k, chunk in enumerate(chunks) for m in chunk}
            extras = [[] for _ in chunks]
            for triple in extra:
                extras[where.get(getattr(triple.subject, "value", ""), 0)].append(triple)
        embedded = written = 0
        for k, chunk in enumerate(chunks):
            if k:
                self.lock.pause()  # a reader waiting since the last batch goes first
            vectors = self._embed_new(scope, chunk, progress, embedded, len(memories)) if chunk else None
            embedded += len(chunk)
            self._add_batch(scope, chunk, extras[k], vectors, long=batch is not None)
            written += len(chunk)
            if progress is not None and memories:
                progress("write", written, len(memories))
        return memories

    def _add_batch(self, scope: Scope, memories: list[Memory], extra: Sequence[Triple],
                   vectors: Vectors | None, *, long: bool = False) -> None:
        """One atomic write of :meth:`add`, with its vectors (made before the lock was taken); ``long``: one of a
        long writer's."""
        with self.lock:
            vectors = self._still_current(scope, vectors)
            activity = provenance.current()
            self._commit(scope, [m.id for m in memories], lambda: self.store.add(scope, memories, activity, extra),
                         lambda index: index.add_many(memories), vectors, embedded=memories, long=long)
            if (journal := _journal.get()) is not None:
                journal.note_created(scope, memories)

    def write(self, scope: Scope, adds: Sequence[Memory], replaces: Sequence[tuple[Memory, Memory, bool]],
              derived: Sequence[tuple[str, str]] = (), *, action: str | None = None, actor: str | None = None,
              at: datetime | None = None, deletes: Sequence[str] = (), unlink: Sequence[tuple[str, str]] = (),
              extra: Sequence[Quad] = (), retract: Sequence[Quad] = ()) -> list[Memory]:
        """In one atomic write: add new memories and replace existing ones (``(old, new, archive)``: ``old`` as
        the caller read it, kept as an earlier version when ``archive``), and record ``derived`` ((memory, the
        memory it was derived from) pairs, PROV-O). Used by update, supersession, validation and injection.
        ``action`` (update, validate, supersede), ``actor`` and ``at`` are recorded as the activity that changed
        the replaced memories.
        Content that changed is embedded again. Returns the replaced memories as
        the store now has them, in the order given; raises :class:`VersionConflictError` and writes nothing
        when one changed or went in between (another process on a shared store). ``deletes`` (ids of existing
        memories removed in the same write), ``unlink`` (derived pairs removed again) and ``extra`` (quads of any
        graph) serve a consolidation run and its undo (:mod:`cortex.consolidation`); ``retract`` (quads of any graph
        removed) a secret scan's rewrite (:mod:`cortex.capture.scan`)."""
        if self.admit is not None:
            self.admit()
        if not adds and not replaces and not deletes and not extra and not retract:
            return []
        adds = self._redacted(adds)
        if replaces:
            news = self._redacted([new for _, new, _ in replaces])
            replaces = [(old, new, archive) for (old, _, archive), new in zip(replaces, news)]
        changed = [*adds, *(new for old, new, _ in replaces if new.content != old.content)]
        vectors = self._embed_new(scope, changed) if changed else None  # before the lock: the slow part
        with self.lock:
            vectors = self._still_current(scope, vectors)
            ids = [m.id for m in adds] + [old.id for old, _, _ in replaces] + list(deletes)
            stored: dict[str, Memory] = {}

            def apply(index: MemoryIndex) -> None:
                for memory_id in deletes:
                    index.remove(memory_id)
                index.add_many(adds)
                for memory in self.store.get_many(scope, [old.id for old, _, _ in replaces]):
                    if memory is not None:
                        index.upsert(memory)
                        stored[memory.id] = memory

            activity = provenance.current()
            if action is not None and (replaces or deletes):
                activity = replace(activity, action=action, agent=actor, at=at)
            journal = _journal.get()
            doomed = self.load(scope, list(deletes)) if journal is not None and deletes else []
            self._commit(scope, ids,
                         lambda: self.store.write(scope, adds, replaces, deletes, activity=activity, derived=derived,
                                                  unlink=unlink, extra=extra, retract=retract),
                         apply, vectors, embedded=changed)
            if journal is not None:
                journal.note_created(scope, adds)
                journal.note_changed(scope, [(old, stored.get(old.id, new)) for old, new, _ in replaces])
                journal.note_deleted(scope, doomed)
            # as the store has them now; one deleted right after this write (another process) as it was written
            return [stored.get(old.id, new) for old, new, _ in replaces]

    def import_quads(self, data: Mapping[Scope, Sequence[Quad]], check: Callable[[], Mapping[Scope, Sequence[Memory]]],
                     source: tuple[bytes, RdfFormat] | None = None,
                     progress: Callable[[str, int, int | None], None] | None = None) -> dict[Scope, int]:
        """Import: add each scope's quads (memories with their versions, as an export wrote them) all or nothing,
        and index the memories ``check()`` finds in them (it raises to refuse the import; the store may write
        while it runs, see :meth:`MemoryStore.load`). ``source``: the file's bytes, when they hold exactly
        ``data``. Vectors are computed later (``reindex``, or a server's background embedding): an import of
        100k memories must not wait for a model. ``progress(stage, done, total)``: ``index`` (memories), then
        ``write`` (quads; what is left of it). Returns the memories imported per scope."""
        if self.admit is not None:
            self.admit()
        quads = sum(len(q) for q in data.values())
        judged: dict[Scope, Sequence[Memory]] = {}

        def indexed() -> dict[Scope, list[str]]:
            """Judge the data, then index it: while the store may still be writing it (its bulk loader
            releases the GIL); taken out of the indexes again if the write fails."""
            judged.update(check())
            done, total = 0, sum(len(ms) for ms in judged.values())
            for scope, memories in judged.items():
                index = self._indexes.get(scope)
                for start in range(0, len(memories), 5000):
                    index.add_many(memories[start:start + 5000])
                    done += len(memories[start:start + 5000])
                    if progress is not None:
                        progress("index", done, total)
            if progress is not None:  # (the store may have been writing meanwhile: the rest of the write)
                progress("write", 0, quads)
            return {scope: [m.id for m in memories] for scope, memories in judged.items()}

        with self.lock:
            for scope in data:  # loaded before the store write: a load's count check must not see it half done
                self._indexes.get(scope)
            try:
                changes = self.store.load(data, indexed, source)
            except BaseException:
                for scope, memories in judged.items():
                    index = self._indexes.get(scope)
                    for memory in memories:
                        index.remove(memory.id)
                raise
            if progress is not None:
                progress("write", quads, quads)
            for scope, memories in judged.items():
                self._indexes.applied(scope, changes[scope], len(memories), long=True)
        return {scope: len(memories) for scope, memories in judged.items()}

    def export(self, scope: Scope) -> Iterator[Quad]:
        """Every quad of the scope's graph, streamed from the store."""
        return self.store.export(scope)

    def touch(self, scope: Scope, memory_ids: Sequence[str], now: datetime) -> list[Memory]:
        """usageCount + 1 and lastUsedAt = ``now`` for each existing memory, in one atomic update; returns
        the touched memories as the store now has them."""
        with self.lock:
            index = self._indexes.get(scope)
            ids = [i for i in dict.fromkeys(memory_ids) if i in index]
            if not ids:
                return []
            if self.admit is not None:  # a use is a write too (a provider's memory is not in the index: no-op)
                self.admit()
            touched: list[Memory] = []

            def apply(index: MemoryIndex) -> None:
                touched.extend(m for m in self.store.get_many(scope, ids) if m is not None)
                for memory in touched:
                    index.set_usage(memory)

            journal = _journal.get()
            before = {m.id: m for m in self.load(scope, ids)} if journal is not None else {}
            self._commit(scope, ids, lambda: self.store.touch(scope, ids, now), apply)
            if journal is not None:
                journal.note_changed(scope, [(before[m.id], m) for m in touched if m.id in before])
            return touched

    def mark_used(self, scope: Scope, memory_ids: Sequence[str]) -> list[Memory]:
        """``usedCount + 1`` for each existing memory (its version, update time and usage unchanged: a use is
        not an edit), in one atomic write; returns them as the store now has them."""
        with self.lock:
            current = self.load(scope, list(dict.fromkeys(memory_ids)))
            replaces = [(m, m.model_copy(update={"used_count": m.used_count + 1}), False) for m in current]
            return self.write(scope, [], replaces)

    def delete(self, scope: Scope, memory_ids: Sequence[str],
               reinstate: Callable[[Memory], Memory] | None = None, *, action: str | None = None,
               actor: str | None = None, at: datetime | None = None, rule: str | None = None) -> list[str]:
        """Remove every triple of the existing ones of these memories, in one atomic update; returns their ids.
        With ``reinstate``, each memory they had superseded (and that stays) is replaced by ``reinstate(it)``
        in the same update (the lifecycle makes it current again). With ``action`` (an automatic deletion:
        ``prune``), the same update records the activity that deleted them (``prov:invalidated``), with
        ``actor``, ``at`` and ``rule``."""
        if self.admit is not None:
            self.admit()
        with self.lock:
            index = self._indexes.get(scope)
            ids = [i for i in dict.fromkeys(memory_ids) if i in index]
            if not ids:
                return ids
            gone = set(ids)
            kept = [p for p in index.predecessors(ids) if p not in gone] if reinstate is not None else []
            restored = [(m, reinstate(m)) for m in self.store.get_many(scope, kept) if m is not None] \
                if reinstate is not None and kept else []

            def apply(index: MemoryIndex) -> None:
                for memory_id in ids:
                    index.remove(memory_id)
                for _, memory in restored:
                    index.upsert(memory)

            journal = _journal.get()
            doomed = self.load(scope, ids) if journal is not None else []

            if action is not None:
                activity = replace(provenance.current(), action=action, agent=actor, at=at, rule=rule)
                self._commit(scope, ids + [m.id for m, _ in restored],
                             lambda: self.store.write(scope, [], [(old, new, False) for old, new in restored],
                                                      deletes=ids, activity=activity), apply)
            elif restored:
                self._commit(scope, ids + [m.id for m, _ in restored],
                             lambda: self.store.write(scope, [], [(old, new, False) for old, new in restored],
                                                      deletes=ids), apply)
            else:
                self._commit(scope, ids, lambda: self.store.delete(scope, ids), apply)
            if journal is not None:
                journal.note_changed(scope, restored)
                journal.note_deleted(scope, doomed)
            return ids

    # -- embeddings ------------------------------------------------------------------------------

    def _embed_new(self, scope: Scope, memories: Sequence[Memory],
                   progress: Callable[[str, int, int | None], None] | None = None, done: int = 0,
                   total: int | None = None) -> Vectors | None:
        """Vectors for memories about to be stored, or None (no provider, stale model, provider failure:
        the memories are stored anyway and embedded later, see :meth:`reindex`). Computed without holding the
        lock (unless the caller holds it); ``progress("embed", done + k, total)`` hears each piece."""
        provider = self.embeddings
        if provider is None or not getattr(provider, "ready", True):
            return None  # no provider, or its model is loading: embedded later, never waited for
        with self.lock:
            if self._stale_model(self._indexes.get(scope)) is not None:
                return None
        texts = [m.content for m in memories]
        with self._ahead_lock:
            ready = [self._ahead.pop((provider.model, t), None) for t in texts]
        if texts and all(r is not None for r in ready):
            return provider.model, Embedded.join(ready)  # type: ignore[arg-type]
        missing = [k for k, r in enumerate(ready) if r is None]  # only these are embedded: the rest were ahead
        try:
            todo = [texts[k] for k in missing]
            if progress is None:
                made = embed_documents(provider, todo)
            else:
                parts = []
                for start in range(0, len(todo), EMBED_BATCH):
                    parts.append(embed_documents(provider, todo[start:start + EMBED_BATCH]))
                    progress("embed", done + min(start + EMBED_BATCH, len(todo)), total)
                made = Embedded.join(parts) if parts else Embedded(np.zeros((0, 0), dtype=np.float32))
        except EmbeddingError as exc:
            log.warning("%s: storing %d memories without vectors: %s", scope.label, len(memories), exc)
            return None
        if len(missing) == len(texts):
            return provider.model, made
        for j, k in enumerate(missing):
            ready[k] = made.take([j])
        return provider.model, Embedded.join(ready)  # type: ignore[arg-type]

    def embed_ahead(self, contents: Sequence[str]) -> None:
        """Compute the vectors of contents a write will store under the lock (a consolidation run's new memories:
        its write must hold the lock from its check to its end), holding no lock; the write then finds them made.
        Kept for the next :data:`AHEAD_KEPT` contents at most; a provider failure is left for the write to meet."""
        provider = self.embeddings
        if provider is None or not getattr(provider, "ready", True):
            return
        wanted = [c for c in dict.fromkeys(contents) if (provider.model, c) not in self._ahead]
        if not wanted:
            return
        try:
            vectors = embed_documents(provider, wanted)
        except EmbeddingError:
            return
        with self._ahead_lock:
            self._ahead.update(((provider.model, c), vectors.take([k])) for k, c in enumerate(wanted))
            while len(self._ahead) > AHEAD_KEPT:
                del self._ahead[next(iter(self._ahead))]

    def _still_current(self, scope: Scope, vectors: Vectors | None) -> Vectors | None:
        """``vectors`` (made before the lock was taken) unless the scope's vectors are now of another model (then
        None: the memories are embedded with the rest at the next ``reindex``). Call holding the lock."""
        if vectors is None or self.embeddings is None or self._stale_model(self._indexes.get(scope)) is None:
            return vectors
        return None

    def _stale_model(self, index: MemoryIndex) -> str | None:
        """The model of the scope's vectors when it is not the provider's, else None."""
        assert self.embeddings is not None
        if index.vector_model not in (None, self.embeddings.model) and index.vector_count() > 0:
            return str(index.vector_model)
        return None

    def _embed_existing(self, scope: Scope, memory_ids: Sequence[str],
                        progress: Callable[[int, int], None] | None = None, *, batch_size: int = REINDEX_BATCH,
                        release: bool = False) -> int:
        """Embed stored memories in batches and attach the vectors; returns how many were embedded. With
        ``release`` the lock is let go while a batch is embedded (the slow part), so requests go on meanwhile;
        a memory forgotten or changed in between is skipped (its vector would not be its own)."""
        provider = self.embeddings
        assert provider is not None
        done = 0
        for start in range(0, len(memory_ids), batch_size):
            batch = list(memory_ids[start : start + batch_size])
            with self.lock:
                pairs = [(i, c) for i, c in zip(batch, self.store.contents(scope, batch)) if c is not None]
            if pairs:
                if release:
                    vectors = embed_documents(provider, [c for _, c in pairs])
                with self.lock:
                    if not release:
                        vectors = embed_documents(provider, [c for _, c in pairs])
                    index = self._indexes.get(scope)
                    same = [k for k, (i, c) in enumerate(pairs) if index.has_content(i, c)]
                    ids = [pairs[k][0] for k in same]
                    if ids:
                        self._indexes.log_vectors(scope, provider.model, ids, [pairs[k][1] for k in same],
                                                  vectors.take(same))
                        index.set_vectors(provider.model, ids, vectors.take(same))
                    done += len(ids)
            if progress is not None:
                progress(min(start + batch_size, len(memory_ids)), len(memory_ids))
        return done

    def semantic_unavailable(self, scope: Scope) -> str | None:
        """Why semantic ranking cannot run for ``scope`` now, or None when it can (embedding a few memories
        that lack vectors on the way)."""
        with self.lock:
            if self.embeddings is None:
                return "no embedding provider configured"
            if not getattr(self.embeddings, "ready", True):
                return "the embedding model is still loading"
            index = self._indexes.get(scope)
            stale = self._stale_model(index)
            name = scope.name if scope.kind == "agent" else scope.key
            if stale is not None:
                return (f"the vectors of {scope.label} were made by {stale}, the provider is "
                        f"{self.embeddings.model}: run `cortex reindex {name}`")
            missing = index.missing_vectors()
            if len(missing) > MAX_LAZY_EMBED:
                return f"{len(missing)} memories of {scope.label} have no vectors: run `cortex reindex {name}`"
            if missing:
                try:
                    self._embed_existing(scope, missing)
                except EmbeddingError as exc:
                    return f"embedding failed: {exc}"
            return None

    def embed_missing(self, scope: Scope, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed every memory of the scope that has no vector of the current model, in the background's way:
        small batches, embedded without holding the lock. Returns how many."""
        with self.lock:
            if self.embeddings is None:
                return 0
            index = self._indexes.get(scope)
            if self._stale_model(index) is not None:
                return 0  # a model change needs `reindex`, which re-embeds everything
            missing = index.missing_vectors()
        return self._embed_existing(scope, missing, progress, batch_size=32, release=True)

    def embed_query(self, text: str) -> tuple[np.ndarray | None, str | None]:
        """The query's vector, or (None, why not)."""
        if self.embeddings is None:
            return None, "no embedding provider configured"
        try:
            vectors = self.embeddings.embed([text])
            check_vectors(vectors, 1)
            return vectors[0], None
        except EmbeddingError as exc:
            return None, f"embedding the query failed: {exc}"

    def reindex(self, scope: Scope, *, force: bool = False,
                progress: Callable[[int, int], None] | None = None) -> dict[str, int]:
        """Rebuild the scope's index from a full scan, then embed every memory without a current vector (all
        of them when the model changed, or with ``force``). Returns ``{"memories": n, "embedded": k}``.

        The embedding runs with the lock let go (each batch's vectors attached under a short hold), so reads go
        on meanwhile; with ``force`` the vectors of the same model are kept until their new ones replace them."""
        with self.lock:
            index = self._indexes.rebuild(scope)
            wanted: list[str] = []
            if self.embeddings is not None:
                if self._stale_model(index) is not None:
                    index.drop_vectors()
                wanted = list(index.doc_of) if force else index.missing_vectors()
        embedded = self._embed_existing(scope, wanted, progress, release=True) if wanted else 0
        with self.lock:
            self._indexes.checkpoint(scope)
            return {"memories": len(self._indexes.get(scope)), "embedded": embedded}

    # -- lifecycle -------------------------------------------------------------------------------

    def flush(self) -> None:
        """Force committed writes to durable storage."""
        with self.lock:
            self.store.flush()

    def close(self, *, flush: bool = True) -> None:
        """Checkpoint indexes with many changes since their snapshot and release the store."""
        with self.lock:
            try:
                self._indexes.close()
            finally:
                self.store.close(flush=flush)
