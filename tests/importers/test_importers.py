"""Importers from other memory systems and the Beads export (docs/capture.md, "Importers" and "Beads"), on a real
on-disk store with the recorded formats of tests/fixtures/importers (tests/fixtures/harnesses/README.md says where
each comes from): each importer, dry runs, re-runs, the Beads round trip and rotation, the MCP memory server's
relations as triples, bad input; then the CLI, HTTP, MCP, a server's client and a remote Oxigraph store."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from cortex import Cortex
from cortex.errors import InvalidInputError
from cortex.importers import beads
from cortex.model import Source
from cortex.notices import CortexWarning

from tests.conftest import Clock
from tests.service_helpers import asgi_request, make_project, run_cli, start_server
from tests.paths import TESTS

FIXTURES = TESTS / "fixtures" / "importers"
BEADS, MEM0 = FIXTURES / "beads", FIXTURES / "mem0" / "get_all.json"
MCP, CLAUDE = FIXTURES / "mcp-memory" / "memory.jsonl", FIXTURES / "claude-auto-memory"
REL = "urn:cortex:agentmem:rel:"
#: a GitHub token's shape (random, not a real one)
SECRET = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"


@pytest.fixture
def dev(store_path: Path) -> Cortex:
    """An on-disk store with agents ``dev`` and ``ops``, its clock after the fixtures' times."""
    with Cortex.open(store_path, clock=Clock(datetime(2026, 11, 24, 12, tzinfo=timezone.utc)), embeddings=None) as cx:
        cx.agents.register("dev", description="developer")
        cx.agents.register("ops", description="operations")
        yield cx


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def relations(cx: Cortex, agent: str = "dev") -> set[tuple[str, str, str]]:
    rows = cx.sparql(f'SELECT ?a ?p ?b WHERE {{ ?a ?p ?b FILTER(STRSTARTS(STR(?p), "{REL}")) }}', agent=agent)
    return {(r["a"].value.rsplit(":", 1)[-1], r["p"].value[len(REL):], r["b"].value.rsplit(":", 1)[-1]) for r in rows}


# -- the store's extra triples ---------------------------------------------------------------------


@pytest.mark.parametrize("where", ["embedded", pytest.param("oxigraph", marks=pytest.mark.server)])
def test_a_store_writes_extra_triples_with_its_memories(where, tmp_path, request):
    """``MemoryStore.add(scope, memories, activity, extra=)``: triples of the scope's graph that are not memories,
    in the same write (alone too); the memory count and the log's ids see only the memories."""
    from pyoxigraph import Literal, NamedNode, Triple

    from cortex.model import Scope
    from cortex.store import open_store
    from cortex.validation import memory_from_entry
    from cortex.vocab import RDF_TYPE, Vocabulary

    if where == "oxigraph":
        server = request.getfixturevalue("oxigraph_server")
        server.clear()
        location = server.url
    else:
        location = tmp_path / "store"
    vocab, scope = Vocabulary(), Scope.agent("dev")
    store = open_store(location, vocab)
    try:
        memory = memory_from_entry("dev", {"content": "Redis caches order totals"}, datetime.now(timezone.utc))
        node = vocab.entity(scope, "Redis cache")
        extra = [Triple(node, RDF_TYPE, vocab.predicate("Entity")), Triple(node, vocab.predicate("name"),
                                                                           Literal("Redis cache")),
                 Triple(vocab.memory(scope, memory.id), vocab.predicate("about"), node)]
        change = store.add(scope, [memory], None, extra)
        assert store.count(scope) == 1 and store.get_many(scope, [memory.id])[0].content == memory.content
        assert [c.ids for c in store.changes(scope, change.seq - 1)] == [(memory.id,)]
        quads = {(q.subject.value, q.predicate.value, q.object.value) for q in store.export(scope)}
        assert (node.value, "urn:cortex:agentmem:name", "Redis cache") in quads
        assert node.value == "urn:cortex:agent:dev:entity:Redis%20cache"
        # alone: a relation between two entities, one logged change without ids
        other = vocab.entity(scope, "shop")
        alone = store.add(scope, [], None, [Triple(other, vocab.relation("works at"), node)])
        assert alone.seq == change.seq + 1 and store.count(scope) == 1
        assert (other.value, "urn:cortex:agentmem:rel:works%20at", node.value) in {
            (q.subject.value, q.predicate.value, q.object.value) for q in store.export(scope)}
        assert vocab.relation_type("urn:cortex:agentmem:rel:works%20at") == "works at"
        # a replacement (a validation) keeps the memory's am:about
        store.write(scope, [], [(memory, memory.model_copy(update={"confidence": 0.9}), False)])
        assert any(q.predicate == vocab.predicate("about") for q in store.export(scope)
                   if q.subject == NamedNode(vocab.memory(scope, memory.id).value))
    finally:
        store.close()


