"""Export and import (docs/export.md): lossless in every format (the dataset of a store exported, imported into an
empty store and exported again is the same), checked whole before anything is written, on the Python API, the
CLI, HTTP with tokens and the remote client against a real server."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyoxigraph as ox
import pytest

from cortex import Cortex, InvalidInputError
from cortex.agents import AgentSettings
from cortex.service.auth import TokenStore
from cortex.client import RemoteCortex
from cortex.service.http import create_app
from cortex.transfer import InvalidDataError

from tests.service_helpers import asgi_request, make_project, run_cli, start_server
from tests.app.test_scopes import DEFINITIONS, write_agents
from tests.paths import ROOT

HOSTILE = 'quotes " \' and } > <x> \n newline \\ backslash ; DELETE WHERE { ?s ?p ?o } \u00e9\u6587 \U0001f600'


def _agents(cx: Cortex) -> Cortex:
    cx.agents.register("lead", settings=AgentSettings(teams=("backend",), lead=True))
    cx.agents.register("api", settings=AgentSettings(teams=("backend",)))
    cx.agents.register("ui")
    return cx


def _populate(cx: Cortex, clock) -> dict[str, str]:
    m = cx.store("api", HOSTILE, tags=["x", "y"], metadata={"nested": {"k": [1, "}"]}}, source="task_completion")
    clock.advance(minutes=5)
    cx.update("api", m.id, content="second version", expected_version=1)
    new = cx.supersede("api", m.id, "third fact", reason="changed")
    cx.validate("api", new.id)
    cx.touch("api", new.id)
    team = cx.store("api", "team convention", type="convention", scope="team:backend")
    cx.inject_learning("lead", "learning for ui", "preference", to="ui")
    cx.inject_learning("lead", "swarm learning", "mistake-pattern", project="web")
    cx.store("ui", "ui only", ttl="never", confidence=0.3)
    return {"old": m.id, "new": new.id, "team": team.id}


def dataset(cx: Cortex) -> set[ox.Quad]:
    """Every quad of every scope graph (what an export covers)."""
    return {q for scope in cx._memories.scopes() for q in cx._memories.export(scope)}


@pytest.mark.parametrize("fmt, ext", [("trig", "trig"), ("nquads", "nq"), ("jsonld", "jsonld")])
def test_export_import_export_is_lossless(tmp_path, clock, fmt, ext):
    with _agents(Cortex.open(tmp_path / "a", clock=clock, embeddings=None)) as cx:
        ids = _populate(cx, clock)
        before = dataset(cx)
        path = tmp_path / f"all.{ext}"
        with open(path, "wb") as out:
            assert cx.export(out, all=True, format=fmt) == len(before)
        history = [(v.content, v.version) for v in cx.history("api", ids["old"])]
    with _agents(Cortex.open(tmp_path / "b", clock=clock, embeddings=None)) as cx:
        imported = cx.import_rdf(path)
        assert imported == {"agent:api": 2, "agent:ui": 2, "team:backend": 1, "swarm": 1}
        assert dataset(cx) == before  # no blank nodes: the same quads is an isomorphic dataset
        again = io.BytesIO()
        cx.export(again, all=True, format=fmt)
        assert set(ox.parse(again.getvalue(), {"trig": ox.RdfFormat.TRIG, "nquads": ox.RdfFormat.N_QUADS,
                                                "jsonld": ox.RdfFormat.JSON_LD}[fmt])) == before
        # the indexes follow: current memories, versions, scopes, authors, filters
        assert [m.content for m in cx.recall("api", "third")] == ["third fact"]
        assert [(v.content, v.version) for v in cx.history("api", ids["old"])] == history
        assert cx.get("api", ids["old"]).superseded_by == ids["new"]
        assert cx.get("api", ids["new"]).validated_at is not None
        assert {m.content for m in cx.recall("ui", None)} == {"learning for ui", "ui only", "swarm learning"}
        assert cx.get("ui", [m for m in cx.recall("ui", "learning for")][0].id).author == "lead"
        assert [h.memory.id for h in cx.search("api", "team convention", mode="bm25")][:1] == [ids["team"]]
    with _agents(Cortex.open(tmp_path / "b", clock=clock, embeddings=None)) as cx:  # and after a restart
        assert {m.content for m in cx.recall("api", None, limit=100)} == {"third fact", "team convention",
                                                                          "swarm learning"}


def test_one_scope_in_turtle_goes_where_it_is_told(tmp_path, clock):
    with _agents(Cortex.open(tmp_path / "a", clock=clock, embeddings=None)) as cx:
        _populate(cx, clock)
        out = io.BytesIO()
        cx.export(out, agent="ui", format="turtle")
        with pytest.raises(InvalidInputError) as err:
            cx.export(io.BytesIO(), all=True, format="turtle")
        assert err.value.field == "format"
        with pytest.raises(InvalidInputError) as err:
            cx.export(io.BytesIO(), agent="api", team="backend")
        assert err.value.field == "scope"
    with _agents(Cortex.open(tmp_path / "b", clock=clock, embeddings=None)) as cx:
        with pytest.raises(InvalidDataError) as err:
            cx.import_rdf(out.getvalue(), format="turtle")  # no graph, no scope named
        assert "default graph" in str(err.value)
        assert cx.import_rdf(out.getvalue(), format="turtle", agent="ui") == {"agent:ui": 2}
        assert {m.content for m in cx.recall("ui", None, scope="agent")} == {"learning for ui", "ui only"}


def test_a_bad_file_names_each_problem_and_imports_nothing(tmp_path, clock):
    with _agents(Cortex.open(tmp_path / "a", clock=clock, embeddings=None)) as cx:
        ids = _populate(cx, clock)
        good = io.BytesIO()
        cx.export(good, all=True, format="nquads")
        before = dataset(cx)
        # importing into a store that has these memories: a conflict, nothing written
        with pytest.raises(InvalidDataError) as err:
            cx.import_rdf(good.getvalue(), format="nquads")
        assert any(v.path == "@id" and ids["team"] in v.focus for v in err.value.violations)
        assert dataset(cx) == before
    lines = good.getvalue().decode().splitlines()
    team_subject = f"<urn:cortex:team:backend:memory:{ids['team']}>"
    broken = [line.replace('"convention"', '"gossip"') if line.startswith(team_subject) else line for line in lines]
    broken.append('<urn:elsewhere:thing> <urn:p> "x" <urn:cortex:graph:agent:api> .')
    broken.append('<urn:cortex:log:agent:api:1> <urn:p> "x" <urn:cortex:graph:log> .')
    with _agents(Cortex.open(tmp_path / "b", clock=clock, embeddings=None)) as cx:
        with pytest.raises(InvalidDataError) as err:
            cx.import_rdf("\n".join(broken).encode(), format="nquads")
        report = {(v.focus, v.path) for v in err.value.violations}
        assert (team_subject[1:-1], "(fields)") in report
        assert ("urn:elsewhere:thing", "@id") in report
        assert any(v.path == "graph" and "change log" in v.message for v in err.value.violations)
        assert err.value.field == "file" and "nothing imported" in str(err.value)
        assert dataset(cx) == set() and cx.recall("api", None) == []
        with pytest.raises(InvalidInputError) as err:
            cx.import_rdf(b"<a> <b> ", format="nquads")
        assert err.value.field == "file"
        with pytest.raises(InvalidInputError) as err:
            cx.import_rdf(tmp_path / "x.csv")
        assert err.value.field == "format"


def test_http_export_and_import_with_tokens(tmp_path, clock):
    with _agents(Cortex.open(tmp_path / "a", clock=clock, embeddings=None)) as cx:
        _populate(cx, clock)
        before = dataset(cx)
        tokens = TokenStore(tmp_path / "a")
        admin, api = tokens.create(None), tokens.create("api")
        app = create_app(cx, tokens=tokens, allowed_hosts=["127.0.0.1"], mcp=False)
        r = asgi_request(app, "GET", "/v1/export", admin, params={"all": "true", "format": "nquads"})
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/n-quads")
        assert int(r.headers["cortex-quads"]) == len(before)
        exported = r.content
        r = asgi_request(app, "GET", "/v1/export", api, params={"agent": "api", "format": "jsonld"})
        assert r.status_code == 200 and json.loads(r.content)
        assert asgi_request(app, "GET", "/v1/export", api, params={"all": "true"}).status_code == 403
        assert asgi_request(app, "GET", "/v1/export", api, params={"agent": "ui"}).status_code == 403
        assert asgi_request(app, "POST", "/v1/import", api, content=exported,
                        params={"format": "nquads"}).status_code == 403
        r = asgi_request(app, "POST", "/v1/import", admin, content=exported, params={"format": "nquads"})
        assert r.status_code == 422 and r.json()["error"]["field"] == "file"  # the memories exist already
    with _agents(Cortex.open(tmp_path / "b", clock=clock, embeddings=None)) as cx:
        tokens = TokenStore(tmp_path / "b")
        app = create_app(cx, tokens=tokens, allowed_hosts=["127.0.0.1"], mcp=False)
        r = asgi_request(app, "POST", "/v1/import", tokens.create(None), content=exported,
                     headers={"Content-Type": "application/n-quads"})
        assert r.status_code == 201 and sum(r.json()["imported"].values()) == 6
        assert dataset(cx) == before


def test_cli_and_remote_client(tmp_path):
    project = make_project(tmp_path / "proj")
    write_agents(project / "agent_defs", DEFINITIONS)
    env = {"CORTEX_NO_SERVER": "1"}
    assert run_cli(project, "store", "api", HOSTILE, "--tag", "t", env=env).returncode == 0
    assert run_cli(project, "store", "api", "shared", "--scope", "team:backend", env=env).returncode == 0
    ran = run_cli(project, "export", "--all", "-o", "all.trig", env=env)
    assert ran.returncode == 0, ran.stderr
    assert "exported" in ran.stderr and not (project / "all.trig.partial").exists()
    turtle = run_cli(project, "export", "--agent", "api", "--format", "turtle", env=env)
    assert HOSTILE.split("\n")[0].split('"')[0] in turtle.stdout
    other = make_project(tmp_path / "other")
    write_agents(other / "agent_defs", DEFINITIONS)
    ran = run_cli(other, "import", str(project / "all.trig"), env=env)
    assert ran.returncode == 0 and json.loads(ran.stdout) == {"imported": {"agent:api": 1, "team:backend": 1}}
    again = run_cli(other, "import", str(project / "all.trig"), env=env)
    assert again.returncode == 1 and "nothing imported" in again.stderr
    assert [m["content"] for m in json.loads(run_cli(other, "recall", "db", "shared", env=env).stdout)] == ["shared"]
    third = make_project(tmp_path / "third")
    write_agents(third / "agent_defs", DEFINITIONS)
    server = start_server(third)
    try:
        with RemoteCortex(server.url, server.token) as cx:
            assert cx.import_rdf(project / "all.trig") == {"agent:api": 1, "team:backend": 1}
            out = io.BytesIO()
            assert cx.export(out, all=True, format="nquads") > 0
            assert HOSTILE.encode("unicode_escape")[:6] in out.getvalue() or "quotes".encode() in out.getvalue()
            assert [m.content for m in cx.recall("api", "backslash")] == [HOSTILE]
    finally:
        server.stop()


def test_shacl_shapes_check_imports_and_the_whole_store(tmp_path, clock):
    with _agents(Cortex.open(tmp_path / "a", clock=clock, embeddings=None)) as cx:
        ids = _populate(cx, clock)
        assert cx.validate_store() == []
        good = io.BytesIO()
        cx.export(good, agent="api", format="nquads")
        # a value outside the shapes, written behind Cortex's back: reported with its focus node and path
        subject = ox.NamedNode(f"urn:cortex:team:backend:memory:{ids['team']}")
        graph = ox.NamedNode("urn:cortex:graph:team:backend")
        raw = cx._memories.store._store
        raw.add(ox.Quad(subject, ox.NamedNode("urn:cortex:agentmem:tag"), ox.Literal("Not A Slug"), graph))
        found = cx.validate_store()
        assert [(v.focus, v.path) for v in found] == [(subject.value, "urn:cortex:agentmem:tag")]
        assert "slug" in found[0].message
        assert cx.validate_store(agent="api") == []
    # an import whose tag breaks the shapes: named, nothing imported
    bad = good.getvalue().replace(b'"x"', b'"Upper Case"')
    with _agents(Cortex.open(tmp_path / "b", clock=clock, embeddings=None)) as cx:
        with pytest.raises(InvalidDataError) as err:
            cx.import_rdf(bad, format="nquads")
        assert any(v.path == "urn:cortex:agentmem:tag" for v in err.value.violations)
        assert dataset(cx) == set()
    project = make_project(tmp_path / "proj")
    write_agents(project / "agent_defs", DEFINITIONS)
    env = {"CORTEX_NO_SERVER": "1"}
    run_cli(project, "store", "api", "fine", env=env)
    ok = run_cli(project, "validate-store", env=env)
    assert ok.returncode == 0 and "conforms" in ok.stderr


def test_imports_outside_what_cortex_writes_are_refused_whole(tmp_path, clock):
    with _agents(Cortex.open(tmp_path / "a", clock=clock, embeddings=None)) as cx:
        cx.store("api", "counted")
        good = io.BytesIO()
        cx.export(good, agent="api", format="nquads")
    text = good.getvalue().decode()
    cases = {
        "usageCount": text.replace('"0"^^<http://www.w3.org/2001/XMLSchema#integer>',
                                   '"99999999999999999999999999"^^<http://www.w3.org/2001/XMLSchema#integer>'),
        "content": text.replace('"counted"', '"' + "x" * 70_000 + '"'),
        "@id": text + '<urn:cortex:version:agent:api:0123:1> <urn:cortex:agentmem:content> "orphan" '
                      '<urn:cortex:graph:agent:api> .\n',
    }
    with _agents(Cortex.open(tmp_path / "b", clock=clock, embeddings=None)) as cx:
        for path, data in cases.items():
            with pytest.raises(InvalidDataError) as err:
                cx.import_rdf(data.encode(), format="nquads")
            assert any(v.path.endswith(path) for v in err.value.violations), (path, err.value.violations)
            assert dataset(cx) == set() and cx.recall("api", None) == []
        for source, field in ((tmp_path / "missing.trig", "file"), (tmp_path, "file"), (12345, "source")):
            with pytest.raises(InvalidInputError) as err:
                cx.import_rdf(source, format="trig")
            assert err.value.field == field
        assert [x.content for x in (cx.import_rdf(text.encode(), format="nquads") and cx.recall("api", None))] == [
            "counted"]


# -- bulk import: atomic at scale, the native shapes check against pyshacl, progress on stderr -------------------


def _bulk_file(tmp_path, clock, n: int) -> tuple[bytes, set[ox.Quad]]:
    """An N-Quads export of ``n`` memories of one agent (tags on some) written by one write (one provenance
    activity: a store_many of more than WRITE_BATCH memories is otherwise several), and the dataset it holds."""
    import cortex.app.memories as app_memories

    saved, app_memories.WRITE_BATCH = app_memories.WRITE_BATCH, max(n, app_memories.WRITE_BATCH)
    try:
        with _agents(Cortex.open(tmp_path / "src", clock=clock, embeddings=None)) as cx:
            cx.store_many("api", [{"content": f"fact number {i} about the cache", "tags": ["bulk"] if i % 3 else []}
                                  for i in range(n)])
            out = io.BytesIO()
            cx.export(out, all=True, format="nquads")
            return out.getvalue(), dataset(cx)
    finally:
        app_memories.WRITE_BATCH = saved


class _Spy:
    """A store's engine, with its calls of ``name`` counted."""

    def __init__(self, engine, name: str) -> None:
        self.engine, self.name, self.calls = engine, name, 0

    def __getattr__(self, attr):
        if attr == self.name:
            self.calls += 1
        return getattr(self.engine, attr)


