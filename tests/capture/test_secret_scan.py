"""A scan of an existing store for secrets (issue 29, "Redaction that a security team would sign off"): every
version of a memory's history, metadata and tags, the scope's other records (a consolidation run's undo journal,
entity names) and the derived indexes; a dry run by default; a rewrite that is one atomic write per scope,
recorded in provenance with counts by rule and the secret kept nowhere; crash-safe (a kill -9 between the write
and the index rebuild leaves the store redacted and an index that agrees with it); on every surface, admin only."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
import warnings

import httpx
import pytest
from mcp import Client

from cortex import Cortex
from cortex.service.auth import ADMIN, TokenStore
from cortex.service.mcp import build_mcp
from tests.service_helpers import cortex, make_project, start_server

GITHUB = "ghp_" + "Qm7Rt2Xv9Lp4Kd8Wn3Hs6Jf1Zc5Bg0Ny2Ta4"
AWS = "AKIAQ3N7W2XK9RLT5MPD"
SECRETS = (GITHUB, AWS)


def dump(cx: Cortex) -> str:
    out = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cx.export(out, all=True, format="nquads")
    return out.getvalue().decode("utf-8")


def plant(cx: Cortex) -> str:
    """Secrets in a memory's current content and metadata, in its two earlier versions, and a clean memory."""
    cx.agents.register("dev")
    m = cx.store("dev", f"deploy uses {GITHUB}", metadata={"vault": AWS}, tags=["deploy"])
    cx.update("dev", m.id, content=f"deploy uses {GITHUB} and {AWS}")
    cx.update("dev", m.id, content=f"deploy reads the key {AWS} from the vault")
    cx.store("dev", "the staging database listens on port 5433")
    return m.id


@pytest.fixture
def cx(tmp_path):
    with Cortex.open(tmp_path / ".cortex" / "store", embeddings=None) as cx:
        yield cx


def test_a_dry_run_reports_every_version_and_changes_nothing(cx):
    memory_id = plant(cx)
    before = dump(cx)
    report = cx.scan_secrets()
    assert not report.redacted and report.scopes == ["agent:dev"]
    places = {(f.where, f.memory_id, f.version): f.rules for f in report.findings}
    assert places == {("memory", memory_id, 3): {"aws-access-key": 2},
                      ("version", memory_id, 1): {"github-token": 1, "aws-access-key": 1},
                      ("version", memory_id, 2): {"github-token": 1, "aws-access-key": 2}}
    assert report.total == {"github-token": 2, "aws-access-key": 5}
    assert not any(s in report.model_dump_json() for s in SECRETS)
    assert dump(cx) == before


def test_redact_rewrites_history_indexes_and_provenance_and_keeps_the_secret_nowhere(cx, tmp_path):
    memory_id = plant(cx)
    assert cx.search("dev", "AKIAQ3N7W2XK9RLT5MPD", mode="bm25").hits  # the term index has it
    report = cx.scan_secrets(redact=True)
    assert report.redacted and report.total == {"github-token": 2, "aws-access-key": 5}
    text = dump(cx)
    assert not any(s in text for s in SECRETS)
    history = cx.history("dev", memory_id)
    assert [v.content for v in history] == [
        "deploy uses [REDACTED:github-token]",
        "deploy uses [REDACTED:github-token] and [REDACTED:aws-access-key]",
        "deploy reads the key [REDACTED:aws-access-key] from the vault"]
    assert all(v.metadata == {"vault": "[REDACTED:aws-access-key]"} for v in history)
    assert history[-1].version == 3 and history[-1].tags == ("deploy",)
    change = cx.provenance("dev", memory_id).changes[-1]
    assert change.action == "redact" and change.rule == "secret scan: 5 aws-access-key, 2 github-token"
    assert cx.search("dev", "AKIAQ3N7W2XK9RLT5MPD", mode="bm25").hits == []
    assert [r.memory.id for r in cx.search("dev", "vault key", mode="bm25").hits] == [memory_id]
    # the derived files on disk hold no trace either (the index snapshot and logs; the database's own string
    # dictionary keeps a literal it no longer uses: docs/capture.md, "Scanning a store", says how to drop it)
    state = tmp_path / ".cortex" / "store"
    derived = [p for p in state.rglob("*") if p.is_file() and "index" in str(p.relative_to(state))]
    assert derived
    for path in derived:
        data = path.read_bytes()
        assert not any(s.encode() in data for s in SECRETS), path
    assert cx.scan_secrets().total == {}  # nothing left; a second run changes nothing


def test_a_consolidation_runs_undo_journal_and_entity_names_are_redacted(cx, tmp_path):
    cx.agents.register("dev")
    cx.store("dev", f"The API token is {GITHUB} for the deploy job")
    cx.store("dev", f"the API token is {GITHUB} for the deploy job.")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = cx.consolidate("dev")
        lines = [{"type": "entity", "name": "CI", "entityType": "system", "observations": ["runs on k3s"]}]
        path = tmp_path / "memory.jsonl"
        path.write_text("\n".join(json.dumps(x) for x in lines))
        cx.import_from("mcp-memory", path, agent="dev")
    assert run.run and GITHUB in dump(cx)  # the explicit stores kept it, and the run's journal copies them
    report = cx.scan_secrets(redact=True)
    assert "provenance" in {f.where for f in report.findings}
    assert GITHUB not in dump(cx)
    undone = cx.undo_consolidation(run.run, force=True)  # the journal still undoes, with redacted text
    assert undone is not None
    assert GITHUB not in dump(cx)


