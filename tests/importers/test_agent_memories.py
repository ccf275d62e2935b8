"""The agents' own memories imported (issue 33): Claude Code's auto memory as it writes it today (``metadata.type``,
``modified``, frontmatter YAML refuses), Codex's memory folder (its task groups of the project only), the Beads
shapes met in real repositories (lines encoded twice, ``ts`` as ISO 8601, ``bd export`` issues without
``_type``); each on a real on-disk store through the Python API and the ``cortex`` CLI in a subprocess, with
hostile text (quotes, ``>``, look-alikes, a secret, a path that is not one, a huge file). Where each shape comes
from: tests/fixtures/harnesses/README.md, section 5."""

from __future__ import annotations

import json
import shutil
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path

import pytest

from cortex import Cortex
from cortex.errors import InvalidInputError
from cortex.importers import claude, codex
from cortex.notices import CortexWarning

from tests.conftest import Clock
from tests.paths import TESTS
from tests.service_helpers import cortex, make_project, start_server

FIXTURES = TESTS / "fixtures" / "importers"
CLAUDE, CODEX, BEADS = FIXTURES / "claude-auto-memory-2026", FIXTURES / "codex-memories", FIXTURES / "beads"
TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"  # the fixture's deploy token (random, not a real one)
GPU_PATH = "LD_LIBRARY_PATH=/home/u/ROCm6/cuDNN9/Vivado23/lib64/x86_64/lib"


@pytest.fixture
def dev(store_path: Path) -> Cortex:
    with Cortex.open(store_path, clock=Clock(datetime(2026, 11, 24, 12, tzinfo=timezone.utc)), embeddings=None) as cx:
        cx.agents.register("dev", description="developer")
        cx.project_root = "/work/shop"
        yield cx


def memories(cx: Cortex, agent: str = "dev") -> dict[str, object]:
    """The agent's current memories by their import key."""
    return {m.metadata["import"]["key"]: m for m in cx.list_memories(agent, limit=500).items}


# -- Claude Code ------------------------------------------------------------------------------------------


def test_claude_code_auto_memory_as_it_writes_it_today(dev, tmp_path):
    with pytest.warns(CortexWarning, match="github-token"):
        report = dev.import_from("claude", CLAUDE, agent="dev")
    assert report.files == ["MEMORY.md", "feedback_agency.md", "feedback_money_decimal.md", "project_ci_flake.md"]
    assert report.failed == []
    # the index: entries pointing to a topic file are that file's; a line of its own is a memory
    assert sorted(s.reason for s in report.skipped) == sorted(
        f"an index entry for {f} (its memory is imported from that file)"
        for f in ("feedback_money_decimal.md", "project_ci_flake.md", "feedback_agency.md"))
    found = memories(dev)
    assert found["MEMORY.md#Memory index#" + found_digest(found, "MEMORY.md#Memory index#")].content == \
        "Memory index\nThe staging host is `stg-2.shop.internal` (no topic file yet)"
    # the type nested in metadata (feedback: a convention), the session and time kept
    money = found["feedback_money_decimal.md#"]
    assert money.type.value == "convention" and {"claude", "auto-memory", "feedback"} <= set(money.tags)
    assert money.metadata["claude"]["metadata"]["originSessionId"] == "885ee114-3071-4b9e-9b32-e55329684a43"
    assert money.metadata["import"]["order"] == datetime(2026, 9, 8, 19, 29, 56, 864000, timezone.utc).timestamp()
    assert money.content.endswith('("totals > sum of lines").')
    flake = found["project_ci_flake.md#Environment"]
    assert flake.type.value == "insight" and "project" in flake.tags
    assert GPU_PATH in flake.content  # a library path is not a secret ...
    assert TOKEN not in flake.content and "[REDACTED:github-token]" in flake.content  # ... a token is
    assert report.redacted == {"github-token": 1}
    # frontmatter YAML refuses (a name with ': ', a description starting with a backtick): read, not dropped
    agency = found["feedback_agency.md#"]
    assert agency.metadata["claude"]["name"] == "feedback agency: disagree and build"
    assert agency.metadata["claude"]["description"].startswith("`agent-browser` clicks")
    assert agency.type.value == "convention" and "Ｄｏｎ'ｔ \"silently\" swap" in agency.content
    # idempotent: nothing new the second time (and no warning of secrets replaced in what was not stored)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CortexWarning)
        again = dev.import_from("claude", CLAUDE, agent="dev")
    assert again.imported == [] and len(memories(dev)) == len(found)


