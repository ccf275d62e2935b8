"""The embedded default backend: pyoxigraph (RocksDB) on disk, or in memory.

pyoxigraph facts this module is shaped by (0.5.x): only single calls are atomic, so every write is one
``extend``, one ``bulk_extend`` batch or one SPARQL ``update``; there is no ``close()``, the RocksDB lock is
released when the Store object is collected; a second opener of the same directory gets an OSError about
the ``LOCK`` file, which becomes :class:`StoreLockedError`. ``Store.read_only`` opens the directory without the
lock, while another process writes it (~15 ms), and sees what that process had committed when it opened: how a
reader answers during a long write (``read_only=True``; its writes raise :class:`ReadOnlyStoreError`).

The process holding the store names itself in ``cortex-owner.json`` (pid, what it is, when it started), written
at open and removed at close; whoever finds the store locked reads it, and ignores it when the kernel names
another holder or its process is gone (a writer killed with -9 leaves it behind).
"""

from __future__ import annotations

import gc
import itertools
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pyoxigraph as ox
from pyoxigraph import Literal, NamedNode, Quad, QuerySolutions, Triple, Variable

from cortex.discovery import alive, process_label, process_started
from cortex.errors import InvalidInputError, ReadOnlyStoreError, StoreError, StoreLockedError, VersionConflictError
from cortex.files import atomic_write, private_dir, read_regular
from cortex.model import Memory, Scope
from cortex.provenance import Activity
from cortex.store.base import Change
from cortex.store.rdf import MemoryCodec
from cortex.vocab import RDF_TYPE, Vocabulary

log = logging.getLogger("cortex")

OWNER_FILE = "cortex-owner.json"
#: Batches at least this large go through ``bulk_extend`` (SST ingestion, ~5x faster than a transaction).
BULK_THRESHOLD = 1000
#: A write (``store_many``, an import) of at most this many quads, its log records included, is one
#: ``bulk_extend`` call: oxigraph's bulk loader cuts batches of 1,000,000 quads, and one batch is one atomic
#: multi-column-family SST ingestion. A larger one is a journaled bulk load (:meth:`OxigraphStore._journaled_load`).
BULK_IMPORT_MAX = 1_000_000
#: The quads of one ``bulk_extend`` call of a journaled load (under the loader's 1M-quad batch).
JOURNAL_CHUNK = 500_000
#: An import at least this large (in quads) whose file holds exactly the quads to write loads the file's bytes
#: with the engine's own bulk loader, in a thread, while the memories are checked (journaled).
RAW_LOAD_MIN = 100_000
#: Quads written through the bulk paths (SST files ingested as they are: many small, overlapping files) after
#: which closing the store compacts it (``Store.optimize``): ~14% less disk at 100k memories, for ~10% of the
#: load's time, paid once at the end of a bulk load instead of by every later write and read.
OPTIMIZE_AFTER_QUADS = 1_000_000
#: Subjects per line of a journal (one literal), so per update when a journaled load is undone.
ROLLBACK_CHUNK = 2_000


#: RocksDB info logs kept from earlier opens (each open renames ``LOG`` to ``LOG.old.<micros>``, ~136 KB each,
#: and pyoxigraph offers no option to bound them).
KEPT_OLD_LOGS = 3


def _trim_old_logs(path: Path, keep: int = KEPT_OLD_LOGS) -> None:
    """Delete all but the ``keep`` newest ``LOG.old.*`` files of the store directory."""
    try:
        old = sorted(path.glob("LOG.old.*"), key=lambda p: (p.stat().st_mtime_ns, p.name))
    except OSError:
        return
    for stale in old[:max(0, len(old) - keep)]:
        try:
            stale.unlink()
        except OSError:  # gone already, or not ours to delete: the next open tries again
            pass