# -- each importer ---------------------------------------------------------------------------------


def test_beads_knowledge_log_and_archive(dev):
    report = dev.import_from("beads", BEADS, agent="dev")  # the directory: archive, then the log
    assert report.files == ["knowledge.archive.jsonl", "knowledge.jsonl"] and not report.failed
    assert len(report.imported) == 7 and report.imported[0].where == "knowledge.archive.jsonl:1"
    memories = {(m.metadata or {})["import"]["key"]: m for m in dev.recall("dev", limit=50)}
    fact = memories["fact-redis-caches-order-totals-for-10-minutes-key-order-total-i"]
    assert fact.content == "Redis caches order totals for 10 minutes (key order:total:<id>)"
    assert fact.source is Source.IMPORT and fact.expires_at is None  # the import source never expires
    assert set(fact.tags) == {"beads", "fact", "cache", "redis", "shop-7ha"} and fact.type.value == "insight"
    assert fact.created_at == datetime.fromtimestamp(1788344719, timezone.utc)
    assert fact.metadata["import"] == {"system": "beads", "file": "knowledge.jsonl", "where": "knowledge.jsonl:3",
                                       "key": fact.metadata["import"]["key"], "order": 1788344719.0}
    assert fact.metadata["beads"] == {"type": "fact", "source": "supervisor", "tags": ["fact", "cache", "redis"],
                                      "ts": 1788344719, "bead": "shop-7ha"}
    assert memories["pattern-use-the-money-fixture-from-conftest-instead-of-literal-decim"].type.value == "pattern"
    generated = dev.provenance("dev", fact.id).generated_by
    assert (generated.channel, generated.file) == ("import:beads", "knowledge.jsonl")
    # bd's own memories (bd export --include-memories): the issue line is not one
    native = dev.import_from("beads", BEADS / "bd_export.jsonl", agent="ops")
    assert [i.key for i in native.imported] == ["dolt-phantoms", "money-amounts-are-decimal-never-float"]
    assert native.skipped[0].where == "bd_export.jsonl:1" and "issue" in native.skipped[0].reason


def test_mem0_get_all(dev):
    report = dev.import_from("mem0", MEM0, agent="dev")
    assert len(report.imported) == 3 and not report.failed and not report.skipped
    assert report.imported[1].where == "get_all.json: results[1]"
    money = dev.get("dev", report.imported[1].memory_id)
    assert money.content == "Money amounts are Decimal, never float" and set(money.tags) == {"mem0", "convention"}
    assert money.metadata["import"]["key"] == "c9f0f895-fb98-4b91-9f5a-3e2d1c0b7a64"
    assert money.metadata["mem0"]["agent_id"] == "developer" and money.metadata["mem0"]["metadata"]["source"] == \
        "code-review"
    assert money.created_at == datetime(2026, 8, 21, 9, 40, 2, 117403, tzinfo=timezone.utc)
    assert dev.provenance("dev", money.id).generated_by.channel == "import:mem0"
    # a newer version of an id (updated_at later) supersedes its memory; an older one is skipped
    data = json.loads(MEM0.read_text())
    data["results"][1].update(memory="Money amounts are Decimal (ROUND_HALF_UP), never float",
                              updated_at="2026-09-30T10:00:00+00:00")
    newer = dev.import_from("mem0", json.dumps(data).encode(), agent="dev", name="get_all.json")
    assert [(i.key, i.supersedes) for i in newer.imported] == [("c9f0f895-fb98-4b91-9f5a-3e2d1c0b7a64", money.id)]
    assert dev.get("dev", money.id).superseded_by == newer.imported[0].memory_id
    assert [m.content for m in dev.recall("dev", "ROUND_HALF_UP")] == [data["results"][1]["memory"]]
    again = dev.import_from("mem0", MEM0, agent="dev")  # the old export again: older than what is stored
    assert not again.imported and "older than memory" in next(s.reason for s in again.skipped
                                                             if s.key == money.metadata["import"]["key"])