def found_digest(found: dict[str, object], prefix: str) -> str:
    return next(k for k in found if k.startswith(prefix))[len(prefix):]


def test_a_topic_file_rewritten_supersedes_and_an_older_copy_does_not(dev, tmp_path):
    directory = tmp_path / "memory"
    shutil.copytree(CLAUDE, directory)
    dev.import_from("claude", directory, agent="dev")
    old = memories(dev)["feedback_money_decimal.md#"]
    topic = directory / "feedback_money_decimal.md"
    newer = topic.read_text().replace("2026-09-08T19:29:56.864Z", "2026-10-01T08:00:00Z") \
        .replace("not per line.", "not per line; invoices too.")
    topic.write_text(newer)
    changed = dev.import_from("claude", directory, agent="dev")
    assert [(i.key, i.supersedes) for i in changed.imported] == [("feedback_money_decimal.md#", old.id)]
    assert "invoices too" in memories(dev)["feedback_money_decimal.md#"].content
    # a stale copy (older modified, other text) never undoes the newer one
    topic.write_text(newer.replace("2026-10-01T08:00:00Z", "2026-01-01T00:00:00Z").replace("invoices", "refunds"))
    stale = dev.import_from("claude", directory, agent="dev")
    assert stale.imported == [] and any("older than memory" in s.reason for s in stale.skipped)


def test_the_project_directory_is_found_as_claude_code_names_it(tmp_path):
    config = tmp_path / "claude-config"
    project = make_project(tmp_path / "my.shop_v2", "dev")
    assert claude.project_dir_name(project) == str(project).replace("/", "-").replace(".", "-").replace("_", "-")
    home = claude.memory_dir(project, {"CLAUDE_CONFIG_DIR": str(config)})
    assert home == config / "projects" / claude.project_dir_name(project) / "memory"
    (config).mkdir()
    (config / "settings.json").write_text(json.dumps({"autoMemoryDirectory": str(tmp_path / "elsewhere")}))
    assert claude.memory_dir(project, {"CLAUDE_CONFIG_DIR": str(config)}) == tmp_path / "elsewhere"
    (config / "settings.json").write_text("{not json")
    assert claude.memory_dir(project, {"CLAUDE_CONFIG_DIR": str(config)}) == home
    # a worktree of the project shares its memory (Claude Code keys it by the main checkout); a submodule does not
    worktree = tmp_path / "wt-feature"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {project}/.git/worktrees/wt-feature\n")
    assert claude.memory_dir(worktree, {"CLAUDE_CONFIG_DIR": str(config)}) == home
    submodule = project / "vendor" / "lib"
    submodule.mkdir(parents=True)
    (submodule / ".git").write_text("gitdir: ../../.git/modules/vendor/lib\n")
    assert claude.memory_dir(submodule, {"CLAUDE_CONFIG_DIR": str(config)}).parent.name == \
        claude.project_dir_name(submodule)


def test_cli_imports_claude_and_codex_memories_of_the_project_without_a_path(tmp_path):
    project = make_project(tmp_path / "shop", "dev")
    config, codex_home = tmp_path / "claude-config", tmp_path / "codex-home"
    shutil.copytree(CLAUDE, claude.memory_dir(project, {"CLAUDE_CONFIG_DIR": str(config)}))
    shutil.copytree(CODEX, codex_home / "memories")
    handbook = codex_home / "memories" / "MEMORY.md"
    handbook.write_text(handbook.read_text().replace("cwd=/work/shop", f"cwd={project}"))
    env = {"CLAUDE_CONFIG_DIR": str(config), "CODEX_HOME": str(codex_home), "CORTEX_EMBEDDINGS": "hash"}
    ran = cortex(project, "import", "claude", "--agent", "dev", **env)
    assert ran.returncode == 0, ran.stderr
    assert "imported 5 memories from MEMORY.md, feedback_agency.md" in ran.stderr
    assert "replaced 1 secret" in ran.stderr and TOKEN not in ran.stdout
    ran = cortex(project, "import", "codex", "--agent", "dev", **env)
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    assert report["files"] == ["memory_summary.md", "MEMORY.md", "skills/money-rounding/SKILL.md"]
    assert len(report["imported"]) == 11
    assert [s["reason"] for s in report["skipped"] if "applies to" in s["reason"]] == 2 * [
        f"applies to C:\\Users\\user\\Desktop\\motorcycle, not to this project ({project})"]
    again = cortex(project, "import", "codex", "--agent", "dev", **env)
    assert json.loads(again.stdout)["imported"] == [] and "imported 0 memories" in again.stderr
    missing = cortex(project, "import", "codex", "--agent", "dev", **(env | {"CODEX_HOME": str(tmp_path / "no")}))
    assert missing.returncode == 2 and "memories does not exist" in missing.stderr


