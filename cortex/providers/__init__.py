"""Memory providers: other memories Cortex hosts beside its own store (the engine switch) through the interface of
Hermes Agent's ``MemoryProvider`` (:mod:`.base`); one module per built-in provider (:mod:`.mem0`,
:mod:`.openviking`)."""

from cortex.providers.base import MemoryProvider, ProviderHit, split_context

__all__ = ["MemoryProvider", "ProviderHit", "split_context"]
