"""Memory providers for Cortex's tests, installed as a plugin distribution (entry points in ``cortex.providers``).

Each provider appends what it receives to the JSON-lines file ``$CORTEX_TEST_PROVIDER_LOG`` (when set), so that a
test can see what a server in another process sent it.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from cortex.providers.base import MemoryProvider, ProviderHit


def _log(provider: str, call: str, **what: Any) -> None:
    path = os.environ.get("CORTEX_TEST_PROVIDER_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps({"provider": provider, "call": call, **what}) + "\n")


class EchoProvider(MemoryProvider):
    """Answers every search with two memories of its own (one repeating the query) and keeps what it is sent."""

    name = "echo"

    def __init__(self) -> None:
        self.options: dict[str, Any] = {}
        self.memories: dict[str, str] = {}

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.options = kwargs
        _log(self.name, "initialize", session_id=session_id, platform=kwargs.get("platform"))

    def search(self, query: str, *, agent: str, limit: int = 10) -> list[ProviderHit]:
        _log(self.name, "search", query=query, agent=agent, limit=limit)
        hits = [ProviderHit(id="e1", content=f"echo remembers {query}", score=0.9),
                ProviderHit(id="e2", content="the echo provider's second memory", score=0.5)]
        hits += [ProviderHit(id=i, content=c) for i, c in self.memories.items()]
        return hits[:limit]

    def on_memory_write(self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None) -> None:
        _log(self.name, "write", action=action, target=target, content=content, metadata=metadata)
        memory_id = (metadata or {}).get("memory_id", "")
        if action == "remove":
            self.memories.pop(memory_id, None)
        else:
            self.memories[memory_id] = content


class HangingProvider(EchoProvider):
    """Never answers a search or a write."""

    name = "hanging"

    def search(self, query: str, *, agent: str, limit: int = 10) -> list[ProviderHit]:
        _log(self.name, "search", query=query)
        time.sleep(3600)
        return []

    def on_memory_write(self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None) -> None:
        time.sleep(3600)


class RaisingProvider(EchoProvider):
    """Raises on every call, with its API key in the message (which Cortex must never show)."""

    name = "raising"

    def search(self, query: str, *, agent: str, limit: int = 10) -> list[ProviderHit]:
        raise RuntimeError(f"upstream refused key {self.options.get('api_key')}")

    def on_memory_write(self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None) -> None:
        raise RuntimeError(f"upstream refused key {self.options.get('api_key')}")


class GarbageProvider(EchoProvider):
    """Answers something that is not a list of hits."""

    name = "garbage"

    def search(self, query: str, *, agent: str, limit: int = 10) -> Any:
        return {"results": "<script>alert(1)</script>", "n": float("nan")}


class PrefetchOnly:
    """A provider as Hermes Agent knows them (no Cortex base class, no ``search``): only its prefetch text."""

    name = "hermesish"

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        pass

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        _log(self.name, "prefetch", query=query, session_id=session_id)
        return f"- hermesish recalls {query}\n- a second hermesish memory"

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []

    def on_memory_write(self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None) -> None:
        _log(self.name, "write", action=action, content=content)
