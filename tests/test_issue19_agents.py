"""Issue 19, findings 3, 4, 5 and 10: agent definitions as they are on disk now, broken definitions named with
their problem, no silent deletion at agent end, and a bounded store directory."""

from __future__ import annotations

import gc
from pathlib import Path

from cortex.store import open_store
from cortex.store.oxigraph import KEPT_OLD_LOGS
from cortex.vocab import Vocabulary


def test_store_opens_keep_a_bounded_number_of_old_rocksdb_logs(tmp_path: Path) -> None:
    path = tmp_path / "store"
    for _ in range(KEPT_OLD_LOGS + 5):
        backend = open_store(path, Vocabulary())
        backend.close()
        del backend
        gc.collect()
    old = sorted(path.glob("LOG.old.*"))
    assert 0 < len(old) <= KEPT_OLD_LOGS
    assert (path / "LOG").exists()


# -- finding 3: agents always current ---------------------------------------------------------------------------

import httpx  # noqa: E402
import pytest  # noqa: E402

from cortex.agents import AgentRegistry  # noqa: E402
from tests.service_helpers import AGENT, cortex, make_project, start_server  # noqa: E402


def _store_over_http(url: str, token: str, agent: str, **body: object) -> httpx.Response:
    return httpx.post(f"{url}/v1/agents/{agent}/memories", json={"content": "a fact", **body},
                      headers={"Authorization": f"Bearer {token}"}, timeout=30)


def test_a_server_sees_an_agent_directory_created_after_it_started(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", "reviewer")
    server = start_server(project, CORTEX_EMBEDDINGS="none")
    try:
        assert _store_over_http(server.url, server.token, "reviewer").status_code == 201
        agents = project / ".cortex" / "agents"
        agents.mkdir(parents=True)
        (agents / "newbie.md").write_text(AGENT.format(name="newbie"))
        answer = _store_over_http(server.url, server.token, "newbie")
        assert answer.status_code == 201, answer.text
        # the CLI reaches the same server: the new agent is declared there too
        ran = cortex(project, "store", "newbie", "through the CLI", CORTEX_EMBEDDINGS="none")
        assert ran.returncode == 0, ran.stderr
        names = [a["name"] for a in httpx.get(f"{server.url}/v1/agents", timeout=30,
                                              headers={"Authorization": f"Bearer {server.token}"}).json()]
        assert "newbie" in names
    finally:
        server.stop()


def test_registry_sees_new_files_and_directories_on_the_next_call(tmp_path: Path) -> None:
    dirs = [tmp_path / "agent_defs", tmp_path / ".cortex" / "agents"]
    registry = AgentRegistry()
    registry.load(dirs)
    registry.CHECK_INTERVAL = 3600.0  # only the per-call check may find them
    assert registry.get("late") is None
    dirs[1].mkdir(parents=True)
    (dirs[1] / "late.md").write_text(AGENT.format(name="late"))
    assert registry.get("late") is not None
    (dirs[1] / "later.md").write_text(AGENT.format(name="later"))
    assert "later" in [d.name for d in registry.list()]
