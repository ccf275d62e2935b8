"""Consolidation on every surface (docs/consolidation.md): the CLI (`cortex consolidate`, `cortex review`, `cortex team
round-end`), the HTTP API over loopback with its token rules, the server's client, and the MCP tools through the real
MCP client; a real on-disk store and the chat-completions stand-in as the language model."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from mcp import Client

from cortex import Cortex
from cortex.agents import AgentSettings
from cortex.consolidation.settings import ConsolidationSettings
from cortex.errors import RunNotFoundError
from cortex.llm import LLMSettings
from cortex.service.auth import ADMIN, Principal, TokenStore
from cortex.service.mcp import build_mcp
from tests.llm_standin import StandIn
from tests.service_helpers import run_cli, start_server

DUP_A = "Run the tests with `uv run pytest -n 4` before pushing"
DUP_B = "Always run the tests with `uv run pytest -n 4` before pushing!"
OLD_RULE = "The API server listens on port 8080"
NEW_RULE = "The API server does not listen on port 8080"
UNKNOWN_RUN = "20200101T000000-abcdef"

DEFINITION = ("---\nname: {name}\ndescription: test agent {name}\nmemory: true\ncortex:\n  {cortex}\n---\n"
              "You are {name}.\n")
AGENTS = {"rev": "teams: [backend]", "coder": "teams: [backend]", "boss": "teams: [backend]\n  lead: true"}


@pytest.fixture
def llm():
    with StandIn() as standin:
        yield standin


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    (root / ".git").mkdir(parents=True)
    (root / "agent_defs").mkdir()
    for name, settings in AGENTS.items():
        (root / "agent_defs" / f"{name}.md").write_text(DEFINITION.format(name=name, cortex=settings))
    return root


def model_env(llm: StandIn) -> dict[str, str | None]:
    return {"CORTEX_LLM_URL": llm.url, "CORTEX_LLM_MODEL": "standin", "CORTEX_EMBEDDINGS": "none"}


def cli(project: Path, llm: StandIn, *args: str):
    return run_cli(project, *args, env=model_env(llm))


def current(project: Path, llm: StandIn, agent: str = "rev") -> dict[str, str]:
    """The agent's own current memories, id -> content."""
    listed = cli(project, llm, "list", agent, "--scope", "agent", "--limit", "1000")
    assert listed.returncode == 0, listed.stderr
    return {m["id"]: m["content"] for m in json.loads(listed.stdout)["items"]}


# -- the CLI ---------------------------------------------------------------------------------------------------

