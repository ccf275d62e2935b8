"""The `cortex` command line in a throwaway project: in this process through click's runner (the same code as
the console script), and as a real subprocess where the process itself is the point."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.service_helpers import Ran, run_cli

AGENT = """---
name: reviewer
description: Reviews diffs
memory: true
---
You review code.
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "agent_defs").mkdir()
    (tmp_path / "agent_defs" / "reviewer.md").write_text(AGENT)
    (tmp_path / "src" / "deep").mkdir(parents=True)
    return tmp_path


def cortex(project: Path, *args: str, cwd: Path | None = None, stdin: str | None = None,
           env: dict[str, str] | None = None) -> Ran:
    return run_cli(cwd or project, *args, stdin=stdin, env=env)  # type: ignore[arg-type]


def in_a_process(project: Path, *args: str, stdin: str | bytes | None = None,
                 env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if k != "CORTEX_STORE"} | (env or {})
    return subprocess.run([sys.executable, "-m", "cortex", *args], cwd=project, input=stdin, capture_output=True,
                          text=not isinstance(stdin, bytes), env=full_env, timeout=120)


def ok(result):
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout) if result.stdout.strip().startswith(("{", "[")) else result.stdout


def test_the_console_script_works_in_a_real_process(project):
    stored = in_a_process(project, "store", "reviewer", "Always check for null pointers")
    assert stored.returncode == 0, stored.stderr
    found = in_a_process(project, "recall", "reviewer", "null")
    assert found.returncode == 0 and json.loads(found.stdout)[0]["id"] == json.loads(stored.stdout)["id"]
    assert in_a_process(project, "nosuchcommand").returncode == 2


def test_store_recall_get_touch_forget_stats_cycle(project):
    m = ok(cortex(project, "store", "reviewer", "Always check for null pointers", "--type", "pattern",
                  "--project", "mayros", "--confidence", "0.9"))
    assert (m["type"], m["project"], m["confidence"], m["usage_count"]) == ("pattern", "mayros", 0.9, 0)
    assert (project / ".cortex" / "store").is_dir()  # default store at the project root
    hits = ok(cortex(project, "recall", "reviewer", "NULL pointer"))
    assert [h["id"] for h in hits] == [m["id"]]
    assert ok(cortex(project, "get", "reviewer", m["id"]))["content"] == "Always check for null pointers"
    assert ok(cortex(project, "touch", "reviewer", m["id"]))["usage_count"] == 1
    assert ok(cortex(project, "stats", "reviewer")) == {"pattern": 1, "convention": 0, "insight": 0, "decision": 0}
    assert ok(cortex(project, "forget", "reviewer", m["id"])) == {"id": m["id"], "forgotten": True}
    missing = cortex(project, "get", "reviewer", m["id"])
    assert missing.returncode == 1 and "no memory with id" in missing.stderr


def test_project_root_is_found_from_a_subdirectory(project):
    ok(cortex(project, "store", "reviewer", "from the root"))
    hits = ok(cortex(project, "recall", "reviewer", "root", cwd=project / "src" / "deep"))
    assert [h["content"] for h in hits] == ["from the root"]


