"""No memory can break reads for others (issue 18, finding 3): every bound is enforced on every write path before
anything is written (an error answer means nothing was stored), and a stored memory that cannot be decoded or
serialised is logged, left out of every read and reported by ``validate-store``, on every surface and backend."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from cortex import Cortex, InvalidInputError
from cortex.agents import AgentSettings
from cortex.service.auth import Principal
from cortex.service.http import create_app
from cortex.service.mcp import build_mcp
from cortex.transfer import InvalidDataError
from cortex.validation import MAX_METADATA_DEPTH

from tests.conftest import remote_location
from tests.service_helpers import asgi_request


def nested(depth: int) -> dict:
    """A JSON object nested ``depth`` levels deep (about 6 bytes a level)."""
    value: dict = {}
    for _ in range(depth - 1):
        value = {"k": value}
    return value


@pytest.fixture
def team_cx(store_path: Path, backend: str, request: pytest.FixtureRequest) -> Iterator[Cortex]:
    location = store_path if backend == "embedded" else remote_location(request, backend)
    cx = Cortex.open(location, embeddings=None)
    for name in ("api", "db"):
        cx.agents.register(name, settings=AgentSettings(teams=("backend",)))
    cx.agents.register("lead", settings=AgentSettings(teams=("backend",), lead=True))
    cx.store("api", "migrations run before the deploy", scope="team:backend")
    cx.store("db", "indexes are built concurrently", scope="team:backend")
    cx.inject_learning("lead", "never force-push to main", "best-practice")
    yield cx
    cx.close()


def raw_update(cx: Cortex, request: pytest.FixtureRequest, backend: str, update: str) -> None:
    """A write behind Cortex's back (another tool, or an older Cortex): a SPARQL update sent to the store itself."""
    if backend == "embedded":
        cx._memories.store._store.update(update)
    else:
        request.getfixturevalue(f"{backend}_server").update(update)


# -- every bound, every write path, before anything is written ------------------------------------------------


def test_the_reported_metadata_is_refused_and_nothing_is_stored(team_cx):
    deep = nested(400)
    assert len(json.dumps(deep)) < 8192  # under the size limit: only the depth is wrong
    before = team_cx.count("api")
    with pytest.raises(InvalidInputError) as err:
        team_cx.store("api", "deep one", metadata=deep, scope="team:backend")
    assert err.value.field == "metadata" and "nested" in err.value.reason
    assert team_cx.count("api") == before
    assert {m.content for m in team_cx.list_memories("db").items} == {
        "indexes are built concurrently", "migrations run before the deploy", "never force-push to main"}


def test_the_depth_bound_holds_on_every_write_path(team_cx, tmp_path):
    deep = nested(MAX_METADATA_DEPTH + 1)
    fine = nested(MAX_METADATA_DEPTH)
    own = team_cx.store("api", "mine", metadata=fine)
    assert team_cx.get("api", own.id).metadata == fine
    snapshot = sorted(m.content for m in team_cx.list_memories("api", include_superseded=True).items)
    attempts = [
        lambda: team_cx.store("api", "x", metadata=deep),
        lambda: team_cx.store_many("api", [{"content": "ok"}, {"content": "x", "metadata": deep}]),
        lambda: team_cx.update("api", own.id, metadata=deep),
        lambda: team_cx.supersede("api", own.id, "y", metadata=deep),
        lambda: team_cx.store("api", "x", metadata={"list": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}),
    ]
    for attempt in attempts:
        with pytest.raises(InvalidInputError, match="nested"):
            attempt()
    # an import of a memory whose metadata no write accepts
    source = Cortex.open(None, embeddings=None)
    source.agents.register("api")
    kept = source.store("api", "imported", metadata={"a": 1})
    with open(tmp_path / "one.trig", "wb") as out:
        source.export(out, agent="api")
    text = (tmp_path / "one.trig").read_text().replace('{\\"a\\":1}', json.dumps(json.dumps(deep))[1:-1])
    assert kept.id in text and "nested" not in text
    (tmp_path / "one.trig").write_text(text)
    with pytest.raises(InvalidDataError, match="nested"):
        team_cx.import_rdf(tmp_path / "one.trig")
    assert sorted(m.content for m in team_cx.list_memories("api", include_superseded=True).items) == snapshot


def test_an_http_or_mcp_error_answer_means_nothing_was_stored(team_cx):
    app = create_app(team_cx, mcp=False)
    r = asgi_request(app, "POST", "/v1/agents/api/memories", None,
                     json={"content": "deep", "metadata": nested(400), "scope": "team:backend"})
    assert r.status_code == 422 and r.json()["error"]["field"] == "metadata"

    async def mcp() -> None:
        async with Client(build_mcp(lambda: team_cx, lambda request: Principal(agent="api"))) as client:
            # (the MCP client itself cannot serialise 400 levels: 100 is beyond Cortex's bound all the same)
            result = await client.call_tool("add_memory", {"agent": "api", "content": "deep",
                                                           "metadata": nested(100)})
            assert result.is_error

    asyncio.run(mcp())
    assert team_cx.recall("api", "deep") == []


