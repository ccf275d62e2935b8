"""Regression tests for the second adversarial probe (issue 18): findings 6 (nesting an import's parser cannot
take), 7 (backups never silently empty, every export imports) and 8 (the smaller ones). Each reproduces the
reported attack through a public surface; findings 1-3 are in test_sparql_judged.py and test_read_isolation.py,
4 in test_linearizable.py, 5 in test_sparql_bounds.py, 9 in test_provenance.py."""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox
import pytest
from mcp import Client

from cortex import Cortex, InvalidInputError
from cortex.agents import AgentRegistry
from cortex.errors import AgentNotFoundError, StoreError
from cortex.service.auth import Principal, TokenStore
from cortex.service.http import create_app
from cortex.service.mcp import build_mcp
from cortex.transfer import InvalidDataError

from tests.conftest import open_agents
from tests.service_helpers import asgi_request, cortex, make_project

AM = "urn:cortex:agentmem:"
GRAPH = "urn:cortex:graph:agent:api"


def export_of(tmp_path: Path, *contents: str) -> tuple[Path, list[str]]:
    """A TriG export of agent api's memories, and their ids."""
    with open_agents(None, "api") as source:
        ids = [source.store("api", c).id for c in contents]
        path = tmp_path / "export.trig"
        with open(path, "wb") as out:
            source.export(out, agent="api")
    return path, ids


# -- finding 6: an import nested deeper than a parser takes crashed the server -----------------------------------


NESTED = "<<( <urn:s> <urn:p> " * 30_000 + "<urn:o>" + " )>>" * 30_000


@pytest.mark.parametrize("fmt, body", [
    ("trig", f"<{GRAPH}> {{ <urn:cortex:agent:api:memory:x> <{AM}content> " + "<< " * 50_000
     + "<urn:a> <urn:b> <urn:c>" + " >>" * 50_000 + " . }\n"),
    # what a scan of the text reads otherwise than the parser (found by the re-run of the probe): an escaped '#'
    # or quote in a prefixed name, a long string ending in a fourth quote
    ("trig", "@prefix ex: <http://x/> .\n<" + GRAPH + "> { <urn:s> <urn:p> ex:a\\# , " + NESTED + " . }\n"),
    ("trig", "@prefix ex: <http://x/> .\n<" + GRAPH + "> { <urn:s> <urn:p> ex:a\\' , " + NESTED + " . }\n"),
    ("trig", "<" + GRAPH + '> { <urn:s> <urn:p> """a"""" , ' + NESTED + " . }\n"),
    ("jsonld", '{"@id": "urn:a", "urn:p": ' * 50_000 + '"x"' + "}" * 50_000),
], ids=["terms", "escaped-hash", "escaped-quote", "long-string", "jsonld"])
def test_an_import_nested_50000_deep_is_refused_before_any_parser(tmp_path, fmt, body):
    project = make_project(tmp_path / "p", "api")
    path = tmp_path / f"deep.{fmt}"
    path.write_text(body)
    ran = cortex(project, "import", str(path))  # a process of its own: a parser's crash would kill it, not pytest
    assert ran.returncode == 1, ran.stderr[-500:]
    assert "nested more than 64 levels" in ran.stderr or "more deeply than the RDF parser" in ran.stderr or \
        "is not valid" in ran.stderr, ran.stderr[-500:]


def test_strings_full_of_brackets_are_not_nesting(tmp_path):
    contents = ["std::cout << x << y << z;" * 20, "[[[[{{{{" * 30]
    path, _ = export_of(tmp_path, *contents)
    with open_agents(None, "api") as cx:
        assert cx.import_rdf(path) == {"agent:api": 2}
        assert sorted(m.content for m in cx.recall("api")) == sorted(contents)
    with open_agents(None, "api") as source:
        source.store("api", contents[1])
        with open(tmp_path / "e.jsonld", "wb") as out:
            source.export(out, agent="api", format="jsonld")
    with open_agents(None, "api") as cx:
        assert cx.import_rdf(tmp_path / "e.jsonld") == {"agent:api": 1}


# -- finding 7: backups ---------------------------------------------------------------------------------------