def test_mcp_memory_relations_are_triples_and_observations_memories(dev):
    report = dev.import_from("mcp-memory", MCP, agent="dev")
    memories = [i for i in report.imported if i.kind == "memory"]
    assert len(memories) == 6 and report.entities == 3 and not report.failed
    assert [i.key for i in report.imported if i.kind == "relation"] == ["dev -[maintains]-> shop",
                                                                         "shop -[depends_on]-> Redis"]
    assert relations(dev) == {("dev", "maintains", "shop"), ("shop", "depends_on", "Redis")}
    # the observations are recalled, each about its entity
    hit = dev.recall("dev", "Redis 10 minutes")
    assert [m.content for m in hit] == ["Redis (service): Caches order totals for 10 minutes"]
    assert set(hit[0].tags) == {"mcp-memory", "service", "observation"}
    about = dev.sparql("PREFIX am: <urn:cortex:agentmem:> SELECT ?content ?name ?kind WHERE { ?m am:about ?e ; "
                       "am:content ?content . ?e am:name ?name ; am:entityType ?kind } ORDER BY ?content", agent="dev")
    assert len(about) == 6 and {(r["name"].value, r["kind"].value) for r in about} == {
        ("shop", "project"), ("dev", "person"), ("Redis", "service")}
    # who maintains what the cache serves: a query across the relations
    chain = dev.sparql(f"SELECT ?who WHERE {{ ?who <{REL}maintains> ?p . ?p <{REL}depends_on> ?svc . "
                       f"?svc <urn:cortex:agentmem:name> \"Redis\" }}", agent="dev")
    assert [r["who"].value for r in chain] == ["urn:cortex:agent:dev:entity:dev"]
    assert dev.validate_store() == []  # the shapes of entities and am:about hold
    # another agent's queries see none of it
    assert relations(dev, "ops") == set()
    # the link survives the lifecycle: validate and update keep am:about
    dev.validate("dev", hit[0].id)
    dev.update("dev", hit[0].id, content="Redis (service): Caches order totals for 15 minutes")
    assert len(dev.sparql("PREFIX am: <urn:cortex:agentmem:> SELECT ?e WHERE { ?m am:about ?e ; am:content ?c "
                          "FILTER(CONTAINS(?c, '15 minutes')) }", agent="dev")) == 1
    # lossless through Cortex's own RDF export and import
    out = io.BytesIO()
    dev.export(out, agent="dev")
    with Cortex.open(None, embeddings=None) as other:
        other.agents.register("dev")
        assert other.import_rdf(out.getvalue(), format="trig") == {"agent:dev": 6}
        assert relations(other) == relations(dev)
        assert other.validate_store() == []


