"""PROV-O provenance: every write records its activity (surface, hook event, session, tool) with the memories it
creates, supersession records derivation, and the graph stays valid and lossless. The ``cx`` tests run on every
backend (the contract modules in conftest.py)."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from mcp import Client
from pyoxigraph import NamedNode

from cortex import Cortex, provenance
from cortex.errors import MemoryNotFoundError
from cortex.service.auth import ADMIN
from cortex.service.mcp import build_mcp
from cortex.transfer import InvalidDataError

from tests.service_helpers import env, make_project, run_cli, start_server

PROV = "http://www.w3.org/ns/prov#"


def activities(cx: Cortex, agent: str) -> int:
    rows = cx.sparql(f"SELECT (COUNT(?a) AS ?n) WHERE {{ GRAPH <urn:cortex:graph:prov:agent:{agent}> {{ "
                     f"?a a <{PROV}Activity> }} }}")
    return int(rows.rows[0]["n"].value)


def test_a_store_records_who_wrote_it_and_the_activity_that_generated_it(cx, clock):
    memory = cx.store("reviewer", "guard clauses first")
    p = cx.provenance("reviewer", memory.id)
    assert p.memory_id == memory.id and p.scope == "agent" and p.attributed_to == "reviewer"
    assert p.generated_by is not None and p.generated_by.surface == "python"
    assert p.generated_by.started_at == clock.now and p.generated_by.associated_with == "reviewer"
    assert p.generated_by.activity.startswith("urn:cortex:activity:agent:reviewer:")
    assert (p.derived_from, p.superseded_by, p.versions) == ([], None, [])
    # the memory keeps its own triples: the activity points at it (prov:generated)
    rows = cx.sparql(f"SELECT ?a ?m WHERE {{ GRAPH ?g {{ ?a <{PROV}generated> ?m }} }}",
                     {"m": NamedNode(f"urn:cortex:agent:reviewer:memory:{memory.id}")})
    assert [r["a"].value for r in rows] == [p.generated_by.activity]


def test_the_activity_says_surface_event_session_and_tool(cx):
    with provenance.activity(surface="hook", event="SubagentStop", session="s-42", tool="capture"):
        captured = cx.agent_end("reviewer", "LEARNED: retries stay at 3")
    generated = cx.provenance("reviewer", captured[0].id).generated_by
    assert generated is not None
    assert (generated.surface, generated.event, generated.session, generated.tool) == \
        ("hook", "SubagentStop", "s-42", "capture")
    with provenance.activity(surface="cli", session="bad\nsession"):  # not short printable text: dropped
        assert provenance.current().session is None


def test_a_batch_is_one_activity_and_forgetting_its_last_memory_removes_it(cx):
    a, b = cx.store_many("reviewer", [{"content": "one"}, {"content": "two"}])
    shared = cx.provenance("reviewer", a.id).generated_by
    assert shared is not None and cx.provenance("reviewer", b.id).generated_by == shared
    assert activities(cx, "reviewer") == 1
    cx.forget("reviewer", a.id)
    assert cx.provenance("reviewer", b.id).generated_by == shared and activities(cx, "reviewer") == 1
    rows = cx.sparql(f"SELECT ?m WHERE {{ GRAPH ?g {{ ?a <{PROV}generated> ?m }} }}")
    assert [r["m"].value.rsplit(":", 1)[-1] for r in rows] == [b.id]  # no link to the forgotten one
    cx.forget("reviewer", b.id)
    assert activities(cx, "reviewer") == 0


def test_supersession_records_derivation_and_updates_keep_the_activity(cx):
    old = cx.store("reviewer", "deploys go out on fridays")
    first = cx.provenance("reviewer", old.id).generated_by
    cx.update("reviewer", old.id, content="deploys go out on thursdays")
    after = cx.provenance("reviewer", old.id)
    assert after.generated_by == first and after.versions == [1]
    new = cx.supersede("reviewer", old.id, "deploys go out on mondays", reason="new policy")
    assert cx.provenance("reviewer", new.id).derived_from == [old.id]
    assert cx.provenance("reviewer", old.id).superseded_by == new.id
    other = cx.store("reviewer", "tuesday freeze")
    cx.supersede("reviewer", new.id, by=other.id)
    assert cx.provenance("reviewer", other.id).derived_from == [new.id]
    assert cx.validate_store() == []


def test_provenance_of_an_unknown_memory_is_not_found(cx):
    with pytest.raises(MemoryNotFoundError):
        cx.provenance("reviewer", "nope")


def test_provenance_survives_export_and_import(cx):
    memory = cx.store("reviewer", "fixtures live in conftest.py")
    with provenance.activity(surface="mcp", tool="add_memory", session="s1"):
        second = cx.store("reviewer", "pin the linter version")
    out = io.BytesIO()
    cx.export(out, all=True, format="trig")
    with Cortex.open(None, embeddings=None) as target:
        target.agents.register("reviewer")
        target.import_rdf(out.getvalue(), format="trig")
        assert target.provenance("reviewer", memory.id) == cx.provenance("reviewer", memory.id)
        generated = target.provenance("reviewer", second.id).generated_by
        assert generated is not None and (generated.surface, generated.tool, generated.session) == \
            ("mcp", "add_memory", "s1")


def test_an_import_with_a_broken_activity_names_it_and_imports_nothing(cx):
    cx.store("reviewer", "an activity without its surface")
    out = io.BytesIO()
    cx.export(out, agent="reviewer", format="nquads")
    broken = b"\n".join(line for line in out.getvalue().splitlines() if b"agentmem:surface" not in line) + b"\n"
    with Cortex.open(None, embeddings=None) as target:
        target.agents.register("reviewer")
        with pytest.raises(InvalidDataError) as info:
            target.import_rdf(broken, format="nquads")
        assert any(v.focus.startswith("urn:cortex:activity:agent:reviewer:") and "surface" in v.path
                   for v in info.value.violations)
        assert target.count("reviewer") == 0


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "project", "reviewer")


def test_each_surface_records_itself(project):
    """CLI, HTTP (with a client's session header), MCP through the server, and a hook, on one store."""
    ran = run_cli(project, "store", "reviewer", "from the command line")
    assert ran.returncode == 0, ran.stderr
    cli_id = json.loads(ran.stdout)["id"]
    server = start_server(project)
    try:
        headers = {"Authorization": f"Bearer {server.token}", "Cortex-Session": "sess-7"}
        stored = httpx.post(f"{server.url}/v1/agents/reviewer/memories", json={"content": "over http"},
                            headers=headers)
        http_id = stored.json()["id"]

        async def through_mcp() -> str:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            transport = streamable_http_client(f"{server.url}/mcp", http_client=httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {server.token}"}))
            async with Client(transport) as client:
                added = await client.call_tool("add_memory", {"agent": "reviewer", "content": "over mcp"})
                return str(added.structured_content["memory"]["id"])

        mcp_id = asyncio.run(through_mcp())
        payload = {"session_id": "hook-session", "cwd": str(project), "hook_event_name": "SubagentStop",
                   "agent_type": "reviewer", "last_assistant_message": "LEARNED: from a hook"}
        subprocess.run([sys.executable, "-m", "cortex", "hook", "claude", "SubagentStop"], input=json.dumps(payload),
                       cwd=project, capture_output=True, text=True, env=env(), timeout=120, check=True)
        found = httpx.get(f"{server.url}/v1/agents/reviewer/memories", params={"query": "hook"},
                          headers=headers).json()
        hook_id = found[0]["id"]

        def generated(memory_id: str) -> dict:
            answer = httpx.get(f"{server.url}/v1/agents/reviewer/memories/{memory_id}/provenance", headers=headers)
            assert answer.status_code == 200, answer.text
            return answer.json()["generated_by"]

        assert (generated(cli_id)["surface"], generated(cli_id)["tool"]) == ("cli", "store")
        assert (generated(http_id)["surface"], generated(http_id)["session"]) == ("http", "sess-7")
        assert (generated(mcp_id)["surface"], generated(mcp_id)["tool"]) == ("mcp", "add_memory")
        assert (generated(hook_id)["surface"], generated(hook_id)["event"], generated(hook_id)["session"]) == \
            ("hook", "SubagentStop", "hook-session")
        shown = run_cli(project, "provenance", "reviewer", cli_id)
        assert shown.returncode == 0 and json.loads(shown.stdout)["generated_by"]["surface"] == "cli"
    finally:
        server.stop()


def test_the_mcp_tool_answers_provenance(store_path, clock):
    with Cortex.open(store_path, clock=clock, embeddings=None) as local:
        local.agents.register("alice")
        memory = local.store("alice", "kept")

        async def main() -> dict:
            async with Client(build_mcp(lambda: local, lambda request: ADMIN)) as client:
                answer = await client.call_tool("memory_provenance", {"agent": "alice", "memory_id": memory.id})
                assert not answer.is_error, answer.content
                return dict(answer.structured_content)

        shown = asyncio.run(main())
        assert shown["memory_id"] == memory.id and shown["generated_by"]["surface"] == "python"


# -- issue 18, finding 9: every change is an activity, and every term is declared ----------------------------


def test_update_validate_and_supersede_record_who_changed_the_memory(cx, clock):
    from cortex.agents import AgentSettings

    cx.agents.register("api", settings=AgentSettings(teams=("backend",)))
    cx.agents.register("lead", settings=AgentSettings(teams=("backend",), lead=True))
    shared = cx.store("api", "migrations run before deploy", scope="team:backend")
    created = cx.provenance("api", shared.id).generated_by
    clock.advance(minutes=1)
    with provenance.activity(surface="mcp", tool="update_memory"):
        cx.update("lead", shared.id, content="migrations run before the deploy job")  # a lead edits it
    clock.advance(minutes=1)
    cx.validate("api", shared.id)
    clock.advance(minutes=1)
    new = cx.supersede("lead", shared.id, "migrations run in the deploy job")
    p = cx.provenance("api", shared.id)
    assert p.generated_by == created  # creation stays what it was
    assert [(c.action, c.associated_with) for c in p.changes] == [("update", "lead"), ("validate", "api"),
                                                                  ("supersede", "lead")]
    assert p.changes[0].surface == "mcp" and p.changes[0].tool == "update_memory"
    assert [c.started_at for c in p.changes] == sorted(c.started_at for c in p.changes)
    assert p.changes[0].started_at is not None
    assert cx.provenance("lead", new.id).changes == []
    assert cx.validate_store() == []
    # and a forget takes its changes with it
    cx.forget("lead", new.id)
    cx.forget("api", shared.id)
    graph = "<urn:cortex:graph:prov:team:backend>"
    left = cx.sparql(f"SELECT ?a WHERE {{ GRAPH {graph} {{ ?a <{PROV}generated> ?m }} }}")
    assert len(left) == 0


def test_every_term_an_export_holds_is_declared_in_the_ontology(cx):
    import pyoxigraph as ox

    from cortex.shapes import ONTOLOGY

    m = cx.store("reviewer", "a", tags=["x"], metadata={"k": 1}, ttl="7d")
    cx.update("reviewer", m.id, content="b")
    cx.validate("reviewer", m.id)
    cx.touch("reviewer", m.id)
    cx.supersede("reviewer", m.id, "c", reason="because")
    out = io.BytesIO()
    cx.export(out, all=True, format="nquads")
    used = {q.predicate.value for q in ox.parse(out.getvalue(), ox.RdfFormat.N_QUADS)}
    used |= {q.object.value for q in ox.parse(out.getvalue(), ox.RdfFormat.N_QUADS)
             if q.predicate.value == "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"}
    ontology = ox.Store()
    ontology.load(ONTOLOGY.read_bytes(), ox.RdfFormat.TURTLE)
    declared = {q.subject.value for q in ontology}
    builtin = {"http://www.w3.org/1999/02/22-rdf-syntax-ns#type", "http://www.w3.org/ns/prov#Activity",
               "http://www.w3.org/ns/prov#wasDerivedFrom"}
    assert used - declared - builtin == set()
    assert {"http://purl.org/dc/terms/isReplacedBy", "http://www.w3.org/ns/prov#generated",
            "http://www.w3.org/ns/prov#invalidatedAtTime", "http://www.w3.org/ns/prov#wasRevisionOf"} <= declared


def test_the_json_ld_export_has_its_context_and_imports(cx):
    m = cx.store("reviewer", "jsonld", tags=["t"])
    out = io.BytesIO()
    cx.export(out, all=True, format="jsonld")
    document = json.loads(out.getvalue())
    assert document["@context"]["am"] == "urn:cortex:agentmem:" and "prov" in document["@context"]
    cx.forget("reviewer", m.id)
    assert cx.import_rdf(out.getvalue(), format="jsonld") == {"agent:reviewer": 1}
    assert cx.get("reviewer", m.id).tags == ("t",)