def test_cli_consolidate_merges_dry_runs_undoes_and_lists_runs(project, llm):
    for content in (DUP_A, DUP_B):
        assert cli(project, llm, "store", "rev", content).returncode == 0
    before = current(project, llm)
    assert sorted(before.values()) == sorted([DUP_A, DUP_B])

    dry = cli(project, llm, "consolidate", "rev", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    planned = json.loads(dry.stdout)
    assert planned["dry_run"] is True and planned["run"] is None and len(planned["merges"]) == 1
    assert "dry run: nothing written" in dry.stderr
    assert current(project, llm) == before
    assert json.loads(cli(project, llm, "consolidate", "--runs").stdout) == []

    ran = cli(project, llm, "consolidate", "rev")
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    run = report["run"]
    assert re.fullmatch(r"\d{8}T\d{6}-[0-9a-f]{6}", run) and f"run {run}" in ran.stderr
    [merge] = report["merges"]
    assert sorted([merge["survivor"], *merge["merged"]]) == sorted(before)
    assert list(current(project, llm)) == [merge["survivor"]]

    runs = cli(project, llm, "consolidate", "rev", "--runs")
    [info] = json.loads(runs.stdout)
    assert info["run"] == run and info["merged"] == 1 and info["undone_at"] is None
    table = cli(project, llm, "consolidate", "--runs", "--format", "table")
    assert run in table.stdout and "merged" in table.stdout.splitlines()[0]

    undone = cli(project, llm, "consolidate", "--undo", "last")
    assert undone.returncode == 0, undone.stderr
    assert json.loads(undone.stdout)["run"] == run and f"undid run {run}" in undone.stderr
    assert current(project, llm) == before
    assert json.loads(cli(project, llm, "consolidate", "rev", "--runs").stdout)[0]["undone_at"] is not None

    again = cli(project, llm, "consolidate", "--undo", run)
    assert again.returncode == 1 and again.stderr.startswith("cortex: error: run:")
    unknown = cli(project, llm, "consolidate", "rev", "--undo", UNKNOWN_RUN)
    assert unknown.returncode == 1 and UNKNOWN_RUN in unknown.stderr
    bad = cli(project, llm, "consolidate", "rev", "--undo", "yesterday")
    assert bad.returncode == 1 and "cortex: error: run:" in bad.stderr
    nothing = cli(project, llm, "consolidate")
    assert nothing.returncode == 1 and "name exactly one" in nothing.stderr
    assert cli(project, llm, "consolidate", "rev", "--force").returncode == 2


def test_cli_review_lists_an_open_contradiction(project, llm):
    for content in (OLD_RULE, NEW_RULE):
        assert cli(project, llm, "store", "rev", content).returncode == 0
    ran = cli(project, llm, "consolidate", "rev")
    assert ran.returncode == 0, ran.stderr
    assert len(json.loads(ran.stdout)["review"]) == 1 and "1 for review" in ran.stderr
    listed = cli(project, llm, "review", "rev")
    assert listed.returncode == 0, listed.stderr
    [item] = json.loads(listed.stdout)
    assert (item["keep_content"], item["supersede_content"]) == (NEW_RULE, OLD_RULE)
    assert "1 open contradiction" in listed.stderr
    table = cli(project, llm, "review", "rev", "--format", "table")
    assert item["supersede"] in table.stdout and item["keep"] in table.stdout
    assert cli(project, llm, "supersede", "rev", item["supersede"], "--by", item["keep"]).returncode == 0
    assert json.loads(cli(project, llm, "review", "rev").stdout) == []


def test_cli_review_dismisses_or_accepts_a_contradiction_in_a_run_of_its_own(project, llm):
    for content in (OLD_RULE, NEW_RULE):
        assert cli(project, llm, "store", "rev", content).returncode == 0
    assert cli(project, llm, "consolidate", "rev").returncode == 0
    [item] = json.loads(cli(project, llm, "review", "rev").stdout)
    keep, supersede = item["keep"], item["supersede"]

    both = cli(project, llm, "review", "rev", "--accept", keep, supersede, "--dismiss", keep, supersede)
    assert both.returncode == 2 and "not both" in both.stderr
    dismissed = cli(project, llm, "review", "rev", "--dismiss", keep, supersede)
    assert dismissed.returncode == 0, dismissed.stderr
    report = json.loads(dismissed.stdout)
    run = report["run"]
    assert run and [d["supersede"] for d in report["dismissed"]] == [supersede] and report["superseded"] == []
    assert f"run {run}" in dismissed.stderr and "dismissed" in dismissed.stderr
    assert f"cortex consolidate --undo {run}" in dismissed.stderr
    assert json.loads(cli(project, llm, "review", "rev").stdout) == []
    assert sorted(current(project, llm).values()) == sorted([OLD_RULE, NEW_RULE])
    again = cli(project, llm, "review", "rev", "--accept", keep, supersede)
    assert again.returncode == 1 and "no open contradiction" in again.stderr

    assert cli(project, llm, "consolidate", "--undo", run).returncode == 0  # back on the list
    assert [i["supersede"] for i in json.loads(cli(project, llm, "review", "rev").stdout)] == [supersede]
    accepted = cli(project, llm, "review", "rev", "--accept", keep, supersede, "--format", "table")
    assert accepted.returncode == 0, accepted.stderr
    assert "superseded" in accepted.stdout and supersede in accepted.stdout
    assert f"superseded {supersede} by {keep}" in accepted.stderr and "--undo" in accepted.stderr
    assert current(project, llm) == {keep: NEW_RULE}
    assert json.loads(cli(project, llm, "review", "rev").stdout) == []
    assert json.loads(cli(project, llm, "consolidate", "rev", "--runs").stdout)[0]["kind"] == "review"


def test_cli_team_round_end(project, llm):
    done = cli(project, llm, "task-done", "rev", "Choose the queue",
               "DECISION: the team uses Redis streams for the job queue")
    assert done.returncode == 0, done.stderr
    dry = cli(project, llm, "team", "round-end", "backend", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert len(json.loads(dry.stdout)["created"]) == 1 and "dry run: nothing written" in dry.stderr
    ran = cli(project, llm, "team", "round-end", "backend")
    report = json.loads(ran.stdout)
    assert report["run"] and report["actor"] == "boss" and report["scope"] == "team:backend"
    assert [m["content"] for m in report["created"]] == ["the team uses Redis streams for the job queue"]
    unknown = cli(project, llm, "team", "round-end", "nobody")
    assert unknown.returncode == 1 and "unknown team" in unknown.stderr


def test_cli_team_round_shows_what_each_member_learned_since_the_last_round_end(project, llm):
    from cortex import caller

    assert cli(project, llm, "task-done", "rev", "Choose the queue",
               "DECISION: the team uses Redis streams for the job queue").returncode == 0
    assert cli(project, llm, "store", "coder", "LESSON: the profiler needs --no-gc").returncode == 0
    shown = cli(project, llm, "team", "round", "backend")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["last_round_end"] is None and data["leads"] == ["boss"]
    learned = {m["agent"]: [x["content"] for x in m["memories"]] for m in data["members"]}
    assert learned["coder"] == ["LESSON: the profiler needs --no-gc"] and len(learned["rev"]) == 1
    assert learned["boss"] == []
    ran = json.loads(cli(project, llm, "team", "round-end", "backend").stdout)
    after = json.loads(cli(project, llm, "team", "round", "backend").stdout)
    assert after["last_round_end"]["run"] == ran["run"] and after["last_round_end"]["kind"] == "round-end"
    assert all(m["memories"] == [] for m in after["members"])
    # acting for an agent (its token): a lead sees every member, another member itself, an outsider nothing
    assert cli(project, llm, "store", "coder", "LESSON: coder learned more").returncode == 0
    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None,
                     client=False) as cx:
        with caller.acting("boss"):
            assert [m.agent for m in cx.team_round("backend").members] == ["boss", "coder", "rev"]
        with caller.acting("rev"):
            assert [m.agent for m in cx.team_round("backend").members] == ["rev"]
    table = cli(project, llm, "team", "round", "backend", "--format", "table")
    assert table.returncode == 0 and "coder learned more" in table.stdout
    unknown = cli(project, llm, "team", "round", "nobody")
    assert unknown.returncode == 1 and "unknown team" in unknown.stderr


# -- HTTP, and the server's client ------------------------------------------------------------------------------

def test_http_consolidation_routes_and_who_may_call_them(project, llm):
    tokens = TokenStore(project / ".cortex" / "store")
    rev, boss = tokens.create("rev"), tokens.create("boss")
    server = start_server(project, CORTEX_LLM_URL=llm.url, CORTEX_LLM_MODEL="standin", CORTEX_EMBEDDINGS="none")
    try:
        call = server.call

        for content in (DUP_A, DUP_B, OLD_RULE, NEW_RULE):
            assert call("POST", "/v1/agents/rev/memories", json={"content": content}).status_code == 201
        # an agent token: its own agent only (the default), never another's, a team's or the swarm's
        for body in ({"agent": "coder"}, {"team": "backend"}, {"swarm": True}):
            refused = call("POST", "/v1/consolidate", rev, json=body)
            assert refused.status_code == 403 and refused.json()["error"]["type"] == "PermissionDeniedError", body
        assert call("GET", "/v1/review", rev, params={"agent": "coder"}).status_code == 403
        assert call("POST", "/v1/teams/backend/round-end", rev).status_code == 403
        dry = call("POST", "/v1/consolidate", rev, json={"dry_run": True})
        assert dry.status_code == 200 and dry.json()["dry_run"] and dry.json()["run"] is None
        ran = call("POST", "/v1/consolidate", rev, json={"agent": "rev"})
        assert ran.status_code == 200, ran.text
        report = ran.json()
        assert report["scope"] == "agent:rev" and len(report["merges"]) == 1 and len(report["review"]) == 1
        run = report["run"]

        runs = call("GET", "/v1/consolidate/runs", rev)
        assert [r["run"] for r in runs.json()] == [run]
        assert [r["run"] for r in call("GET", "/v1/consolidate/runs").json()] == [run]  # admin: every scope
        [item] = call("GET", "/v1/review", params={"agent": "rev"}).json()
        assert item["supersede_content"] == OLD_RULE and item["run"] == run

        missing = call("POST", "/v1/consolidate/undo", json={"run": UNKNOWN_RUN, "agent": "rev"})
        assert missing.status_code == 404 and missing.json()["error"]["type"] == "RunNotFoundError"
        malformed = call("POST", "/v1/consolidate/undo", json={"run": "20200101-nope"})
        assert malformed.status_code == 422 and malformed.json()["error"]["field"] == "run"
        assert call("POST", "/v1/consolidate/undo", rev, json={"agent": "coder"}).status_code == 403
        undone = call("POST", "/v1/consolidate/undo", rev, json={"run": run})
        assert undone.status_code == 200, undone.text
        assert undone.json()["run"] == run and len(undone.json()["restored"]) == 2
        twice = call("POST", "/v1/consolidate/undo", json={"run": run, "agent": "rev"})
        assert twice.status_code == 409 and twice.json()["error"]["type"] == "UndoConflictError"

        # a team's round end: an admin or the team's lead
        assert call("POST", "/v1/agents/coder/tasks", json={
            "task": "Profile the API", "output": "MEMBER: coder owns the profiling harness"}).status_code == 201
        ended = call("POST", "/v1/teams/backend/round-end", boss, json={"dry_run": False})
        assert ended.status_code == 200, ended.text
        assert ended.json()["actor"] == "boss" and len(ended.json()["created"]) == 1
        assert call("GET", "/v1/consolidate/runs", boss, params={"team": "backend"}).status_code == 200
        assert call("POST", "/v1/teams/Not A Team/round-end").status_code == 422

        # the server's client: the same answers as models, the same errors
        with Cortex.open(project / ".cortex" / "store") as client:
            assert [r.run for r in client.consolidation_runs(team="backend")] == [ended.json()["run"]]
            assert client.review("rev") == []  # the run that listed it was undone
            with pytest.raises(RunNotFoundError):
                client.undo_consolidation(UNKNOWN_RUN)
            assert client.consolidate("rev", dry_run=True).dry_run
            assert client.undo_consolidation("last", team="backend").scope == "team:backend"
    finally:
        assert server.stop() == 0


def test_http_review_decides_a_contradiction(project, llm):
    tokens = TokenStore(project / ".cortex" / "store")
    rev = tokens.create("rev")
    server = start_server(project, CORTEX_LLM_URL=llm.url, CORTEX_LLM_MODEL="standin", CORTEX_EMBEDDINGS="none")
    try:
        call = server.call

        for content in (OLD_RULE, NEW_RULE):
            assert call("POST", "/v1/agents/rev/memories", json={"content": content}).status_code == 201
        assert call("POST", "/v1/consolidate", rev, json={"agent": "rev"}).status_code == 200
        [item] = call("GET", "/v1/review", rev).json()
        pair = {"keep": item["keep"], "supersede": item["supersede"]}

        refused = call("POST", "/v1/review", rev, json={**pair, "agent": "coder"})
        assert refused.status_code == 403 and refused.json()["error"]["type"] == "PermissionDeniedError"
        unknown = call("POST", "/v1/review", json={"keep": item["supersede"], "supersede": item["keep"],
                                                    "agent": "rev"})
        assert unknown.status_code == 422 and unknown.json()["error"]["field"] == "supersede"
        assert call("POST", "/v1/review", json={"keep": item["keep"], "agent": "rev"}).status_code == 422

        accepted = call("POST", "/v1/review", rev, json=pair)  # an agent token: its own agent
        assert accepted.status_code == 200, accepted.text
        report = accepted.json()
        assert report["run"] and report["scope"] == "agent:rev"
        assert [(s["old"], s["new"]) for s in report["superseded"]] == [(item["supersede"], item["keep"])]
        assert call("GET", "/v1/review", rev).json() == []
        assert call("GET", f"/v1/agents/rev/memories/{item['supersede']}").json()["superseded_by"] == item["keep"]

        # the server's client: the same decision as a model, undone like any run
        with Cortex.open(project / ".cortex" / "store") as client:
            assert client.undo_consolidation(report["run"]).run == report["run"]
            dismissed = client.resolve_review(item["keep"], item["supersede"], accept=False, agent="rev")
            assert [d.supersede for d in dismissed.dismissed] == [item["supersede"]] and dismissed.run
            assert client.review("rev") == []
            assert client.get("rev", item["supersede"]).superseded_by is None
    finally:
        assert server.stop() == 0


# -- MCP -------------------------------------------------------------------------------------------------------

@pytest.fixture
def cx(tmp_path, llm):
    with Cortex.open(tmp_path / "store", embeddings=None) as opened:
        opened.agents.register("rev", settings=AgentSettings(teams=("backend",)))
        opened.agents.register("coder", settings=AgentSettings(teams=("backend",)))
        opened.agents.register("boss", settings=AgentSettings(teams=("backend",), lead=True))
        opened.llm = LLMSettings(url=llm.url, model="standin")
        opened.consolidation = ConsolidationSettings()
        yield opened


def test_mcp_tools_consolidate_and_undo(cx):
    a, b = cx.store("rev", DUP_A), cx.store("rev", DUP_B)
    cx.store("rev", OLD_RULE)
    cx.store("rev", NEW_RULE)

    async def main() -> None:
        async with Client(build_mcp(lambda: cx, lambda request: ADMIN)) as client:
            dry = await client.call_tool("consolidate", {"agent": "rev", "dry_run": True})
            assert not dry.is_error, dry.content
            assert dry.structured_content["run"] is None and len(dry.structured_content["merges"]) == 1
            done = await client.call_tool("consolidate", {"agent": "rev"})
            assert not done.is_error, done.content
            run = done.structured_content["run"]
            assert run and (cx.get("rev", a.id).superseded_by or cx.get("rev", b.id).superseded_by)
            runs = await client.call_tool("consolidation_runs", {"agent": "rev"})
            assert [r["run"] for r in runs.structured_content["result"]] == [run]
            review = await client.call_tool("review_contradictions", {"agent": "rev"})
            assert [i["supersede_content"] for i in review.structured_content["result"]] == [OLD_RULE]
            undone = await client.call_tool("undo_consolidation", {"run": run})
            assert not undone.is_error, undone.content
            assert sorted(undone.structured_content["restored"]) == sorted([a.id, b.id])
            assert cx.get("rev", a.id).superseded_by is None and cx.get("rev", b.id).superseded_by is None
            missing = await client.call_tool("undo_consolidation", {"run": UNKNOWN_RUN})
            assert missing.is_error and UNKNOWN_RUN in missing.content[0].text
            malformed = await client.call_tool("undo_consolidation", {"run": "nope"})
            assert malformed.is_error and "run: not a consolidation run id" in malformed.content[0].text
            ended = await client.call_tool("team_round_end", {"team": "backend", "dry_run": True})
            assert not ended.is_error and ended.structured_content["actor"] == "boss"

        async with Client(build_mcp(lambda: cx, lambda request: Principal(agent="rev", token="t"))) as client:
            own = await client.call_tool("consolidate", {"dry_run": True})
            assert not own.is_error and own.structured_content["scope"] == "agent:rev"
            other = await client.call_tool("consolidate", {"agent": "coder"})
            assert other.is_error and "own agent" in other.content[0].text
            team = await client.call_tool("team_round_end", {"team": "backend"})
            assert team.is_error and "lead" in team.content[0].text

        async with Client(build_mcp(lambda: cx, lambda request: Principal(agent="boss", token="t"))) as client:
            lead = await client.call_tool("consolidate", {"team": "backend", "dry_run": True})
            assert not lead.is_error and lead.structured_content["scope"] == "team:backend"

    asyncio.run(main())


def test_mcp_resolve_contradiction(cx):
    old, new = cx.store("rev", OLD_RULE), cx.store("rev", NEW_RULE)
    cx.consolidate("rev")

    async def main() -> None:
        async with Client(build_mcp(lambda: cx, lambda request: ADMIN)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert tools["resolve_contradiction"].annotations.read_only_hint is False
            [item] = (await client.call_tool("review_contradictions", {"agent": "rev"})).structured_content["result"]
            assert (item["keep"], item["supersede"]) == (new.id, old.id)
            dismissed = await client.call_tool("resolve_contradiction", {"keep": new.id, "supersede": old.id,
                                                                         "accept": False, "agent": "rev"})
            assert not dismissed.is_error, dismissed.content
            assert [d["supersede"] for d in dismissed.structured_content["dismissed"]] == [old.id]
            assert (await client.call_tool("review_contradictions", {"agent": "rev"})
                    ).structured_content["result"] == []
            assert cx.get("rev", old.id).superseded_by is None
            undone = await client.call_tool("undo_consolidation", {"run": dismissed.structured_content["run"]})
            assert not undone.is_error, undone.content
            accepted = await client.call_tool("resolve_contradiction", {"keep": new.id, "supersede": old.id,
                                                                        "agent": "rev"})
            assert not accepted.is_error, accepted.content
            assert [s["old"] for s in accepted.structured_content["superseded"]] == [old.id]
            assert cx.get("rev", old.id).superseded_by == new.id
            unknown = await client.call_tool("resolve_contradiction", {"keep": new.id, "supersede": old.id,
                                                                       "agent": "rev"})
            assert unknown.is_error and "no open contradiction" in unknown.content[0].text

        async with Client(build_mcp(lambda: cx, lambda request: Principal(agent="coder", token="t"))) as client:
            other = await client.call_tool("resolve_contradiction", {"keep": new.id, "supersede": old.id,
                                                                     "agent": "rev"})
            assert other.is_error and "own agent" in other.content[0].text

    asyncio.run(main())