def test_claude_memory_directory_and_claude_md(dev, tmp_path):
    report = dev.import_from("claude", CLAUDE, agent="dev")
    assert report.files == ["MEMORY.md", "feedback_money_decimal.md", "project_test_runner.md"]
    assert [i.where for i in report.imported] == ["feedback_money_decimal.md:6-8", "project_test_runner.md:6-7"]
    assert [s.reason for s in report.skipped] == [  # the index's entries are their topic files
        "an index entry for feedback_money_decimal.md (its memory is imported from that file)",
        "an index entry for project_test_runner.md (its memory is imported from that file)"]
    money = dev.get("dev", report.imported[0].memory_id)
    assert money.type.value == "convention" and set(money.tags) == {"claude", "auto-memory", "feedback"}
    assert money.metadata["claude"]["name"] == "Money is Decimal" and money.content.startswith("Money amounts are")
    claude_md = tmp_path / "CLAUDE.md"
    claude_md.write_text("# Shop\nUse uv, not pip.\n\n## Testing\nRun `pytest -q`.\n\n## Money\n- Decimal only\n")
    sections = dev.import_from("claude", claude_md, agent="dev")
    assert [i.key for i in sections.imported] == ["CLAUDE.md#Shop", "CLAUDE.md#Shop > Testing",
                                                  "CLAUDE.md#Shop > Money"]
    testing = dev.get("dev", sections.imported[1].memory_id)
    assert testing.content == "Shop > Testing\nRun `pytest -q`." and testing.type.value == "convention"
    # a section whose text changed supersedes its memory; the others stay
    claude_md.write_text("# Shop\nUse uv, not pip.\n\n## Testing\nRun `pytest -q -x`.\n\n## Money\n- Decimal only\n")
    changed = dev.import_from("claude", claude_md, agent="dev")
    assert [(i.key, i.supersedes) for i in changed.imported] == [("CLAUDE.md#Shop > Testing", testing.id)]
    assert len(changed.skipped) == 2
    assert [h.content for h in dev.history("dev", testing.id)] == ["Shop > Testing\nRun `pytest -q`."]
    assert dev.get("dev", testing.id).superseded


# -- dry runs, re-runs, atomicity, redaction -------------------------------------------------------


@pytest.mark.parametrize("system, path, count", [("beads", BEADS, 7), ("mem0", MEM0, 3), ("mcp-memory", MCP, 8),
                                                 ("claude", CLAUDE, 2)])
def test_dry_run_writes_nothing_and_a_second_run_imports_nothing_new(dev, system, path, count):
    dry = dev.import_from(system, path, agent="dev", dry_run=True)
    assert dry.dry_run and len(dry.imported) == count and all(i.memory_id is None for i in dry.imported)
    assert dev.count("dev") == 0 and relations(dev) == set()
    assert not dev.sparql("ASK { ?s ?p ?o FILTER(STRSTARTS(STR(?s), 'urn:cortex:agent:dev:entity:')) }").boolean
    done = dev.import_from(system, path, agent="dev")
    assert [(i.where, i.key, i.kind) for i in done.imported] == [(i.where, i.key, i.kind) for i in dry.imported]
    assert done.entities == dry.entities
    stored = dev.count("dev")
    again = dev.import_from(system, path, agent="dev")
    assert again.imported == [] and len(again.skipped) == len(done.skipped) + count
    assert {s.reason for s in again.skipped if s.key} <= {"already imported"} | {s.reason for s in done.skipped}
    assert dev.count("dev") == stored
    assert dev.import_from(system, path, agent="dev", dry_run=True).imported == []


def test_a_bad_item_fails_alone_and_secrets_are_redacted(dev, tmp_path):
    good = {"key": "learned-ok", "type": "learned", "content": f"Deploy token is {SECRET} for CI", "source": "user",
            "tags": ["learned"], "ts": 1788340502, "bead": "b-1"}
    huge = dict(good, key="learned-huge", content="x" * 70_000)
    path = tmp_path / "knowledge.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in (good, huge)) + "\n")
    with pytest.warns(CortexWarning, match="replaced 1 secret .1 github-token. by placeholders"):
        report = dev.import_from("beads", path, agent="dev")
    assert [i.key for i in report.imported] == ["learned-ok"]
    assert report.failed[0].where == "knowledge.jsonl:2" and "content" in report.failed[0].reason
    assert report.redacted == {"github-token": 1}
    stored = dev.get("dev", report.imported[0].memory_id)
    assert SECRET not in stored.content and "[REDACTED:github-token]" in stored.content
    out = io.BytesIO()
    dev.export(out, all=True, format="nquads")
    assert SECRET.encode() not in out.getvalue()


# -- Beads: supersession, round trip, rotation ------------------------------------------------------


