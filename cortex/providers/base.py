"""The memory-provider interface: the method names and meanings of Hermes Agent's ``MemoryProvider``.

Hermes Agent 0.19.0 (``agent/memory_provider.py``) made this the field's plugin contract: Honcho, mem0, OpenViking,
Hindsight and others ship providers for it. Cortex hosts providers through the same interface (the engine switch,
:mod:`cortex.providers.engine`) and publishes itself through it (:mod:`cortex.integrations.hermes`), so a provider
written for one runs in the other with at most a thin adapter. Hermes's signatures are followed as they are
(synchronous, ``session_id`` keywords, a JSON string from ``handle_tool_call``); nothing here imports Hermes.

Cortex serves many agents through one provider instance, so it adds two optional methods a Hermes provider does
not have, each with a default built on the Hermes ones:

- :meth:`MemoryProvider.search` (structured, ranked hits for one agent; default: :meth:`prefetch`'s text, one hit
  per paragraph or list item), which the ``both`` and ``external`` engines merge with Cortex's own hits;
- :meth:`MemoryProvider.recall_status` (what the last recall returned; Hermes 0.19.0 has no such method).

Writes reach a provider through Hermes's own mirror hook, :meth:`MemoryProvider.on_memory_write` (``add``,
``replace``, ``remove``), with the agent, the memory's id and its fields in ``metadata``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

#: ``metadata["write_origin"]`` of every write Cortex mirrors to a provider (Hermes's key for where a write came from)
WRITE_ORIGIN = "cortex"


@dataclass(frozen=True)
class ProviderHit:
    """One memory a provider returned for a query: its own ``id`` (any string: a UUID, a ``viking://`` URI),
    the ``content`` shown to the agent, the provider's ``score`` (its own scale, or None), when it was created
    when the provider says so, and whatever else it returned (``metadata``)."""

    id: str
    content: str
    score: float | None = None
    created_at: datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


class MemoryProvider:
    """Base class of a memory provider (Hermes Agent's ``MemoryProvider`` methods, with working defaults).

    A subclass sets :attr:`name` and overrides what it supports. Construction takes no arguments (as Hermes
    instantiates providers); configuration comes from the environment or :meth:`initialize`'s keywords.
    """

    #: A short id ("mem0", "openviking"); it labels the provider's hits and names it in ``CORTEX_PROVIDERS``.
    name: str = "provider"

    # -- core lifecycle ---------------------------------------------------------------------------------------
    def is_available(self) -> bool:
        """Whether the provider is configured and ready (credentials, dependencies). Must not touch the network."""
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Called once before first use. Keywords as Hermes passes them (``hermes_home``, ``platform``,
        ``agent_context``, ``agent_identity``, ...); Cortex passes ``platform="cortex"``."""

    def system_prompt_block(self) -> str:
        """Static text for the system prompt ("" for none)."""
        return ""

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Context relevant to ``query`` for the upcoming turn, as text ("" for none). Should be fast."""
        return ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Start a recall for the next turn in the background (default: nothing)."""

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None) -> None:
        """Persist a completed turn (should not block)."""

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """The tools the provider offers, in OpenAI function format (``name``, ``description``, ``parameters``)."""
        return []

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run one of :meth:`get_tool_schemas`' tools; the answer is a JSON string."""
        raise NotImplementedError(f"provider {self.name} does not handle tool {tool_name}")

    def shutdown(self) -> None:
        """Flush queues and close connections."""

    # -- optional hooks -----------------------------------------------------------------------------------------
    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        """A turn starts."""

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """A session ended (its whole history)."""

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", reset: bool = False,
                          **kwargs: Any) -> None:
        """The session changed (resume, branch, reset)."""

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Before the history is compressed: text to keep in the summary ("" for none)."""
        return ""

    def on_delegation(self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any) -> None:
        """A subagent finished ``task`` with ``result``."""

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: dict[str, Any] | None = None) -> None:
        """A memory was written elsewhere: ``action`` ``add`` / ``replace`` / ``remove``, ``target`` ``memory``.
        Cortex mirrors its writes here, with ``metadata`` holding ``agent``, ``memory_id``, ``scope``, ``type``,
        ``project``, ``tags`` and ``write_origin="cortex"``. Raise to report a failed write."""

    # -- Cortex's additions -------------------------------------------------------------------------------------
    def search(self, query: str, *, agent: str, limit: int = 10) -> list[ProviderHit]:
        """Ranked hits for ``agent``'s ``query``, best first (at most ``limit``). Default: :meth:`prefetch`'s
        text cut into paragraphs or list items, in order (a Hermes provider knows no agents: every agent sees
        the same provider memory)."""
        text = self.prefetch(query, session_id=agent)
        return [ProviderHit(id=f"{i}", content=part) for i, part in enumerate(split_context(text)[:limit])]

    def recall_status(self) -> dict[str, Any]:
        """What the last recall did: at least ``query`` and ``count`` (Hermes 0.19.0 has no such method)."""
        return {}


def finite_score(value: object) -> float | None:
    """A provider's score as a finite float, else None (a bool, a text, NaN, an int too big for a float)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    try:
        score = float(value)
    except (OverflowError, ValueError):
        return None
    return score if math.isfinite(score) else None


_ITEM = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+")


def split_context(text: str) -> list[str]:
    """A prefetch's text as separate memories: one per list item, else one per paragraph."""
    if not isinstance(text, str) or not text.strip():
        return []
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and all(_ITEM.match(line) for line in lines):
        return [_ITEM.sub("", line).strip() for line in lines]
    return [part.strip() for part in re.split(r"\n\s*\n", text) if part.strip()]
