"""Where things are: the project root, the default store, the agent directories. Read only at the edges
(the CLI and, later, the server and hooks); the engine receives explicit paths."""

from __future__ import annotations

import os
from pathlib import Path

#: Directories that mark a project root, nearest ancestor first.
PROJECT_MARKERS = (".cortex", ".git")
#: Where agent definitions are discovered, relative to the project root; earlier wins on duplicates.
AGENT_DIRS = ("agent_defs", ".cortex/agents", ".claude/agents")
STORE_ENV = "CORTEX_STORE"


def find_project_root(start: str | os.PathLike[str] | None = None) -> Path:
    """The nearest ancestor of ``start`` (default: the current directory) holding ``.cortex/`` or ``.git/``;
    ``start`` itself when there is none."""
    here = Path(start if start is not None else os.getcwd()).resolve()
    for candidate in (here, *here.parents):
        if any((candidate / marker).is_dir() for marker in PROJECT_MARKERS):
            return candidate
    return here


def default_store_path(root: Path) -> Path:
    """``$CORTEX_STORE`` when set, else ``<root>/.cortex/store``."""
    env = os.environ.get(STORE_ENV)
    return Path(env).expanduser() if env else root / ".cortex" / "store"


def discover_agent_dirs(root: Path) -> list[Path]:
    """The agent directories that exist under ``root``, in precedence order."""
    return [root / d for d in AGENT_DIRS if (root / d).is_dir()]