def test_beads_same_key_latest_wins(dev, tmp_path):
    first = dev.import_from("beads", BEADS / "knowledge.jsonl", agent="dev")
    key = "learned-order-totals-must-be-quantized-once-after-summing-not-per"
    old = next(i.memory_id for i in first.imported if i.key == key)
    line = lines(BEADS / "knowledge.jsonl")[0]
    newer = dict(line, content="Order totals are quantized once, after summing (ROUND_HALF_UP)", ts=line["ts"] + 60)
    older = dict(line, content="Order totals are rounded per line", ts=line["ts"] - 60)
    path = tmp_path / "knowledge.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in (older, newer, line)) + "\n")
    report = dev.import_from("beads", path, agent="dev")
    assert [(i.where, i.supersedes) for i in report.imported] == [("knowledge.jsonl:2", old)]
    assert {s.where for s in report.skipped} == {"knowledge.jsonl:1", "knowledge.jsonl:3"}  # older lines of the key
    new = dev.get("dev", report.imported[0].memory_id)
    assert dev.get("dev", old).superseded_by == new.id and new.source is Source.IMPORT
    assert new.valid_from == datetime.fromtimestamp(newer["ts"], timezone.utc)
    assert dev.provenance("dev", new.id).derived_from == [old]
    assert [m.id for m in dev.recall("dev", "quantized")] == [new.id]
    # the export writes the winner only, with its time
    dev.export_beads(tmp_path / "out", agent="dev")
    exported = {x["key"]: x for x in lines(tmp_path / "out" / "knowledge.jsonl")}
    assert exported[key]["content"] == newer["content"] and exported[key]["ts"] == newer["ts"]


def test_beads_round_trip_gives_the_same_lines(dev, tmp_path):
    dev.import_from("beads", BEADS, agent="dev")
    result = dev.export_beads(tmp_path / "memory", agent="dev")
    assert result["knowledge"] == 7 and result["archive"] == 0 and result["exported"] == 7
    written = (tmp_path / "memory" / "knowledge.jsonl").read_text()
    assert {x["key"]: x for x in lines(tmp_path / "memory" / "knowledge.jsonl")} == {
        x["key"]: x for x in lines(BEADS / "knowledge.archive.jsonl") + lines(BEADS / "knowledge.jsonl")}
    # compact lines, the plugin's key order
    assert written.splitlines()[-1] == (BEADS / "knowledge.jsonl").read_text().splitlines()[-1]
    # into a copy of the Beads directory: nothing changes (archived lines stay archived)
    copy = tmp_path / "beads"
    shutil.copytree(BEADS, copy)
    dev.export_beads(copy, agent="dev")
    for name in ("knowledge.jsonl", "knowledge.archive.jsonl"):
        assert lines(copy / name) == lines(BEADS / name)
    # a memory stored in Cortex goes out with the plugin's key; a line only the directory has stays
    dev.store("dev", "Never retry a payment twice", type="decision")
    with open(copy / "knowledge.jsonl", "a") as fh:
        fh.write(json.dumps({"key": "fact-only-in-beads", "type": "fact", "content": "Only in Beads", "source": "user",
                             "tags": ["fact"], "ts": 1788400000, "bead": "shop-x"}) + "\n")
    result = dev.export_beads(copy, agent="dev")
    keys = [x["key"] for x in lines(copy / "knowledge.jsonl")]
    assert "decision-never-retry-a-payment-twice" in keys and "fact-only-in-beads" in keys
    assert result["kept"] == 1  # the line only Beads had (the archived ones are Cortex's too)


def test_beads_rotation_past_1000_lines(dev, tmp_path):
    source = tmp_path / "big"
    source.mkdir()
    generated = [{"key": f"learned-item-{i:04d}", "type": "learned", "content": f"Item {i:04d} of the log",
                  "source": "user", "tags": ["learned"], "ts": 1780000000 + i, "bead": "b-1"} for i in range(1200)]
    (source / "knowledge.jsonl").write_text("".join(beads.encode(x) + "\n" for x in generated))
    assert len(dev.import_from("beads", source / "knowledge.jsonl", agent="dev").imported) == 1200
    result = dev.export_beads(tmp_path / "out", agent="dev")
    assert (result["knowledge"], result["archive"]) == (700, 500)
    assert lines(tmp_path / "out" / "knowledge.archive.jsonl") == generated[:500]  # the oldest 500
    assert lines(tmp_path / "out" / "knowledge.jsonl") == generated[500:]
    assert beads.rotate(generated[:1000]) == (generated[:1000], [])  # 1,000 lines: no rotation
    # the archive is imported too (directory), and nothing new comes in
    again = dev.import_from("beads", tmp_path / "out", agent="dev")
    assert again.files == ["knowledge.archive.jsonl", "knowledge.jsonl"] and again.imported == []


