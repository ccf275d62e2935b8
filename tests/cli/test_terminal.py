"""The terminal is a client too: on a real pseudo-terminal a command prints what a person reads (a line, a table,
long lists cut short), piped or with ``--format json`` the JSON scripts read; broken agent files are one warning
line pointing to `cortex agents check`."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.service_helpers import cortex, env, make_project


def on_terminal(project: Path, *args: str, stdin: str | None = None) -> tuple[str, str]:
    """Run ``cortex ARGS`` with stdout on a pseudo-terminal (stderr piped): what the terminal showed, stderr."""
    leader, follower = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "cortex.cli", *args], cwd=project, stdout=follower,
                               stderr=subprocess.PIPE, stdin=subprocess.PIPE if stdin is not None else
                               subprocess.DEVNULL, env=env(COLUMNS="160", CORTEX_EMBEDDINGS="none"))
    os.close(follower)
    if stdin is not None:
        assert process.stdin is not None
        process.stdin.write(stdin.encode())
        process.stdin.close()
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the process ended
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert process.wait(timeout=120) == 0, process.stderr.read().decode() if process.stderr else ""
    assert process.stderr is not None
    return shown.decode().replace("\r\n", "\n"), process.stderr.read().decode()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "p", "main")


HOSTILE = 'hello [bold]world[/bold] "quoted" > x\nsecond line Аdmin'


def test_store_on_a_terminal_is_one_line_and_piped_is_the_json(project):
    shown, _ = on_terminal(project, "store", "main", HOSTILE)
    lines = shown.strip().splitlines()
    assert len(lines) == 1, shown
    # rich markup in a value is printed as it is, the newline flattened
    assert 'hello [bold]world[/bold] "quoted" > x second line Аdmin' in lines[0]
    memory_id = lines[0].split()[0]
    piped = cortex(project, "get", "main", memory_id, CORTEX_EMBEDDINGS="none")
    assert piped.returncode == 0
    data = json.loads(piped.stdout)
    assert data["id"] == memory_id and data["content"] == HOSTILE
    assert piped.stdout.startswith('{\n  "id"')  # indented JSON, as scripts read it before


def test_a_long_list_is_cut_on_a_terminal_and_whole_when_piped_or_asked_for(project):
    entries = "\n".join(json.dumps({"content": f"memory number {i}"}) for i in range(25))
    shown, _ = on_terminal(project, "store-many", "main", stdin=entries)
    assert "… and 15 more" in shown and "--format json" in shown
    assert sum("memory number" in line for line in shown.splitlines()) == 10
    assert len(shown.encode()) < 3000
    # a command with a table of its own prints it on a terminal, every row asked for
    table, _ = on_terminal(project, "list", "main", "--limit", "25")
    rows = table.strip().splitlines()
    assert rows[0].split()[:2] == ["id", "created"] and sum("memory number" in row for row in rows) == 25, table
    searched, _ = on_terminal(project, "search", "main", "memory number", "--limit", "3")
    assert searched.strip().splitlines()[0].split()[:2] == ["id", "type"], searched
    asked, _ = on_terminal(project, "list", "main", "--limit", "25", "--format", "json")
    piped = cortex(project, "list", "main", "--limit", "25", CORTEX_EMBEDDINGS="none")
    assert len(json.loads(piped.stdout)["items"]) == 25
    assert asked == piped.stdout  # byte for byte (the terminal's \r\n aside)


def test_an_import_report_on_a_terminal_summarises(project, tmp_path):
    source = tmp_path / "memory.jsonl"
    source.write_text("\n".join(json.dumps({"type": "entity", "name": f"e{i}", "entityType": "thing",
                                            "observations": [f"fact {i}"]}) for i in range(40)))
    piped = cortex(project, "import", "mcp-memory", str(source), "--agent", "main", "--dry-run",
                   CORTEX_EMBEDDINGS="none")
    if piped.returncode != 0:
        pytest.skip(f"mcp-memory import refused the sample: {piped.stderr}")
    full = json.loads(piped.stdout)
    assert len(full["imported"]) >= 40
    shown, err = on_terminal(project, "import", "mcp-memory", str(source), "--agent", "main", "--dry-run")
    assert f"imported: {len(full['imported'])}" in shown
    assert f"… and {len(full['imported']) - 10} more" in shown
    assert len(shown) < len(piped.stdout) / 3
    assert "would import" in err
    written = Path(err.split("the full report: ")[1].split(" (")[0])
    assert json.loads(written.read_text()) == full
    assert written.parent == project / ".cortex" / "logs"


def test_broken_agent_files_are_one_warning_line_and_agents_check_lists_every_problem(project):
    defs = project / "agent_defs"
    for i in range(5):
        (defs / f"broken{i}.md").write_text("---\nname: Broken\n---\n")  # bad name, no description
    result = cortex(project, "stats", "main", CORTEX_EMBEDDINGS="none")
    assert result.returncode == 0
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1, result.stderr
    assert "10 problem(s) in 5 agent definition file(s)" in warnings[0]
    assert "broken0.md" in warnings[0] and "and 2 more" in warnings[0] and "`cortex agents check`" in warnings[0]
    check = cortex(project, "agents", "check")
    assert check.returncode == 1
    assert len(check.stdout.strip().splitlines()) == 10
