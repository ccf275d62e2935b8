"""Keeps each agent's lexical index in step with the store, across restarts and crashes.

On disk, inside the store directory (``cortex-index/<agent>/``):

* ``snapshot.npz``: the index as of some moment (written atomically);
* ``journal.log``: the id of every memory written since that snapshot, appended *before* the store write.

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

from cortex.index.postings import AgentIndex
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
        self._journal_lines[agent] = len(ids)
        stored = self.store.count(agent)
        if stored != len(index) + index.foreign:
            log.warning("index of agent %r has %d memories, store has %d: rebuilding", agent, len(index), stored)
            return self._rebuild(agent)
        return index

    def _reconcile(self, index: AgentIndex, agent: str, ids: Iterable[str]) -> None:
        unique = list(dict.fromkeys(ids))
        for memory_id, memory in zip(unique, self.store.get_many(agent, unique)):
            if memory is None:
                index.remove(memory_id)
            else:
                index.upsert(memory)

    def _rebuild(self, agent: str, persist: bool = True) -> AgentIndex:
        index = AgentIndex()
        index.add_many(self.store.iter_memories(agent))
        index.merge()
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
        if self.root is None:
            return
        self.get(agent)  # the index must be loaded before new entries pile onto its journal
        handle = self._journals.get(agent)
        if handle is None:
            directory = self._dir(agent)
            directory.mkdir(parents=True, exist_ok=True)
            handle = open(directory / "journal.log", "a", encoding="utf-8")
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

    def drop(self, agent: str) -> None:
        """Forget the agent's index entirely (its memories are gone)."""
        self._indexes.pop(agent, None)
        handle = self._journals.pop(agent, None)
        if handle is not None:
            handle.close()
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
        self._journals.clear()
        self._indexes.clear()
