"""The contract every front of Cortex shares: the :class:`MemoryAPI` protocol (:mod:`cortex.api.protocol`), the
table of operations that drives every surface (:mod:`cortex.api.operations`), the client of a running server
(:mod:`cortex.api.client`) and the docs' tables written from the table (:mod:`cortex.api.reference`)."""

from __future__ import annotations

from cortex.api.protocol import MemoryAPI

__all__ = ["MemoryAPI"]
