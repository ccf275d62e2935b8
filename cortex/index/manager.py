"""Keeps each scope's derived index in step with the store, across restarts and crashes.

On disk, in the state directory (``cortex-index/<scope>/``, see :mod:`cortex.state`):

* ``snapshot.npz``: the index as of some moment (written atomically);
* ``journal.log``: the id of every memory written since that snapshot, appended *before* the store write;
* ``vectors.log``: the embedding vectors computed since that snapshot, also written before the store write
  (see :mod:`cortex.index.vectors`).

Loading an scope reads the snapshot, then re-reads from the store every journaled id and makes the index
agree with it (the memory exists: upsert; it is gone: remove). Because ids are journaled before the store
commits, a crash at any point leaves at most ids that need no change, never a change the index misses. A
final count check against the store catches anything written behind Cortex's back and triggers a rebuild
from a full scan. Small journals are left in place at close (replaying them is cheap), so a short CLI call
does not rewrite a large snapshot.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import IO

import numpy as np

from cortex.files import private_dir
from cortex.index.memory_index import MemoryIndex
from cortex.index.vectors import VectorLog
from cortex.model import Scope
from cortex.store.base import MemoryStore

log = logging.getLogger("cortex.index")
#: A journal longer than this is folded into a new snapshot (at close, or while running).
CHECKPOINT_LINES = 1000
RUNNING_CHECKPOINT_LINES = 100_000


class IndexManager:
    """Lazily loads, journals and checkpoints the per-scope :class:`MemoryIndex` objects. ``root`` is the
    directory of the on-disk files (None: indexes live in memory and are built from the store)."""

    def __init__(self, store: MemoryStore, root: Path | None) -> None:
        self.store = store
        self.root = root
        self._indexes: dict[Scope, MemoryIndex] = {}
        self._journals: dict[Scope, IO[str]] = {}
        self._journal_lines: dict[Scope, int] = {}
        self._vector_logs: dict[Scope, VectorLog] = {}
        #: how many full rebuilds from a store scan each scope had in this process
        self.rebuilds: dict[Scope, int] = {}

    def _dir(self, scope: Scope) -> Path:
        assert self.root is not None
        return self.root / scope.dirname

    def journal_length(self, scope: Scope) -> int:
        """Ids journaled since the scope's last snapshot."""
        return self._journal_lines.get(scope, 0)

    def get(self, scope: Scope) -> MemoryIndex:
        """The scope's index, loaded (and repaired if needed) on first use."""
        index = self._indexes.get(scope)
        if index is None:
            index = self._load(scope)
            self._indexes[scope] = index
        return index

    def _load(self, scope: Scope) -> MemoryIndex:
        if self.root is None:
            return self._rebuild(scope, persist=False)
        directory = self._dir(scope)
        index = MemoryIndex.load(directory / "snapshot.npz")
        if index is None:
            if self.store.count(scope) == 0:
                index = MemoryIndex()
                self._checkpoint(scope, index)  # an empty snapshot: later loads replay the journal onto it
                return index
            return self._rebuild(scope)
        ids = self._read_journal(scope)
        if ids:
            self._reconcile(index, scope, ids)
        self._apply_vector_log(scope, index)
        self._journal_lines[scope] = len(ids)
        stored = self.store.count(scope)
        if stored != len(index) + index.foreign:
            log.warning("index of scope %s has %d memories, store has %d: rebuilding", scope, len(index), stored)
            return self._rebuild(scope, carry=index)
        return index

    def _vector_log(self, scope: Scope) -> VectorLog:
        vector_log = self._vector_logs.get(scope)
        if vector_log is None:
            vector_log = self._vector_logs[scope] = VectorLog(self._dir(scope) / "vectors.log")
        return vector_log

    def _apply_vector_log(self, scope: Scope, index: MemoryIndex) -> None:
        found = self._vector_log(scope).read()
        if found is None:
            return
        model, records = found
        ids, rows = [], []
        for memory_id, row in records:
            if memory_id in index:  # vectors of memories that never reached the store are ignored
                ids.append(memory_id)
                rows.append(row)
        if ids:
            index.set_vectors(model, ids, np.stack(rows))

    def log_vectors(self, scope: Scope, model: str, memory_ids: list[str], vectors: np.ndarray) -> None:
        """Make vectors durable. Call *before* the store write of new memories."""
        if self.root is not None and memory_ids:
            self.get(scope)
            self._vector_log(scope).append(model, memory_ids, vectors)

    def _reconcile(self, index: MemoryIndex, scope: Scope, ids: Iterable[str]) -> None:
        unique = list(dict.fromkeys(ids))
        for memory_id, memory in zip(unique, self.store.get_many(scope, unique)):
            if memory is None:
                index.remove(memory_id)
            else:
                index.upsert(memory)

    def _rebuild(self, scope: Scope, persist: bool = True, carry: MemoryIndex | None = None) -> MemoryIndex:
        index = MemoryIndex()
        index.add_many(self.store.iter_memories(scope))
        index.merge()
        if carry is not None and carry.vector_model is not None:  # vectors are costly: keep the ones we had
            kept = [(i, v) for i in index.ids if (v := carry.vector_of(i)) is not None]
            if kept:
                index.set_vectors(carry.vector_model, [i for i, _ in kept], np.stack([v for _, v in kept]))
        if persist and self.root is not None:
            self._apply_vector_log(scope, index)
        index.foreign = self.store.count(scope) - len(index)
        if index.foreign:
            log.warning("scope %s: %d memory subjects in the store are incomplete and not indexed", scope, index.foreign)
        self.rebuilds[scope] = self.rebuilds.get(scope, 0) + 1
        if persist and self.root is not None:
            self._checkpoint(scope, index)
        return index

    def _read_journal(self, scope: Scope) -> list[str]:
        try:
            text = (self._dir(scope) / "journal.log").read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        return [line for line in text.split("\n") if line]

    def _reset_journal(self, scope: Scope) -> None:
        handle = self._journals.pop(scope, None)
        if handle is not None:
            handle.close()
        directory = private_dir(self._dir(scope))
        (directory / "journal.log").write_text("")
        self._journal_lines[scope] = 0

    def journal(self, scope: Scope, memory_ids: Iterable[str]) -> None:
        """Record that these memories are about to change. Call *before* the store write."""
        self.get(scope)  # loaded (or, in memory, built from the store) before the write it must not see twice
        if self.root is None:
            return
        handle = self._journals.get(scope)
        if handle is None:
            path = private_dir(self._dir(scope)) / "journal.log"
            if path.exists():  # a torn last line (crash mid-append) would merge with the next id
                with open(path, "r+b") as fh:
                    data = fh.read()
                    if data and not data.endswith(b"\n"):
                        fh.truncate(data.rfind(b"\n") + 1)
            handle = open(path, "a", encoding="utf-8")
            self._journals[scope] = handle
        lines = "".join(f"{i}\n" for i in memory_ids)
        handle.write(lines)
        handle.flush()  # to the OS: survives a crash of this process
        self._journal_lines[scope] = self._journal_lines.get(scope, 0) + lines.count("\n")

    def maybe_checkpoint(self, scope: Scope) -> None:
        """Fold a long journal into a snapshot while running (call after the store write)."""
        if self.root is not None and self._journal_lines.get(scope, 0) > RUNNING_CHECKPOINT_LINES:
            self._checkpoint(scope, self._indexes[scope])

    def _checkpoint(self, scope: Scope, index: MemoryIndex) -> None:
        directory = private_dir(self._dir(scope))
        self.store.flush()  # the snapshot must never describe writes a power loss could still undo
        index.save(directory / "snapshot.npz")
        self._reset_journal(scope)
        self._vector_log(scope).reset()

    def rebuild(self, scope: Scope) -> MemoryIndex:
        """Rebuild the scope's index from a full scan of the store, keeping the vectors it had."""
        index = self._rebuild(scope, carry=self.get(scope))
        self._indexes[scope] = index
        return index

    def checkpoint(self, scope: Scope) -> None:
        """Write the scope's index to a snapshot now (e.g. after re-embedding everything)."""
        if self.root is not None:
            self._checkpoint(scope, self.get(scope))

    def close(self) -> None:
        """Checkpoint scopes with long journals and close journal files."""
        for scope, index in self._indexes.items():
            if self.root is not None and self._journal_lines.get(scope, 0) > CHECKPOINT_LINES:
                try:
                    self._checkpoint(scope, index)
                except OSError as exc:  # the journal still covers everything; next open replays it
                    log.warning("could not checkpoint index of scope %s: %s", scope, exc)
        for handle in self._journals.values():
            handle.close()
        for vector_log in self._vector_logs.values():
            vector_log.close()
        self._journals.clear()
        self._vector_logs.clear()
        self._indexes.clear()