def test_claude_topic_file_with_a_frontmatter_bomb(dev, tmp_path):
    """YAML aliases nesting 9**9 strings in a few lines (billion laughs) under metadata: imported at once, the
    nested value left out (serializing it as JSON never ended)."""
    folder = tmp_path / "memory"
    folder.mkdir()
    bomb = "---\nname: bomb\ndescription: x\nmetadata:\n  type: feedback\n  originSessionId: s1\n  a: &a [" + \
        ",".join(9 * ['"lol"']) + "]\n"
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        bomb += f"  {name}: &{name} [" + ",".join(9 * [f"*{prev}"]) + "]\n"
    (folder / "bomb.md").write_text(bomb + "---\n\nDefuse before merging.\n", encoding="utf-8")
    started = time.monotonic()
    report = dev.import_from("claude", folder, agent="dev")
    assert time.monotonic() - started < 30 and report.failed == []
    [memory] = memories(dev).values()
    assert memory.type.value == "convention" and memory.content == "Defuse before merging."
    assert memory.metadata["claude"]["metadata"] == {"type": "feedback", "originSessionId": "s1"}


# -- Codex ------------------------------------------------------------------------------------------------


def test_codex_memories_of_this_project(dev):
    report = dev.import_from("codex", CODEX, agent="dev")
    assert report.files == ["memory_summary.md", "MEMORY.md", "skills/money-rounding/SKILL.md"]  # no evidence
    assert report.failed == []
    keys = [i.key for i in report.imported]
    assert keys == [
        "memory_summary.md#User Profile", "memory_summary.md#General Tips",
        "MEMORY.md#Task Group: Shop money rounding",
        "MEMORY.md#Task Group: Shop money rounding > Task 1: Fix the one-cent rounding bug, success > keywords",
        "MEMORY.md#Task Group: Shop money rounding > User preferences",
        "MEMORY.md#Task Group: Shop money rounding > Reusable knowledge",
        "MEMORY.md#Task Group: Shop money rounding > Failures and how to do differently",
        # a group of a subdirectory of the project is the project's; its prose after the path is not the path
        "MEMORY.md#Task Group: Shop API in its services subdirectory",
        "MEMORY.md#Task Group: Shop API in its services subdirectory > Reusable knowledge",
        "skills/money-rounding/SKILL.md#Skill: money-rounding > When to use",
        "skills/money-rounding/SKILL.md#Skill: money-rounding > Procedure"]
    reasons = {s.reason for s in report.skipped}
    assert reasons == {"the summary's index of the memory folder (not a memory)",
                       "a task's rollout summary pointers (evidence, not a memory)",
                       "applies to C:\\Users\\user\\Desktop\\motorcycle, not to this project (/work/shop)"}
    found = memories(dev)
    prefs = found["MEMORY.md#Task Group: Shop money rounding > User preferences"]
    assert prefs.type.value == "convention" and set(prefs.tags) == {"codex", "codex-memory"}
    assert prefs.metadata["codex"]["cwd"] == "/work/shop" and '"in one place" -> quantize' in prefs.content
    skill = found["skills/money-rounding/SKILL.md#Skill: money-rounding > Procedure"]
    assert skill.type.value == "pattern" and skill.metadata["codex"]["skill"] == "money-rounding"
    assert skill.metadata["import"]["where"] == "skills/money-rounding/SKILL.md:10-11"
    assert found["memory_summary.md#General Tips"].type.value == "convention"
    again = dev.import_from("codex", CODEX, agent="dev")
    assert again.imported == [] and len(memories(dev)) == len(found)


