"""Where the agents keep their own memories (docs/capture.md, "Importers"): Claude Code's auto-memory directory of
a project, Codex's memory folder; and the names a notes entry may give them (``cortex: notes: [claude-memory]``).
Nothing here reads a memory: :mod:`.claude` and :mod:`.codex` do."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

#: A notes entry that names an agent's own memory directory instead of a path (docs/capture.md, "Markdown notes").
NOTES_ALIASES = ("claude-memory", "codex-memory")


def project_dir_name(root: str | os.PathLike[str]) -> str:
    """The directory Claude Code keeps a project's state in under ``~/.claude/projects/``: its path with every
    character that is not a letter or digit turned into ``-`` (``/home/u/shop`` is ``-home-u-shop``)."""
    return re.sub(r"[^A-Za-z0-9]", "-", os.fspath(root))


def claude_config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Claude Code's configuration directory: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    env = os.environ if environ is None else environ
    given = env.get("CLAUDE_CONFIG_DIR")
    return Path(given).expanduser() if given else Path(os.path.expanduser("~")) / ".claude"


def claude_memory_dir(root: str | os.PathLike[str], environ: Mapping[str, str] | None = None) -> Path:
    """The auto-memory directory of the project at ``root``: the user's ``autoMemoryDirectory`` setting
    (``settings.json`` of :func:`claude_config_dir`) when there is one, else ``<config>/projects/<project>/memory``
    (:func:`project_dir_name` of :func:`canonical_root`; a name Claude Code cut for length is found by its
    start). It may not exist."""
    base = claude_config_dir(environ)
    try:
        settings = json.loads((base / "settings.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        settings = None
    custom = settings.get("autoMemoryDirectory") if isinstance(settings, dict) else None
    if isinstance(custom, str) and custom.strip():
        return Path(os.path.expanduser(custom.strip()))
    name = project_dir_name(canonical_root(Path(os.path.abspath(os.fspath(root)))))
    target = base / "projects" / name / "memory"
    if len(name) > 200 and not target.parent.is_dir():  # Claude Code cuts a long name and appends a hash
        found = sorted(p for p in (base / "projects").glob(f"{name[:200]}*") if p.is_dir())
        if found:
            return found[0] / "memory"
    return target


def canonical_root(root: Path) -> Path:
    """The checkout Claude Code keys a project by: a git worktree's main checkout (its ``.git`` file points into
    ``<main>/.git/worktrees/``), so all worktrees of a repository share one memory; else ``root``."""
    marker = root / ".git"
    if not marker.is_file():
        return root
    try:
        line = marker.read_text(encoding="utf-8", errors="replace")[:4096].strip()
    except OSError:
        return root
    if not line.startswith("gitdir:"):
        return root
    gitdir = Path(line[len("gitdir:"):].strip())
    gitdir = gitdir if gitdir.is_absolute() else (root / gitdir)
    parts = gitdir.parts
    if len(parts) >= 3 and parts[-2] == "worktrees" and parts[-3] == ".git":  # not a submodule's .git/modules/
        return Path(os.path.normpath(Path(*parts[:-3])))
    return root


def codex_memory_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Codex's memory folder: ``$CODEX_HOME/memories``, ``~/.codex/memories`` by default. It may not exist."""
    env = os.environ if environ is None else environ
    home = env.get("CODEX_HOME")
    return (Path(home).expanduser() if home else Path(os.path.expanduser("~")) / ".codex") / "memories"


def notes_directory(entry: str, root: Path) -> Path:
    """The directory a notes entry names: ``claude-memory`` is Claude Code's auto-memory directory of the project
    at ``root``, ``codex-memory`` Codex's memory folder; a path is itself (``~`` expanded; relative to ``root``)."""
    name = entry.strip()
    if name == "claude-memory":
        return claude_memory_dir(root)
    if name == "codex-memory":
        return codex_memory_dir()
    path = Path(os.path.expanduser(name))
    return path if path.is_absolute() else root / path