def test_cortex_store_env_and_option_override_the_default(project, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    ok(cortex(project, "store", "reviewer", "in env store", env={"CORTEX_STORE": str(elsewhere)}))
    assert elsewhere.is_dir() and not (project / ".cortex" / "store").exists()
    hits = ok(cortex(project, "--store", str(elsewhere), "recall", "reviewer"))
    assert [h["content"] for h in hits] == ["in env store"]


def test_formats_block_and_table(project):
    ok(cortex(project, "store", "reviewer", "line one\nline two", "--type", "decision"))
    block = cortex(project, "recall", "reviewer", "--format", "block")
    assert block.stdout == "<agent-memory>\n- [decision] line one\n  line two\n</agent-memory>\n"
    table = cortex(project, "recall", "reviewer", "--format", "table").stdout.splitlines()
    assert table[0].split() == ["id", "type", "project", "conf", "uses", "content"]
    assert "line one line two" in table[1]


def test_store_reads_content_from_stdin(project):
    m = ok(cortex(project, "store", "reviewer", "-", stdin="from stdin\nwith two lines"))
    assert m["content"] == "from stdin\nwith two lines"


def test_prune_dry_run_then_real(project):
    ok(cortex(project, "store", "reviewer", "weak", "--confidence", "0.1"))
    ok(cortex(project, "store", "reviewer", "strong", "--confidence", "0.9"))
    dry = ok(cortex(project, "prune", "reviewer", "--dry-run"))
    assert (dry["count"], len(dry["ids"]), dry["dry_run"]) == (1, 1, True)
    real = ok(cortex(project, "prune", "reviewer", "--max-age", "30d"))
    assert (real["count"], real["dry_run"]) == (1, False)
    assert [h["content"] for h in ok(cortex(project, "recall", "reviewer"))] == ["strong"]
    bad = cortex(project, "prune", "reviewer", "--max-age", "forever")
    assert bad.returncode == 1 and "max_age" in bad.stderr


def test_start_and_end(project):
    captured = ok(cortex(project, "end", "reviewer", stdin="Done.\nLEARNED: the auth module caches tokens\n"))
    assert [m["content"] for m in captured] == ["the auth module caches tokens"]
    block = cortex(project, "start", "reviewer", "--task", "review the auth module")
    assert block.returncode == 0
    assert block.stdout == "<agent-memory>\n- [insight] the auth module caches tokens\n</agent-memory>\n"
    assert ok(cortex(project, "recall", "reviewer"))[0]["usage_count"] == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["store", "ghost", "x"], "agent 'ghost' is not declared"),
        (["store", "Bad Name", "x"], "agent: invalid agent name 'Bad Name'"),
        (["store", "reviewer", "x", "--type", "bogus"], "type: unknown memory type 'bogus'"),
        (["store", "reviewer", "x", "--confidence", "1.5"], "confidence: must be between 0 and 1"),
        (["store", "reviewer", "   "], "content: must not be empty"),
        (["recall", "reviewer", "--type", "nope"], "type: unknown memory type"),
        (["touch", "reviewer", "nope"], "no memory with id 'nope'"),
        (["forget", "reviewer", "nope"], "no memory with id 'nope'"),
    ],
)
def test_errors_are_one_line_on_stderr_with_exit_1(project, args, message):
    result = cortex(project, *args)
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cortex: error: ") and message in lines[0]


def test_invalid_utf8_input_is_one_error_line(project):
    result = in_a_process(project, "end", "reviewer", stdin=b"LEARNED: \xff\xfe broken")
    assert result.returncode == 1
    assert result.stderr.decode().strip().splitlines() == [
        "cortex: error: input is not valid UTF-8 (invalid start byte at byte 9)"]


def test_oversized_content_is_refused(project):
    result = cortex(project, "store", "reviewer", "-", stdin="x" * (64 * 1024 + 1))
    assert result.returncode == 1 and "65537 bytes" in result.stderr


def test_usage_errors_exit_2(project):
    assert cortex(project, "store").returncode == 2
    assert cortex(project, "recall", "reviewer", "--limit", "0").returncode == 2
    assert cortex(project, "nosuchcommand").returncode == 2


def test_agents_list_and_check(project):
    listed = ok(cortex(project, "agents", "list"))
    assert [(a["name"], a["memory_enabled"]) for a in listed] == [("reviewer", True)]
    check = cortex(project, "agents", "check")
    assert check.returncode == 0 and check.stdout == "" and "1 definition file(s) OK" in check.stderr
    (project / ".claude" / "agents").mkdir(parents=True)
    (project / ".claude" / "agents" / "broken.md").write_text("---\nname: Broken\n---\n")
    (project / "agent_defs" / "yaml.md").write_text("---\nname: y\ndescription: [oops\n---\n")
    check = cortex(project, "agents", "check")
    assert check.returncode == 1
    lines = check.stdout.strip().splitlines()
    assert len(lines) == 3
    assert any("yaml.md: frontmatter: YAML error at line" in line for line in lines)
    assert any("broken.md: name: invalid agent name 'Broken'" in line for line in lines)
    assert any("broken.md: description: missing" in line for line in lines)
    # other commands still work, and warn about the broken files on stderr
    result = cortex(project, "stats", "reviewer")
    assert result.returncode == 0 and "cortex: warning:" in result.stderr and "broken.md" in result.stderr


def test_a_store_held_by_another_process_is_read_at_once_and_a_write_names_the_holder(project):
    """Without a server, a reading command opens the store read-only while another process writes it; a writing
    command waits ($CORTEX_LOCK_WAIT), saying for whom, then fails naming that process."""
    ok(cortex(project, "store", "reviewer", "Always check null pointers"))
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from cortex import Cortex, discovery; "
         "discovery.set_process_label('cortex import'); cx = Cortex.open(sys.argv[1]); "
         "print('ready', flush=True); sys.stdin.readline()", str(project / ".cortex" / "store")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        found = in_a_process(project, "recall", "reviewer", "null", env={"CORTEX_LOCK_WAIT": "30"})
        assert found.returncode == 0, found.stderr
        assert [m["content"] for m in json.loads(found.stdout)] == ["Always check null pointers"]
        result = in_a_process(project, "store", "reviewer", "another", env={"CORTEX_LOCK_WAIT": "0.5"})
        assert result.returncode == 1
        said = f"locked: a cortex import (pid {holder.pid}) is writing"
        assert f"{said}: waiting up to 0.5 s" in result.stderr and f"error: store" in result.stderr
        assert result.stderr.count(said) == 2
    finally:
        holder.communicate("\n", timeout=30)