def test_codex_handbook_of_the_older_schema_and_hostile_text(dev, tmp_path):
    folder = tmp_path / "memories"
    folder.mkdir()
    (folder / "MEMORY.md").write_text(
        "---\nrollout_summary_files:\n  - a.md (success, cwd=/work/shop/api, updated_at=2026-02-12T10:30:00Z)\n"
        "description: Fixing \"quoted\" > arrows: in the API\nkeywords: api, quotes\n---\n\n"
        "- Escape `>` in templates; Ｕｎｉｃｏｄｅ look-alikes stay as written.\n\n"
        "---\nrollout_summary_files:\n  - b.md (cwd=/elsewhere/repo, updated_at=2026-02-12T10:30:00Z)\n"
        "description: another repo\n---\n\n- Not ours.\n")
    report = dev.import_from("codex", folder, agent="dev")
    assert [i.key for i in report.imported] == ['MEMORY.md#Task Group: Fixing "quoted" > arrows: in the API']
    memory = next(iter(memories(dev).values()))
    assert memory.content.endswith("- Escape `>` in templates; Ｕｎｉｃｏｄｅ look-alikes stay as written.")
    assert [s.reason for s in report.skipped] == ["applies to /elsewhere/repo, not to this project (/work/shop)"]
    # a file of another format is named as such
    with pytest.raises(InvalidInputError, match="is not a Codex memory file .* it looks like the JSON of mem0"):
        dev.import_from("codex", FIXTURES / "mem0" / "get_all.json", agent="dev")


def test_codex_group_of_a_sibling_or_a_path_climbing_out_is_not_this_projects(dev, tmp_path):
    folder = tmp_path / "memories"
    folder.mkdir()
    groups = {"sibling": "/work/shop2", "climbing": "/work/shop/../other", "dotted": "/work/shop/./api/..",
              "trailing": "/work/shop/"}
    (folder / "MEMORY.md").write_text("".join(
        f"# Task Group: {name}\nscope: x\napplies_to: cwd={cwd}; reuse_rule=safe\n\n## Reusable knowledge\n- {name}.\n\n"
        for name, cwd in groups.items()))
    report = dev.import_from("codex", folder, agent="dev")
    assert {i.key.split("#")[1].split(" > ")[0] for i in report.imported} == {"Task Group: dotted",
                                                                               "Task Group: trailing"}
    assert sorted(s.reason for s in report.skipped) == sorted(
        f"applies to {cwd}, not to this project (/work/shop)" for cwd in ("/work/shop2", "/work/shop/../other")
        for _ in range(2))


def test_codex_home_is_where_codex_keeps_it():
    assert codex.memory_dir({"CODEX_HOME": "/opt/codex"}) == Path("/opt/codex/memories")
    assert codex.memory_dir({}) == Path.home() / ".codex" / "memories"


def test_a_huge_memory_file_is_split_and_imported_in_bounded_time(dev, tmp_path):
    folder = tmp_path / "memory"
    folder.mkdir()
    paragraph = "Quantize once \"after\" summing > per line; Ｄｅｃｉｍａｌ only. " * 20
    body = "\n\n".join(f"{paragraph} ({n})" for n in range(600))  # ~800 KB, one section
    (folder / "project_huge.md").write_text(f"---\nname: huge\nmetadata:\n  type: project\n---\n\n# Notes\n{body}\n")
    started = time.monotonic()
    report = dev.import_from("claude", folder, agent="dev")
    assert time.monotonic() - started < 120
    assert report.failed == [] and len(report.imported) == 600 and dev.count("dev") == 600  # a chunk a paragraph
    assert dev.import_from("claude", folder, agent="dev").imported == []


# -- Beads shapes met in real repositories ----------------------------------------------------------------


def test_beads_lines_encoded_twice_iso_times_and_issues_without_type(dev):
    report = dev.import_from("beads", BEADS / "knowledge.encoded.jsonl", agent="dev")
    assert [i.key for i in report.imported] == ["decision-money-amounts-are-decimal-never-float",
                                                "learned-staging-runs-from-the-release-branch"]
    found = memories(dev)
    decision = found["decision-money-amounts-are-decimal-never-float"]
    assert decision.content == 'Money amounts are Decimal, never float; totals are "quantized" once > per line'
    staged = found["learned-staging-runs-from-the-release-branch"]
    assert staged.created_at == datetime(2026, 2, 8, 1, 25, 48, 946554, timezone.utc)
    # a bd export without _type: its issues are not memories, their knowledge comments are (the plugin's keys:
    # the same knowledge from the log is the same memory)
    dev.import_from("beads", BEADS / "knowledge.jsonl", agent="dev")
    issues = dev.import_from("beads", BEADS / "bd_issues.jsonl", agent="dev")
    assert issues.imported == []
    assert [(s.where, s.reason.split(" 0")[0]) for s in issues.skipped] == [
        ("bd_issues.jsonl:2", "a bd export issue (shop-7ha) without knowledge comments, not a memory"),
        ("bd_issues.jsonl:1 comments[0]", "older than memory")]  # the log captured it after the comment
    fresh = dev.import_from("beads", BEADS / "bd_issues.jsonl", agent="dev", dry_run=True)
    assert fresh.imported == []
    # a ts that is neither seconds nor a time is named
    bad = dev.import_from("beads", b'{"key":"k-1","content":"x","ts":"yesterday"}\n', agent="dev", name="k.jsonl")
    assert bad.failed[0].reason == "ts is neither a number of seconds nor an ISO 8601 time: 'yesterday'"


