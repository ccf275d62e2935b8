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


# -- finding 4: a broken definition is named with its problem ----------------------------------------------------

import asyncio  # noqa: E402
import json  # noqa: E402

import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from cortex import BrokenAgentError, Cortex  # noqa: E402

YAML_BROKEN = "---\nname: yamlbad\ndescription: [unclosed\nmemory: true\n---\n"
NO_NAME = "---\ndescription: An agent without a name\nmemory: true\n---\n"
NO_DESCRIPTION = "---\nname: nodesc\nmemory: true\n---\n"


def _broken_project(root: Path) -> Path:
    project = make_project(root, "reviewer")
    (project / "agent_defs" / "yamlbad.md").write_text(YAML_BROKEN)
    (project / "agent_defs" / "noname.md").write_text(NO_NAME)
    (project / "agent_defs" / "nodesc.md").write_text(NO_DESCRIPTION)
    return project


def test_python_names_the_broken_file_and_its_problem(tmp_path: Path) -> None:
    project = _broken_project(tmp_path / "p")
    with Cortex.open(None, agent_dirs=[project / "agent_defs"], embeddings=None) as cx:
        cx.store("reviewer", "works")  # a broken file never stops the others
        with pytest.raises(BrokenAgentError) as nodesc:
            cx.store("nodesc", "x")
        assert "nodesc.md: description: missing" in str(nodesc.value)
        assert "not declared" not in str(nodesc.value)
        with pytest.raises(BrokenAgentError) as yamlbad:
            cx.store("yamlbad", "x")
        assert "yamlbad.md: frontmatter: YAML error at line" in str(yamlbad.value)
        with pytest.raises(BrokenAgentError) as noname:
            cx.store("noname", "x")
        assert "noname.md: name: missing" in str(noname.value)
        assert noname.value.agent == "noname" and noname.value.problems
        # the hooks' lookup names it too (a SubagentStop for it is spooled, not dropped)
        with pytest.raises(BrokenAgentError):
            cx.resolve_agent("nodesc")


def test_every_surface_names_the_broken_file_through_a_server(tmp_path: Path) -> None:
    project = _broken_project(tmp_path / "p")
    server = start_server(project, CORTEX_EMBEDDINGS="none")
    try:
        # broken after the server started, too
        (project / "agent_defs" / "late.md").write_text("---\nname: late\n---\n")
        for agent, expected in (("nodesc", "nodesc.md: description: missing"),
                                ("late", "late.md: description: missing"),
                                ("yamlbad", "yamlbad.md: frontmatter: YAML error at line")):
            answer = _store_over_http(server.url, server.token, agent)
            assert answer.status_code == 409, answer.text
            error = answer.json()["error"]
            assert error["type"] == "BrokenAgentError" and expected in error["message"], error

        ran = cortex(project, "store", "noname", "x", CORTEX_EMBEDDINGS="none")
        assert ran.returncode == 1 and "noname.md: name: missing" in ran.stderr, ran.stderr
        assert "not declared (searched" not in ran.stderr

        listed = cortex(project, "agents", "list", CORTEX_EMBEDDINGS="none")
        entries = {Path(e["path"]).name: e for e in json.loads(listed.stdout)}
        assert entries["nodesc.md"]["problems"] == ["description: missing (required)"]
        assert entries["reviewer.md"]["problems"] == []
        assert any("YAML error" in p for p in entries["yamlbad.md"]["problems"])

        async def mcp() -> str:
            headers = {"Authorization": f"Bearer {server.token}"}
            async with Client(streamable_http_client(f"{server.url}/mcp",
                                                     http_client=httpx2.AsyncClient(headers=headers))) as client:
                result = await client.call_tool("add_memory", {"agent": "nodesc", "content": "x"})
                assert result.is_error
                listed = (await client.call_tool("list_agents", {})).structured_content["agents"]
                assert {a["name"]: a["problems"] for a in listed} == over_http
                return str(result.content[0].text)

        # the agent lists name the broken files too, with their problems (a sound agent: none)
        answer = httpx.get(f"{server.url}/v1/agents", headers={"Authorization": f"Bearer {server.token}"})
        over_http = {a["name"]: a["problems"] for a in answer.json()}
        assert over_http["reviewer"] == [] and over_http["nodesc"] == ["nodesc.md: description: missing (required)"]
        assert over_http["late"] == ["late.md: description: missing (required)"]
        assert any("YAML error" in p for p in over_http["yamlbad"]) and over_http["noname"][0].startswith("noname.md: name")
        assert "nodesc.md: description: missing" in asyncio.run(mcp())
    finally:
        server.stop()


