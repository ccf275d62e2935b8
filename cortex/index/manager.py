"""Keeps each scope's derived index in step with the store, across restarts, crashes and damaged files.

On disk, in the state directory (``cortex-index/<scope>/``, see :mod:`cortex.state`):

* ``snapshot.npz``: the index as of change number ``seq`` of the scope (written atomically);
* ``vectors.log``: the embedding vectors computed since that snapshot, written before the store write of
  their memories (see :mod:`cortex.index.vectors`).

The store logs every write with a sequence number and the ids it changed, in the same atomic operation as the
write (:meth:`cortex.store.base.MemoryStore.changes`). Loading a scope reads the snapshot, asks the store for
the changes numbered after the snapshot's, and re-reads exactly those memories (exists: upsert; gone:
remove). So a crash at any point, a lost or stale snapshot, or writes by another process that logs its changes,
are all caught by comparing two numbers, not by counting. The index is rebuilt from a full scan when the
snapshot is missing, unreadable, damaged or of another format, when the log has a gap or a bulk write, when
the store is older than the snapshot, or when the memory count still disagrees (a write behind Cortex's back
that did not log itself). Any file that cannot be read is logged and replaced; it never stops an operation.

On a store opened read-only (another process was writing it, :attr:`MemoryStore.read_only`), the same load and
catch-up run, and nothing is written: no snapshot, no vector log, no compaction of the store's log. What is
loaded lives in this process only; the writer keeps the files.

The write protocol built on these pieces is carried out in one place, :class:`cortex.memories.MemoryRepository`;
nothing else calls the writing methods here.
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from cortex import config
from cortex.files import atomic_write, private_dir, read_regular
from cortex.index.memory_index import CarriedVectors, MemoryIndex, content_hash
from cortex.index.vectors import Embedded, VectorLog
from cortex.model import Memory, Scope
from cortex.store.base import Change, MemoryStore

log = logging.getLogger("cortex.index")

#: Memories changed since the snapshot beyond which it is rewritten at close, and while running.
CHECKPOINT_CHANGES = 1000
RUNNING_CHECKPOINT_CHANGES = 100_000
#: While a long writer (an import, a big ``store_many``) writes, a scope with more than CHECKPOINT_CHANGES memories
#: changed since its snapshot is also checkpointed once CHECKPOINT_SPACING times the last checkpoint's duration, and
#: at least MIN_CHECKPOINT_INTERVAL seconds, have passed since that checkpoint and since the long writing began (so
#: at most ~1/20 of the writer's time): a process that opens the store read-only meanwhile catches up from a recent
#: snapshot, not from every change of the import. A short write (a store, an update) never pays for one: the
#: flush and the compaction it starts slowed those by ~1.4x; and a long write shorter than the interval (a
#: ``store_many`` of 5,000) neither.
CHECKPOINT_SPACING = 20.0
MIN_CHECKPOINT_INTERVAL = 2.0
#: Long writes further apart than this are separate long writings (the interval counts again from the later).
LONG_WRITE_GAP = 1.0
#: Without a state directory nothing is saved; the log is compacted after this many changed memories.
COMPACT_IN_MEMORY = 10_000
#: On a shared store: when something changed, the records read again below the index's number (a writer that
#: numbered its change from an older view is seen if it is no further behind), at most this many looked up one
#: by one (more: one read of the log's tail), and how many records a compaction leaves behind the compacting
#: process (one further behind rebuilds its index).
SHARED_LOOKUPS = 512
#: Steps back from the head (one query each) before reading the log's tail instead.
SHARED_WALK = 4
SHARED_WINDOW = 64
SHARED_RETAIN = 20_000
#: On a shared store, changed memories between two compactions of its log (every check is an indexed lookup,
#: so a long log costs nothing per operation; it lets a process that was idle catch up instead of rebuilding).
SHARED_COMPACT_EVERY = 5000


def _discard(path: Path) -> None:
    """Remove whatever is at ``path`` (a damaged file, or a directory where a file belongs)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