def test_encoded_knowledge_is_named_a_beads_file_not_a_claude_one(dev):
    with pytest.raises(InvalidInputError, match=r"knowledge.encoded.jsonl is not a Claude Code memory file .*: it "
                                                r"looks like a Beads knowledge file"):
        dev.import_from("claude", BEADS / "knowledge.encoded.jsonl", agent="dev")


def test_cli_imports_encoded_beads_and_issues_in_a_subprocess(tmp_path):
    project = make_project(tmp_path / "shop", "dev")
    ran = cortex(project, "import", "beads", str(BEADS / "knowledge.encoded.jsonl"), "--agent", "dev",
                 CORTEX_EMBEDDINGS="hash")
    assert ran.returncode == 0, ran.stderr
    assert "imported 2 memories from knowledge.encoded.jsonl; 0 skipped, 0 failed" in ran.stderr
    ran = cortex(project, "import", "beads", str(BEADS / "bd_issues.jsonl"), "--agent", "dev",
                 CORTEX_EMBEDDINGS="hash")
    assert ran.returncode == 0 and "imported 1 memories from bd_issues.jsonl; 1 skipped" in ran.stderr
    wrong = cortex(project, "import", "claude", str(BEADS / "knowledge.encoded.jsonl"), "--agent", "dev",
                   CORTEX_EMBEDDINGS="hash")
    assert wrong.returncode == 1 and "it looks like a Beads knowledge file" in wrong.stderr


# -- cortex notes: Claude Code's auto memory kept in sync ---------------------------------------------------


def _notes_project(tmp_path: Path) -> Path:
    project = make_project(tmp_path / "shop", "dev")
    (project / "agent_defs" / "dev.md").write_text(
        "---\nname: dev\ndescription: a developer\nmemory: true\ncortex:\n  notes: [claude-memory]\n---\nDev.\n")
    return project


def test_notes_keep_claude_codes_auto_memory_in_sync(tmp_path, monkeypatch):
    project = _notes_project(tmp_path)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    directory = claude.memory_dir(project)
    shutil.copytree(CLAUDE, directory)
    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None) as cx:
        assert str(directory) in cx.notes_dirs("dev")
        first = cx.sync_notes("dev")[0]
        assert first.files == 4 and first.skipped == []
        by_file = {(m.metadata["file"], m.metadata["heading"]): m for m in cx.list_memories("dev", limit=100).items}
        money = by_file[("memory/feedback_money_decimal.md", "")]
        assert money.type.value == "convention" and {"notes", "auto-memory", "feedback"} <= set(money.tags)
        assert money.content.startswith("Money amounts are `Decimal`") and "originSessionId" not in money.content
        assert money.metadata["lines"] == [11, 14] and money.metadata["name"] == "money-is-decimal"
        assert by_file[("memory/feedback_agency.md", "")].type.value == "convention"  # YAML refuses it: read
        environment = by_file[("memory/project_ci_flake.md", "Environment")]
        assert environment.type.value == "insight" and GPU_PATH in environment.content
        assert TOKEN not in environment.content and "[REDACTED:github-token]" in environment.content
        # Claude Code rewrites a topic file: its memory is superseded; deletes one: it leaves recall
        topic = directory / "feedback_money_decimal.md"
        topic.write_text(topic.read_text().replace("not per line.", "not per line; invoices too."))
        (directory / "feedback_agency.md").unlink()
        again = cx.sync_notes("dev")[0]
        assert len(again.updated) == 1 and len(again.removed) == 1 and again.added == []
        assert cx.get("dev", money.id).superseded and "invoices too" in cx.get("dev", again.updated[0]).content