def test_a_read_only_command_on_a_remote_store_never_answers_from_an_empty_state(tmp_path, oxigraph_server):
    oxigraph_server.clear()
    project = make_project(tmp_path / "p", "api")
    env = {"CORTEX_STORE": oxigraph_server.url, "CORTEX_NO_SERVER": "1"}
    assert cortex(project, "store", "api", "a fact worth keeping", **env).returncode == 0
    for state in (str(tmp_path / "no" / "such" / "dir"), str(tmp_path / "state")):
        ran = cortex(project, "--state-dir", state, "export", "--all", "-o", str(tmp_path / "b.trig"), **env)
        assert ran.returncode == 0 and "exported 0 triples" not in ran.stderr, ran.stderr
        assert "a fact worth keeping" in (tmp_path / "b.trig").read_text()
    assert not (tmp_path / "no").exists()  # and a read-only command created nothing


def test_an_export_of_nothing_says_so(tmp_path):
    project = make_project(tmp_path / "p", "api")
    ran = cortex(project, "--store", str(tmp_path / "typo"), "export", "--all", "-o", str(tmp_path / "b.trig"))
    assert ran.returncode == 1 and "no store" in ran.stderr and not (tmp_path / "b.trig").exists()
    assert cortex(project, "store", "api", "x", CORTEX_NO_SERVER="1").returncode == 0
    ran = cortex(project, "export", "--team", "nobody", "-o", str(tmp_path / "t.trig"))
    assert ran.returncode == 0 and "holds no memories" in ran.stderr and "the export is empty" in ran.stderr


def test_a_memory_touched_twice_on_a_shared_store_exports_and_imports(tmp_path, remote_store_url):
    with open_agents(remote_store_url, "api") as shared:
        memory = shared.store("api", "popular")
        for _ in range(3):
            shared.touch("api", memory.id)
        expected = shared.get("api", memory.id)
        assert expected.usage_count == 3
        with open(tmp_path / "b.trig", "wb") as out:
            shared.export(out, all=True)
    assert (tmp_path / "b.trig").read_text().count("used") >= 1
    with open_agents(tmp_path / "fresh", "api") as cx:
        assert cx.import_rdf(tmp_path / "b.trig") == {"agent:api": 1}
        got = cx.get("api", memory.id)
        assert (got.usage_count, got.last_used_at) == (expected.usage_count, expected.last_used_at)
        assert cx.touch("api", memory.id).usage_count == 4
        assert cx.validate_store() == []
        with open(tmp_path / "again.trig", "wb") as out:
            cx.export(out, all=True)
    with open_agents(None, "api") as cx:  # and that export imports too
        assert cx.import_rdf(tmp_path / "again.trig") == {"agent:api": 1}
        assert cx.get("api", memory.id).usage_count == 4


# -- finding 8: the smaller ones --------------------------------------------------------------------------------


@pytest.fixture
def api_app(tmp_path) -> Iterator[tuple[Cortex, object, str]]:
    with open_agents(tmp_path / "store", "api", "ui") as cx:
        tokens = TokenStore(tmp_path / "store")
        admin = tokens.create(None)
        yield cx, create_app(cx, tokens=tokens, allowed_hosts=["127.0.0.1"], mcp=False), admin


