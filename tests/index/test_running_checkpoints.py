"""When a writing process checkpoints a scope's index while it runs: inside a long writer's writes (an import, a
big ``store_many``) once the spacing allows, never inside a single store or update (they stay as fast as before
issue 31), and not during the first MIN_CHECKPOINT_INTERVAL seconds of long writing."""

from __future__ import annotations

import pytest

from cortex import Cortex
from cortex.index import manager


@pytest.fixture
def small_checkpoints(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(manager, "CHECKPOINT_CHANGES", 10)


def test_single_writes_never_checkpoint_and_a_long_writer_does(store_path, small_checkpoints, monkeypatch):
    monkeypatch.setattr(manager, "MIN_CHECKPOINT_INTERVAL", 0.0)
    monkeypatch.setattr(manager, "CHECKPOINT_SPACING", 0.0)
    with Cortex.open(store_path, embeddings=None) as cx:
        cx.agents.register("a")
        ids = [cx.store("a", f"single note {k}").id for k in range(15)]
        for k, memory_id in enumerate(ids):
            cx.update("a", memory_id, content=f"changed note {k}")
        assert cx.index_status("a").pending == 30  # every one due by count and time, none checkpointed
        cx.store_many("a", [{"content": f"batch note {k}"} for k in range(20)])
        assert cx.index_status("a").pending == 0  # the long writer's write checkpointed the scope
        assert len(cx.recall("a", "note", limit=100)) == 35
    with Cortex.open(store_path, embeddings=None) as cx:  # the snapshot and the store agree
        cx.agents.register("a")
        assert len(cx.recall("a", "changed", limit=100)) == 15 and cx.index_status("a").rebuilds == 0


def test_a_long_write_shorter_than_the_interval_does_not_checkpoint(store_path, small_checkpoints, monkeypatch):
    monkeypatch.setattr(manager, "MIN_CHECKPOINT_INTERVAL", 3600.0)
    with Cortex.open(store_path, embeddings=None) as cx:
        cx.agents.register("a")
        for start in range(0, 60, 20):
            cx.store_many("a", [{"content": f"batch note {start + k}"} for k in range(20)])
        assert cx.index_status("a").pending == 60
