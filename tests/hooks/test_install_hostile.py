"""``cortex install`` against what users really have: a ``~/.claude.json`` kept in a dotfiles repository (a symlink)
holding Claude Code's account in non-ASCII, a cortex installed under a path with quotes and shell characters, and
a project that is a git worktree (its ``.git`` is a file)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.service_helpers import cortex, env

#: Claude Code's own file as JSON.stringify(data, null, 2) writes it: non-ASCII as is, a lone surrogate escaped.
ACCOUNT = {"oauthAccount": {"displayName": "Zoë \"Ω\" 🙂 ＜/x＞", "emailAddress": "zoe@example.com",
                            "note": "line\nnext\ttab \u2028 \\ \ud800"},
           "numStartups": 42, "tipsHistory": {"a": 0.5},
           "projects": {"/elsewhere/other project": {"allowedTools": ["Bash"], "mcpServers": {}}}}


def stringify(data: object) -> bytes:
    """JSON.stringify(data, null, 2): as Claude Code writes ~/.claude.json."""
    text = json.dumps(data, indent=2, ensure_ascii=False)
    return text.replace("\ud800", "\\ud800").encode("utf-8")


def test_claude_json_behind_a_symlink_keeps_its_bytes_its_mode_and_its_link(tmp_path: Path) -> None:
    project = tmp_path / "my proj $x `y` 'q'"
    (project / ".git").mkdir(parents=True)
    dotfiles, config = tmp_path / "dotfiles", tmp_path / "config"
    dotfiles.mkdir()
    config.mkdir()
    target = dotfiles / "claude.json"
    original = stringify(ACCOUNT)
    target.write_bytes(original)
    target.chmod(0o600)
    (config / ".claude.json").symlink_to(target)
    extra = {"CLAUDE_CONFIG_DIR": str(config)}

    first = cortex(project, "install", "claude", **extra)
    assert first.returncode == 0, first.stderr
    assert (config / ".claude.json").is_symlink(), "the dotfiles link was replaced by a copy"
    written = json.loads(target.read_bytes())
    assert written["projects"][str(project.resolve())]["mcpServers"]["cortex"]["args"][-1] == "mcp"
    assert {k: v for k, v in written.items() if k != "projects"} == {k: v for k, v in ACCOUNT.items()
                                                                     if k != "projects"}
    assert "Zoë \\\"Ω\\\" 🙂 ＜/x＞".encode() in target.read_bytes(), "non-ASCII rewritten as \\u escapes"
    assert target.stat().st_mode & 0o777 == 0o600

    assert cortex(project, "install", "claude", **extra).stderr.strip().endswith("already installed")
    for _ in range(2):
        assert cortex(project, "uninstall", "claude", **extra).returncode == 0
    assert (config / ".claude.json").is_symlink()
    assert target.read_bytes().rstrip(b"\n") == original, "the user's file did not get its bytes back"


@pytest.fixture(scope="module")
def hostile_cortex(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ``cortex`` console script in a virtualenv whose path holds a space, a quote, ``$`` and backticks."""
    where = tmp_path_factory.mktemp("venvs") / "v e'n$HOME `id`"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(where)
    script = where / "bin" / "cortex"
    script.write_text('#!/bin/sh\nexec "$(dirname "$0")/python" -m cortex "$@"\n')
    script.chmod(0o755)
    return where / "bin"


def commands(project: Path) -> list[str]:
    data = json.loads((project / ".codex" / "hooks.json").read_text())
    return [h["command"] for groups in data.get("hooks", {}).values() for g in groups for h in g["hooks"]]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_codex_under_a_quoted_path_in_a_git_worktree(tmp_path: Path, hostile_cortex: Path) -> None:
    main, project = tmp_path / "main", tmp_path / "wt"
    main.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q", str(main)], check=True)
    subprocess.run([*git, "-C", str(main), "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    subprocess.run([*git, "-C", str(main), "worktree", "add", "-q", str(project)], check=True)
    assert (project / ".git").is_file()
    python = str(hostile_cortex / "python")

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([python, "-m", "cortex", *args], cwd=project, capture_output=True, text=True,
                              env=env(), timeout=120)

    assert run("install", "codex").returncode == 0
    installed = commands(project)
    assert len(installed) == 3 and all(shlex.split(c)[0] == str(hostile_cortex / "cortex") for c in installed)
    status = subprocess.run(["git", "-C", str(project), "status", "--porcelain", "--untracked-files=all"],
                            capture_output=True, text=True, check=True).stdout
    assert ".codex/" not in status, f"this machine's path would be committed:\n{status}"

    # the shell runs the command exactly: the hook answers (exit 0) and nothing of the path is executed
    marker = tmp_path / "ran"
    result = subprocess.run(["sh", "-c", installed[0]], input="{}", capture_output=True, text=True, timeout=60,
                            cwd=project, env=env(HOME=str(tmp_path), id=f"touch {marker}"))
    assert result.returncode == 0 and not marker.exists()

    assert "already installed" in run("install", "codex").stderr
    assert len(commands(project)) == 3, "a second install duplicated the hooks"
    assert run("uninstall", "codex").returncode == 0
    assert not (project / ".codex" / "hooks.json").exists() or commands(project) == []
    exclude = Path(subprocess.run(["git", "-C", str(project), "rev-parse", "--git-path", "info/exclude"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    exclude = exclude if exclude.is_absolute() else project / exclude
    assert "cortex install" not in exclude.read_text()
    assert run("uninstall", "codex").returncode == 0


def test_ignore_files_linked_out_of_the_project_are_never_written(tmp_path: Path) -> None:
    project, victim = tmp_path / "cloned", tmp_path / "bashrc"
    (project / ".git").mkdir(parents=True)
    (project / ".cortex").mkdir()
    victim.write_text("export PATH=~/bin:$PATH\n")
    (project / ".cortex" / ".gitignore").symlink_to(victim)
    (project / ".gitignore").symlink_to(victim)
    result = cortex(project, "install", "claude")
    assert result.returncode == 0, result.stderr
    assert victim.read_text() == "export PATH=~/bin:$PATH\n"
    assert ".cortex/.gitignore is not a file of the project" in result.stderr
    if (project / ".claude" / "settings.local.json").exists():  # this machine's path: the user is told
        assert ".gitignore links out of the project: add .claude/settings.local.json" in result.stderr

    other = tmp_path / "dir-project"
    (other / ".cortex" / ".gitignore").mkdir(parents=True)  # a directory where the file belongs
    (other / ".git").mkdir()
    assert cortex(other, "install", "codex").returncode == 0

    mine = tmp_path / "mine"
    (mine / ".cortex").mkdir(parents=True)
    (mine / ".cortex" / ".gitignore").write_text("my-notes.tmp\n/logs/")  # no final newline
    for _ in range(2):
        assert cortex(mine, "install", "gemini").returncode == 0
    lines = (mine / ".cortex" / ".gitignore").read_text().splitlines()
    assert lines[:2] == ["my-notes.tmp", "/logs/"] and sorted(lines[2:]) == ["/state/", "/store/"]