def test_an_escape_naming_no_character_and_an_infinite_limit_are_400(api_app):
    """The SPARQL protocol's status for a malformed query or parameter."""
    cx, app, admin = api_app
    r = asgi_request(app, "POST", "/v1/sparql", admin, json={"query": "SELECT * WHERE { ?s ?p '\\U00110000' }"})
    assert r.status_code == 400 and r.json()["error"]["field"] == "query"
    r = asgi_request(app, "POST", "/v1/sparql", admin, content='{"query": "ASK {}", "limit": 1e400}',
                     headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["field"] == "limit"
    r = asgi_request(app, "POST", "/v1/sparql", admin, content='{"query": "ASK {}", "timeout": 1e400}',
                     headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["field"] == "timeout"


def replace_in(path: Path, old: str, new: str) -> Path:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return path


@pytest.mark.parametrize("change", [
    ('"0.7e0"', '"NaN"'),  # a confidence that is not a number
    ('"0.7e0"', '"INF"'),
])
def test_imports_of_non_numbers_are_422(api_app, tmp_path, change):
    cx, app, admin = api_app
    path, _ = export_of(tmp_path, "a fact")
    text = path.read_text()
    if '"0.7e0"' not in text:  # the serialiser's spelling of the confidence
        change = (next(t for t in ('"0.7"', "0.7e0", "7.0e-1") if t in text), change[1])
    replace_in(path, change[0], change[1] if change[1].startswith('"') else f'"{change[1]}"')
    r = asgi_request(app, "POST", "/v1/import?format=trig", admin, content=path.read_bytes())
    assert r.status_code == 422, r.text
    assert cx.count("api") == 0


def nquads(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def memory_lines(subject: str, content: str = '"a fact"') -> list[str]:
    return [f"<{subject}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{AM}Memory> <{GRAPH}> .",
            f"<{subject}> <{AM}content> {content} <{GRAPH}> ."]


def test_triple_terms_are_refused_on_import(api_app):
    cx, app, admin = api_app
    subject = "urn:cortex:agent:api:memory:01a2b3"
    as_content = nquads(*memory_lines(subject, "<<( <urn:a> <urn:b> <urn:c> )>>"))
    under_unknown = nquads(*memory_lines(subject), f"<{subject}> <urn:x:about> <<( <urn:a> <urn:b> <urn:c> )>> "
                                                   f"<{GRAPH}> .")
    for body in (as_content, under_unknown):
        r = asgi_request(app, "POST", "/v1/import?format=nquads", admin, content=body)
        assert r.status_code == 422 and "triple term" in r.text, r.text
    assert cx.count("api") == 0 and cx.validate_store() == []
    r = asgi_request(app, "GET", "/v1/export?all=true&format=jsonld", admin)
    assert r.status_code == 200


@pytest.mark.parametrize("bad_id", ["01a2/../x", "x" * 1000, "a%20b", "a.b", ""])
def test_ids_follow_the_same_rule_everywhere(api_app, bad_id):
    cx, app, admin = api_app
    body = nquads(*memory_lines(f"urn:cortex:agent:api:memory:{bad_id}"))
    r = asgi_request(app, "POST", "/v1/import?format=nquads", admin, content=body)
    assert r.status_code == 422, r.text
    # one written behind Cortex's back is not a memory to any read either: nothing lists what cannot be got
    cx._memories.store._store.extend(ox.parse(body, ox.RdfFormat.N_QUADS))
    cx.reindex("api")
    assert cx.list_memories("api").items == [] and cx.recall("api") == []


def test_an_import_cannot_attach_unbounded_triples_to_a_memory(api_app, tmp_path):
    cx, app, admin = api_app
    with open_agents(None, "api") as source:
        memory = source.store("api", "a fact")
        with open(tmp_path / "one.nq", "wb") as out:
            source.export(out, agent="api", format="nquads")
    subject = f"urn:cortex:agent:api:memory:{memory.id}"
    exported = (tmp_path / "one.nq").read_text().splitlines()
    extra = [f"<{subject}> <urn:x:note{i}> \"{i}\" <{GRAPH}> ." for i in range(300)]
    r = asgi_request(app, "POST", "/v1/import?format=nquads", admin, content=nquads(*exported, *extra))
    assert r.status_code == 422 and "at most 256" in r.text, r.text
    r = asgi_request(app, "POST", "/v1/import?format=nquads", admin, content=nquads(*exported, *extra[:256]))
    assert r.status_code == 201, r.text


def test_the_token_of_a_deleted_agent_exports_nothing(tmp_path):
    project = make_project(tmp_path / "p", "api", "ui")
    store = project / ".cortex" / "store"
    with Cortex.open(store, embeddings=None, agent_dirs=[project / "agent_defs"]) as cx:
        tokens = TokenStore(store)
        ui, admin = tokens.create("ui"), tokens.create(None)
        app = create_app(cx, tokens=tokens, allowed_hosts=["127.0.0.1"], mcp=False)
        cx.store("ui", "ui private note")
        assert asgi_request(app, "GET", "/v1/export?agent=ui", ui).status_code == 200
        (project / "agent_defs" / "ui.md").unlink()  # the agent is deleted; its token was not revoked
        time.sleep(AgentRegistry.CHECK_INTERVAL + 0.1)  # the definitions are looked at again at most once a second
        r = asgi_request(app, "GET", "/v1/export?agent=ui", ui)
        assert r.status_code == 404 and "ui private note" not in r.text
        assert asgi_request(app, "GET", "/v1/export?agent=ui", admin).status_code == 200  # a backup still works

        async def mcp() -> None:
            async with Client(build_mcp(lambda: cx, lambda request: Principal(agent="ui"))) as client:
                result = await client.call_tool("export_memories", {"agent": "ui"})
                assert result.is_error and "ui private note" not in str(result.content)

        asyncio.run(mcp())


def test_a_malformed_token_file_tells_an_unauthenticated_client_no_path(api_app, tmp_path):
    cx, app, admin = api_app
    (tmp_path / "store" / "cortex-tokens.json").write_text("{not json")
    r = asgi_request(app, "GET", "/v1/agents", None)
    assert r.status_code == 503 and str(tmp_path) not in r.text


# -- hooks -----------------------------------------------------------------------------------------------------


def hook(args: list[str], payload: str, cwd: Path, **extra_env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "CORTEX_STORE"} | extra_env
    return subprocess.run([sys.executable, "-m", "cortex", "hook", *args], input=payload, capture_output=True,
                          text=True, cwd=cwd, env=environment, timeout=120)


def test_hooks_always_exit_0(tmp_path):
    project = make_project(tmp_path / "p", "api")
    deep = "[" * 100_000
    for args, payload in ((["claude", "Stop"], deep), (["claude", "SubagentStop"], '{"a":' * 50_000),
                          (["claude"], "{}"), (["claude", "Stop", "extra"], "{}"), (["claude", "Stop", "--bogus"], "{}"),
                          (["nope", "Stop"], "{}"), ([], "{}"), (["claude", "--agent"], "{}")):
        ran = hook(args, payload, project)
        assert ran.returncode == 0, (args, ran.stderr[-300:])
        assert "Traceback" not in ran.stderr
    assert "malformed hook command line" in (project / ".cortex" / "logs" / "hooks.log").read_text()


def test_a_symlinked_hook_log_is_not_written_through(tmp_path):
    project = make_project(tmp_path / "p", "api")
    (project / ".cortex" / "logs").mkdir(parents=True)
    target = tmp_path / "elsewhere.txt"
    target.write_text("precious\n")
    (project / ".cortex" / "logs" / "hooks.log").symlink_to(target)
    hook(["claude", "Stop"], "not json", project)
    assert target.read_text() == "precious\n"


def test_a_hook_reads_no_transcript_outside_the_project_and_creates_nothing_outside_one(tmp_path):
    project = make_project(tmp_path / "p", "api")
    secret = tmp_path / "secret.jsonl"
    secret.write_text(json.dumps({"type": "assistant", "message": {"role": "assistant",
                                                                    "content": "LEARNED: the root password is x"}}))
    payload = {"cwd": str(project), "agent_type": "api", "transcript_path": str(secret),
               "hook_event_name": "SubagentStop", "last_assistant_message": "done"}
    hook(["claude", "SubagentStop"], json.dumps(payload), project, CLAUDE_CONFIG_DIR=str(tmp_path / "claude"))
    with open_agents(project / ".cortex" / "store", "api") as cx:
        # nothing of the secret transcript; the task outcome says only what the payload said
        assert [m.content for m in cx.recall("api")] == ["Task done: a task of api\nOutcome: done"]
    assert "outside the project" in (project / ".cortex" / "logs" / "hooks.log").read_text()
    elsewhere = tmp_path / "etc"
    elsewhere.mkdir()
    payload = {"cwd": str(elsewhere), "agent_type": "api", "hook_event_name": "SubagentStop",
               "last_assistant_message": "LEARNED: something"}
    ran = hook(["claude", "SubagentStop"], json.dumps(payload), elsewhere)
    assert ran.returncode == 0 and list(elsewhere.iterdir()) == []


# -- a misbehaving SPARQL server ---------------------------------------------------------------------------------


class Misbehaving:
    """A loopback server speaking the SPARQL protocol badly: ``answer(query) -> (status, media type, body, declared
    length or None)``."""

    def __init__(self, answer) -> None:
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length).decode()
                status, media, payload, declared = outer.answer(body)
                self.send_response(status)
                self.send_header("Content-Type", media)
                self.send_header("Content-Length", str(declared if declared is not None else len(payload)))
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except OSError:
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self.answer = answer
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"sparql+http://127.0.0.1:{self.server.server_address[1]}/sparql"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


ASK_TRUE = b'{"head": {}, "boolean": true}'


@pytest.mark.parametrize("kind", ["no-rows", "missing-variable", "not-json", "wrong-type", "huge"])
def test_a_misbehaving_server_is_a_store_error(tmp_path, kind):
    def answer(body: str):
        if "ASK" in body and "COUNT" not in body and "SELECT" not in body:
            return 200, "application/sparql-results+json", ASK_TRUE, None
        if kind == "no-rows":
            return 200, "application/sparql-results+json", b'{"head": {"vars": ["n"]}, "results": {"bindings": []}}', None
        if kind == "missing-variable":
            return 200, "application/sparql-results+json", b'{"head": {"vars": ["x"]}, "results": {"bindings": [{}]}}', None
        if kind == "not-json":
            return 200, "application/sparql-results+json", b"<html>oops</html>", None
        if kind == "wrong-type":
            return (200, "application/sparql-results+json", b'{"head": {"vars": ["n", "s", "t", "h", "v", "g"]}, '
                    b'"results": {"bindings": [{"n": {"type": "literal", "value": "many"}, "s": {"type": "literal", '
                    b'"value": "x"}, "t": {"type": "literal", "value": "y"}, "h": {"type": "literal", "value": "z"}, '
                    b'"v": {"type": "literal", "value": "seven"}, "g": {"type": "literal", "value": "w"}}]}}', None)
        return 200, "application/sparql-results+json", b"{" * 1000, 300 * 1024 * 1024  # declares 300 MB
    server = Misbehaving(answer)
    try:
        with pytest.raises(StoreError, match="127.0.0.1"):
            with Cortex.open(server.url, embeddings=None) as cx:
                cx.agents.register("api")
                cx.store("api", "x")
                cx.recall("api")
                cx.sparql("SELECT * WHERE { ?s ?p ?o }")
                cx.export(open(os.devnull, "wb"), all=True)
    finally:
        server.close()


def test_a_large_answer_is_refused_not_read(tmp_path):
    def answer(body: str):
        if "ASK" in body and "SELECT" not in body:
            return 200, "application/sparql-results+json", ASK_TRUE, None
        rows = ",".join('{"s": {"type": "literal", "value": "%s"}}' % ("x" * 1000) for _ in range(3000))
        return 200, "application/sparql-results+json", ('{"head": {"vars": ["s"]}, "results": {"bindings": [%s]}}'
                                                         % rows).encode(), None
    server = Misbehaving(answer)
    try:
        with Cortex.open(server.url + "?max_answer=1", embeddings=None) as cx:  # 1 MiB; the answer is ~3 MB
            with pytest.raises(StoreError, match="more than the 1048576"):
                cx.sparql("SELECT ?s WHERE { ?s ?p ?o }")
        with pytest.raises(InvalidInputError, match="max_answer"):
            Cortex.open(server.url + "?max_answer=0", embeddings=None)
    finally:
        server.close()


def test_validate_store_of_an_unknown_agent_is_an_error(api_app):
    cx, app, admin = api_app
    with pytest.raises(AgentNotFoundError):
        cx.validate_store(agent="nobody")
    r = asgi_request(app, "GET", "/v1/validate-store?agent=nobody", admin)
    assert r.status_code == 404


def test_import_checks_the_whole_file_before_writing(api_app, tmp_path):
    cx, app, admin = api_app
    path, ids = export_of(tmp_path, "first", "second")
    replace_in(path, ids[1], "bad/id")
    with pytest.raises(InvalidDataError):
        cx.import_rdf(path)
    assert cx.count("api") == 0


def test_a_missing_query_file_is_one_line_and_exit_1(tmp_path):
    from tests.service_helpers import run_cli

    project = make_project(tmp_path / "p", "api")
    ran = run_cli(project, "sparql", "-f", "nope.rq", env={"CORTEX_NO_SERVER": "1"})
    assert ran.returncode == 1 and "cannot read 'nope.rq'" in ran.stderr and "Traceback" not in ran.stderr


def test_a_version_up_to_2_53_is_held_by_the_index(tmp_path):
    """Imports accept versions up to 2**53; the index held them in 32 bits (found by the re-run of the probe)."""
    path, ids = export_of(tmp_path, "a fact")
    (tmp_path / "v.trig").write_text(replace_in(path, '"a fact" ', '"a fact" ; am:version "2147483648"^^xsd:integer ')
                                     .read_text())
    with open_agents(tmp_path / "store", "api") as cx:
        assert cx.import_rdf(tmp_path / "v.trig") == {"agent:api": 1}
        assert cx.get("api", ids[0]).version == 2**31
        assert cx.update("api", ids[0], content="changed").version == 2**31 + 1
    with open_agents(tmp_path / "store", "api") as cx:
        assert [m.version for m in cx.list_memories("api").items] == [2**31 + 1]
        cx.reindex("api", force=True)
        assert cx.recall("api", "changed")[0].version == 2**31 + 1


def test_hooks_exit_0_from_a_deleted_directory_and_with_stdin_closed(tmp_path):
    project = make_project(tmp_path / "p", "api")
    gone = tmp_path / "gone"
    gone.mkdir()
    payload = json.dumps({"cwd": str(project), "agent_type": "api", "hook_event_name": "Stop",
                          "last_assistant_message": "LEARNED: from a deleted directory"})
    script = (f"import os, subprocess, sys; os.chdir({str(gone)!r}); os.rmdir({str(gone)!r}); "
              f"r = subprocess.run([sys.executable, '-m', 'cortex', 'hook', 'claude', 'SubagentStop'], "
              f"input={payload!r}, capture_output=True, text=True); print(r.returncode); print(r.stderr)")
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         env={k: v for k, v in os.environ.items() if k != "CORTEX_STORE"})
    assert ran.stdout.splitlines()[0] == "0" and "Traceback" not in ran.stdout, ran.stdout
    with open_agents(project / ".cortex" / "store", "api") as cx:
        assert [m.content for m in cx.recall("api")] == ["from a deleted directory"]
    closed = subprocess.run(f"{sys.executable} -m cortex hook claude Stop <&-", shell=True, capture_output=True,
                            text=True, cwd=project, timeout=120)
    assert closed.returncode == 0 and "Traceback" not in closed.stderr, closed.stderr


@pytest.mark.parametrize("link", [".cortex", ".cortex/store", ".cortex/state"])
def test_a_hook_writes_nothing_through_a_symbolic_link_a_repository_carries(tmp_path, link):
    project = make_project(tmp_path / "p", "api")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / link).parent.mkdir(parents=True, exist_ok=True)
    (project / link).symlink_to(elsewhere)
    transcript = project / "t.jsonl"
    transcript.write_text(json.dumps({"type": "assistant", "message": {"role": "assistant",
                                                                        "content": "LEARNED: x"}}) + "\n")
    for event in ("SubagentStart", "SubagentStop"):
        payload = {"cwd": str(project), "agent_type": "api", "hook_event_name": event, "transcript_path": str(transcript),
                   "last_assistant_message": "LEARNED: y"}
        assert hook(["claude", event], json.dumps(payload), project).returncode == 0
    assert list(elsewhere.iterdir()) == []