# -- bad input ---------------------------------------------------------------------------------------


def test_bad_lines_are_named_and_the_rest_imported(dev, tmp_path):
    good = lines(BEADS / "knowledge.jsonl")
    text = "\n".join([json.dumps(good[0]), json.dumps({"type": "learned", "content": "no key here", "ts": 1}),
                      "{not json", "[1, 2]", json.dumps(good[1]), json.dumps(good[2])[:40]])  # cut: no newline
    path = tmp_path / "knowledge.jsonl"
    path.write_text(text)
    report = dev.import_from("beads", path, agent="dev")
    assert [i.where for i in report.imported] == ["knowledge.jsonl:1", "knowledge.jsonl:5"]
    reasons = {f.where: f.reason for f in report.failed}
    assert set(reasons) == {"knowledge.jsonl:2", "knowledge.jsonl:3", "knowledge.jsonl:4", "knowledge.jsonl:6"}
    assert reasons["knowledge.jsonl:2"].startswith("no key")
    assert reasons["knowledge.jsonl:3"].startswith("not JSON")
    assert reasons["knowledge.jsonl:4"] == "a JSON list, not an object"
    assert reasons["knowledge.jsonl:6"].startswith("truncated")
    # once the line is complete, the next run imports it (and only it)
    path.write_text(text[:text.rindex("\n")] + "\n" + json.dumps(good[2]) + "\n")
    assert [i.where for i in dev.import_from("beads", path, agent="dev").imported] == ["knowledge.jsonl:6"]
    # mem0 and the MCP memory server: an item without its identity, a relation without an end
    data = json.loads(MEM0.read_text())
    del data["results"][0]["id"]
    mem0 = dev.import_from("mem0", json.dumps(data).encode(), agent="ops", name="get_all.json")
    assert [(f.where, f.reason) for f in mem0.failed] == [("get_all.json: results[0]", "no id: every mem0 memory has "
                                                           "one (its identity)")]
    assert len(mem0.imported) == 2
    graph = MCP.read_text() + '\n{"type":"relation","from":"dev","relationType":"owns"}'
    mcp = dev.import_from("mcp-memory", graph.encode(), agent="ops", name="memory.jsonl")
    assert [(f.where, f.kind) for f in mcp.failed] == [("memory.jsonl:6", "relation")]
    assert len(mcp.imported) == 8


def test_unknown_systems_and_files_of_another_format_are_named(dev, tmp_path):
    with pytest.raises(InvalidInputError, match="unknown system 'letta'; use one of beads, mem0, mcp-memory, claude"):
        dev.import_from("letta", MEM0, agent="dev")
    with pytest.raises(InvalidInputError, match=r"get_all.json is not a Beads knowledge file .*: it looks like the "
                                                r"JSON of mem0's get_all .*`cortex import mem0 FILE`"):
        dev.import_from("beads", MEM0, agent="dev")
    with pytest.raises(InvalidInputError, match="memory.jsonl is not the JSON of mem0's get_all .* it looks like the "
                                                "MCP memory server's memory.jsonl"):
        dev.import_from("mem0", MCP, agent="dev")
    out = io.BytesIO()
    dev.store("dev", "an RDF export")
    dev.export(out, agent="dev")
    (tmp_path / "all.trig").write_bytes(out.getvalue())
    with pytest.raises(InvalidInputError, match="all.trig is not .* it looks like RDF .*`cortex import FILE`"):
        dev.import_from("mcp-memory", tmp_path / "all.trig", agent="dev")
    (tmp_path / "blob.jsonl").write_bytes(b"\x00\x01binary")
    with pytest.raises(InvalidInputError, match="blob.jsonl is binary"):
        dev.import_from("beads", tmp_path / "blob.jsonl", agent="dev")
    with pytest.raises(InvalidInputError, match="no such file"):
        dev.import_from("mem0", tmp_path / "missing.json", agent="dev")
    # in a directory, a bad file is reported and the others imported
    memory = tmp_path / "memory"
    shutil.copytree(CLAUDE, memory)
    (memory / "broken.md").write_bytes(b"\xff\xfe not utf-8")
    report = dev.import_from("claude", memory, agent="dev")
    assert len(report.imported) == 2 and report.failed[0].where == "broken.md"
    assert "not UTF-8" in report.failed[0].reason


