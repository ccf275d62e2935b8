"""Shared fixtures: every test runs on a real on-disk pyoxigraph store under tmp_path."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from cortex import Cortex


class Clock:
    """A settable clock injected into Cortex, so time-dependent rules are tested exactly."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kwargs: float) -> datetime:
        self.now += timedelta(**kwargs)
        return self.now


@pytest.fixture(autouse=True)
def _no_default_embeddings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stores opened with the default provider (``auto``), in this process or in a subprocess, run without
    embeddings unless a test asks for them: loading the model costs seconds per process."""
    monkeypatch.setenv("CORTEX_EMBEDDINGS", "none")


@pytest.fixture(scope="session")
def local():
    """The real local provider with the shipped MiniLM weights (CI must have the semantic extra)."""
    from cortex.embeddings import LocalEmbeddings, local_available

    if not local_available():
        if os.environ.get("CORTEX_REQUIRE_SEMANTIC"):
            pytest.fail("CORTEX_REQUIRE_SEMANTIC is set but the semantic extra is not installed")
        pytest.skip("semantic extra not installed (pip install torch==2.13.0 && pip install -e '.[semantic]')")
    return LocalEmbeddings()


@pytest.fixture
def clock() -> Clock:
    return Clock(datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc))


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def cx(store_path: Path, clock: Clock) -> Iterator[Cortex]:
    with Cortex.open(store_path, clock=clock) as cortex:
        cortex.agents.register("reviewer")
        cortex.agents.register("planner")
        yield cortex


def reopen(cortex: Cortex, path: Path, *agents: str) -> Cortex:
    """Close ``cortex`` and open the same store again with ``agents`` registered."""
    cortex.close()
    fresh = Cortex.open(path)
    for name in agents:
        fresh.agents.register(name)
    return fresh
