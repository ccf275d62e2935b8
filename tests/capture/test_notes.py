"""Markdown notes as a source (issue 21, item 1): chunks by heading, identity by file and heading path, sync
(unchanged keeps its memory, changed supersedes, removed leaves recall), bad files named and the rest indexed,
links out of a notes directory refused, promotion to a team, every surface, and the owning server's watcher."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import httpx
import pytest

from cortex import Cortex
from cortex.capture.notes import MAX_CHUNK_CHARS, chunks
from cortex.errors import InvalidInputError

from tests.service_helpers import cortex, make_project, start_server

MEMORY = """# Project memory

The monorepo uses pnpm workspaces.

## Deploy

Use make deploy-staging for staging.

## Testing

Run pytest -n 2; the test database listens on port 5433.

```bash
# not a heading: inside a fence
make test
```
"""


def test_chunks_follow_headings_not_fenced_code():
    found = chunks(MEMORY)
    assert [c.key for c in found] == ["Project memory", "Project memory > Deploy", "Project memory > Testing"]
    assert found[2].text.startswith("Project memory > Testing\nRun pytest") and "make test" in found[2].text
    assert (found[1].first_line, found[1].last_line) == (7, 7)


def test_repeated_headings_and_long_sections_get_their_own_keys():
    long = "\n\n".join(f"Paragraph {i}: " + "word " * 100 for i in range(12))
    found = chunks(f"## Notes\nfirst\n## Notes\nsecond\n## Log\n{long}\n")
    keys = [c.key for c in found]
    assert keys[:2] == ["Notes", "Notes (2)"]
    assert keys[2] == "Log" and keys[3] == "Log ¶2" and all(len(c.text) <= MAX_CHUNK_CHARS + 20 for c in found[2:])


@pytest.fixture
def project(tmp_path):
    project = make_project(tmp_path / "proj", "dev")
    (project / ".cortex" / "notes" / "dev").mkdir(parents=True)
    return project


@pytest.fixture
def cx(project):
    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None) as cx:
        yield cx


def notes(project: Path, name: str = "MEMORY.md") -> Path:
    return project / ".cortex" / "notes" / "dev" / name


def contents(cx: Cortex) -> list[str]:
    return sorted(m.content for m in cx.recall("dev", limit=100))


def test_sync_keeps_supersedes_and_retires(project, cx):
    notes(project).write_text(MEMORY)
    (notes(project, "2026-11-24.md")).write_text("Fixed the flaky upload test by pinning boto3.\n")
    first = cx.sync_notes("dev")[0]
    assert first.files == 2 and len(first.added) == 4 and first.changed_files
    deploy = next(m for m in cx.recall("dev", "deploy-staging"))
    assert deploy.source.value == "file_index" and deploy.expires_at is None
    assert deploy.metadata["file"] == "dev/MEMORY.md" and deploy.metadata["lines"] == [7, 7]
    cx.touch("dev", deploy.id)
    cx.validate("dev", deploy.id)
    again = cx.sync_notes("dev")[0]
    assert (again.added, again.updated, again.removed, again.unchanged) == ([], [], [], 4)
    kept = cx.get("dev", deploy.id)
    assert kept.usage_count == 1 and kept.validated_at is not None  # unchanged: the same memory
    notes(project).write_text(MEMORY.replace("deploy-staging for staging", "deploy-stage for staging")
                              .replace("## Testing", "## Gone").split("## Gone")[0])
    changed = cx.sync_notes("dev")[0]
    assert len(changed.updated) == 1 and len(changed.removed) == 1 and changed.unchanged == 2
    assert any("deploy-stage for staging" in c for c in contents(cx))
    assert not any("port 5433" in c for c in contents(cx))
    assert [v.content for v in cx.history("dev", deploy.id)][-1].endswith("deploy-staging for staging.")
    assert cx.get("dev", deploy.id).superseded_by == changed.updated[0]
    notes(project, "2026-11-24.md").unlink()
    gone = cx.sync_notes("dev")[0]
    assert len(gone.removed) == 1 and not any("boto3" in c for c in contents(cx))
    assert any("boto3" in m.content for m in cx.list_memories("dev", include_superseded=True).items)


def test_bad_files_are_named_and_the_rest_indexed(project, cx):
    notes(project).write_text("## Keep\nthe good file\n")
    notes(project, "binary.md").write_bytes(b"\x89PNG\x00\x00 not text")
    notes(project, "latin.md").write_bytes("caf\xe9".encode("latin-1"))
    with open(notes(project, "huge.md"), "wb") as fh:
        fh.write(b"# big\n" + b"x" * (50 * 1024 * 1024))
    outside = project.parent / "secret.md"
    outside.write_text("## Secret\nnot for memory\n")
    notes(project, "link.md").symlink_to(outside)
    report = cx.sync_notes("dev")[0]
    assert contents(cx) == ["Keep\nthe good file"]
    reasons = "\n".join(report.skipped)
    assert "binary" in reasons and "UTF-8" in reasons and "larger than" in reasons and "link out" in reasons
    with pytest.raises(InvalidInputError, match="not inside a notes directory"):
        cx.sync_notes("dev", file=outside)
    with pytest.raises(InvalidInputError, match="not inside a notes directory"):
        cx.sync_notes("dev", file=notes(project, "link.md"))


def test_a_directory_named_in_the_definition_and_one_file(project):
    (project / "agent_defs" / "dev.md").write_text(
        "---\nname: dev\ndescription: a developer\nmemory: true\ncortex:\n  notes: [docs/notes]\n---\nDev.\n")
    (project / "docs" / "notes").mkdir(parents=True)
    extra = project / "docs" / "notes" / "USER.md"
    extra.write_text("## Preferences\nThe user prefers short answers.\n")
    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None) as cx:
        only = cx.sync_notes(file=extra)
        assert [r.agent for r in only] == ["dev"] and len(only[0].added) == 1
        assert "short answers" in cx.agent_start("dev", "how should answers look")


def test_promote_moves_a_file_to_the_team(project):
    (project / "agent_defs" / "dev.md").write_text(
        "---\nname: dev\ndescription: a developer\nmemory: true\ncortex:\n  teams: [core]\n---\nDev.\n")
    (project / "agent_defs" / "ops.md").write_text(
        "---\nname: ops\ndescription: operations\nmemory: true\ncortex:\n  teams: [core]\n---\nOps.\n")
    notes(project).write_text(MEMORY)
    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None) as cx:
        cx.sync_notes("dev")
        report = cx.promote_notes("dev", notes(project), team="core")
        assert len(report.added) == 3 and len(report.removed) == 3
        assert {m.scope for m in cx.recall("dev", limit=100)} == {"team:core"}
        assert any("deploy-staging" in m.content for m in cx.recall("ops", "deploy-staging"))
        notes(project).write_text(MEMORY.replace("deploy-staging", "deploy-stage"))
        assert len(cx.sync_notes("dev")[0].updated) == 1  # later syncs update the team's copy
        assert any("deploy-stage for" in m.content for m in cx.recall("ops", "deploy-stage"))
        with pytest.raises(Exception, match="team"):
            cx.promote_notes("dev", notes(project), team="other")


def test_notes_on_the_cli_http_and_the_watcher(project):
    notes(project).write_text("## Deploy\nUse make deploy-staging.\n")
    synced = cortex(project, "notes", "sync", "dev", CORTEX_EMBEDDINGS="none")
    assert synced.returncode == 0, synced.stderr
    assert len(json.loads(synced.stdout)[0]["added"]) == 1
    server = start_server(project, CORTEX_EMBEDDINGS="none")
    try:
        headers = {"Authorization": f"Bearer {server.token}"}
        answer = httpx.post(f"{server.url}/v1/notes/sync", json={"agent": "dev"}, headers=headers)
        assert answer.status_code == 200 and answer.json()[0]["unchanged"] == 1

        def recalled(word: str) -> list[str]:
            hits = httpx.get(f"{server.url}/v1/agents/dev/memories", params={"query": word}, headers=headers)
            return [m["content"] for m in hits.json()]

        def wait_for(check, timeout: float = 15.0) -> float:
            began = time.monotonic()
            while time.monotonic() - began < timeout:
                if check():
                    return time.monotonic() - began
                time.sleep(0.05)
            raise AssertionError("the watcher did not sync in time")

        daily = notes(project, "2026-11-24.md")
        daily.write_text("Learned: the CI cache key includes the lockfile hash.\n")
        assert wait_for(lambda: recalled("lockfile")) < 10
        daily.write_text("Learned: the CI cache key includes the node version.\n")
        wait_for(lambda: recalled("node") and not recalled("lockfile"))
        daily.unlink()
        wait_for(lambda: not recalled("node"))
    finally:
        server.stop()
    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None) as cx:
        history = [m.content for m in cx.list_memories("dev", include_superseded=True).items]
        assert any("lockfile" in c for c in history) and any("node version" in c for c in history)


def test_mcp_sync_notes(project):
    import asyncio
    import sys

    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from tests.service_helpers import env

    notes(project).write_text("## Deploy\nUse make deploy-staging.\n")

    async def run() -> list:
        params = StdioServerParameters(command=sys.executable, args=["-m", "cortex", "mcp"], cwd=str(project),
                                       env=env(CORTEX_EMBEDDINGS="none"))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("sync_notes", {"agent": "dev"})
            assert not result.is_error, result.content
            return (result.structured_content or {})["result"]

    reports = asyncio.run(run())
    # the background server `cortex mcp` asks may have synced at its start (its watcher): indexed either way
    assert reports[0]["agent"] == "dev" and len(reports[0]["added"]) + reports[0]["unchanged"] == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every directory")
def test_an_unreadable_directory_is_named(project, cx):
    notes(project).write_text("## A\nb\n")
    cx.sync_notes("dev")
    directory = notes(project).parent
    directory.chmod(0)
    try:
        report = cx.sync_notes("dev")[0]
        assert "cannot be read" in "\n".join(report.skipped) and contents(cx) == ["A\nb"]  # memories kept
    finally:
        directory.chmod(0o755)


def test_export_then_edit_then_sync_updates_the_memories(project, cx):
    pnpm = cx.store("dev", "Use pnpm, not npm", type="convention")
    friday = cx.store("dev", "Never deploy on Fridays", type="decision")
    directory = notes(project).parent
    written = cx.export_notes("dev", directory)
    assert sorted(Path(p).name for p in written) == ["conventions.md", "decisions.md"]
    first = cx.sync_notes("dev")[0]
    assert (first.added, first.updated, first.unchanged) == ([], [], 2)  # a view of the memories, not new ones
    text = (directory / "conventions.md").read_text().replace("Use pnpm, not npm", "Use pnpm 9, not npm or yarn")
    (directory / "conventions.md").write_text(text + "\n## Hand written\n\nA note typed by a person.\n")
    edited = cx.sync_notes("dev")[0]
    assert edited.updated == [pnpm.id] and len(edited.added) == 1
    assert cx.get("dev", pnpm.id).content == "Use pnpm 9, not npm or yarn" and cx.get("dev", pnpm.id).version == 2
    assert cx.get("dev", friday.id).version == 1
    (directory / "other.md").write_text("mine")
    with pytest.raises(InvalidInputError, match="not written by an export"):
        (directory / "insights.md").write_text("a person's file")
        cx.store("dev", "An insight", type="insight")
        cx.export_notes("dev", directory)


@pytest.mark.parametrize("served", [False, True], ids=["no-server", "server"])
def test_a_post_tool_use_write_of_a_notes_file_syncs_it(project, served):
    import subprocess
    import sys

    from tests.service_helpers import env

    path = notes(project)
    path.write_text("## Deploy\nUse make deploy-staging.\n")
    other = project / "README.md"
    other.write_text("## Not notes\nleft alone\n")
    server = start_server(project, CORTEX_EMBEDDINGS="none") if served else None
    try:
        for written in (path, other):
            payload = {"session_id": "s1", "cwd": str(project), "hook_event_name": "PostToolUse",
                       "tool_name": "Write", "tool_input": {"file_path": str(written), "content": "..."},
                       "tool_response": {"filePath": str(written), "success": True}}
            done = subprocess.run([sys.executable, "-m", "cortex", "hook", "claude", "PostToolUse"],
                                  input=json.dumps(payload), capture_output=True, text=True, cwd="/",
                                  env=env(CORTEX_EMBEDDINGS="none"), timeout=120)
            assert done.returncode == 0 and done.stdout == "", done.stderr
    finally:
        if server is not None:
            server.stop()
    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None) as cx:
        assert contents(cx) == ["Deploy\nUse make deploy-staging."]
