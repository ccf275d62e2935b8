"""Derived, rebuildable indexes over the store (lexical postings now; BM25 and vectors later)."""

from cortex.index.manager import IndexManager
from cortex.index.postings import AgentIndex

__all__ = ["AgentIndex", "IndexManager"]
