"""The team most consolidation and capture tests use: ``rev`` and ``coder`` in team ``backend``, led by ``boss``,
on an on-disk store, with a language model (a :class:`tests.llm_standin.StandIn`) and default consolidation."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cortex import Cortex
from cortex.agents import AgentSettings
from cortex.consolidation.settings import ConsolidationSettings
from cortex.llm import LLMSettings


@contextmanager
def backend_team(root: Path, llm_url: str, **more: AgentSettings) -> Iterator[Cortex]:
    """A store under ``root`` with the backend team registered (and ``more`` agents), its model at ``llm_url``."""
    with Cortex.open(root / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register("rev", settings=AgentSettings(teams=("backend",)))
        cx.agents.register("coder", settings=AgentSettings(teams=("backend",)))
        cx.agents.register("boss", settings=AgentSettings(teams=("backend",), lead=True))
        for name, settings in more.items():
            cx.agents.register(name, settings=settings)
        cx.llm = LLMSettings(url=llm_url, model="standin")
        cx.consolidation = ConsolidationSettings()
        yield cx