def test_transcript_lines_with_unicode_line_separators_are_captured(tmp_path):
    project = make_project(tmp_path / "p", "api")
    transcript = project / "t.jsonl"
    entries = [{"type": "assistant", "message": {"role": "assistant", "content": f"LEARNED: sep{c}arated {i}"}}
               for i, c in enumerate(("\u2028", "\u0085", "\u2029"))]
    transcript.write_text("\n".join(json.dumps(e, ensure_ascii=False) for e in entries) + "\n", encoding="utf-8")
    payload = {"cwd": str(project), "agent_type": "api", "hook_event_name": "SubagentStop",
               "agent_transcript_path": str(transcript), "last_assistant_message": "done"}
    assert hook(["claude", "SubagentStop"], json.dumps(payload), project).returncode == 0
    with open_agents(project / ".cortex" / "store", "api") as cx:
        assert len(cx.recall("api", "arated")) == 3  # each entry read whole (they were dropped)


def test_search_rerank_settings_are_bounded(api_app):
    cx, app, admin = api_app
    cx.store("api", "x marks the spot")
    for rerank in ("[" * 1000 + "]" * 1000, json.dumps({"usage_saturation": 10**40}),
                   '{"half_life_days": 1e400}', '{"overfetch": 10000000}', '{"max_usage_boost": 1e300}'):
        r = asgi_request(app, "GET", "/v1/agents/api/search", admin, params={"query": "x", "rerank": rerank})
        assert r.status_code == 422, (rerank[:40], r.text[:200])
    assert asgi_request(app, "GET", "/v1/agents/api/search", admin, params={"query": "x", "rerank": "true"}) \
        .status_code == 200


