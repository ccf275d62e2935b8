"""Memory providers: other memories Cortex hosts beside its own store (the engine switch, :mod:`.engine`; its
settings, :mod:`.settings`) through the interface of Hermes Agent's ``MemoryProvider`` (:mod:`.base`); one module
per built-in provider (:mod:`.mem0`, :mod:`.openviking`). The names below are imported on first use: a process that
only reads the settings does not pay for the rest."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cortex.providers.base import MemoryProvider, ProviderHit, split_context

__all__ = ["MemoryProvider", "ProviderHit", "split_context"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from cortex.providers import base

        return getattr(base, name)
    raise AttributeError(f"module 'cortex.providers' has no attribute {name!r}")
