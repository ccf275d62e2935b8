"""The contract every front of Cortex shares: the :class:`MemoryAPI` protocol (:mod:`cortex.api.protocol`), the
table of operations that drives every surface (:mod:`cortex.api.operations`), the vocabulary of parameters
(:mod:`cortex.api.params`) and the client of a running server (:mod:`cortex.api.client`)."""

from __future__ import annotations

from cortex.api.protocol import MemoryAPI

__all__ = ["MemoryAPI"]