@pytest.mark.parametrize("change, reason", [
    (('am:project "global"', 'am:project ""'), "project"),
    (('am:project "global"', 'am:project "a\\nb"'), "project"),
    (('am:project "global"', 'am:project "' + "p" * 60_000 + '"'), "project"),
    (('am:project "global"', 'am:project "a\u0085b"'), "project"),
    (('am:content "a fact"', 'am:content "a fact" ; am:supersededReason "' + "r" * 5000 + '"'), "superseded_reason"),
    (("am:agent <urn:cortex:agent:api>", "am:agent <urn:cortex:agent:UPPER%20..%2F>"), "agent"),
])
def test_an_import_holds_every_write_bound_and_reads_hold_it_too(api_app, tmp_path, change, reason):
    """Found by the re-run of the probe: these imported, read, and validate-store said the store conformed."""
    cx, app, admin = api_app
    path, ids = export_of(tmp_path, "a fact")
    replace_in(path, *change)
    with pytest.raises(InvalidDataError, match=reason):
        cx.import_rdf(path)
    assert cx.count("api") == 0
    # written behind Cortex's back, the memory is left out of reads and reported
    for quad in ox.parse(path.read_bytes(), ox.RdfFormat.TRIG):
        cx._memories.store._store.add(quad)
    cx.reindex("api")
    assert cx.list_memories("api").items == [] and cx.get("api", ids[0]) is None
    assert any(v.focus.endswith(ids[0]) for v in cx.validate_store())


