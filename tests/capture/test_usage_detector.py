"""The "used" detector (issue 35): a memory applied in other words counts, a negation, a deviation and a mere
mention do not; on every channel (cortex used, HTTP, MCP, agent_end); per memory and per source in stats."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from mcp import Client

from cortex import Cortex
from cortex.capture.applied import clauses, judge, specific_tokens
from cortex.capture.usage import drawn_on
from cortex.errors import InvalidInputError
from cortex.service.auth import ADMIN
from cortex.service.mcp import build_mcp

from tests.service_helpers import cortex, make_project, start_server

ALEMBIC = "Run database migrations with alembic upgrade head before deploying"
PYTEST = "Use `pytest -x -q` for the fast local test loop"
WEASY = "Invoice PDFs are rendered with WeasyPrint; the fonts must be installed in the Docker image"
STRICT = "Always build the docs with `mkdocs build --strict` so warnings fail the build"
PLAYBOOK = "Limit playbook runs to the affected hosts with `--limit`; never run site.yml against all of prod"


def used(shown: list[tuple[str, str]], output: str) -> list[str]:
    return [i for i, _ in drawn_on(shown, output)]


def test_the_issue_example_applied_in_other_words_is_used():
    shown = [("m1", WEASY), ("m2", ALEMBIC), ("m3", PYTEST)]
    output = "I ran alembic upgrade head before deploying, as the migrations must go first. Deployed."
    assert used(shown, output) == ["m2"]


def test_a_command_run_in_a_tool_call_is_used_in_every_transcript_form():
    shown = [("a", ALEMBIC), ("b", WEASY)]
    call = {"command": "alembic upgrade head && ./deploy.sh production"}
    for output in (f"tool_use Bash {json.dumps(call)}\ntool_result: ok\nassistant: Deployed.",
                   f"Deploying now.\n{json.dumps(call)}\nDone.",  # what the Stop hooks send: text and raw inputs
                   f"Tool call Bash: {json.dumps(call)}\nTool result Bash: ok"):
        assert used(shown, output) == ["a"], output


@pytest.mark.parametrize("output", [
    # a negation: said in passing
    "I ran the whole suite in one go rather than the fast local test loop with pytest -x -q.",
    # a deviation: the memory's command without its flag
    'tool_use Bash {"command": "pytest tests/ -q"}\ntool_result: 12 passed',
    # a dismissal: quoted, then set aside
    "The fast local test loop (pytest -x -q) doesn't apply here: there are no tests in this repo.",
])
def test_negations_deviations_and_dismissals_are_not_used(output):
    assert used([("p", PYTEST)], output) == []


def test_a_flag_left_out_or_a_forbidden_target_is_a_deviation():
    strict = judge([("s", STRICT)], 'tool_use Bash {"command": "mkdocs build -q"}')[0]
    assert strict.deviated and strict.why is None
    ran = judge([("s", STRICT)], 'tool_use Bash {"command": "mkdocs build --strict"}')[0]
    assert ran.why is not None and not ran.deviated
    everything = judge([("p", PLAYBOOK)], 'tool_use Bash {"command": "ansible-playbook site.yml -i prod.ini"}')[0]
    assert everything.deviated and everything.why is None
    limited = judge([("p", PLAYBOOK)], 'tool_use Bash {"command": "ansible-playbook site.yml --limit web-01"}')[0]
    assert not limited.deviated


def test_the_same_value_passed_by_another_flag_is_not_a_deviation():
    serve = "Serve the docs with `mkdocs serve -a 0.0.0.0:8001`; port 8000 is taken by the API dev server"
    judged = judge([("s", serve)], 'tool_use Bash {"command": "mkdocs serve --dev-addr 0.0.0.0:8001"}')[0]
    assert not judged.deviated and judged.why is not None


def test_a_sibling_memory_s_command_does_not_mark_the_other():
    api, web = "Deploy the api with make deploy-api ENV=staging", "Deploy the web app with make deploy-web ENV=staging"
    assert used([("api", api), ("web", web)], "ran make deploy-api ENV=staging to deploy the api") == ["api"]


def test_unrelated_work_in_the_same_project_is_not_used():
    output = ('tool_use Edit {"file_path": "app/api/routes.py", "old_string": "x", "new_string": "y"}\n'
              "tool_result: The file app/api/routes.py has been updated.\nassistant: Added the /healthz route.")
    assert used([("w", WEASY), ("a", ALEMBIC), ("p", PYTEST)], output) == []


def test_an_id_counts_as_cited_only_as_a_whole_token_and_not_when_set_aside():
    memory_id = "01hzx3k9q7m2r5t8v1w4y6z0ab"
    assert used([(memory_id, WEASY)], f"Following {memory_id}, the fonts are in the image.") == [memory_id]
    assert used([(memory_id, WEASY)], f"{memory_id} does not apply to this change.") == []
    assert used([("ab", WEASY)], f"Following {memory_id}.") == []


@pytest.mark.parametrize("output", ["", "\n\n", "{", "[1, 2", "tool_use Bash {not json", "`" * 500,
                                    "tool_result:", "{" * 5000 + "}" * 5000, "\u202e\u0000 >< ' \" ; DROP ALL"])
def test_hostile_or_empty_output_is_judged_without_error(output):
    assert judge([("a", ALEMBIC), ("p", PYTEST)], output)[0].why is None


def test_clause_kinds_and_specific_tokens():
    parts = clauses('assistant: Checked it. I used redpanda instead of the compose stack.\n'
                    'tool_use Bash {"command": "make test"}\ntool_result: ok\nmore result')
    assert [(c.kind, c.negated) for c in parts] == [("text", False), ("text", False), ("text", True),
                                                     ("call", False), ("result", False), ("result", False)]
    assert specific_tokens("run ./scripts/x.sh --limit 40 on web-01; ENV and Docker are plain") >= \
        {"--limit", "40", "web-01", "x.sh"}
    assert not specific_tokens("ENV and Docker are plain words")


def test_the_embedding_model_rejudges_only_borderline_memories(monkeypatch):
    """With a model, only scores inside the border are embedded; its failure leaves the lexical judgement."""
    from cortex.embeddings import EmbeddingError, HashEmbeddings

    seen: list[int] = []
    provider = HashEmbeddings()

    def embed(texts):
        seen.append(len(texts))
        return provider.embed(texts)

    shown = [("a", ALEMBIC), ("w", WEASY)]
    clear = judge(shown, 'tool_use Bash {"command": "alembic upgrade head && ./deploy.sh production"}\n'
                         "Deployed after the migrations.", embed=embed)
    assert not any(j.semantic for j in clear) and seen == []  # nothing borderline: no model call
    judge(shown, "the migrations before the deploy", embed=embed, border=(-1.0, 2.0))
    assert seen and seen[0] <= 3 * 2 + 2  # at most three clauses per memory, and the memories without vectors

    def broken(texts):
        raise EmbeddingError("model gone")

    lexical = judge(shown, "the migrations before the deploy")
    fallback = judge(shown, "the migrations before the deploy", embed=broken, border=(-1.0, 2.0))
    assert [j.score for j in fallback] == [j.score for j in lexical]


# -- through the store and every surface ----------------------------------------------------------------------


@pytest.fixture
def cx(tmp_path):
    with Cortex.open(tmp_path / "store", embeddings=None) as cx:
        cx.agents.register("dev", description="a developer")
        yield cx


def test_record_use_marks_the_issue_example_and_per_memory_usage_shows_it(cx):
    alembic, weasy = cx.store("dev", ALEMBIC), cx.store("dev", WEASY)
    for _ in range(3):
        cx.agent_start("dev")
        cx.record_use("dev", "I ran alembic upgrade head before deploying, as the migrations must go first.")
    rows = {m.id: m for m in cx.memory_usage("dev", order="shown")}
    assert (rows[alembic.id].shown, rows[alembic.id].used, rows[alembic.id].ratio) == (3, 3, 1.0)
    assert (rows[weasy.id].shown, rows[weasy.id].used, rows[weasy.id].ratio) == (3, 0, 0.0)
    assert [m.id for m in cx.memory_usage("dev")] == [alembic.id]  # used: what proved useful
    assert [m.id for m in cx.memory_usage("dev", order="unused")] == [weasy.id]
    assert cx.usage_stats("dev")["manual"]["ratio"] == 0.5
    with pytest.raises(InvalidInputError, match="order"):
        cx.memory_usage("dev", order="best")


def test_record_use_with_the_local_model_uses_the_index_vectors(tmp_path):
    pytest.importorskip("onnxruntime")
    from cortex.embeddings import local_available

    if not local_available():
        pytest.skip("the local model is not installed")
    with Cortex.open(tmp_path / "store", embeddings="local") as cx:
        cx.agents.register("dev", description="a developer")
        alembic = cx.store("dev", ALEMBIC)
        cx.store("dev", WEASY)
        cx.agent_start("dev")
        marked = cx.record_use("dev", "I ran alembic upgrade head before deploying, as the migrations go first.")
        assert [m.id for m in marked] == [alembic.id]


def test_per_memory_usage_on_the_cli_http_and_mcp(tmp_path):
    project = make_project(tmp_path / "proj", "dev")
    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None) as cx:
        alembic = cx.store("dev", ALEMBIC)
        cx.store("dev", WEASY)
    assert cortex(project, "start", "dev", CORTEX_EMBEDDINGS="none").returncode == 0
    marked = cortex(project, "used", "dev", "-", CORTEX_EMBEDDINGS="none",
                    stdin="I ran alembic upgrade head before deploying, as the migrations must go first. Deployed.")
    assert [m["id"] for m in json.loads(marked.stdout)] == [alembic.id], marked.stderr
    stats = json.loads(cortex(project, "stats", "dev", "--usage", CORTEX_EMBEDDINGS="none").stdout)
    assert stats["by_source"]["manual"]["times_used"] == 1 and stats["by_source"]["manual"]["ratio"] == 0.5
    assert [(m["id"], m["shown"], m["used"], m["ratio"]) for m in stats["by_memory"]] == [(alembic.id, 1, 1, 1.0)]
    unused = json.loads(cortex(project, "stats", "dev", "--usage", "--order", "unused", CORTEX_EMBEDDINGS="none").stdout)
    assert [m["content"] for m in unused["by_memory"]] == [WEASY]
    bad = cortex(project, "stats", "dev", "--usage", "--order", "best", CORTEX_EMBEDDINGS="none")
    assert bad.returncode == 2 and "--order" in bad.stderr
    server = start_server(project, CORTEX_EMBEDDINGS="none")
    try:
        headers = {"Authorization": f"Bearer {server.token}"}
        rows = httpx.get(f"{server.url}/v1/agents/dev/usage/memories", headers=headers).json()
        assert [(m["id"], m["used"], m["ratio"]) for m in rows] == [(alembic.id, 1, 1.0)]
        refused = httpx.get(f"{server.url}/v1/agents/dev/usage/memories?order=best", headers=headers)
        assert refused.status_code == 422 and "order" in refused.text
        assert httpx.get(f"{server.url}/v1/agents/dev/usage", headers=headers).json()["manual"]["ratio"] == 0.5
    finally:
        server.stop()


def test_per_memory_usage_through_mcp(cx):
    alembic = cx.store("dev", ALEMBIC)
    cx.agent_start("dev")

    async def main() -> tuple[list, list]:
        async with Client(build_mcp(lambda: cx, lambda request: ADMIN, "all")) as client:
            used_now = await client.call_tool("record_use", {
                "agent": "dev", "output": "alembic upgrade head ran before deploying; deployed."})
            assert not used_now.is_error, used_now.content
            found = await client.call_tool("search_memories", {"agent": "dev", "query": "alembic", "unused": True})
            assert [h["id"] for h in found.structured_content["hits"]] == [alembic.id]
            rows = await client.call_tool("memory_usage", {"agent": "dev"})
            stats = await client.call_tool("memory_stats", {"agent": "dev"})
            return rows.structured_content["result"], [stats.structured_content["usage"]]

    rows, (usage,) = asyncio.run(main())
    assert [(r["id"], r["shown"], r["used"]) for r in rows] == [(alembic.id, 1, 1)]
    assert usage["manual"]["ratio"] == 1.0


def test_the_never_used_rule_in_search_on_the_cli_with_and_without_a_server(tmp_path):
    """``cortex search --unused``: a memory shown at eight starts and never used weighs 0.5 ** (5 / 5) in its
    usage part (explain); without the flag, being shown lifts it (usageCount also counts explicit touches)."""
    project = make_project(tmp_path / "proj", "dev")
    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None) as cx:
        cx.store("dev", WEASY)
        for _ in range(8):
            cx.agent_start("dev")

    def usage_part(*flags: str) -> float:
        found = cortex(project, "search", "dev", "invoice fonts", "--mode", "bm25", "--explain", *flags,
                       CORTEX_EMBEDDINGS="none")
        assert found.returncode == 0, found.stderr
        return json.loads(found.stdout)["hits"][0]["explain"]["usage"]

    off, on = usage_part(), usage_part("--unused")
    assert off > 1.0 and on == pytest.approx(off * 0.5)
    server = start_server(project, CORTEX_EMBEDDINGS="none")
    try:
        assert usage_part("--unused") == pytest.approx(on)  # the same through the server's API
    finally:
        server.stop()


@pytest.mark.parametrize("output", [
    f"I was given these notes, none were relevant:\n<agent-memory>\n- [insight] {ALEMBIC}\n</agent-memory>",
    f"- [insight] {ALEMBIC}",  # a line of the block, pasted back
    f"> {ALEMBIC}\nNone of it applied to this task.",  # a quotation
    f"user: {ALEMBIC}\nassistant: Looking at the invoice layout.",  # the user's words
    "Decided against running alembic upgrade head before deploying this time.",
    "Refrained from alembic upgrade head before deploying: the schema did not change.",
])
def test_echoes_quotations_the_users_words_and_refusals_are_not_uses(output):
    assert used([("a", ALEMBIC), ("w", WEASY)], output) == []


def test_an_id_named_as_unhelpful_is_not_cited():
    memory_id = "01hzx3k9q7m2r5t8v1w4y6z0ab"
    for output in (f"I was shown {memory_id} but it was unhelpful.", f"I disregarded {memory_id}."):
        assert used([(memory_id, WEASY)], output) == [], output


def test_a_block_shown_without_touching_is_not_matched_for_use(cx):
    """A start that does not count as a showing (touch=False) is not matched either: used never exceeds shown."""
    alembic = cx.store("dev", ALEMBIC)
    cx.agent_start("dev", touch=False)
    assert cx.record_use("dev", "I ran alembic upgrade head before deploying.") == []
    cx.agent_start("dev")
    assert [m.id for m in cx.record_use("dev", "I ran alembic upgrade head before deploying.")] == [alembic.id]
    cx.agent_start("dev", touch=False)
    assert cx.record_use("dev", "I ran alembic upgrade head before deploying again.") == []
    row, = cx.memory_usage("dev")
    assert (row.shown, row.used, row.ratio) == (1, 1, 1.0)


def test_a_flood_of_clauses_keeps_the_latest_and_in_order():
    from cortex.capture.applied import MAX_CLAUSES

    parts = clauses("assistant: " + " ".join(f"Step {i} done." for i in range(3 * MAX_CLAUSES)))
    assert len(parts) == MAX_CLAUSES
    assert parts[-1].text == f"Step {3 * MAX_CLAUSES - 1} done." and parts[0].text == f"Step {2 * MAX_CLAUSES} done."
    calls = clauses('tool_use Write {"content": "' + "\\n".join(f"line {i}" for i in range(2 * MAX_CLAUSES)) + '"}')
    assert len(calls) == MAX_CLAUSES and calls[-1].text == f"line {2 * MAX_CLAUSES - 1}"
