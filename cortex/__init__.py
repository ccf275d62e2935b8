"""Cortex: persistent, searchable memory for AI agents, on an RDF triple store.

>>> from cortex import Cortex
>>> with Cortex.open(None) as cx:
...     _ = cx.agents.register("reviewer")
...     m = cx.store("reviewer", "Always check for null pointers", type="pattern")
...     [r.content for r in cx.recall("reviewer", "null")]
['Always check for null pointers']
"""

from cortex.agents import AgentDefinition, AgentProblem, AgentRegistry, AgentSettings
from cortex.core import Cortex
from cortex.errors import (
    AgentDefinitionError,
    AgentNotFoundError,
    AuthError,
    CortexError,
    InvalidInputError,
    InvalidMemoryError,
    MemoryDisabledError,
    MemoryNotFoundError,
    StoreError,
    StoreLockedError,
    ServiceError,
)
from cortex.model import Hit, Memory, MemoryType, SearchResult
from cortex.rerank import Reranking
from cortex.search import SearchMode

__version__ = "0.1.0"

__all__ = [
    "AgentDefinition", "AgentDefinitionError", "AgentNotFoundError", "AgentProblem", "AgentRegistry",
    "AgentSettings", "AuthError", "Cortex", "CortexError", "Hit", "InvalidInputError", "InvalidMemoryError", "Memory",
    "MemoryDisabledError", "MemoryNotFoundError", "MemoryType", "Reranking", "SearchMode", "SearchResult", "ServiceError", "StoreError",
    "StoreLockedError",
]