class _Counting:
    """``store.count(scope)`` in a thread (the engine releases the interpreter lock while it scans); its
    :meth:`result` waits for it. Only where one process numbers the log, so the count and the catch-up that
    follows see the same writes (a read-only view changes only when opened again: the count is then redone)."""

    def __init__(self, store: MemoryStore, scope: Scope) -> None:
        self._value: int | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(store, scope), name="cortex-count", daemon=True)
        self._thread.start()

    def _run(self, store: MemoryStore, scope: Scope) -> None:
        try:
            self._value = store.count(scope)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller of result()
            self._error = exc

    def result(self) -> int:
        """The count (or the count's exception, raised here)."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._value is not None
        return self._value


class IndexManager:
    """Lazily loads, refreshes and checkpoints the per-scope :class:`MemoryIndex` objects. ``root`` is the
    directory of the on-disk files (None: indexes live in memory and are built from the store)."""

    def __init__(self, store: MemoryStore, root: Path | None) -> None:
        self.store = store
        self.root = root
        #: The store was opened read-only: indexes are loaded and caught up in memory, and nothing is saved.
        self.read_only = bool(getattr(store, "read_only", False))
        self._indexes: dict[Scope, MemoryIndex] = {}
        self._pending: dict[Scope, int] = {}  # memories changed since the scope's snapshot (or last compaction)
        self._vector_logs: dict[Scope, VectorLog] = {}
        #: how many full rebuilds from a store scan each scope had in this process
        self.rebuilds: dict[Scope, int] = {}
        # shared store: the records each index has applied (token -> number, within the window), the head
        # values it last saw (all applied), and the scopes checked in this operation
        self._known: dict[Scope, dict[str, int]] = {}
        self._seen_heads: dict[Scope, set[str]] = {}
        self._synced: set[Scope] = set()
        self._checked: dict[Scope, float] = {}
        # when each scope's last checkpoint (in this process) ended and how long it took; first: the opening
        self._saved: dict[Scope, tuple[float, float]] = {}
        # when each scope's long writing (consecutive writes of long writers) began, and its latest write
        self._long: dict[Scope, tuple[float, float]] = {}
        #: On a shared store, seconds during which a checked scope is not checked again (0: before every
        #: operation, so a write through another server is seen on the next request).
        self.sync_interval = config.sync_interval()

    def begin_operation(self) -> None:
        """A new operation starts: on a shared store, each scope it uses is checked against the log once."""
        self._synced.clear()

    def _dir(self, scope: Scope) -> Path:
        assert self.root is not None
        return self.root / scope.dirname

    def _writable_dir(self, scope: Scope) -> Path:
        """The scope's directory, created (and a file squatting its name removed) when needed."""
        directory = self._dir(scope)
        if directory.exists() and not directory.is_dir():
            log.warning("%s is not a directory: replacing it", directory)
            _discard(directory)
        return private_dir(directory)

    def pending(self, scope: Scope) -> int:
        """Memories changed in the scope's index since its snapshot (what the next load would re-read)."""
        return self._pending.get(scope, 0)

    def get(self, scope: Scope) -> MemoryIndex:
        """The scope's index, loaded (and repaired if needed) on first use; on a shared store brought up to
        date with other processes' writes once per operation (:meth:`begin_operation`)."""
        index = self._indexes.get(scope)
        if index is None:
            index = self._load(scope)
            self._indexes[scope] = index
            self._synced.add(scope)
            self._checked[scope] = time.monotonic()
        elif self.store.shared and scope not in self._synced:
            # every loaded scope this operation has not checked yet, in one query: an operation reading an
            # agent's own, team and swarm graphs pays one round trip
            now = time.monotonic()
            if now - self._checked.get(scope, -1e9) < self.sync_interval:
                self._synced.add(scope)  # checked moments ago: a bounded staleness the operator chose
                return index
            due = [s for s in self._indexes if s not in self._synced]
            heads = self.store.log_heads(due)
            for other in due:
                self._synced.add(other)
                if not self._sync_shared(other, self._indexes[other], heads[other]):
                    self._indexes[other] = self._rebuild(other, carry=self._indexes[other].carried_vectors())
                self._checked[other] = now  # only once applied: a failed check is tried again
            index = self._indexes[scope]
        return index

    def _sync_shared(self, scope: Scope, index: MemoryIndex, heads: Sequence[Change] | None = None) -> bool:
        """Apply other processes' writes logged since the index last looked; False when that cannot be done
        exactly (records it needs were compacted away, or a bulk write). ``heads``: the scope's latest changes,
        when already read (else one query). Nothing more when the index knows every one of them."""
        if heads is None:
            heads = self.store.log_heads([scope])[scope]
        known = self._known.setdefault(scope, {})
        seen = self._seen_heads.setdefault(scope, set())
        unknown = [h for h in heads if h.token not in known and h.token not in seen]
        if not unknown:
            return True
        low = max(1, index.seq - SHARED_WINDOW + 1)
        records = self._walk(scope, unknown, known, low)
        if records is None:  # far behind: the log's tail, number by number
            top = max(h.seq for h in unknown)
            records = self.store.changes(scope, low - 1, top if top - low <= SHARED_LOOKUPS else None)
            if index.seq >= low and not any(c.seq == low for c in records):
                log.warning("the change log of %s no longer holds change %d (compacted by another process): "
                            "rebuilding", scope.label, low)
                return False
            found = {c.token for c in records}
            late = [h.token for h in unknown if h.token not in found]  # numbered below the tail: read by token
            records = [*records, *self.store.records(scope, late)] if late else records
        new = [c for c in records if c.token not in known]
        if any(c.ids is None for c in new):
            return False
        ids = [i for c in new for i in c.ids or ()]
        self._reconcile(index, scope, ids)
        self._pending[scope] = self._pending.get(scope, 0) + len(ids)
        self._remember(scope, index, records)
        seen.clear()
        seen.update(h.token for h in heads)
        return True

    def _walk(self, scope: Scope, unknown: Sequence[Change], known: dict[str, int], low: int) -> list[Change] | None:
        """The records not yet applied, found from the scope's head: each record names the latest changes its
        writer had applied (``after``), so every change is reachable from the head; walked back by token until
        known ground (or numbers below ``low``). None after :data:`SHARED_WALK` steps (far behind: read the
        log's tail instead)."""
        found: dict[str, Change] = {}
        frontier = {h.token for h in unknown}
        for _ in range(SHARED_WALK):
            if not frontier:
                return list(found.values())
            records = self.store.records(scope, sorted(frontier))
            if len(records) < len(frontier):
                return None  # compacted (or not yet visible): let the tail read decide
            found.update((c.token, c) for c in records)
            frontier = set()
            for record in records:
                for value in record.after:
                    seq, _, token = value.partition(" ")
                    if token not in known and token not in found and seq.isdigit() and int(seq) >= low:
                        frontier.add(token)
        return list(found.values()) if not frontier else None

    def _remember(self, scope: Scope, index: MemoryIndex, records: Sequence[Change]) -> None:
        """The index now reflects ``records`` (a shared store's log, read from the window up)."""
        if not records:
            return
        newest = max(records, key=lambda c: c.seq)
        if newest.seq >= index.seq:
            self._follow(index, newest)
        known = self._known.setdefault(scope, {})
        known.update((c.token, c.seq) for c in records)
        low = index.seq - SHARED_WINDOW + 1
        for token in [t for t, s in known.items() if s < low]:
            del known[token]

    def _load(self, scope: Scope) -> MemoryIndex:
        if self.root is None:
            return self._rebuild(scope, persist=False)
        # the store's count (a scan of the scope's memories: 0.2 s at 100k) runs beside the snapshot's read
        counting = _Counting(self.store, scope) if not self.store.shared else None
        index = self._read_snapshot(scope)
        if index is None:
            path = self._dir(scope) / "snapshot.npz"
            carried = MemoryIndex.read_vectors(path) if path.is_file() else None  # an older format's vectors
            if counting is not None and counting.result() == 0:  # (shared: the rebuild reads the heads)
                index = MemoryIndex()
                self._follow(index, self.store.last_change(scope))
                if not self.read_only:
                    self._checkpoint(scope, index)  # an empty snapshot: later loads apply the log onto it
                return index
            return self._rebuild(scope, carry=carried)
        if self._ahead(scope, index):
            counting = None  # counted in the view before it was opened again
        if self.store.shared:
            self._read_known(scope, index)
        if not self._catch_up(scope, index):
            return self._rebuild(scope, carry=index.carried_vectors())
        self._apply_vector_log(scope, index)
        stored = counting.result() if counting is not None else self.store.count(scope)
        if stored != len(index) + index.foreign:
            log.warning("index of %s has %d memories, store has %d: rebuilding", scope.label, len(index), stored)
            return self._rebuild(scope, carry=index.carried_vectors())
        return index

    def _read_snapshot(self, scope: Scope) -> MemoryIndex | None:
        path = self._dir(scope) / "snapshot.npz"
        if not path.exists():
            return None
        index = MemoryIndex.load(path)
        if index is None:
            log.warning("index snapshot of %s (%s) is unreadable, damaged or of another format: rebuilding",
                        scope.label, path)
        return index

    @staticmethod
    def _follow(index: MemoryIndex, change: Change | None) -> None:
        index.seq, index.token = (change.seq, change.token) if change is not None else (0, "")

    def _catch_up(self, scope: Scope, index: MemoryIndex) -> bool:
        """Apply the store's changes made after the index's; False when that cannot be done exactly: the
        index's own last change is not in the store (another store, or one restored from a backup), or the log
        has a gap or a bulk write."""
        if self.store.shared:
            return self._sync_shared(scope, index)
        last = self.store.last_change(scope)
        if last is not None and last.seq == index.seq and last.token == index.token:
            return True
        if index.seq == 0 and last is None:
            return True
        mine = self.store.change(scope, index.seq) if index.seq else None
        if index.seq and (mine is None or mine.token != index.token):
            log.warning("the store does not hold change %d of %s as the index knows it (another store, or one "
                        "restored from a backup): rebuilding", index.seq, scope.label)
            return False
        assert last is not None
        changes = self.store.changes(scope, index.seq)
        if [c.seq for c in changes] != list(range(index.seq + 1, last.seq + 1)) or any(c.ids is None for c in changes):
            log.warning("the change log of %s does not cover %d..%d one by one: rebuilding",
                        scope.label, index.seq + 1, last.seq)
            return False
        ids = [i for c in changes for i in c.ids or ()]
        self._reconcile(index, scope, ids)
        self._pending[scope] = self._pending.get(scope, 0) + len(ids)
        self._follow(index, changes[-1])
        return True

    def _ahead(self, scope: Scope, index: MemoryIndex) -> bool:
        """Read-only: whether the snapshot is ahead of the store's view (the writer saved it after this process
        opened the store); then the store is opened again, and the scopes loaded before are caught up with it,
        so the snapshot can be caught up instead of rebuilt."""
        reopen = getattr(self.store, "reopen", None)
        last = self.store.last_change(scope)
        if not self.read_only or reopen is None or index.seq <= (last.seq if last is not None else 0):
            return False
        log.info("the index snapshot of %s is newer than the read-only view of the store: opening it again",
                 scope.label)
        reopen()
        for other, loaded in list(self._indexes.items()):
            if not self._catch_up(other, loaded):
                self._indexes[other] = self._rebuild(other, carry=loaded.carried_vectors())
        return True

    def refresh(self, scope: Scope) -> MemoryIndex:
        """The scope's index, first brought up to date with changes the store logged since (writes by another
        process on a shared store)."""
        index = self.get(scope)
        if not self._catch_up(scope, index):
            index = self._indexes[scope] = self._rebuild(scope, carry=index.carried_vectors())
        return index

    def _vector_log(self, scope: Scope) -> VectorLog:
        vector_log = self._vector_logs.get(scope)
        if vector_log is None:
            vector_log = self._vector_logs[scope] = VectorLog(self._dir(scope) / "vectors.log")
        return vector_log

    def _apply_vector_log(self, scope: Scope, index: MemoryIndex) -> None:
        try:
            found = self._vector_log(scope).read()
            if found is None:
                return
            model, records = found
            latest: dict[str, list[np.ndarray]] = {}  # id -> its windows, as last logged whole
            group: list[np.ndarray] = []
            owner = ""
            for memory_id, digest, window, windows, row in records:
                # vectors of memories that never reached the store, or of content they no longer have, are ignored
                if not index.has_digest(memory_id, digest):
                    continue
                if window == 0:
                    group, owner = [row], memory_id
                else:
                    group = group + [row] if owner == memory_id and len(group) == window else []
                if group and len(group) == windows:  # a group cut short is left out: embedded again later
                    latest[memory_id] = group  # embedded again: the later group replaces the earlier one
        except (OSError, ValueError) as exc:
            log.warning("vector log of %s is unreadable (%s): its vectors will be computed again", scope.label, exc)
            return
        if latest:
            index.set_vectors(model, list(latest), Embedded.of([w[0] for w in latest.values()],
                                                               [w[1:] for w in latest.values()]))

    def log_vectors(self, scope: Scope, model: str, memory_ids: list[str], contents: Sequence[str],
                    vectors: Embedded) -> None:
        """Make vectors of these contents durable. Call *before* the store write of their memories. (Read-only:
        they stay in the index, in memory; the writer's log is not this process's to append to.)"""
        if self.root is not None and memory_ids and not self.read_only:
            self.get(scope)
            vector_log = self._vector_log(scope)
            try:
                self._writable_dir(scope)
                if vector_log.path.exists() and not vector_log.path.is_file():
                    _discard(vector_log.path)
                vector_log.append(model, memory_ids, [content_hash(c) for c in contents], vectors)
            except OSError as exc:  # the vectors stay in the index; a lost log only costs a re-embedding
                log.warning("cannot append to the vector log of %s (%s)", scope.label, exc)
                vector_log.close()

    def _reconcile(self, index: MemoryIndex, scope: Scope, ids: Iterable[str]) -> None:
        unique = list(dict.fromkeys(ids))
        new: list[Memory] = []  # indexed in one pass at the end: a reader catching up on an import meets thousands
        for memory_id, memory in zip(unique, self.store.get_many(scope, unique)):
            if memory is None:
                index.remove(memory_id)
            elif memory_id in index.doc_of:
                index.upsert(memory)
            else:
                new.append(memory)
        index.add_many(new)

    def _rebuild(self, scope: Scope, persist: bool = True, carry: CarriedVectors | None = None) -> MemoryIndex:
        index = MemoryIndex()
        self._follow(index, self.store.last_change(scope))  # read first: the scan sees every change up to it
        if self.store.shared:  # what the scan below covers: the latest changes, read before it
            heads = self.store.log_heads([scope])[scope]
            self._known[scope], self._seen_heads[scope] = {}, {h.token for h in heads}
            self._remember(scope, index, self.store.changes(scope, max(0, index.seq - SHARED_WINDOW)))
        # counted before the scan: a write landing during the scan (on a shared store, even one whose writer died
        # before logging it) must not be taken for incomplete subjects and stay unindexed; a later count check
        # finds it instead
        stored = self.store.count(scope)
        # in id order, which is creation order: rankings break their last ties the same way as before the rebuild
        index.add_many(sorted(self.store.iter_memories(scope), key=lambda m: m.id))
        index.merge()
        if carry is not None:  # vectors are costly: keep the ones we had, for memories whose content is the same
            carry.apply(index)
        if persist and self.root is not None:
            self._apply_vector_log(scope, index)
        index.foreign = max(0, stored - len(index))
        if index.foreign:
            log.warning("%s: %d memory subjects in the store are incomplete and not indexed", scope.label, index.foreign)
        self.rebuilds[scope] = self.rebuilds.get(scope, 0) + 1
        if persist and self.root is not None and not self.read_only:
            self._checkpoint(scope, index)
        return index

    def applied(self, scope: Scope, change: Change, changed: int, *, long: bool = False) -> None:
        """Record that the scope's index now reflects ``change`` (its own write of ``changed`` memories, just
        applied); ``long``: a write of a long writer (an import, a batch of a big ``store_many``), which may
        checkpoint the scope (see CHECKPOINT_SPACING)."""
        index = self._indexes[scope]
        if self.store.shared:  # another writer may have drawn the same number: known by token
            self._remember(scope, index, [change])
        elif change.seq > index.seq:
            self._follow(index, change)
        self._pending[scope] = self._pending.get(scope, 0) + changed
        # a shared log is read by every process at each check: it is kept short
        limit = SHARED_COMPACT_EVERY if self.store.shared else COMPACT_IN_MEMORY if self.root is None \
            else RUNNING_CHECKPOINT_CHANGES
        if long:
            now = time.monotonic()
            began, last = self._long.get(scope, (now, now))
            self._long[scope] = (began if now - last <= LONG_WRITE_GAP else now, now)
        if self._pending[scope] <= limit and not (long and self._checkpoint_due(scope)):
            return
        if self.root is None:
            self._compact(scope, index.seq)
            self._pending[scope] = 0
        else:
            self._checkpoint(scope, index, build_graph=False)

    def _checkpoint_due(self, scope: Scope) -> bool:
        """Whether a long writer's scope is checkpointed now although under RUNNING_CHECKPOINT_CHANGES (see
        CHECKPOINT_SPACING)."""
        if self.root is None or self.store.shared or self._pending[scope] <= CHECKPOINT_CHANGES:
            return False
        began = self._long[scope][0]
        ended, took = self._saved.get(scope, (began, 0.0))
        return time.monotonic() - max(ended, began) >= max(MIN_CHECKPOINT_INTERVAL, CHECKPOINT_SPACING * took)

    def _checkpoint(self, scope: Scope, index: MemoryIndex, *, build_graph: bool = True) -> None:
        """Save the index as a snapshot, then drop what it made redundant (the vector log, older log records).
        ``build_graph=False`` (a checkpoint inside a write) extends the vector graph but never builds one.
        A state directory that cannot be written is logged and otherwise ignored: the store's log still
        covers everything, so nothing is compacted. Nothing at all on a read-only store."""
        if self.read_only:
            return
        started = time.monotonic()
        try:
            directory = self._writable_dir(scope)
            self.store.flush()  # the snapshot must never describe writes a power loss could still undo
            path = directory / "snapshot.npz"
            if path.exists() and not path.is_file():
                _discard(path)
            index.save(path, build_graph=build_graph)
            if self.store.shared:
                self._write_known(scope, index)
        except OSError as exc:
            log.warning("cannot save the index snapshot of %s (%s): keeping it in memory", scope.label, exc)
            self._saved[scope] = (time.monotonic(), time.monotonic() - started)  # (not tried again at once)
            return
        self._pending[scope] = 0
        vector_log = self._vector_log(scope)
        vector_log.close()
        try:
            _discard(vector_log.path)
        except OSError as exc:
            log.warning("cannot remove the vector log of %s: %s", scope.label, exc)
        self._compact(scope, index.seq)  # the snapshot holds every change up to here
        ended = time.monotonic()
        self._saved[scope] = (ended, ended - started)

    def _write_known(self, scope: Scope, index: MemoryIndex) -> None:
        """Beside a shared store's snapshot: the log records it reflects (the window's tokens). Without them a new
        process re-reads every memory the window's records name (64 bulk writes: 64,000 memories) to be sure."""
        known = self._known.get(scope, {})
        atomic_write(self._dir(scope) / "known.json", json.dumps(
            {"seq": index.seq, "token": index.token, "known": known,
             "seen": sorted(self._seen_heads.get(scope, ()))}))

    def _read_known(self, scope: Scope, index: MemoryIndex) -> None:
        """The window's tokens saved with this very snapshot (same last change), else nothing: an older file
        (a crash between the snapshot and it) is ignored and the window is read again."""
        try:
            saved = json.loads(read_regular(self._dir(scope) / "known.json", limit=64 << 20))
            if not isinstance(saved, dict) or saved.get("seq") != index.seq or saved.get("token") != index.token:
                return
            known = {str(t): int(n) for t, n in saved["known"].items()}
            seen = {str(t) for t in saved["seen"]}
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
            return
        self._known[scope], self._seen_heads[scope] = known, seen

    def _compact(self, scope: Scope, below: int) -> None:
        if self.read_only:
            return
        # on a shared store other processes may still need the records this one has applied
        self.store.compact(scope, below - SHARED_RETAIN if self.store.shared else below)

    def rebuild(self, scope: Scope) -> MemoryIndex:
        """Rebuild the scope's index from a full scan of the store, keeping the vectors it had."""
        index = self._rebuild(scope, carry=self.get(scope).carried_vectors())
        self._indexes[scope] = index
        return index

    def checkpoint(self, scope: Scope) -> None:
        """Write the scope's index to a snapshot now (e.g. after re-embedding everything)."""
        if self.root is not None:
            self._checkpoint(scope, self.get(scope))

    def close(self) -> None:
        """Checkpoint scopes with many changes since their snapshot, and close the vector logs."""
        for scope, index in self._indexes.items():
            # (a large scope whose vector graph is missing or unusable gets it built with its snapshot)
            if self.root is not None and not self.read_only and (self.pending(scope) > CHECKPOINT_CHANGES
                                                                 or index.ann_due()):
                self._checkpoint(scope, index)
        for vector_log in self._vector_logs.values():
            vector_log.close()
        self._vector_logs.clear()
        self._indexes.clear()
