"""The storage interface every backend implements (embedded pyoxigraph now, remote SPARQL later).

A backend stores memories as RDF in one named graph per agent. It knows nothing about agents'
definitions, matching or ranking: the engine above it does. Every write method is atomic: after a crash
either all of its triples are in the store or none are.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Protocol, runtime_checkable

from cortex.model import Memory


@runtime_checkable
class MemoryStore(Protocol):
    """What Cortex needs from an RDF store."""

    @property
    def path(self) -> Path | None:
        """The on-disk location, or None for an in-memory store."""

    def add(self, memories: Sequence[Memory]) -> None:
        """Write every triple of ``memories`` in one atomic operation."""

    def get(self, agent: str, memory_id: str) -> Memory | None:
        """Read one memory, or None when it does not exist."""

    def get_many(self, agent: str, memory_ids: Sequence[str]) -> list[Memory | None]:
        """Read several memories of one agent, in the order asked."""

    def touch(self, agent: str, memory_ids: Sequence[str], now: datetime) -> None:
        """Atomically add one to usageCount and set lastUsedAt to ``now`` for each existing memory."""

    def delete(self, agent: str, memory_ids: Sequence[str]) -> None:
        """Atomically remove every triple of the given memories."""

    def contents(self, agent: str, memory_ids: Sequence[str]) -> list[str | None]:
        """The content of each memory (None where it does not exist), in the order asked."""

    def iter_memories(self, agent: str) -> Iterator[Memory]:
        """Every complete memory of the agent (used to rebuild derived indexes and to export)."""

    def count(self, agent: str) -> int:
        """How many memories the agent's graph holds."""

    def find_content(self, agent: str, content: str, project: str) -> list[str]:
        """Ids of the agent's memories with exactly this content in this project."""

    def agents(self) -> list[str]:
        """Names of the agents whose graphs hold data."""

    def flush(self) -> None:
        """Push buffered writes to disk."""

    def close(self, flush: bool = True) -> None:
        """Release the store (and its lock); with ``flush``, force committed writes to disk first."""