def test_search_command(project):
    target = ok(cortex(project, "store", "reviewer", "Caroline joined the support group in May"))
    ok(cortex(project, "store", "reviewer", "Melanie painted a sunrise"))
    result = cortex(project, "search", "reviewer", "When did Caroline join the group?", "--explain")
    assert result.returncode == 0
    assert "fell back to bm25" in result.stderr
    data = json.loads(result.stdout)
    assert data["mode"] == "bm25" and data["requested_mode"] == "hybrid"
    assert data["hits"][0]["memory"]["id"] == target["id"] and "lexical" in data["hits"][0]["explain"]
    bad = cortex(project, "search", "reviewer", "x", "--mode", "fuzzy")
    assert bad.returncode == 1 and "unknown search mode 'fuzzy'" in bad.stderr


def test_with_the_local_model_commands_embed_in_their_own_process(project, local):
    """A command loads the model itself (about a second) and starts no server: a server left behind held the
    store against the user's next `cortex serve` and `Cortex.open`."""
    env = {"CORTEX_EMBEDDINGS": "local"}
    first = cortex(project, "store", "reviewer", "The login service keeps user sessions in Redis", env=env)
    assert first.returncode == 0 and "server" not in first.stderr, first.stderr
    assert not (project / ".cortex" / "store" / "cortex-server.json").exists()
    target = json.loads(first.stdout)
    assert cortex(project, "store", "reviewer", "Invoices go out monthly", env=env).returncode == 0
    result = cortex(project, "search", "reviewer", "where do we cache authentication state?", "--explain", env=env)
    data = json.loads(result.stdout)
    assert data["mode"] == "hybrid" and data["note"] is None
    assert data["hits"][0]["memory"]["id"] == target["id"] and data["hits"][0]["explain"]["semantic"] > 0.2
    report = cortex(project, "reindex", "--force", env=env)
    assert json.loads(report.stdout) == {"reviewer": {"memories": 2, "embedded": 2}}
    assert not (project / ".cortex" / "store" / "cortex-server.json").exists()


def test_without_the_model_commands_open_the_store_themselves(project):
    stored = cortex(project, "--embeddings", "hash", "store", "reviewer", "Invoices go out monthly")
    assert stored.returncode == 0 and "background server" not in stored.stderr
    assert not (project / ".cortex" / "store" / "cortex-server.json").exists()
    assert cortex(project, "--embeddings", "hash", "reindex").stdout.count('"embedded": 0') == 1


def test_small_things_a_new_user_meets(project, tmp_path):
    piped = ok(cortex(project, "store", "reviewer", "-", stdin="from echo\n"))
    assert piped["content"] == "from echo"  # the newline echo adds is not part of the memory
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / ".git").mkdir()
    stats = run_cli(outside, "--agents-dir", str(project / "agent_defs"), "stats", "reviewer")
    assert stats.returncode == 0 and json.loads(stats.stdout)["insight"] == 0
    assert not (outside / ".cortex").exists()  # a read-only command creates no store
    for command in ("store", "recall", "search", "start", "end"):
        assert "--project" in (help_text := cortex(project, command, "--help").stdout)
        assert "project" in help_text.split("--project", 1)[1].split("\n")[0].lower() or \
            "project" in help_text.split("--project", 1)[1].split("--")[0].lower()


def test_store_quiet_prints_only_the_id_for_the_readmes_lifecycle_steps(project):
    """README: NULLS=$(cortex store reviewer "..." -q), then update/history/validate/provenance with $NULLS."""
    quiet = cortex(project, "store", "reviewer", "Always check for null", "--type", "pattern", "-q")
    assert quiet.returncode == 0 and quiet.stderr == ""
    memory_id = quiet.stdout.strip()
    assert quiet.stdout == memory_id + "\n"
    updated = ok(cortex(project, "update", "reviewer", memory_id, "--content", "Always check for null and undefined",
                        "--expected-version", "1"))
    assert updated["id"] == memory_id and updated["version"] == 2
    assert ok(cortex(project, "validate", "reviewer", memory_id))["id"] == memory_id


def test_start_without_touching(project):
    stored = ok(cortex(project, "store", "reviewer", "Null checks go before every dereference"))
    assert "Null checks" in cortex(project, "start", "reviewer", "--task", "null checks", "--no-touch").stdout
    assert ok(cortex(project, "get", "reviewer", stored["id"]))["usage_count"] == 0
    assert "Null checks" in cortex(project, "start", "reviewer", "--task", "null checks").stdout
    assert ok(cortex(project, "get", "reviewer", stored["id"]))["usage_count"] == 1