# -- finding 5: nothing deleted silently -------------------------------------------------------------------------

import warnings  # noqa: E402

from cortex.notices import CortexWarning  # noqa: E402

PRUNED = "will be deleted by the prune at the next agent_end"


def _prune_records(cx: Cortex, agent: str) -> list[dict[str, str]]:
    result = cx.sparql(
        "PREFIX prov: <http://www.w3.org/ns/prov#> SELECT ?m ?rule ?at ?who WHERE { GRAPH ?g { "
        "?a <urn:cortex:agentmem:action> \"prune\" ; prov:invalidated ?m ; <urn:cortex:agentmem:rule> ?rule ; "
        "prov:startedAtTime ?at ; prov:wasAssociatedWith ?who } }")
    return [{k: v.value for k, v in row.items()} for row in result.rows]


def test_python_warns_about_a_write_the_prune_will_delete_and_records_each_deletion(tmp_path: Path) -> None:
    with Cortex.open(tmp_path / "store", embeddings=None) as cx:
        cx.agents.register("a")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            kept = cx.store("a", "sure enough", confidence=0.5)  # no warning above the threshold
        with pytest.warns(CortexWarning, match=PRUNED):
            low = cx.store("a", "a guess", confidence=0.2)
        with pytest.warns(CortexWarning, match=PRUNED):
            cx.update("a", kept.id, confidence=0.1)
        with pytest.warns(CortexWarning, match="agent_end of agent 'a' pruned 2 memories"):
            captured = cx.agent_end("a", "LEARNED: the build needs make")
        assert [m.content for m in captured] == ["the build needs make"]
        assert sorted(p.id for p in captured.pruned) == sorted([low.id, kept.id])
        assert {p.content for p in captured.pruned} == {"a guess", "sure enough"}
        assert all("min_confidence 0.3" in p.rule for p in captured.pruned)
        records = _prune_records(cx, "a")
        assert sorted(r["m"].rsplit(":", 1)[1] for r in records) == sorted([low.id, kept.id])
        assert all(r["rule"] == "confidence < 0.3" and r["who"] == "urn:cortex:agent:a" for r in records)