# -- surfaces ----------------------------------------------------------------------------------------


def test_cli_imports_beside_the_rdf_import_and_exports_beads(tmp_path):
    project = make_project(tmp_path / "proj", "dev")
    dry = run_cli(project, "import", "mem0", str(MEM0), "--agent", "dev", "--dry-run", "--progress")
    assert dry.returncode == 0, dry.stderr
    report = json.loads(dry.stdout)
    assert report["dry_run"] and len(report["imported"]) == 3 and "would import 3 memories" in dry.stderr
    ran = run_cli(project, "import", "mcp-memory", str(MCP), "--agent", "dev")
    assert ran.returncode == 0, ran.stderr
    assert "imported 6 memories and 2 relations from memory.jsonl" in ran.stderr
    again = run_cli(project, "import", "mcp-memory", str(MCP), "--agent", "dev")
    assert json.loads(again.stdout)["imported"] == [] and "8 skipped" in again.stderr
    ran = run_cli(project, "import", "beads", str(BEADS), "--agent", "dev")
    assert len(json.loads(ran.stdout)["imported"]) == 7
    bad = run_cli(project, "import", "letta", str(MEM0), "--agent", "dev")
    assert bad.returncode == 1 and "unknown system 'letta'" in bad.stderr
    assert run_cli(project, "import", "mem0", str(MEM0)).returncode == 2  # --agent is required
    wrong = run_cli(project, "import", "beads", str(MEM0), "--agent", "dev")
    assert wrong.returncode == 1 and "it looks like the JSON of mem0's get_all" in wrong.stderr
    exported = run_cli(project, "export", "beads", str(tmp_path / "out"), "--agent", "dev")
    assert exported.returncode == 0, exported.stderr
    assert json.loads(exported.stdout)["knowledge"] == 13
    # the RDF import is as it was: `cortex import FILE`
    assert run_cli(project, "export", "--agent", "dev", "-o", str(tmp_path / "dev.trig")).returncode == 0
    other = make_project(tmp_path / "other", "dev")
    rdf = run_cli(other, "import", str(tmp_path / "dev.trig"))
    assert rdf.returncode == 0, rdf.stderr
    assert json.loads(rdf.stdout) == {"imported": {"agent:dev": 13}}


def test_http_imports_the_body_and_answers_the_beads_log(dev, store_path):
    from cortex.service.auth import TokenStore
    from cortex.service.http import create_app

    tokens = TokenStore(store_path)
    mine, theirs = tokens.create("dev"), tokens.create("ops")
    app = create_app(dev, tokens=tokens, allowed_hosts=["127.0.0.1"], mcp=False)
    dry = asgi_request(app, "POST", "/v1/import/mem0?agent=dev&dry_run=true&name=get_all.json", mine,
                       content=MEM0.read_bytes())
    assert dry.status_code == 200, dry.text
    assert dry.json()["dry_run"] and len(dry.json()["imported"]) == 3 and dev.count("dev") == 0
    done = asgi_request(app, "POST", "/v1/import/beads?agent=dev&name=knowledge.jsonl", mine,
                        content=(BEADS / "knowledge.jsonl").read_bytes())
    assert done.status_code == 200 and len(done.json()["imported"]) == 5
    assert dev.get("dev", done.json()["imported"][0]["memory_id"]).metadata["import"]["file"] == "knowledge.jsonl"
    # an agent's token imports into its own agent only; an unknown system is named
    assert asgi_request(app, "POST", "/v1/import/mem0?agent=dev", theirs, content=MEM0.read_bytes()).status_code == 404
    unknown = asgi_request(app, "POST", "/v1/import/letta?agent=dev", mine, content=b"{}")
    assert unknown.status_code == 422 and "unknown system" in unknown.json()["error"]["message"]
    log = asgi_request(app, "GET", "/v1/agents/dev/export/beads", mine)
    assert log.status_code == 200 and log.headers["content-type"].startswith("application/x-ndjson")
    assert [json.loads(x) for x in log.text.splitlines()] == lines(BEADS / "knowledge.jsonl")
    assert asgi_request(app, "GET", "/v1/agents/dev/export/beads", theirs).status_code == 404