def _lock_holder(lock_file: Path) -> int | None:
    """The pid of the process holding RocksDB's ``LOCK`` file, asked of the kernel (``F_GETLK``): always the
    real holder, even while several processes race to open the store. None where that cannot be asked."""
    if sys.platform != "linux":
        return None
    import fcntl
    import struct

    layout = "hhqqi4x"  # struct flock on Linux: l_type, l_whence, l_start, l_len, l_pid
    try:
        fd = os.open(lock_file, os.O_RDONLY)
    except OSError:
        return None
    try:
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack(layout, fcntl.F_WRLCK, 0, 0, 0, 0))
        kind, _, _, _, pid = struct.unpack(layout, answer)
    except OSError:
        return None
    finally:
        os.close(fd)
    return pid if kind != fcntl.F_UNLCK and pid > 0 else None


def holder(path: Path) -> tuple[int | None, str | None]:
    """Who holds the store at ``path``: the pid the kernel names (or, where it cannot say, the one the holder
    file names, when that process runs), and what that process said it is (None: it did not say, or the file
    is another's, stale since its writer died)."""
    pid = _lock_holder(path / "LOCK")
    try:
        info = json.loads(read_regular(path / OWNER_FILE, 4096))
        named, label, started = int(info["pid"]), info.get("command"), info.get("started")
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return pid, None
    if pid is not None and named != pid:
        return pid, None  # the file of an earlier holder (killed): the kernel knows better
    if not alive(named):
        return pid, None
    now_started = process_started(named)
    if isinstance(started, (int, float)) and now_started is not None and abs(now_started - started) > 2.0:
        return pid, None  # that pid is another process's now
    # printed in messages: a label with terminal escapes or newlines is not this process's to print
    return named, label[:200] if isinstance(label, str) and label.isprintable() else None


def _gone(exc: BaseException) -> bool:
    """Whether a read-only view failed because the writer deleted a file it names (a compaction): RocksDB's
    read-only mode does not pin files, so the view is opened again."""
    return "No such file" in str(exc)


def _open_read_only(path: Path) -> tuple[ox.Store, tuple[int | None, str | None]]:
    """The store at ``path`` opened without its lock (nothing is written to the directory), and who writes it."""
    if not (path / "CURRENT").is_file():
        raise StoreError(f"cannot open store {path} read-only: it holds no store")
    writer = holder(path)
    for attempt in range(5):
        try:
            return ox.Store.read_only(str(path)), writer
        except (OSError, RuntimeError) as exc:
            if not _gone(exc) or attempt == 4:
                raise StoreError(f"cannot open store {path} read-only: {exc}") from exc
            time.sleep(0.01)  # a compaction of the writer replaced a file as it was read: again
    raise AssertionError("unreachable")


def _viewer(path: Path | None) -> Callable[[], ox.Store]:
    """How to open a fresh read-only view of the store at ``path``."""
    assert path is not None
    return lambda: _open_read_only(path)[0]


def _locked_error(path: Path, exc: OSError) -> StoreLockedError:
    """The error for a store another opener holds, naming it."""
    if "current process" in str(exc):
        return StoreLockedError(path, os.getpid())
    return StoreLockedError(path, *holder(path))


def _forget_owner(path: Path) -> None:
    """Remove the holder file, when it is still this process's (a later holder may have written its own)."""
    owner = path / OWNER_FILE
    try:
        if int(json.loads(read_regular(owner, 4096))["pid"]) == os.getpid():
            owner.unlink()
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        pass


def _unfinished(store: Any, creates: NamedNode, log_graph: Any) -> set[tuple[Any, Any]]:
    """The (graph, subject) pairs the journals of unfinished bulk loads name: what a writer still loading has
    written and not committed (a read-only view leaves them out of scans and counts, as an undo would)."""
    found: set[tuple[Any, Any]] = set()
    for line in store.quads_for_pattern(None, creates, None, log_graph):
        if isinstance(line.object, Literal):
            for pair in line.object.value.split("\n"):
                if pair:
                    graph, subject = pair.split(" ", 1)
                    found.add((NamedNode(graph), NamedNode(subject)))
    return found