def _halves(data: bytes) -> tuple[bytes, bytes]:
    """An N-Quads export of one write split in two files of half its memories each, both naming the write's
    provenance activity (each with its links to its own half)."""
    quads = list(ox.parse(data, ox.RdfFormat.N_QUADS))
    memories = sorted({q.subject.value for q in quads if ":memory:" in q.subject.value})
    first = set(memories[: len(memories) // 2])

    generated = "http://www.w3.org/ns/prov#generated"

    def half(keep: bool) -> bytes:
        # a store_many of more than 1,000 memories is written in batches, each with its activity: a half holds
        # the activities that generated some of its memories
        active = {q.subject.value for q in quads
                  if ":activity:" in q.subject.value and q.predicate.value == generated
                  and (q.object.value in first) == keep}

        def wanted(q: ox.Quad) -> bool:
            if ":activity:" in q.subject.value:
                return q.subject.value in active and (q.predicate.value != generated
                                                      or (q.object.value in first) == keep)
            return (q.subject.value in first) == keep
        return ox.serialize([q for q in quads if wanted(q)], format=ox.RdfFormat.N_QUADS)

    return half(True), half(False)


@pytest.mark.parametrize("path", ["one bulk batch", "file bytes loaded while checked"])
def test_a_large_import_with_a_bad_memory_at_the_end_imports_nothing(tmp_path, clock, monkeypatch, path):
    from cortex.store import oxigraph

    data, before = _bulk_file(tmp_path, clock, 6000)
    assert oxigraph.BULK_THRESHOLD <= len(before) <= oxigraph.BULK_IMPORT_MAX
    if path != "one bulk batch":
        monkeypatch.setattr(oxigraph, "RAW_LOAD_MIN", 1000)
    bad = ('<urn:cortex:agent:api:memory:zz-last> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> '
           '<urn:cortex:agentmem:Memory> <urn:cortex:graph:agent:api> .\n'
           '<urn:cortex:agent:api:memory:zz-last> <urn:cortex:agentmem:agent> <urn:cortex:agent:api> '
           '<urn:cortex:graph:agent:api> .\n'
           '<urn:cortex:agent:api:memory:zz-last> <urn:cortex:agentmem:content> "the last one" '
           '<urn:cortex:graph:agent:api> .\n'
           '<urn:cortex:agent:api:memory:zz-last> <urn:cortex:agentmem:createdAt> '
           '"2024-01-01T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> <urn:cortex:graph:agent:api> .\n'
           '<urn:cortex:agent:api:memory:zz-last> <urn:cortex:agentmem:tag> "Not A Slug" '
           '<urn:cortex:graph:agent:api> .\n')
    stages: list[str] = []
    with _agents(Cortex.open(tmp_path / "dst", clock=clock, embeddings=None)) as cx:
        spy = cx._memories.store._store = _Spy(cx._memories.store._store, "bulk_load")
        with pytest.raises(InvalidDataError) as err:
            cx.import_rdf(data + bad.encode(), format="nquads", progress=lambda stage, *_: stages.append(stage))
        assert spy.calls == (path != "one bulk batch")  # the file's bytes went in, and were taken out again
        cx._memories.store._store = spy.engine
        del spy  # (the engine's last reference goes with the store's close: it holds the directory's lock)
        # named by Cortex's own check and by the shapes: the focus node, the path, the message
        assert {(v.focus, v.path) for v in err.value.violations} == {
            ("urn:cortex:agent:api:memory:zz-last", "urn:cortex:agentmem:tag")}
        assert any("slug" in v.message for v in err.value.violations) and "nothing imported" in str(err.value)
        assert "write" not in stages and "index" not in stages  # judged whole before anything is committed
        assert dataset(cx) == set() and cx.recall("api", None) == [] and cx.count("api") == 0
    with _agents(Cortex.open(tmp_path / "dst", clock=clock, embeddings=None)) as cx:  # and after a restart
        assert dataset(cx) == set() and cx.count("api") == 0
        assert cx.import_rdf(data, format="nquads", progress=lambda *a: stages.append(a[0])) == {"agent:api": 6000}
        assert dataset(cx) == before and cx.count("api") == 6000
        assert {"read", "check", "write", "index"} <= set(stages)
        assert len(cx.recall("api", "cache", limit=10_000, tags=["bulk"])) == 4000
    with _agents(Cortex.open(tmp_path / "dst", clock=clock, embeddings=None)) as cx:
        assert cx.count("api") == 6000 and cx._memories.store.last_change(cx._scope("api")) is not None


def _shacl_cases(good: str) -> dict[str, str]:
    """Variants of an N-Quads export of the api agent breaking the shapes in each way they can be broken."""
    xsd = "http://www.w3.org/2001/XMLSchema#"
    first = next(line for line in good.splitlines() if "agentmem:content>" in line and "memory:" in line)
    subject, graph = first.split(" ")[0], first.rsplit(" ", 2)[-2]

    def add(*triples: str) -> str:
        return good + "".join(f"{subject} {t} {graph} .\n" for t in triples)

    def drop(predicate: str) -> str:
        return "".join(line + "\n" for line in good.splitlines()
                       if not (line.startswith(subject + " ") and f"agentmem:{predicate}>" in line))

    def swap(predicate: str, value: str) -> str:
        return drop(predicate) + f"{subject} <urn:cortex:agentmem:{predicate}> {value} {graph} .\n"

    version = "<urn:cortex:version:agent:api:orphan:1>"
    return {
        "good": good,
        "tag pattern": add('<urn:cortex:agentmem:tag> "Upper Case"'),
        "type in": swap("type", '"gossip"'),
        "confidence range": swap("confidence", f'"1.5"^^<{xsd}double>'),
        "confidence datatype": swap("confidence", '"0.5"'),
        "usage below 0": swap("usageCount", f'"-1"^^<{xsd}integer>'),
        "ill-typed date": swap("createdAt", f'"yesterday"^^<{xsd}dateTime>'),
        "no content": drop("content"),
        "empty content": swap("content", '""'),
        "two agents": add("<urn:cortex:agentmem:agent> <urn:cortex:agent:other>"),
        "agent literal": swap("agent", '"api"'),
        "replaced by a non-memory": add("<http://purl.org/dc/terms/isReplacedBy> <urn:cortex:agent:api:memory:nope>"),
        "metadata datatype": add(f'<urn:cortex:agentmem:metadata> "{{}}"^^<{xsd}string>'),
        "version 0": add(f'<urn:cortex:agentmem:version> "0"^^<{xsd}integer>'),
        "lang-tagged date": swap("lastUsedAt", '"now"@en'),
        "version without its memory": good + f"{version} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> "
                                             f"<urn:cortex:agentmem:MemoryVersion> {graph} .\n",
        "subclass": good + f"<urn:x:Sub> <http://www.w3.org/2000/01/rdf-schema#subClassOf> "
                           f"<urn:cortex:agentmem:Memory> {graph} .\n<urn:x:thing> "
                           f"<http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <urn:x:Sub> {graph} .\n",
    }


def test_native_shapes_check_agrees_with_pyshacl(tmp_path, clock):
    from cortex import shapes
    from cortex.vocab import Vocabulary

    vocab = Vocabulary()
    native = shapes.native(vocab)
    assert native is not None  # shapes.ttl says only what the native checker implements
    messages = {p.message for s in native.shapes for p in s.properties if p.message is not None}
    with _agents(Cortex.open(tmp_path / "a", clock=clock, embeddings=None)) as cx:
        _populate(cx, clock)  # versions, supersession, tags, metadata, validation, authors
        good = io.BytesIO()
        cx.export(good, all=True, format="nquads")
    for name, text in _shacl_cases(good.getvalue().decode()).items():
        quads = list(ox.parse(text.encode(), ox.RdfFormat.N_QUADS))
        subjects: dict[str, dict[str, list]] = {}
        for q in quads:
            subjects.setdefault(q.subject.value, {}).setdefault(q.predicate.value, []).append(q.object)
        ours, reference = native.check(subjects.items()), shapes.validate(quads, vocab)
        assert {(v.focus, v.path) for v in ours} == {(v.focus, v.path) for v in reference}, name
        # where the shapes state the message, both give it
        assert {(v.focus, v.path, v.message) for v in ours if v.message in messages} == \
            {(v.focus, v.path, v.message) for v in reference if v.message in messages}, name
        assert (name == "good") == (not ours), name
    # a shapes file saying what the native checker does not implement falls back to pyshacl
    assert shapes.NativeShapes.load(shapes.shapes_text(vocab).replace("sh:maxCount 1 ;", "sh:uniqueLang true ;", 1)) \
        is None


def test_validate_store_without_pyshacl_checks_the_shapes_natively(tmp_path, clock, monkeypatch):
    """pyshacl is the `shacl` extra: without it validate-store finds the same focus nodes and paths (the native
    checker, as imports use), and asking pyshacl itself names the extra to install."""
    import sys

    from cortex import shapes
    from cortex.errors import MissingExtraError

    with _agents(Cortex.open(tmp_path / "a", clock=clock, embeddings=None)) as cx:
        _populate(cx, clock)
        good = io.BytesIO()
        cx.export(good, agent="api", format="nquads")
    cases = _shacl_cases(good.getvalue().decode())
    for at, name in enumerate(["good", "tag pattern", "type in", "confidence range", "no content", "two agents"]):
        with _agents(Cortex.open(tmp_path / f"case{at}", clock=clock, embeddings=None)) as cx:
            cx._memories.store._store.load(cases[name].encode(), ox.RdfFormat.N_QUADS)
            assert shapes.pyshacl_installed()
            reference = {(v.focus, v.path) for v in cx.validate_store()}
            with monkeypatch.context() as m:
                m.setattr(shapes, "pyshacl_installed", lambda: False)
                native = {(v.focus, v.path) for v in cx.validate_store()}
            assert native == reference, name
            assert (name == "good") == (not native), name
    monkeypatch.setitem(sys.modules, "pyshacl", None)  # as if not installed: importing it fails
    with pytest.raises(MissingExtraError, match=r"pip install 'cortex\[shacl\]'"):
        shapes.validate(list(ox.parse(cases["good"].encode(), ox.RdfFormat.N_QUADS)), shapes.Vocabulary())


def test_progress_goes_to_stderr_never_stdout(tmp_path):
    project = make_project(tmp_path / "proj")
    write_agents(project / "agent_defs", DEFINITIONS)
    env = {"CORTEX_NO_SERVER": "1"}
    assert run_cli(project, "store", "api", "remember the progress bar", env=env).returncode == 0
    exported = run_cli(project, "export", "--all", "--format", "nquads", "--progress", env=env)
    assert exported.returncode == 0, exported.stderr
    assert "exporting memories" in exported.stderr and "exporting" not in exported.stdout
    assert len(list(ox.parse(exported.stdout.encode(), ox.RdfFormat.N_QUADS))) > 0  # stdout: the data alone
    quiet = run_cli(project, "export", "--all", "--format", "nquads", env=env)  # stderr is not a terminal
    assert "exporting memories" not in quiet.stderr and quiet.stdout == exported.stdout
    (project / "all.nq").write_text(exported.stdout)
    other = make_project(tmp_path / "other")
    write_agents(other / "agent_defs", DEFINITIONS)
    ran = run_cli(other, "import", str(project / "all.nq"), "--progress", env=env)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout) == {"imported": {"agent:api": 1}}  # stdout: the JSON alone
    assert "indexing memories" in ran.stderr and "checking subjects" in ran.stderr


def test_an_import_larger_than_one_bulk_batch_is_journaled_and_complete(tmp_path, clock, monkeypatch):
    """Past oxigraph's atomic bulk batch an import is written in several bulk batches behind a journal: all of it
    lands, the journal is gone, and the log has one record per scope."""
    from cortex.store import oxigraph

    data, before = _bulk_file(tmp_path, clock, 1500)
    monkeypatch.setattr(oxigraph, "BULK_IMPORT_MAX", 5_000)
    monkeypatch.setattr(oxigraph, "JOURNAL_CHUNK", 4_000)
    with _agents(Cortex.open(tmp_path / "dst", clock=clock, embeddings=None)) as cx:
        assert len(before) > 3 * oxigraph.JOURNAL_CHUNK
        assert cx.import_rdf(data, format="nquads") == {"agent:api": 1500}
        assert dataset(cx) == before and cx.count("api") == 1500
        assert cx.sparql("ASK { GRAPH ?g { ?j <urn:cortex:agentmem:creates> ?line } }").boolean is False
    with _agents(Cortex.open(tmp_path / "dst", clock=clock, embeddings=None)) as cx:
        assert dataset(cx) == before and len(cx.recall("api", "cache", limit=10_000)) == 1500


@pytest.mark.parametrize("killed_after_chunks", [0, 2])
def test_a_journaled_import_killed_part_way_is_undone_on_the_next_open(tmp_path, clock, killed_after_chunks):
    """kill -9 of a process in the middle of a journaled import: the next open deletes what it wrote, so the
    store and the indexes hold exactly the state before it; what was there before (memories, and the
    provenance activities the file names again) is kept."""
    import subprocess
    import sys
    import textwrap

    data, _ = _bulk_file(tmp_path, clock, 3000)
    halves = _halves(data)  # both name the write's activity
    (tmp_path / "all.nq").write_bytes(halves[1])
    with _agents(Cortex.open(tmp_path / "dst", clock=clock, embeddings=None)) as cx:
        kept = cx.store("ui", "a memory from before the import")
        assert cx.import_rdf(halves[0], format="nquads") == {"agent:api": 1500}  # the activity is in the store now
        before = dataset(cx)
    script = textwrap.dedent(f"""
        import os
        from cortex import Cortex
        from cortex.store import oxigraph
        from tests.store.test_export import _agents
        oxigraph.BULK_IMPORT_MAX, oxigraph.JOURNAL_CHUNK, oxigraph.ROLLBACK_CHUNK = 5_000, 4_000, 500
        cx = _agents(Cortex.open({str(tmp_path / "dst")!r}, embeddings=None))
        held = cx._memories.store._store
        real, calls = held.bulk_extend, [0]
        def bulk_extend(quads):
            if calls[0] == {killed_after_chunks}:  # after this many batches of data
                os._exit(9)
            real(quads)
            calls[0] += 1
        cx._memories.store._store = type("S", (), {{"__getattr__": lambda s, n: getattr(held, n),
                                                   "bulk_extend": staticmethod(bulk_extend)}})()
        cx.import_rdf({str(tmp_path / "all.nq")!r})
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=str(ROOT))
    assert done.returncode == 9
    with _agents(Cortex.open(tmp_path / "dst", clock=clock, embeddings=None)) as cx:
        assert dataset(cx) == before
        assert cx.count("api") == 1500 and len(cx.recall("api", "cache", limit=10_000)) == 1500
        assert [m.id for m in cx.recall("ui", "before")] == [kept.id]
        assert cx.sparql("ASK { GRAPH ?g { ?j <urn:cortex:agentmem:creates> ?line } }").boolean is False
        assert cx.import_rdf(tmp_path / "all.nq") == {"agent:api": 1500}  # and it can be imported again
        assert len(cx.recall("api", "cache", limit=10_000)) == 3000


def test_an_import_whose_write_fails_leaves_neither_store_nor_indexes_changed(tmp_path, clock, monkeypatch):
    """The file's bytes are loaded while the memories are checked and indexed: when the engine's load fails
    (a full disk), the import is a StoreError, the journal is undone and the indexes lose the memories again."""
    from cortex.errors import StoreError
    from cortex.store import oxigraph

    data, before = _bulk_file(tmp_path, clock, 3000)
    monkeypatch.setattr(oxigraph, "RAW_LOAD_MIN", 1000)

    class FullDisk(_Spy):
        def __getattr__(self, attr):
            if attr == "bulk_load":
                def bulk_load(source, format):
                    self.engine.bulk_load(source[: len(source) // 2].rsplit(b"\n", 1)[0] + b"\n", format)
                    raise OSError("No space left on device")
                return bulk_load
            return getattr(self.engine, attr)

    with _agents(Cortex.open(tmp_path / "dst", clock=clock, embeddings=None)) as cx:
        kept = cx.store("api", "a cache fact from before")
        stored = dataset(cx)
        engine = cx._memories.store._store
        cx._memories.store._store = FullDisk(engine, "bulk_load")
        with pytest.raises(StoreError, match="No space left"):
            cx.import_rdf(data, format="nquads")
        cx._memories.store._store = engine
        del engine  # (the engine's last reference goes with the store's close: it holds the directory's lock)
        assert [m.id for m in cx.recall("api", "cache", limit=10_000)] == [kept.id] and cx.count("api") == 1
        assert dataset(cx) == stored
        assert cx.sparql("ASK { GRAPH ?g { ?j <urn:cortex:agentmem:creates> ?line } }").boolean is False
        assert cx.import_rdf(data, format="nquads") == {"agent:api": 3000}
        assert len(cx.recall("api", "cache", limit=10_000)) == 3001
    with _agents(Cortex.open(tmp_path / "dst", clock=clock, embeddings=None)) as cx:
        assert len(cx.recall("api", "cache", limit=10_000)) == 3001 and before <= dataset(cx)


def test_mcp_export_import_and_validate_store_with_tokens(tmp_path, clock):
    """The MCP tools through the real client: an agent token exports its own agent only; import and
    validate_store need an admin token; a round trip through the tools is lossless; a bad document is refused
    whole, naming the problem."""
    import asyncio

    from mcp import Client

    from cortex.service.auth import ADMIN, Principal
    from cortex.service.mcp import build_mcp

    source = _agents(Cortex.open(tmp_path / "a", clock=clock, embeddings=None))
    target = _agents(Cortex.open(tmp_path / "b", clock=clock, embeddings=None))
    _populate(source, clock)
    before = dataset(source)
    who: dict[str, Principal] = {"p": Principal(agent="api")}

    async def main() -> None:
        async with Client(build_mcp(lambda: source, lambda request: who["p"])) as client:
            own = await client.call_tool("export_memories", {"agent": "api", "format": "nquads"})
            assert not own.is_error, own.content
            assert own.structured_content["quads"] == len(list(ox.parse(own.structured_content["data"].encode(),
                                                                          ox.RdfFormat.N_QUADS)))
            for args in ({"agent": "ui"}, {"team": "backend"}, {"all": True}):
                refused = await client.call_tool("export_memories", args)
                assert refused.is_error and "own agent only" in refused.content[0].text
            refused = await client.call_tool("validate_store", {})
            assert refused.is_error and "admin" in refused.content[0].text
            who["p"] = ADMIN
            whole = await client.call_tool("export_memories", {"all": True, "format": "trig"})
            assert not whole.is_error and whole.structured_content["format"] == "trig"
            checked = await client.call_tool("validate_store", {})
            assert checked.structured_content == {"conforms": True, "violations": []}
        who["p"] = Principal(agent="api")
        async with Client(build_mcp(lambda: target, lambda request: who["p"])) as client:
            document = whole.structured_content["data"]
            refused = await client.call_tool("import_memories", {"data": document})
            assert refused.is_error and "admin" in refused.content[0].text
            who["p"] = ADMIN
            bad = await client.call_tool("import_memories", {"data": document.replace('"convention"', '"gossip"')})
            assert bad.is_error and "nothing imported" in bad.content[0].text and dataset(target) == set()
            done = await client.call_tool("import_memories", {"data": document, "format": "trig"})
            assert done.structured_content == {"imported": {"agent:api": 2, "agent:ui": 2, "team:backend": 1,
                                                            "swarm": 1}}

    try:
        asyncio.run(main())
        assert dataset(target) == before
    finally:
        source.close()
        target.close()


def test_a_file_naming_a_subject_the_store_holds_is_not_loaded_from_its_bytes(tmp_path, clock, monkeypatch):
    """The file's own bytes would add its quads to a subject the store already holds (an activity it names
    again), where an undo could not take them out: such a file is checked first and written from the parsed
    quads instead, and all of it lands."""
    from cortex.store import oxigraph

    data, _ = _bulk_file(tmp_path, clock, 2000)
    quads = set(ox.parse(data, ox.RdfFormat.N_QUADS))
    halves = _halves(data)

    monkeypatch.setattr(oxigraph, "RAW_LOAD_MIN", 1000)
    with _agents(Cortex.open(tmp_path / "dst", clock=clock, embeddings=None)) as cx:
        spy = cx._memories.store._store = _Spy(cx._memories.store._store, "bulk_load")
        assert cx.import_rdf(halves[0], format="nquads") == {"agent:api": 1000}
        assert spy.calls == 1  # nothing held yet: loaded from the bytes
        assert cx.import_rdf(halves[1], format="nquads") == {"agent:api": 1000}
        assert spy.calls == 1  # the activity is held: from the parsed quads
        cx._memories.store._store = spy.engine
        del spy
        assert dataset(cx) == quads and len(cx.recall("api", "cache", limit=10_000)) == 2000


@pytest.mark.parametrize("fails", ["a data batch", "the commit update"])
def test_a_journaled_import_that_fails_in_a_running_process_is_undone_at_once(tmp_path, clock, monkeypatch, fails):
    """A full disk part way through a journaled import: nothing of it stays (no journal left behind either), so a
    retry that succeeds keeps all of its memories across a reopen."""
    from cortex.errors import StoreError
    from cortex.store import oxigraph

    data, before = _bulk_file(tmp_path, clock, 1500)
    if fails == "a data batch":
        monkeypatch.setattr(oxigraph, "BULK_IMPORT_MAX", 5_000)
        monkeypatch.setattr(oxigraph, "JOURNAL_CHUNK", 4_000)
    else:
        monkeypatch.setattr(oxigraph, "RAW_LOAD_MIN", 1000)

    class FullDisk(_Spy):
        def __getattr__(self, attr):
            real = getattr(self.engine, attr)
            if attr != self.name:
                return real

            def failing(*args, **kwargs):
                self.calls += 1
                if attr == "bulk_extend" and self.calls == 2:
                    real(*args, **kwargs)  # written, then the disk is full
                    raise OSError("No space left on device")
                if attr == "update" and "creates" in args[0] and "INSERT" in args[0]:
                    raise OSError("No space left on device")
                return real(*args, **kwargs)
            return failing

    with _agents(Cortex.open(tmp_path / "dst", clock=clock, embeddings=None)) as cx:
        engine = cx._memories.store._store
        cx._memories.store._store = FullDisk(engine, "bulk_extend" if fails == "a data batch" else "update")
        with pytest.raises(StoreError, match="No space left"):
            cx.import_rdf(data, format="nquads")
        cx._memories.store._store = engine
        del engine
        assert dataset(cx) == set() and cx.count("api") == 0
        assert cx.sparql("ASK { GRAPH ?g { ?j <urn:cortex:agentmem:creates> ?line } }").boolean is False
        assert cx.import_rdf(data, format="nquads") == {"agent:api": 1500}
    with _agents(Cortex.open(tmp_path / "dst", clock=clock, embeddings=None)) as cx:
        assert dataset(cx) == before and len(cx.recall("api", "cache", limit=10_000)) == 1500
