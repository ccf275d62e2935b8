"""Cortex: persistent, searchable memory for AI agents, on an RDF triple store.

>>> from cortex import Cortex
>>> with Cortex.open(None) as cx:
...     _ = cx.agents.register("reviewer")
...     m = cx.store("reviewer", "Always check for null pointers", type="pattern")
...     [r.content for r in cx.recall("reviewer", "null")]
['Always check for null pointers']
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Names resolve lazily (PEP 562): `import cortex.service.hooks` must stay light (a hook runs per agent start),
# so importing the package does not import the engine, numpy or pyoxigraph until they are used.
_EXPORTS = {
    "AgentDefinition": "cortex.agents", "AgentProblem": "cortex.model", "AgentRegistry": "cortex.agents",
    "AgentSettings": "cortex.agents", "Cortex": "cortex.app", "RemoteCortex": "cortex.api.client",
    "MemoryAPI": "cortex.api",
    "AgentDefinitionError": "cortex.errors", "AgentNotFoundError": "cortex.errors", "AuthError": "cortex.errors",
    "BrokenAgentError": "cortex.errors",
    "CortexError": "cortex.errors", "InvalidInputError": "cortex.errors", "InvalidMemoryError": "cortex.errors",
    "MemoryDisabledError": "cortex.errors", "MemoryNotFoundError": "cortex.errors", "ServiceError": "cortex.errors",
    "PermissionDeniedError": "cortex.errors", "VersionConflictError": "cortex.errors",
    "LLMError": "cortex.errors", "LLMUnavailableError": "cortex.errors", "LLMOutputError": "cortex.errors",
    "CaptureReport": "cortex.model", "LLMSettings": "cortex.llm", "ImportReport": "cortex.model",
    "StoreError": "cortex.errors", "StoreLockedError": "cortex.errors",
    "RunNotFoundError": "cortex.errors", "UndoConflictError": "cortex.errors",
    "ConsolidationReport": "cortex.model", "ReviewItem": "cortex.model", "RunInfo": "cortex.model",
    "UndoReport": "cortex.model",
    "Hit": "cortex.model", "Memory": "cortex.model", "MemoryType": "cortex.model", "SearchResult": "cortex.model",
    "Page": "cortex.model", "Source": "cortex.model", "Scope": "cortex.model",
    "Reranking": "cortex.model", "SearchMode": "cortex.search",
}

if TYPE_CHECKING:
    from cortex.agents import AgentDefinition, AgentRegistry, AgentSettings
    from cortex.api import MemoryAPI
    from cortex.api.client import RemoteCortex
    from cortex.app import Cortex
    from cortex.errors import (
        AgentDefinitionError,
        AgentNotFoundError,
        AuthError,
        BrokenAgentError,
        CortexError,
        InvalidInputError,
        InvalidMemoryError,
        LLMError,
        LLMOutputError,
        LLMUnavailableError,
        MemoryDisabledError,
        MemoryNotFoundError,
        PermissionDeniedError,
        RunNotFoundError,
        ServiceError,
        StoreError,
        StoreLockedError,
        UndoConflictError,
        VersionConflictError,
    )
    from cortex.llm import LLMSettings
    from cortex.model import (
        AgentProblem,
        CaptureReport,
        ConsolidationReport,
        Hit,
        ImportReport,
        Memory,
        MemoryType,
        Page,
        ReviewItem,
        RunInfo,
        Scope,
        SearchResult,
        Source,
        UndoReport,
    )
    from cortex.model import Reranking
    from cortex.search import SearchMode


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'cortex' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__version__ = "0.1.0"

__all__ = [
    "AgentDefinition", "AgentDefinitionError", "AgentNotFoundError", "AgentProblem", "AgentRegistry",
    "AgentSettings", "AuthError", "BrokenAgentError", "Cortex", "CortexError", "Hit", "InvalidInputError",
    "InvalidMemoryError", "Memory", "MemoryAPI", "MemoryDisabledError", "MemoryNotFoundError", "MemoryType", "Page",
    "PermissionDeniedError", "Reranking", "RemoteCortex", "Scope", "SearchMode", "SearchResult", "ServiceError",
    "Source", "StoreError", "StoreLockedError",
    "VersionConflictError", "CaptureReport", "LLMError", "LLMOutputError", "LLMSettings", "LLMUnavailableError",
    "ImportReport", "ConsolidationReport", "ReviewItem", "RunInfo", "UndoReport", "RunNotFoundError",
    "UndoConflictError",
]