def test_mcp_tools_import_and_export(dev, tmp_path):
    from mcp import Client

    from cortex.service.auth import ADMIN, Principal
    from cortex.service.mcp import build_mcp

    async def main() -> None:
        async with Client(build_mcp(lambda: dev, lambda request: ADMIN)) as client:
            dry = await client.call_tool("import_memories_from", {"system": "mcp-memory", "path": str(MCP),
                                                                   "agent": "dev", "dry_run": True})
            assert not dry.is_error, dry.content
            assert dry.structured_content["dry_run"] and dev.count("dev") == 0
            done = await client.call_tool("import_memories_from", {"system": "beads", "path": str(BEADS),
                                                                    "agent": "dev"})
            assert not done.is_error, done.content
            assert len(done.structured_content["imported"]) == 7
            written = await client.call_tool("export_beads", {"agent": "dev", "directory": str(tmp_path / "b")})
            assert not written.is_error, written.content
            assert written.structured_content["knowledge"] == 7
        outside = tmp_path / "get_all.json"
        shutil.copy(MEM0, outside)
        async with Client(build_mcp(lambda: dev, lambda request: Principal(agent="dev"))) as client:
            refused = await client.call_tool("import_memories_from", {"system": "mem0", "path": str(outside),
                                                                      "agent": "dev"})
            assert refused.is_error and "admin token" in refused.content[0].text
            other = await client.call_tool("import_memories_from", {"system": "mem0", "path": str(MEM0),
                                                                    "agent": "ops"})
            assert other.is_error

    asyncio.run(main())
    assert lines(tmp_path / "b" / "knowledge.jsonl")[-1] == lines(BEADS / "knowledge.jsonl")[-1]


def test_a_servers_client_sends_the_files_and_writes_the_directory(tmp_path):
    from cortex.client import RemoteCortex

    project = make_project(tmp_path / "proj", "dev")
    server = start_server(project)
    try:
        with RemoteCortex(server.url, server.token) as client:
            report = client.import_from("claude", CLAUDE, agent="dev")  # a directory: a request a file
            assert report.files == ["MEMORY.md", "feedback_money_decimal.md", "project_test_runner.md"]
            assert len(report.imported) == 2 and len(report.skipped) == 2
            assert client.import_from("claude", CLAUDE, agent="dev").imported == []
            beads_report = client.import_from("beads", BEADS, agent="dev", dry_run=True)
            assert len(beads_report.imported) == 7 and client.count("dev") == 2
            client.import_from("beads", BEADS, agent="dev")
            result = client.export_beads(tmp_path / "out", agent="dev")
            assert result["knowledge"] == 9 and (tmp_path / "out" / "knowledge.jsonl").exists()
    finally:
        server.stop()


@pytest.mark.server
def test_on_a_remote_oxigraph_store(oxigraph_server, tmp_path):
    oxigraph_server.clear()
    with Cortex.open(oxigraph_server.url, embeddings=None, state_dir=tmp_path / "state", client=False) as cx:
        cx.agents.register("dev")
        report = cx.import_from("mcp-memory", MCP, agent="dev")
        assert len(report.imported) == 8 and report.entities == 3
        assert relations(cx) == {("dev", "maintains", "shop"), ("shop", "depends_on", "Redis")}
        assert [m.content for m in cx.recall("dev", "Redis minutes")] == [
            "Redis (service): Caches order totals for 10 minutes"]
        again = cx.import_from("mcp-memory", MCP, agent="dev")
        assert again.imported == [] and again.entities == 0
        assert cx.count("dev") == 6
        assert len(cx.sparql("PREFIX am: <urn:cortex:agentmem:> SELECT ?m WHERE { ?m am:about ?e }", agent="dev")) == 6
        assert len(cx.import_from("beads", BEADS, agent="dev").imported) == 7
        cx.export_beads(tmp_path / "out", agent="dev")
    assert len(lines(tmp_path / "out" / "knowledge.jsonl")) == 13