def _make_private(directory: Path) -> None:
    """Make an existing store directory readable by its owner only: it holds every memory's text."""
    try:
        mode = directory.stat().st_mode & 0o777
        if mode & 0o077 and directory.stat().st_uid == os.getuid():
            directory.chmod(mode & 0o700)
            log.warning("store directory %s was readable by other users (mode %o): now %o", directory, mode,
                        mode & 0o700)
    except OSError:
        pass


def _value(term: Any) -> str:
    """The lexical value of a term (a quoted triple, which Cortex never writes, as its N-Triples text)."""
    return str(term) if isinstance(term, Triple) else str(term.value)


def _solutions(result: Any) -> QuerySolutions:
    assert isinstance(result, QuerySolutions)
    return result


class _CountedStore:
    """The pyoxigraph store, counting the calls that write it: a query's checkpoint holds every acknowledged
    write while the count has not moved since it was taken (:meth:`OxigraphStore.checkpoint`)."""

    WRITES = frozenset({"extend", "bulk_extend", "update", "bulk_load", "add", "remove", "load"})

    def __init__(self, store: ox.Store, reopen: Callable[[], ox.Store] | None = None) -> None:
        self.store = store
        self.writes = 0
        #: read-only: how to open the store again when the writer deleted a file this view was reading
        self.reopen = reopen

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.store, name)
        if name not in self.WRITES:
            if self.reopen is None or not callable(attribute):
                return attribute

            def again(*args: Any, **kwargs: Any) -> Any:
                try:
                    return attribute(*args, **kwargs)
                except (OSError, RuntimeError) as exc:
                    if not _gone(exc) or self.reopen is None:
                        raise
                    self.store = self.reopen()  # a newer view, without the compacted-away file
                    return getattr(self.store, name)(*args, **kwargs)
            return again

        def counted(*args: Any, **kwargs: Any) -> Any:
            try:
                return attribute(*args, **kwargs)
            finally:
                self.writes += 1
        return counted