def test_every_surface_warns_and_reports_the_prune_through_a_server(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", "reviewer")
    server = start_server(project, CORTEX_EMBEDDINGS="none")
    headers = {"Authorization": f"Bearer {server.token}"}
    try:
        answer = _store_over_http(server.url, server.token, "reviewer", confidence=0.2)
        assert answer.status_code == 201
        assert PRUNED in answer.json()["warnings"][0]
        assert PRUNED in answer.headers["Cortex-Warnings"]
        assert _store_over_http(server.url, server.token, "reviewer", content="fine").json()["warnings"] == []

        ran = cortex(project, "store", "reviewer", "from the CLI", "--confidence", "0.1", CORTEX_EMBEDDINGS="none")
        assert ran.returncode == 0 and PRUNED in ran.stderr, ran.stderr

        async def mcp() -> tuple[dict, dict]:
            async with Client(streamable_http_client(f"{server.url}/mcp",
                                                     http_client=httpx2.AsyncClient(headers=headers))) as client:
                added = await client.call_tool("add_memory", {"agent": "reviewer", "content": "from MCP",
                                                              "confidence": 0.25})
                ended = await client.call_tool("agent_end", {"agent": "reviewer", "output": "LEARNED: another fact"})
                return added.structured_content, ended.structured_content

        added, ended = asyncio.run(mcp())
        assert PRUNED in added["warnings"][0]
        assert "pruned 3 memories" in ended["warnings"][0], ended

        _store_over_http(server.url, server.token, "reviewer", content="again", confidence=0.2)
        end = httpx.post(f"{server.url}/v1/agents/reviewer/end", json={"output": "LEARNED: more"}, headers=headers,
                         timeout=30)
        assert "pruned 1 memory" in end.headers["Cortex-Warnings"]

        cortex(project, "store", "reviewer", "last", "--confidence", "0.1", CORTEX_EMBEDDINGS="none")
        ran = cortex(project, "end", "reviewer", stdin="LEARNED: the end\n", CORTEX_EMBEDDINGS="none")
        assert ran.returncode == 0 and "pruned 1 memory" in ran.stderr, ran.stderr

        from cortex.client import RemoteCortex

        client = RemoteCortex(server.url, server.token)
        try:
            with pytest.warns(CortexWarning, match=PRUNED):
                weak = client.store("reviewer", "through the client", confidence=0.05)
            with pytest.warns(CortexWarning, match="pruned 1 memory"):
                captured = client.agent_end("reviewer", "LEARNED: client end")
            assert [m.content for m in captured] == ["client end"]
            assert [(p.id, p.content) for p in captured.pruned] == [(weak.id, "through the client")]
        finally:
            client.close()
    finally:
        server.stop()


# -- hooks: what the prune deleted and a broken definition go to the hook log ------------------------------------

import subprocess  # noqa: E402
import sys  # noqa: E402

from tests.service_helpers import env  # noqa: E402


def _hook(project: Path, event: str, payload: dict) -> subprocess.CompletedProcess:
    payload = {"session_id": "s1", "transcript_path": "", "cwd": str(project), "hook_event_name": event, **payload}
    return subprocess.run([sys.executable, "-m", "cortex", "hook", "claude", event], input=json.dumps(payload),
                          cwd=project, capture_output=True, text=True, timeout=120,
                          env=env(CLAUDE_CONFIG_DIR=str(project.parent), CORTEX_EMBEDDINGS="none"))


def _hook_log(project: Path) -> str:
    path = project / ".cortex" / "logs" / "hooks.log"
    return path.read_text() if path.exists() else ""


@pytest.mark.parametrize("through_server", [False, True])
def test_a_subagent_stop_logs_what_the_prune_deleted(tmp_path: Path, through_server: bool) -> None:
    project = make_project(tmp_path / "p", "reviewer")
    with Cortex.open(project / ".cortex" / "store", embeddings=None) as cx:
        cx.agents.register("reviewer")
        with pytest.warns(CortexWarning):
            weak = cx.store("reviewer", "a weak guess", confidence=0.1)
    server = start_server(project, CORTEX_EMBEDDINGS="none") if through_server else None
    try:
        ran = _hook(project, "SubagentStop", {"agent_type": "reviewer", "last_assistant_message": "LEARNED: x"})
        assert ran.returncode == 0 and "Warning" not in ran.stderr, ran.stderr
        assert f"SubagentStop: agent_end of agent 'reviewer' pruned 1 memory" in _hook_log(project)
        assert weak.id in _hook_log(project)
    finally:
        if server is not None:
            server.stop()


def test_a_capture_for_a_broken_definition_is_logged_with_its_problem_and_kept(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", "reviewer")
    broken = project / "agent_defs" / "nodesc.md"
    broken.write_text(NO_DESCRIPTION)
    server = start_server(project, CORTEX_EMBEDDINGS="none")
    try:
        _hook(project, "SubagentStop", {"agent_type": "nodesc", "last_assistant_message": "LEARNED: keep me"})
        log = _hook_log(project)
        assert "nodesc.md: description: missing" in log and "spooled" in log, log
        broken.write_text(AGENT.format(name="nodesc"))
        _hook(project, "SubagentStop", {"agent_type": "reviewer", "last_assistant_message": "LEARNED: later"})
        contents = [m["content"] for m in httpx.get(f"{server.url}/v1/agents/nodesc/memories", timeout=30,
                                                    headers={"Authorization": f"Bearer {server.token}"}).json()]
        assert contents == ["keep me"], _hook_log(project)
    finally:
        server.stop()
