"""Keeps each agent's lexical index in step with the store, across restarts and crashes.

On disk, inside the store directory (``cortex-index/<agent>/``):

* ``snapshot.npz``: the index as of some moment (written atomically);
* ``journal.log``: the id of every memory written since that snapshot, appended *before* the store write;
* ``vectors.log``: the embedding vectors computed since that snapshot, also written before the store write
  (see :mod:`cortex.index.vectors`).

Loading an agent reads the snapshot, then re-reads from the store every journaled id and makes the index
agree with it (the memory exists: upsert; it is gone: remove). Because ids are journaled before the store
commits, a crash at any point leaves at most ids that need no change, never a change the index misses. A
final count check against the store catches anything written behind Cortex's back and triggers a rebuild
from a full scan. Small journals are left in place at close (replaying them is cheap), so a short CLI call
does not rewrite a large snapshot.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import IO

import numpy as np

from cortex.index.postings import AgentIndex
from cortex.index.vectors import VectorLog
from cortex.store.base import MemoryStore

log = logging.getLogger("cortex.index")

INDEX_DIR = "cortex-index"
#: A journal longer than this is folded into a new snapshot (at close, or while running).
CHECKPOINT_LINES = 1000
RUNNING_CHECKPOINT_LINES = 100_000


class IndexManager:
    """Lazily loads, journals and checkpoints the per-agent :class:`AgentIndex` objects."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.root = store.path / INDEX_DIR if store.path is not None else None
        self._indexes: dict[str, AgentIndex] = {}
        self._journals: dict[str, IO[str]] = {}
        self._journal_lines: dict[str, int] = {}
        self._vector_logs: dict[str, VectorLog] = {}
        self.rebuilds: list[str] = []  # agents rebuilt by full scan in this process (observable in tests)

    def _dir(self, agent: str) -> Path:
        assert self.root is not None
        return self.root / agent

    def get(self, agent: str) -> AgentIndex:
        """The agent's index, loaded (and repaired if needed) on first use."""
        index = self._indexes.get(agent)
        if index is None:
            index = self._load(agent)
            self._indexes[agent] = index
        return index

    def _load(self, agent: str) -> AgentIndex:
        if self.root is None:
            return self._rebuild(agent, persist=False)
        directory = self._dir(agent)
        index = AgentIndex.load(directory / "snapshot.npz")
        if index is None:
            if self.store.count(agent) == 0:
                index = AgentIndex()
                self._checkpoint(agent, index)  # an empty snapshot: later loads replay the journal onto it
                return index
            return self._rebuild(agent)
        ids = self._read_journal(agent)
        if ids:
            self._reconcile(index, agent, ids)
        self._apply_vector_log(agent, index)
        self._journal_lines[agent] = len(ids)
        stored = self.store.count(agent)
        if stored != len(index) + index.foreign:
            log.warning("index of agent %r has %d memories, store has %d: rebuilding", agent, len(index), stored)
            return self._rebuild(agent, carry=index)
        return index

    def _vector_log(self, agent: str) -> VectorLog:
        vector_log = self._vector_logs.get(agent)
        if vector_log is None:
            vector_log = self._vector_logs[agent] = VectorLog(self._dir(agent) / "vectors.log")
        return vector_log

    def _apply_vector_log(self, agent: str, index: AgentIndex) -> None:
        found = self._vector_log(agent).read()
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

    def log_vectors(self, agent: str, model: str, memory_ids: list[str], vectors: np.ndarray) -> None:
        """Make vectors durable. Call *before* the store write of new memories."""
        if self.root is not None and memory_ids:
            self.get(agent)
            self._vector_log(agent).append(model, memory_ids, vectors)

    def _reconcile(self, index: AgentIndex, agent: str, ids: Iterable[str]) -> None:
        unique = list(dict.fromkeys(ids))
        for memory_id, memory in zip(unique, self.store.get_many(agent, unique)):
            if memory is None:
                index.remove(memory_id)
            else:
                index.upsert(memory)

    def _rebuild(self, agent: str, persist: bool = True, carry: AgentIndex | None = None) -> AgentIndex:
        index = AgentIndex()
        index.add_many(self.store.iter_memories(agent))
        index.merge()
        if carry is not None and carry.vector_model is not None:  # vectors are costly: keep the ones we had
            kept = [(i, v) for i in index.ids if (v := carry.vector_of(i)) is not None]
            if kept:
                index.set_vectors(carry.vector_model, [i for i, _ in kept], np.stack([v for _, v in kept]))
        if persist and self.root is not None:
            self._apply_vector_log(agent, index)
        index.foreign = self.store.count(agent) - len(index)
        if index.foreign:
            log.warning("agent %r: %d memory subjects in the store are incomplete and not indexed", agent, index.foreign)
        self.rebuilds.append(agent)
        if persist and self.root is not None:
            self._checkpoint(agent, index)
        return index

    def _read_journal(self, agent: str) -> list[str]:
        try:
            text = (self._dir(agent) / "journal.log").read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        return [line for line in text.split("\n") if line]

    def _reset_journal(self, agent: str) -> None:
        handle = self._journals.pop(agent, None)
        if handle is not None:
            handle.close()
        directory = self._dir(agent)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "journal.log").write_text("")
        self._journal_lines[agent] = 0

    def journal(self, agent: str, memory_ids: Iterable[str]) -> None:
        """Record that these memories are about to change. Call *before* the store write."""
        self.get(agent)  # loaded (or, in memory, built from the store) before the write it must not see twice
        if self.root is None:
            return
        handle = self._journals.get(agent)
        if handle is None:
            directory = self._dir(agent)
            directory.mkdir(parents=True, exist_ok=True)
            path = directory / "journal.log"
            if path.exists():  # a torn last line (crash mid-append) would merge with the next id
                with open(path, "r+b") as fh:
                    data = fh.read()
                    if data and not data.endswith(b"\n"):
                        fh.truncate(data.rfind(b"\n") + 1)
            handle = open(path, "a", encoding="utf-8")
            self._journals[agent] = handle
        lines = "".join(f"{i}\n" for i in memory_ids)
        handle.write(lines)
        handle.flush()  # to the OS: survives a crash of this process
        self._journal_lines[agent] = self._journal_lines.get(agent, 0) + lines.count("\n")

    def maybe_checkpoint(self, agent: str) -> None:
        """Fold a long journal into a snapshot while running (call after the store write)."""
        if self.root is not None and self._journal_lines.get(agent, 0) > RUNNING_CHECKPOINT_LINES:
            self._checkpoint(agent, self._indexes[agent])

    def _checkpoint(self, agent: str, index: AgentIndex) -> None:
        directory = self._dir(agent)
        directory.mkdir(parents=True, exist_ok=True)
        self.store.flush()  # the snapshot must never describe writes a power loss could still undo
        index.save(directory / "snapshot.npz")
        self._reset_journal(agent)
        self._vector_log(agent).reset()

    def rebuild(self, agent: str) -> AgentIndex:
        """Rebuild the agent's index from a full scan of the store, keeping the vectors it had."""
        index = self._rebuild(agent, carry=self.get(agent))
        self._indexes[agent] = index
        return index

    def checkpoint(self, agent: str) -> None:
        """Write the agent's index to a snapshot now (e.g. after re-embedding everything)."""
        if self.root is not None:
            self._checkpoint(agent, self.get(agent))

    def drop(self, agent: str) -> None:
        """Forget the agent's index entirely (its memories are gone)."""
        self._indexes.pop(agent, None)
        handle = self._journals.pop(agent, None)
        if handle is not None:
            handle.close()
        vector_log = self._vector_logs.pop(agent, None)
        if vector_log is not None:
            vector_log.close()
        if self.root is not None:
            shutil.rmtree(self._dir(agent), ignore_errors=True)

    def close(self) -> None:
        """Checkpoint agents with long journals and close journal files."""
        for agent, index in self._indexes.items():
            if self.root is not None and self._journal_lines.get(agent, 0) > CHECKPOINT_LINES:
                try:
                    self._checkpoint(agent, index)
                except OSError as exc:  # the journal still covers everything; next open replays it
                    log.warning("could not checkpoint index of agent %r: %s", agent, exc)
        for handle in self._journals.values():
            handle.close()
        for vector_log in self._vector_logs.values():
            vector_log.close()
        self._journals.clear()
        self._vector_logs.clear()
        self._indexes.clear()