def test_store_many_index_status_and_info(project):
    """The operations the CLI lacked (tests/architecture/test_surfaces.py)."""
    lines = '{"content": "first fact of the batch"}\n{"content": "second fact", "type": "pattern", "tags": ["ci"]}\n'
    stored = ok(cortex(project, "store-many", "reviewer", stdin=lines))
    assert [m["content"] for m in stored] == ["first fact of the batch", "second fact"] and stored[1]["tags"] == ["ci"]
    as_list = ok(cortex(project, "store-many", "reviewer", stdin='[{"content": "third fact"}]'))
    assert as_list[0]["content"] == "third fact"
    bad = cortex(project, "store-many", "reviewer", stdin='[{"content": "fine"}, {"content": 5}]')
    assert bad.returncode == 1 and "entries[1].content" in bad.stderr
    assert ok(cortex(project, "stats", "reviewer"))["insight"] == 2  # nothing of the bad batch was stored
    garbage = cortex(project, "store-many", "reviewer", stdin="not json")
    assert garbage.returncode == 1 and "entries" in garbage.stderr
    status = ok(cortex(project, "index-status", "reviewer"))
    assert status["memories"] == status["stored"] == 3 and status["scope"] == "agent:reviewer"
    assert ok(cortex(project, "info"))["store"].endswith("store")


def _modules_after(project: Path, *args: str, env: dict[str, str] | None = None) -> tuple[str, set[str]]:
    """What ``cortex ARGS`` prints as a new process (the console script's entry point), and the modules it
    imported (``sys.modules`` at exit: importlib.import_module's imports too)."""
    script = ("import sys, atexit, json\n"
              "atexit.register(lambda: print('\\nMODULES ' + json.dumps(sorted(sys.modules)), file=sys.stderr))\n"
              "sys.argv = ['cortex', *sys.argv[1:]]\nfrom cortex.__main__ import main\nmain()\n")
    full_env = {k: v for k, v in os.environ.items() if k not in ("CORTEX_STORE", "PYDANTIC_DISABLE_PLUGINS")}
    done = subprocess.run([sys.executable, "-c", script, *args], cwd=project, capture_output=True, text=True,
                          env=full_env | (env or {}), timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout, set(json.loads(done.stderr.rsplit("MODULES ", 1)[1]))


def test_a_read_command_imports_only_its_own_commands_and_no_plugin_scan(project):
    ok(in_a_process(project, "store", "reviewer", "Always check for null pointers"))
    out, modules = _modules_after(project, "search", "reviewer", "null pointers", env={"CORTEX_EMBEDDINGS": "none"})
    assert json.loads(out)["hits"][0]["memory"]["content"] == "Always check for null pointers"  # a model dumped
    assert "cortex.cli.reading" in modules
    assert not {"cortex.cli.admin", "cortex.cli.consolidation", "cortex.cli.graph", "cortex.cli.server",
                "cortex.cli.generic"} & modules
    # pydantic's plugin loader would import importlib.metadata (and email, socket) to find no plugin
    assert "pydantic" in modules and "importlib.metadata" not in modules and "email" not in modules
    # a user who names the plugins to disable keeps pydantic's own loader, which scans the installed distributions
    out, modules = _modules_after(project, "search", "reviewer", "null pointers",
                                  env={"CORTEX_EMBEDDINGS": "none", "PYDANTIC_DISABLE_PLUGINS": "some_plugin"})
    assert json.loads(out)["hits"] and "importlib.metadata" in modules
    # a name outside the hot set, or a listing, still finds every command (and the generic ones)
    out, modules = _modules_after(project, "--help")
    assert {"consolidate", "review-all", "search", "store", "agents"} <= {line.split()[0] for line in
                                                                        out.split("Commands:")[1].splitlines()
                                                                        if line.strip()}
    out, _ = _modules_after(project, "agents", "--help")
    assert "check" in out  # the process command added to the admin module's group


def test_the_plugin_stand_in_answers_as_pydantics_loader():
    script = ("import os, sys\nfrom cortex.__main__ import skip_plugin_scan\nskip_plugin_scan()\n"
              "from pydantic.plugin import _loader\n"
              "assert list(_loader.get_plugins()) == [] and 'importlib.metadata' not in sys.modules\n"
              "os.environ['PYDANTIC_DISABLE_PLUGINS'] = ''\n"  # enabled again: the real loader answers
              "plugins = list(_loader.get_plugins())\n"
              "from pydantic.plugin import _loader as real\n"
              "print(type(real).__name__, 'importlib.metadata' in sys.modules, real.PYDANTIC_ENTRY_POINT_GROUP)\n")
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["module", "True", "pydantic"]