def test_an_id_names_one_memory_in_a_store_and_supersession_has_no_cycles(api_app, tmp_path):
    from cortex.agents import AgentSettings

    cx, app, admin = api_app
    cx.agents.register("api", settings=AgentSettings(teams=("x",)))
    with open_agents(None, "api") as source:
        source.agents.register("api", settings=AgentSettings(teams=("x",)))
        mine = source.store("api", "mine")
        with open(tmp_path / "mine.trig", "wb") as out:
            source.export(out, agent="api")
    team_copy = (tmp_path / "mine.trig").read_text().replace("graph:agent:api", "graph:team:x") \
        .replace("urn:cortex:agent:api:memory:", "urn:cortex:team:x:memory:").replace("activity:agent:api",
                                                                                   "activity:team:x") \
        .replace("graph:prov:agent:api", "graph:prov:team:x")
    (tmp_path / "team.trig").write_text(team_copy)
    assert cx.import_rdf(tmp_path / "mine.trig") == {"agent:api": 1}
    with pytest.raises(InvalidDataError, match="an id names one memory"):
        cx.import_rdf(tmp_path / "team.trig")  # the same id in another scope of the store
    cx.forget("api", mine.id)
    both = tmp_path / "both.trig"
    both.write_text((tmp_path / "mine.trig").read_text() + team_copy.split("@prefix am: <urn:cortex:agentmem:> .")[-1])
    with pytest.raises(InvalidDataError, match="an id names one memory"):
        cx.import_rdf(both)  # the same id twice in one file
    with open_agents(None, "api") as source:
        a, b = source.store("api", "a"), source.store("api", "b")
        source.supersede("api", a.id, by=b.id)
        with open(tmp_path / "pair.nq", "wb") as out:
            source.export(out, agent="api", format="nquads")
    text = (tmp_path / "pair.nq").read_text()
    cycle = text + (f"<urn:cortex:agent:api:memory:{b.id}> <http://purl.org/dc/terms/isReplacedBy> "
                    f"<urn:cortex:agent:api:memory:{a.id}> <urn:cortex:graph:agent:api> .\n")
    with pytest.raises(InvalidDataError, match="cycle"):
        cx.import_rdf(cycle.encode(), format="nquads")


def test_http_takes_no_boolean_for_a_number(api_app):
    cx, app, admin = api_app
    r = asgi_request(app, "POST", "/v1/agents/api/memories", admin, json={"content": "x", "confidence": True})
    assert r.status_code == 422 and cx.count("api") == 0
    assert asgi_request(app, "POST", "/v1/agents/api/memories", admin,
                        json={"content": "x", "confidence": 1}).status_code == 201
