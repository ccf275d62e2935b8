"""Reads never wait for a long writer: a recall, a search and the SubagentStart hook through a running server
answer while an import is embedding, and see each batch the import has committed (the write protocol in
:mod:`cortex.memories`). The server is a real ``cortex serve`` whose embeddings wait at a gate the test opens
(:mod:`tests.slow_embeddings`), so the order of events is fixed without timing anything: the import cannot finish
before the test lets its batches go, and a read that waited for it would never come back."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from cortex.memories import WRITE_BATCH
from tests.service_helpers import env, make_project, start_server
from tests.slow_embeddings import GATE_ENV, release, wait_started

pytestmark = pytest.mark.xdist_group("server")


def mem0_file(path: Path, n: int, word: str = "imported") -> Path:
    """A mem0 ``get_all`` export of ``n`` memories."""
    results = [{"id": f"00000000-0000-4000-8000-{i:012d}", "memory": f"{word} fact number {i} about the cache",
                "hash": f"h{i}", "metadata": None, "created_at": "2025-01-02T03:04:05+00:00",
                "updated_at": "2025-01-02T03:04:05+00:00", "user_id": "u1"} for i in range(n)]
    path.write_text(json.dumps({"results": results}))
    return path


def test_reads_answer_while_an_import_embeds(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", "alice")
    gate = tmp_path / "gate"
    gate.mkdir()
    server = start_server(project, module="tests.slow_embeddings", CORTEX_EMBEDDINGS="hash",
                          **{GATE_ENV: str(gate)})
    answer: dict = {}
    try:
        for content in ("Deploy with blue green switches", "Review the deploy checklist"):
            assert server.call("POST", "/v1/agents/alice/memories", json={"content": content}).status_code == 201
        body = mem0_file(tmp_path / "big.json", WRITE_BATCH * 2 + 500).read_bytes()

        def run_import() -> None:
            answer["response"] = httpx.post(f"{server.url}/v1/import/mem0", params={"agent": "alice"}, content=body,
                                            headers={"Authorization": f"Bearer {server.token}"}, timeout=300)

        importer = threading.Thread(target=run_import)
        importer.start()
        wait_started(gate, 1)  # the import holds its first batch at the gate: it cannot finish before go-1

        recall = server.call("GET", "/v1/agents/alice/memories", params={"query": "deploy"})
        assert recall.status_code == 200, recall.text
        assert {m["content"] for m in recall.json()} == {"Deploy with blue green switches",
                                                         "Review the deploy checklist"}
        search = server.call("GET", "/v1/agents/alice/search", params={"query": "deploy checklist"})
        assert search.status_code == 200 and search.json(), search.text
        hook = subprocess.run([sys.executable, "-m", "cortex", "hook", "claude", "SubagentStart"], cwd=project,
                              input=json.dumps({"session_id": "s1", "cwd": str(project), "agent_id": "a1",
                                                "hook_event_name": "SubagentStart", "agent_type": "alice"}),
                              capture_output=True, text=True, env=env(), timeout=120)
        assert hook.returncode == 0, hook.stderr
        assert "Deploy with blue green switches" in json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
        assert importer.is_alive() and "response" not in answer

        release(gate, 1)
        wait_started(gate, 2)  # batch 1 is committed, batch 2 embedding: its memories are readable, whole
        during = server.call("GET", "/v1/agents/alice/memories", params={"query": "imported fact", "limit": 10_000})
        assert during.status_code == 200
        assert len(during.json()) == WRITE_BATCH
        status = server.call("GET", "/v1/agents/alice/index")
        assert status.status_code == 200, status.text  # every memory of batch 1 came with its vector
        assert status.json()["vectors"] == status.json()["memories"] == WRITE_BATCH + 2
        assert importer.is_alive() and "response" not in answer

        release(gate, "all")
        importer.join(timeout=300)
        response = answer["response"]
        assert response.status_code == 200, response.text
        assert len([i for i in response.json()["imported"] if i["kind"] == "memory"]) == WRITE_BATCH * 2 + 500
        after = server.call("GET", "/v1/agents/alice/memories", params={"query": "imported fact", "limit": 10_000})
        assert len(after.json()) == WRITE_BATCH * 2 + 500
    finally:
        release(gate, "all")
        server.stop()
