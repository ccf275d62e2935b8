"""Team and swarm memory (DESIGN.md section 10, docs/lifecycle.md "Scopes"): who reads what, who may write
where, who may change a shared memory, and a lead's injected learnings. Agents are declared in Markdown files
on a real on-disk store."""

from __future__ import annotations

from pathlib import Path

import pytest

from cortex import Cortex, InvalidInputError, PermissionDeniedError
from cortex.agents import check_dirs
from tests.conftest import triples_of

DEFINITIONS = {
    "lead": "teams: [backend, frontend]\n  lead: true",
    "api": "teams: [backend]",
    "db": "teams: [backend]",
    "ui": "teams: [frontend]",
    "loner": None,
}


def write_agents(directory: Path, definitions: dict[str, str | None]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, cortex_block in definitions.items():
        extra = f"cortex:\n  {cortex_block}\n" if cortex_block else ""
        (directory / f"{name}.md").write_text(f"---\nname: {name}\ndescription: {name}\nmemory: true\n{extra}---\n")
    return directory


@pytest.fixture
def team(tmp_path, clock):
    agents = write_agents(tmp_path / "agent_defs", DEFINITIONS)
    with Cortex.open(tmp_path / "store", agent_dirs=[agents], clock=clock, embeddings=None) as cx:
        yield cx


def contents(memories) -> set[str]:
    return {m.content for m in memories}


def test_frontmatter_teams_and_lead_are_validated(tmp_path):
    agents = write_agents(tmp_path / "bad", {"a": "teams: [Backend Team]", "b": "lead: maybe",
                                             "c": "teams: backend\n  lead: true", "d": "ttl: {bogus: 3d}",
                                             "e": "decay: {manual: never}"})
    problems = {(p.path.stem, p.field) for p in check_dirs([agents])}
    assert problems == {("a", "cortex.teams"), ("b", "cortex.lead"), ("d", "cortex.ttl"), ("e", "cortex.decay")}


def test_an_agent_reads_its_own_its_teams_and_the_swarm(team):
    team.store("api", "api private note")
    team.store("api", "backend: migrations run before deploy", scope="team:backend")
    team.store("ui", "frontend: use the design tokens", scope="team:frontend")
    team.store("lead", "everyone: never force push", scope="swarm")
    assert contents(team.recall("api")) == {"api private note", "backend: migrations run before deploy",
                                            "everyone: never force push"}
    assert contents(team.recall("db")) == {"backend: migrations run before deploy", "everyone: never force push"}
    assert contents(team.recall("loner")) == {"everyone: never force push"}
    assert contents(team.recall("lead")) == {"backend: migrations run before deploy",
                                             "frontend: use the design tokens", "everyone: never force push"}
    # scope= narrows to one scope the agent reads
    assert contents(team.recall("api", scope="agent")) == {"api private note"}
    assert contents(team.recall("api", scope="team:backend")) == {"backend: migrations run before deploy"}
    assert contents(team.recall("api", scope="swarm")) == {"everyone: never force push"}
    with pytest.raises(PermissionDeniedError) as err:
        team.recall("api", scope="team:frontend")
    assert err.value.field == "scope"
    # hits, listings and gets show where a memory lives and who wrote it
    shared = team.search("db", "migrations deploy", mode="bm25")[0].memory
    assert (shared.scope, shared.author, shared.agent) == ("team:backend", "api", "api")
    assert {m.scope for m in team.list_memories("api").items} == {"agent", "team:backend", "swarm"}
    assert team.get("db", shared.id) == shared and team.get("ui", shared.id) is None


def test_the_block_marks_shared_memories_with_their_scope(team):
    team.store("api", "retry idempotent calls", type="pattern")
    team.store("api", "schemas live in api/schema", type="convention", scope="team:backend")
    team.inject_learning("lead", "run the linter before pushing", "best-practice")
    block = team.agent_start("api")
    assert "- [pattern] retry idempotent calls" in block
    assert "- [convention] (team:backend) schemas live in api/schema" in block
    assert "- [convention] (swarm) run the linter before pushing" in block
    assert "(team:backend)" not in team.agent_start("api", scope="agent")


def test_writing_to_a_team_needs_membership_and_the_swarm_a_lead(team):
    with pytest.raises(PermissionDeniedError) as err:
        team.store("ui", "x", scope="team:backend")
    assert err.value.field == "scope"
    with pytest.raises(PermissionDeniedError):
        team.store("api", "x", scope="swarm")
    with pytest.raises(InvalidInputError) as bad:
        team.store("api", "x", scope="team:nobody")
    assert bad.value.field == "scope" and "unknown team" in str(bad.value)
    with pytest.raises(PermissionDeniedError) as batch:
        team.store_many("ui", [{"content": "ok"}, {"content": "x", "scope": "team:backend"}])
    assert batch.value.field == "entries[1].scope"
    with pytest.raises(InvalidInputError, match="one batch writes one scope"):
        team.store_many("api", [{"content": "a"}, {"content": "b", "scope": "team:backend"}])
    assert team.list_memories("lead").items == [] and team.count("ui") == 0 and team.count("api") == 0


def test_only_the_author_or_a_lead_changes_a_shared_memory(team):
    m = team.store("api", "the orm is sqlalchemy", scope="team:backend")
    for action in (lambda: team.update("db", m.id, content="x"), lambda: team.forget("db", m.id),
                   lambda: team.supersede("db", m.id, "y")):
        with pytest.raises(PermissionDeniedError) as err:
            action()
        assert err.value.field == "memory_id"
    assert team.get("api", m.id) == m and len(team.recall("db", "orm")) == 1
    assert team.update("api", m.id, content="the orm is sqlalchemy 2").version == 2  # its author
    new = team.supersede("lead", m.id, "the orm is sqlmodel")  # a lead of the team
    assert new.scope == "team:backend" and new.author == "lead"
    assert team.validate("db", new.id).validated_at is not None  # any reader may confirm
    assert team.forget("lead", new.id) is True
    # the correction is gone: the fact it corrected stands again (current, no dangling successor)
    again = team.get("api", m.id)
    assert (again.superseded_by, again.valid_until, again.version) == (None, None, 2)
    assert [x.id for x in team.recall("db", "orm")] == [m.id]
    # a memory outside what the agent reads does not exist for it
    assert team.forget("ui", m.id) is False


def test_inject_learning_reaches_the_swarm_a_team_or_one_worker(team):
    swarm = team.inject_learning("lead", "never commit secrets", "mistake-pattern")
    assert (swarm.scope, swarm.source.value, swarm.tags, swarm.confidence, swarm.author) == (
        "swarm", "injected", ("mistake-pattern",), 0.9, "lead")
    backend = team.inject_learning("lead", "use alembic for migrations", "codebase-knowledge", team="backend",
                                   tags=["db"])
    assert backend.scope == "team:backend" and backend.tags == ("codebase-knowledge", "db")
    worker = team.inject_learning("lead", "ui prefers small commits", "preference", to="ui", confidence=0.6)
    assert (worker.scope, worker.agent, worker.author) == ("agent", "ui", "lead")
    assert "never commit secrets" in contents(team.recall("loner"))
    assert "use alembic for migrations" in contents(team.recall("db"))
    assert "use alembic for migrations" not in contents(team.recall("ui"))
    assert contents(team.recall("ui", scope="agent")) == {"ui prefers small commits"}
    assert contents(team.recall("api", "small commits")) == set()
    assert team.list_memories("ui", tags=["preference"]).items[0].id == worker.id


def test_a_learning_injected_into_a_worker_is_owned_by_it_and_attributed_to_the_lead(team, tmp_path, clock):
    m = team.inject_learning("lead", "ui prefers small commits", "preference", to="ui")
    triples = set(triples_of(team, "ui", m.id))
    assert ("urn:cortex:agentmem:agent", "urn:cortex:agent:ui") in triples
    assert ("http://www.w3.org/ns/prov#wasAttributedTo", "urn:cortex:agent:lead") in triples
    got = team.get("ui", m.id)
    assert (got.agent, got.author) == ("ui", "lead")
    updated = team.update("ui", m.id, tags=["preference", "git"])  # its owner may change it
    assert (updated.agent, updated.author) == ("ui", "lead")


@pytest.mark.parametrize("agent, kwargs, error, field", [
    ("api", {}, PermissionDeniedError, "agent"),  # a worker acting as lead
    ("lead", {"category": "gossip"}, InvalidInputError, "category"),
    ("lead", {"team": "nobody"}, InvalidInputError, "team"),
    ("lead", {"team": "Not A Team"}, InvalidInputError, "team"),
    ("lead", {"to": "Not An Agent!"}, InvalidInputError, "to"),
    ("lead", {"to": "ghost"}, InvalidInputError, "to"),
    ("lead", {"team": "backend", "to": "api"}, InvalidInputError, "to"),
    ("lead", {"confidence": 3}, InvalidInputError, "confidence"),
])
def test_bad_injections_change_nothing(team, agent, kwargs, error, field):
    call = {"category": "best-practice"} | kwargs
    with pytest.raises(error) as err:
        team.inject_learning(agent, "x", **call)
    assert err.value.field == field
    assert team.list_memories("lead").items == [] and team.list_memories("ui").items == []


def test_a_lead_leads_only_its_own_teams(tmp_path, clock):
    agents = write_agents(tmp_path / "defs", {"fe-lead": "teams: [frontend]\n  lead: true", "be": "teams: [backend]"})
    with Cortex.open(tmp_path / "store", agent_dirs=[agents], clock=clock, embeddings=None) as cx:
        m = cx.store("be", "backend only", scope="team:backend")
        with pytest.raises(PermissionDeniedError):
            cx.inject_learning("fe-lead", "x", "best-practice", team="backend")
        assert cx.get("fe-lead", m.id) is None  # not in the team: cannot see it, let alone change it


def test_shared_scopes_survive_a_restart_and_search_ranks_across_them(tmp_path, clock):
    agents = write_agents(tmp_path / "agent_defs", DEFINITIONS)
    store = tmp_path / "store"
    with Cortex.open(store, agent_dirs=[agents], clock=clock, embeddings=None) as cx:
        for i in range(30):
            cx.store("api", f"private note {i} about caching layers")
        shared = cx.store("db", "caching: invalidate on write", scope="team:backend")
    with Cortex.open(store, agent_dirs=[agents], clock=clock, embeddings=None) as cx:
        assert cx.index_status("api").rebuilds == 0
        hits = cx.search("api", "invalidate caching on write", mode="bm25", limit=3)
        assert hits[0].memory.id == shared.id  # one collection: the shared memory competes on equal terms
        assert sorted(cx.stored_scopes()) == ["api", "team:backend"]  # db wrote only to its team