class OxigraphStore:
    """A :class:`~cortex.store.base.MemoryStore` on pyoxigraph: on disk at ``path``, or in memory (None)."""

    #: One process holds the store (RocksDB's lock): it numbers the log itself.
    shared = False
    #: The engine binds query variables itself (pyoxigraph's ``substitutions``).
    substitutes = True

    def __init__(self, path: str | os.PathLike[str] | None, vocabulary: Vocabulary, *, read_only: bool = False) -> None:
        self._path = Path(path).resolve() if path is not None else None
        self.vocab = vocabulary
        self.codec = MemoryCodec(vocabulary)
        #: Opened without the lock, while another process writes: every write raises :class:`ReadOnlyStoreError`.
        self.read_only = read_only and self._path is not None
        #: the process writing the store when it was opened read-only (pid, what it is)
        self._writer: tuple[int | None, str | None] = (None, None)
        self._write_lock = threading.Lock()
        self._last: dict[Scope, Change | None] = {}  # this process is the only writer: the log's tail, cached
        #: (graph, subject) pairs of a journaled load the writer has not committed yet (read-only: hidden)
        self._hidden: set[tuple[Any, Any]] = set()
        self._bulk_quads = 0  # written through the bulk paths since the last compaction (OPTIMIZE_AFTER_QUADS)
        self._store = _CountedStore(self._open(), _viewer(self._path) if self.read_only else None)
        if self.read_only:
            self._hidden = _unfinished(self._store, self.vocab.predicate("creates"), self.codec.log_graph)
        else:
            self._undo_unfinished_loads()

    # -- lifecycle -------------------------------------------------------------------------------

    def _open(self) -> ox.Store:
        if self._path is None:
            return ox.Store()
        if self.read_only:
            store, self._writer = _open_read_only(self._path)
            return store
        try:
            private_dir(self._path)
            _make_private(self._path)
            store = ox.Store(str(self._path))
        except OSError as exc:
            message = str(exc)
            if "/LOCK" in message or "lock hold by current process" in message:
                raise _locked_error(self._path, exc) from None
            raise StoreError(f"cannot open store {self._path}: {exc}") from exc
        try:
            # replaced, never written through: a symlink or a FIFO left at that name is not followed
            atomic_write(self._path / OWNER_FILE, json.dumps({"pid": os.getpid(), "command": process_label(),
                                                              "started": process_started(os.getpid())}))
        except OSError as exc:  # only a waiting process's message loses its detail
            log.warning("cannot write %s: %s", self._path / OWNER_FILE, exc)
        _trim_old_logs(self._path)
        return store

    def reopen(self) -> None:
        """Read-only: open the store again, to see what the writer committed since (a snapshot of the derived
        indexes it saved meanwhile may be ahead of the view this store was opened with)."""
        if not self.read_only or self._path is None:
            return
        with self._write_lock:
            store, self._writer = _open_read_only(self._path)
            self._store = _CountedStore(store, _viewer(self._path))
            self._last.clear()
            self._hidden = _unfinished(self._store, self.vocab.predicate("creates"), self.codec.log_graph)

    def _writable(self) -> None:
        """Raise :class:`ReadOnlyStoreError` when this store was opened read-only."""
        if self.read_only:
            assert self._path is not None
            raise ReadOnlyStoreError(self._path, *self._writer)

    @property
    def location(self) -> str:
        return str(self._path) if self._path is not None else "memory"

    @property
    def local_path(self) -> Path | None:
        return self._path

    def flush(self) -> None:
        if self._path is not None and not self.read_only:
            self._store.flush()

    def close(self, flush: bool = True) -> None:
        store = getattr(self, "_store", None)
        if store is None:
            return
        if flush and self._path is not None and not self.read_only:
            if self._bulk_quads >= OPTIMIZE_AFTER_QUADS:
                self._bulk_quads = 0
                try:
                    store.optimize()  # a RocksDB compaction: a crash during it leaves the store as it was
                except OSError as exc:
                    log.warning("compacting %s after a bulk load failed (%s)", self._path, exc)
            store.flush()
        if self._path is not None and not self.read_only:
            _forget_owner(self._path)
        del self._store
        # The RocksDB lock goes with the last reference to the Store object (there is no close()). When
        # this is the last one, dropping it is enough; otherwise a cycle may hold it: collect (~10 ms).
        referenced = sys.getrefcount(store) > 2
        del store
        if referenced:
            gc.collect()

    # -- writes ----------------------------------------------------------------------------------

    def _next(self, scope: Scope) -> Change:
        last = self._last[scope] if scope in self._last else self._read_last(scope)
        return Change((last.seq if last is not None else 0) + 1, os.urandom(8).hex(), None)

    def add(self, scope: Scope, memories: Sequence[Memory], activity: Activity | None = None,
            extra: Sequence[Triple] = ()) -> Change:
        self._writable()
        with self._write_lock:
            change = self._next(scope)
            record = self.codec.change_quads(scope, change.seq, change.token, [m.id for m in memories])
            cache: dict[Any, Literal] = {}
            data = [q for m in memories for q in self.codec.quads(scope, m, cache)]
            if activity is not None:
                data += self.codec.activity_quads(scope, activity, os.urandom(8).hex(), memories)
            graph = self.vocab.graph(scope)
            data += [Quad(t.subject, t.predicate, t.object, graph) for t in extra]
            try:
                self._add_quads(record, data, bulk=len(memories) + len(extra) >= BULK_THRESHOLD)
            except OSError as exc:
                raise StoreError(f"writing {len(memories)} memories failed: {exc}") from exc
            self._last[scope] = change
            return change

    def load(self, data: Mapping[Scope, Sequence[Quad]], check: Callable[[], Mapping[Scope, Sequence[str]]],
             source: tuple[bytes, ox.RdfFormat] | None = None) -> dict[Scope, Change]:
        self._writable()
        with self._write_lock:
            changes = {scope: self._next(scope) for scope in data}

            def records() -> list[Quad]:
                judged = check()
                return [q for scope, change in changes.items()
                        for q in self.codec.change_quads(scope, change.seq, change.token, judged.get(scope, ()))]

            quads = [q for group in data.values() for q in group]
            try:
                # every scope of the file, or none: one transaction when small, one atomic bulk batch, or a
                # journaled bulk load (larger than one batch, or the file's own bytes loaded while it is checked)
                if source is not None and len(quads) >= RAW_LOAD_MIN:
                    self._journaled_load(quads, records, source)
                elif len(quads) > BULK_IMPORT_MAX:
                    self._journaled_load(quads, records)
                else:
                    log_quads = records()
                    self._add_quads(log_quads, quads, bulk=len(log_quads) + len(quads) >= BULK_THRESHOLD)
            except OSError as exc:
                raise StoreError(f"importing {len(quads)} quads failed: {exc}") from exc
            self._last.update(changes)
            return changes

    def _add_quads(self, record: Sequence[Quad], data: Sequence[Quad], bulk: bool) -> None:
        """A change's log ``record`` and its ``data``, all or nothing: one transaction unless ``bulk``; else one
        atomic bulk batch when they fit in one, a journaled bulk load when they do not."""
        if not bulk:
            self._store.extend([*record, *data])
            return
        if len(record) + len(data) <= BULK_IMPORT_MAX:
            self._bulk_quads += len(record) + len(data)
            self._store.bulk_extend([*record, *data])
        else:
            self._journaled_load(data, lambda: record)

    def _journaled_load(self, data: Sequence[Quad], records: Callable[[], Sequence[Quad]],
                        source: tuple[bytes, ox.RdfFormat] | None = None) -> None:
        """Add more quads than one atomic bulk batch holds, all or nothing across a crash: a journal naming
        every (graph, subject) the load creates goes in first (one transaction); then the data, in bulk
        batches; then one update writes the log records (``records()``, which may judge the data and raise)
        and drops the journal, which is the commit point. A store opened with a journal left behind deletes
        what it names (:meth:`_undo_unfinished_loads`). Quads about subjects the store already holds (an
        activity imported again) are written by the commit update itself, so an undo never deletes what was
        there before. With ``source`` (bytes holding exactly ``data``) and no such subject, the engine loads
        the bytes in a thread (its bulk loader releases the GIL) while ``records()`` runs, and the load is
        undone when that raises."""
        self._undo_unfinished_loads()  # one left by a failure whose undo failed too: never beside a new one
        self._bulk_quads += len(data)
        g = self.codec.log_graph
        journal = NamedNode(f"{self.vocab.ns}:load:{os.urandom(8).hex()}")
        p_creates = self.vocab.predicate("creates")
        subjects = dict.fromkeys((q.graph_name, q.subject) for q in data)
        held = {pair for pair in subjects if next(iter(self._store.quads_for_pattern(pair[1], None, None, pair[0])),
                                                  None) is not None}
        created = [f"{graph.value} {subject.value}" for graph, subject in subjects  # type: ignore[union-attr]
                   if (graph, subject) not in held]
        if source is None or held:
            log_quads = records()  # judged before the first write
        # one literal per ROLLBACK_CHUNK subjects, a line each: a few quads, whatever the size of the load
        lines = [Quad(journal, p_creates, Literal("\n".join(created[start:start + ROLLBACK_CHUNK])), g)
                 for start in range(0, len(created), ROLLBACK_CHUNK)]
        self._store.extend(lines)
        if self._path is not None:
            # the journal durable before the data: bulk batches are files ingested as they are, and a power
            # loss must not keep data whose journal it lost
            self._store.flush()
        try:
            if source is not None and not held:
                log_quads = self._load_while(source, records)
            else:
                fresh = [q for q in data if (q.graph_name, q.subject) not in held] if held else data
                for start in range(0, len(fresh), JOURNAL_CHUNK):
                    self._store.bulk_extend(fresh[start:start + JOURNAL_CHUNK])
            late = [*log_quads, *(q for q in data if (q.graph_name, q.subject) in held)]
            operations = [f"DELETE WHERE {{ GRAPH {g} {{ {journal} {p_creates} ?line }} }}",
                          *self.codec.insert_data(late)]
            self._store.update(" ; ".join(operations))
        except BaseException:  # whatever stopped it (a refusal, a full disk, Ctrl-C): nothing of it stays
            self._undo(lines)
            raise

    def _load_while(self, source: tuple[bytes, ox.RdfFormat], work: Callable[[], Sequence[Quad]]) -> Sequence[Quad]:
        """Bulk-load ``source`` in a thread (the engine releases the GIL) while ``work()`` runs here; its answer,
        once both are done. Either one's exception is raised after both have stopped."""
        failed: list[BaseException] = []

        def load() -> None:
            try:
                self._store.bulk_load(source[0], source[1])
            except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
                failed.append(exc)

        loader = threading.Thread(target=load, name="cortex-bulk-load")
        loader.start()
        try:
            answer = work()
        finally:
            loader.join()  # (the engine's load cannot be cut short; the caller undoes it)
        if failed:
            raise failed[0]
        return answer

    def _undo_unfinished_loads(self) -> None:
        """Delete what a journaled load that never reached its commit wrote (the process died part way), so the
        store holds the state from before it, as its change log says."""
        lines = [q for q in self._store.quads_for_pattern(None, self.vocab.predicate("creates"), None,
                                                          self.codec.log_graph) if isinstance(q.object, Literal)]
        if lines:
            log.warning("undoing %d unfinished bulk load(s) in %s (the process writing them stopped part way)",
                        len({q.subject for q in lines}), self.location)
            self._undo(lines)

    def _undo(self, lines: Sequence[Quad]) -> None:
        """Delete every quad of the (graph, subject) pairs a journal's ``lines`` name, then the lines: one update
        per line, each idempotent (an undo cut short is taken up again by the next open)."""
        for line in lines:
            pairs = " ".join("({} {})".format(*map(NamedNode, pair.split(" ", 1)))
                             for pair in line.object.value.split("\n") if pair)  # type: ignore[union-attr]
            self._store.update(f"DELETE {{ GRAPH ?g {{ ?s ?p ?o }} }} WHERE {{ VALUES (?g ?s) {{ {pairs} }} "
                               f"GRAPH ?g {{ ?s ?p ?o }} }} ; DELETE DATA {{ GRAPH {line.graph_name} {{ {line.triple} }} }}")

    def export(self, scope: Scope) -> Iterator[Quad]:
        return itertools.chain(self._store.quads_for_pattern(None, None, None, self.vocab.graph(scope)),
                               self._store.quads_for_pattern(None, None, None, self.vocab.prov_graph(scope)))

    def write(self, scope: Scope, adds: Sequence[Memory], replaces: Sequence[tuple[Memory, Memory, bool]],
              deletes: Sequence[str] = (), activity: Activity | None = None,
              derived: Sequence[tuple[str, str]] = (), unlink: Sequence[tuple[str, str]] = (),
              extra: Sequence[Quad] = (), retract: Sequence[Quad] = ()) -> Change:
        # A conditional replacement, done the cheap way this store allows: under the
        # write lock (one writing process) read the memory's triples, check its version, and send exactly the
        # difference as DELETE DATA + INSERT DATA in one update (~10x faster than matching patterns).
        self._writable()
        with self._write_lock:
            graph = self.vocab.graph(scope)
            removes: list[Quad] = self.codec.derived_quads(scope, unlink)
            inserts = [q for m in adds for q in self.codec.quads(scope, m)] + self.codec.derived_quads(scope, derived)
            inserts += extra
            inserts += self.codec.write_activity_quads(scope, activity, adds, [new for _, new, _ in replaces], deletes)
            kept = self.codec.kept
            for old, new, archive in replaces:
                subject = self.vocab.memory(scope, old.id)
                current = list(self._store.quads_for_pattern(subject, None, None, graph))
                stored = self.codec.stored_version(current) if current else 0
                if stored != old.version:
                    raise VersionConflictError(old.id, old.version, stored)  # nothing written
                wanted = self.codec.quads(scope, new) + (self.codec.version_quads(scope, old) if archive else [])
                have, want = set(current), set(wanted)
                removes += [q for q in current if q not in want and q.predicate not in kept]
                inserts += [q for q in wanted if q not in have]
            operations = []
            if deletes:
                operations.append(self.codec.delete_update(scope, deletes))
            if removes:
                operations.append(f"DELETE DATA {{ GRAPH {graph} {{ {self.codec.triples(removes)} }} }}")
            operations += self.codec.delete_data(retract)
            operations += self.codec.insert_data(inserts)  # the memories' graph, provenance's
            ids = list(dict.fromkeys([m.id for m in adds] + [old.id for old, _, _ in replaces] + list(deletes)))
            return self._update_locked(scope, ids, " ; ".join(operations))

    def versions(self, scope: Scope, memory_id: str) -> list[Memory]:
        rows = _solutions(self._store.query(self.codec.versions_query(scope, memory_id)))
        by_version: dict[str, list[tuple[str, str]]] = {}
        for row in rows:
            by_version.setdefault(_value(row["v"]), []).append((_value(row["p"]), _value(row["o"])))
        found = [self.codec.decode(scope, memory_id, pairs) for pairs in by_version.values()]
        return sorted((m for m in found if m is not None), key=lambda m: m.version)

    def touch(self, scope: Scope, memory_ids: Sequence[str], now: datetime) -> Change:
        return self._update(scope, memory_ids, self.codec.touch_update(scope, memory_ids, now))

    def delete(self, scope: Scope, memory_ids: Sequence[str]) -> Change:
        return self._update(scope, memory_ids, self.codec.delete_update(scope, memory_ids))

    def _update(self, scope: Scope, memory_ids: Sequence[str], operation: str) -> Change:
        """Run ``operation`` and the change's log record as one update (one transaction)."""
        self._writable()
        with self._write_lock:
            return self._update_locked(scope, memory_ids, operation)

    def _update_locked(self, scope: Scope, memory_ids: Sequence[str], operation: str) -> Change:
        """:meth:`_update` for a caller that holds the write lock."""
        change = self._next(scope)
        log = self.codec.change_data(scope, change.seq, change.token, memory_ids)
        try:
            self._store.update(f"{operation} ; {log}" if operation else log)
        except OSError as exc:
            raise StoreError(f"store update failed: {exc}") from exc
        self._last[scope] = change
        return change

    def compact(self, scope: Scope, below: int) -> None:
        self._writable()
        with self._write_lock:
            try:
                self._store.update(self.codec.compact_update(scope, below))
            except OSError as exc:
                raise StoreError(f"store update failed: {exc}") from exc

    # -- reads -----------------------------------------------------------------------------------

    def get_many(self, scope: Scope, memory_ids: Sequence[str]) -> list[Memory | None]:
        graph, decode = self.vocab.graph(scope), self.codec.decode
        found: list[Memory | None] = []
        for memory_id in memory_ids:
            quads = self._store.quads_for_pattern(self.vocab.memory(scope, memory_id), None, None, graph)
            found.append(decode(scope, memory_id, ((q.predicate.value, _value(q.object)) for q in quads)))
        return found

    def contents(self, scope: Scope, memory_ids: Sequence[str]) -> list[str | None]:
        graph, predicate = self.vocab.graph(scope), self.vocab.predicate("content")
        found: list[str | None] = []
        for memory_id in memory_ids:
            quads = self._store.quads_for_pattern(self.vocab.memory(scope, memory_id), predicate, None, graph)
            found.append(next((_value(q.object) for q in quads), None))
        return found

    def iter_memories(self, scope: Scope) -> Iterator[Memory]:
        # the graph-first index yields each subject's quads together
        graph = self.vocab.graph(scope)
        quads = self._store.quads_for_pattern(None, None, None, graph)
        memory_id, decode, hidden = self.vocab.memory_id, self.codec.decode, self._hidden
        for subject, group in itertools.groupby(quads, key=lambda q: q.subject):
            if not isinstance(subject, NamedNode) or (hidden and (graph, subject) in hidden):
                continue
            mid = memory_id(scope, subject.value)
            if mid is not None:
                memory = decode(scope, mid, ((q.predicate.value, _value(q.object)) for q in group))
                if memory is not None:
                    yield memory

    def _read_last(self, scope: Scope) -> Change | None:
        rows = list(_solutions(self._store.query(self.codec.last_change_query(scope))))
        return Change(int(_value(rows[0]["s"])), _value(rows[0]["t"]), None) if rows else None

    def last_change(self, scope: Scope) -> Change | None:
        with self._write_lock:
            if scope not in self._last:
                self._last[scope] = self._read_last(scope)
            return self._last[scope]

    def change(self, scope: Scope, seq: int) -> Change | None:
        rows = list(_solutions(self._store.query(self.codec.change_query(scope, seq))))
        return Change(seq, _value(rows[0]["t"]), None) if rows else None

    def changes(self, scope: Scope, after: int, upto: int | None = None) -> list[Change]:
        rows = _solutions(self._store.query(self.codec.changes_query(scope, after, upto)))
        return self.codec.read_changes((_value(r["r"]), _value(r["s"]), _value(r["p"]), _value(r["o"])) for r in rows)

    def log_heads(self, scopes: Sequence[Scope]) -> dict[Scope, list[Change]]:
        return {scope: [c] if (c := self.last_change(scope)) is not None else [] for scope in scopes}

    def records(self, scope: Scope, tokens: Sequence[str]) -> list[Change]:
        wanted = set(tokens)
        return [c for c in self.changes(scope, 0) if c.token in wanted]

    def count(self, scope: Scope) -> int:
        counted = int(_value(next(iter(_solutions(self._store.query(self.codec.count_query(scope)))))["n"]))
        if self._hidden:
            graph, kind = self.vocab.graph(scope), self.vocab.memory_class
            counted -= sum(1 for g, subject in self._hidden
                           if g == graph and next(self._store.quads_for_pattern(subject, RDF_TYPE, kind, graph), None))
        return counted

    def find_content(self, scope: Scope, content: str, project: str) -> list[str]:
        # two index lookups, no query to parse: every explicit store asks this (an identical memory is returned)
        graph = self.vocab.graph(scope)
        in_project = self.vocab.predicate("project"), Literal(project)
        subjects = (q.subject for q in self._store.quads_for_pattern(None, self.vocab.predicate("content"),
                                                                     Literal(content), graph))
        ids = (self.vocab.memory_id(scope, _value(s)) for s in subjects
               if isinstance(s, NamedNode) and next(self._store.quads_for_pattern(s, *in_project, graph), None))
        return [i for i in ids if i is not None]

    def scopes(self) -> list[Scope]:
        found = (self.vocab.scope_of_graph(g.value) for g in self._store.named_graphs() if isinstance(g, NamedNode))
        return sorted(s for s in found if s is not None)

    def confines_queries(self) -> bool:
        return True  # the engine's dataset options replace whatever the query names

    @property
    def writes(self) -> int:
        """How many writes the store has had since it was opened (what :meth:`checkpoint` is compared with)."""
        return int(self._store.writes)

    def checkpoint(self, target: Path) -> int:
        """A read-only copy of the store at ``target`` (RocksDB checkpoint: hard links; another process may open
        it with ``Store.read_only``); returns the write count it holds. Only an on-disk store has one."""
        if self._path is None:
            raise StoreError("an in-memory store has no checkpoint")
        self._writable()  # (it would be written in the writing process's directory)
        with self._write_lock:
            try:
                self._store.backup(str(target))
            except OSError as exc:
                raise StoreError(f"cannot write a checkpoint of {self._path} at {target}: {exc}") from exc
            return self.writes

    def query(self, sparql: str, substitutions: Mapping[str, Any] | None = None, **dataset: Any) -> Any:
        subs = {Variable(k): v for k, v in (substitutions or {}).items()}
        try:
            return self._store.query(sparql, substitutions=subs or None, **dataset)
        except SyntaxError as exc:
            raise InvalidInputError("query", f"is not valid SPARQL: {exc}") from None
        except OSError as exc:
            raise StoreError(f"query failed: {exc}") from exc