def test_a_write_of_claude_code_to_its_memory_syncs_it_through_the_hook(tmp_path):
    import subprocess
    import sys

    from tests.service_helpers import env

    project = _notes_project(tmp_path)
    config = tmp_path / "claude-config"
    directory = claude.memory_dir(project, {"CLAUDE_CONFIG_DIR": str(config)})
    directory.mkdir(parents=True)
    written = directory / "feedback_tests.md"
    written.write_text("---\nname: tests\ndescription: how to test\nmetadata:\n  type: feedback\n---\n\n"
                       "Run `pytest -q -x` before saying \"done\" > never skip it.\n")
    payload = {"session_id": "s1", "cwd": str(project), "hook_event_name": "PostToolUse", "tool_name": "Write",
               "tool_input": {"file_path": str(written), "content": "..."},
               "tool_response": {"filePath": str(written), "success": True}}
    done = subprocess.run([sys.executable, "-m", "cortex", "hook", "claude", "PostToolUse"], input=json.dumps(payload),
                          capture_output=True, text=True, cwd="/", timeout=120,
                          env=env(CORTEX_EMBEDDINGS="none", CLAUDE_CONFIG_DIR=str(config)))
    assert done.returncode == 0 and done.stdout == "", done.stderr
    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None) as cx:
        [memory] = cx.list_memories("dev").items
        assert memory.content == 'Run `pytest -q -x` before saying "done" > never skip it.'
        assert memory.type.value == "convention" and memory.source.value == "file_index"


def test_notes_of_codex_memory_folder_leave_its_evidence_out(tmp_path, monkeypatch):
    project = make_project(tmp_path / "shop", "dev")
    (project / "agent_defs" / "dev.md").write_text(
        "---\nname: dev\ndescription: a developer\nmemory: true\ncortex:\n  notes: [codex-memory]\n---\nDev.\n")
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    shutil.copytree(CODEX, tmp_path / "codex-home" / "memories")
    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None) as cx:
        report = cx.sync_notes("dev")[0]
        files = {m.metadata["file"] for m in cx.list_memories("dev", limit=100).items}
        assert report.files == 3 and files == {"memories/MEMORY.md", "memories/memory_summary.md",
                                               "memories/skills/money-rounding/SKILL.md"}
        skill = next(m for m in cx.list_memories("dev", limit=100).items if m.metadata["file"].endswith("SKILL.md"))
        assert skill.metadata["name"] == "money-rounding" and "name:" not in skill.content


def test_a_servers_client_sends_codexs_folder_a_file_a_request(tmp_path):
    from cortex.client import RemoteCortex

    project = make_project(tmp_path / "shop", "dev")
    folder = tmp_path / "memories"
    shutil.copytree(CODEX, folder)
    (folder / "MEMORY.md").write_text((folder / "MEMORY.md").read_text().replace("cwd=/work/shop", f"cwd={project}"))
    server = start_server(project, CORTEX_EMBEDDINGS="none")
    try:
        with RemoteCortex(server.url, server.token) as client:
            report = client.import_from("codex", folder, agent="dev")
            # the skill keeps its path in the folder; the server, not the client, decides the project
            assert report.files == ["memory_summary.md", "MEMORY.md", "skills/money-rounding/SKILL.md"]
            assert len(report.imported) == 11 and report.failed == []
            assert client.import_from("codex", folder, agent="dev").imported == []
    finally:
        server.stop()


def test_a_claude_md_with_a_library_path_and_a_badge_imports_unredacted_through_the_cli(tmp_path):
    project = make_project(tmp_path / "shop", "dev")
    claude_md = project / "CLAUDE.md"
    claude_md.write_text(f"[![CI](https://ci.example/badge.svg)](https://ci.example)\n\n# Shop\n\n## GPU tests\n"
                         f"Run `{GPU_PATH} pytest -m gpu` > gpu.log; the token is {TOKEN}.\n")
    ran = cortex(project, "import", "claude", str(claude_md), "--agent", "dev", CORTEX_EMBEDDINGS="hash")
    assert ran.returncode == 0, ran.stderr
    assert "imported 2 memories from CLAUDE.md" in ran.stderr and "replaced 1 secret (1 github-token)" in ran.stderr
    listed = json.loads(cortex(project, "list", "dev", CORTEX_EMBEDDINGS="hash").stdout)
    gpu = next(m for m in (listed["items"] if isinstance(listed, dict) else listed) if "GPU tests" in m["content"])
    assert GPU_PATH in gpu["content"] and TOKEN not in gpu["content"] and gpu["type"] == "convention"