metadata_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=60)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(metadata=st.dictionaries(st.text(max_size=5), metadata_values, max_size=4), depth=st.integers(0, 300))
def test_any_metadata_is_stored_and_read_back_whole_or_refused_whole(team_cx, metadata, depth):
    """Through HTTP: 201 and the same value read back by everyone, or 422 and nothing stored; never a 500."""
    if depth:
        metadata = {"wrapped": nested(depth), **metadata}
    app = create_app(team_cx, mcp=False)
    before = team_cx.count("api")
    r = asgi_request(app, "POST", "/v1/agents/api/memories", None, json={"content": "m", "metadata": metadata})
    assert r.status_code in (201, 422), r.text
    if r.status_code == 422:
        assert team_cx.count("api") == before
        return
    memory = r.json()
    got = asgi_request(app, "GET", f"/v1/agents/api/memories/{memory['id']}", None)
    assert got.status_code == 200 and got.json()["metadata"] == memory["metadata"]
    assert asgi_request(app, "GET", "/v1/agents/api/list", None).status_code == 200
    team_cx.forget("api", memory["id"])


# -- what a store holds beyond any bound never breaks a read of other memories --------------------------------


def bad_memories(team: str = "backend") -> str:
    """An update adding two memories to a team graph that no write would accept: metadata nested 2,000 deep (beyond
    the JSON parser's recursion) and 300 deep (decodable, but no serialiser writes it)."""
    graph, am = f"<urn:cortex:graph:team:{team}>", "urn:cortex:agentmem:"
    triples = []
    for mid, depth in (("0000000000000000000000bad1", 2000), ("0000000000000000000000bad2", 300)):
        subject = f"<urn:cortex:team:{team}:memory:{mid}>"
        literal = json.dumps('{"k":' * (depth - 1) + "{}" + "}" * (depth - 1))
        triples.append(
            f'{subject} a <{am}Memory> ; <{am}agent> <urn:cortex:agent:api> ; <{am}content> "poisoned {mid}" ; '
            f'<{am}metadata> {literal}^^<http://www.w3.org/1999/02/22-rdf-syntax-ns#JSON> ; '
            f'<{am}createdAt> "2026-01-01T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> .')
    return f"INSERT DATA {{ GRAPH {graph} {{ {' '.join(triples)} }} }}"


def test_a_poisoned_memory_never_fails_a_read_of_the_others(team_cx, request, backend, caplog):
    raw_update(team_cx, request, backend, bad_memories())
    good = {"migrations run before the deploy", "indexes are built concurrently", "never force-push to main"}
    caplog.set_level(logging.WARNING, logger="cortex")
    team_cx.reindex("team:backend")  # (a write behind Cortex's back is noticed at the next open or count check)
    for agent in ("api", "db", "lead"):
        assert {m.content for m in team_cx.list_memories(agent).items} == good
        assert {m.content for m in team_cx.recall(agent, "")} == good
        assert {h.memory.content for h in team_cx.search(agent, "poisoned migrations deploy", mode="bm25")} <= good
        assert "poisoned" not in team_cx.agent_start(agent, task="deploy")
    assert team_cx.get("api", "0000000000000000000000bad1") is None
    assert any("unreadable" in r.getMessage() for r in caplog.records)
    found = {(v.focus, v.path) for v in team_cx.validate_store(team="backend")}
    assert {f for f, _ in found} >= {"urn:cortex:team:backend:memory:0000000000000000000000bad1",
                                     "urn:cortex:team:backend:memory:0000000000000000000000bad2"}

    app = create_app(team_cx, mcp=False)
    for path in ("/v1/agents/db/memories", "/v1/agents/db/list", "/v1/agents/db/search?query=deploy"):
        r = asgi_request(app, "GET", path, None)
        assert r.status_code == 200 and "poisoned" not in r.text, (path, r.text[:300])
    r = asgi_request(app, "POST", "/v1/agents/db/start", None, json={"task": "deploy"})
    assert r.status_code == 200 and "poisoned" not in r.text

    async def mcp() -> None:
        async with Client(build_mcp(lambda: team_cx, lambda request: Principal(agent="db"))) as client:
            for tool, args in (("recall", {"agent": "db"}), ("list_memories", {"agent": "db"}),
                               ("search_memories", {"agent": "db", "query": "deploy"})):
                result = await client.call_tool(tool, args)
                assert not result.is_error and "poisoned" not in str(result.content), tool

    asyncio.run(mcp())


def test_validate_store_names_what_it_cannot_find(team_cx):
    from cortex.errors import AgentNotFoundError

    with pytest.raises(AgentNotFoundError):
        team_cx.validate_store(agent="nobody")
    with pytest.raises(InvalidInputError):
        team_cx.validate_store(team="nobody")
    assert team_cx.validate_store(agent="db") == []  # declared, holding nothing of its own: conforms
