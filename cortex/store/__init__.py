"""Storage backends behind the :class:`~cortex.store.base.MemoryStore` interface."""

from cortex.store.base import MemoryStore
from cortex.store.oxigraph import OxigraphStore

__all__ = ["MemoryStore", "OxigraphStore"]