CRASH = """
import os, signal, sys
from cortex import Cortex
from cortex.memories import MemoryRepository
MemoryRepository.reindex = lambda self, scope, **kw: os.kill(os.getpid(), signal.SIGKILL)
with Cortex.open(sys.argv[1], embeddings=None) as cx:
    cx.scan_secrets(redact=True)
"""


def test_a_kill_between_the_write_and_the_index_rebuild_leaves_store_and_index_agreeing(tmp_path):
    store = tmp_path / ".cortex" / "store"
    with Cortex.open(store, embeddings=None) as cx:
        memory_id = plant(cx)
    done = subprocess.run([sys.executable, "-c", CRASH, str(store)], capture_output=True, text=True, timeout=120)
    assert done.returncode == -9, done.stderr
    with Cortex.open(store, embeddings=None) as cx:
        cx.agents.register("dev")
        assert not any(s in dump(cx) for s in SECRETS)  # the write was whole
        assert cx.search("dev", "AKIAQ3N7W2XK9RLT5MPD", mode="bm25").hits == []  # the index caught up
        assert cx.get("dev", memory_id).content == "deploy reads the key [REDACTED:aws-access-key] from the vault"
        assert cx.scan_secrets(redact=True).total == {}  # a run after the crash finds nothing, rebuilds the index


def test_every_surface_scans_and_only_an_admin_may(tmp_path):
    project = make_project(tmp_path / "proj", "dev", "ops")
    store = project / ".cortex" / "store"
    with Cortex.open(store, embeddings=None) as cx:
        memory_id = plant(cx)
    dry = cortex(project, "secrets", "scan", "--format", "json")
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["total"] == {"github-token": 2, "aws-access-key": 5}
    assert not any(s in dry.stdout + dry.stderr for s in SECRETS)
    tokens = TokenStore(store)
    agent, admin = tokens.create("dev"), tokens.create(None)
    server = start_server(project)
    try:
        url = f"{server.url}/v1/secrets/scan"
        refused = httpx.post(url, json={}, headers={"Authorization": f"Bearer {agent}"}, timeout=30)
        assert refused.status_code == 403
        found = httpx.post(url, json={"agent": "dev"}, headers={"Authorization": f"Bearer {admin}"}, timeout=30)
        assert found.status_code == 200 and found.json()["total"]["aws-access-key"] == 5
        bad = httpx.post(url, json={"redcat": True}, headers={"Authorization": f"Bearer {admin}"}, timeout=30)
        assert bad.status_code == 422
        from cortex.api.client import RemoteCortex

        with RemoteCortex(server.url, token=admin) as remote:
            assert remote.scan_secrets("dev").total["github-token"] == 2
        # the CLI goes through the server that owns the store now
        redacted = cortex(project, "secrets", "scan", "--redact", "--format", "json", CORTEX_TOKEN=admin)
        assert redacted.returncode == 0, redacted.stderr
        assert json.loads(redacted.stdout)["redacted"] is True
    finally:
        server.stop()
    with Cortex.open(store, embeddings=None) as cx:
        cx.agents.register("dev")
        assert not any(s in dump(cx) for s in SECRETS)
        assert cx.get("dev", memory_id).version == 3


def test_the_mcp_tool_is_for_admins(tmp_path):
    with Cortex.open(tmp_path / "store", embeddings=None) as cx:
        plant(cx)

        async def main() -> None:
            async with Client(build_mcp(lambda: cx, lambda request: "dev")) as client:
                refused = await client.call_tool("scan_secrets", {})
                assert refused.is_error
            async with Client(build_mcp(lambda: cx, lambda request: ADMIN)) as client:
                done = await client.call_tool("scan_secrets", {"redact": True})
                assert not done.is_error and done.structured_content["total"]["github-token"] == 2

        asyncio.run(main())
        assert not any(s in dump(cx) for s in SECRETS)


@pytest.mark.server
def test_on_a_remote_oxigraph_store(request, tmp_path):
    from tests.conftest import remote_location

    location = remote_location(request, "oxigraph")
    with Cortex.open(location, state_dir=tmp_path / "state", embeddings=None) as cx:
        memory_id = plant(cx)
        assert cx.scan_secrets().total == {"github-token": 2, "aws-access-key": 5}
        assert cx.scan_secrets(redact=True).total == {"github-token": 2, "aws-access-key": 5}
        assert not any(s in dump(cx) for s in SECRETS)
        assert [v.version for v in cx.history("dev", memory_id)] == [1, 2, 3]
        assert cx.search("dev", "AKIAQ3N7W2XK9RLT5MPD", mode="bm25").hits == []
        assert cx.scan_secrets().total == {}
