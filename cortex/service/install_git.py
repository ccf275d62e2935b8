"""What ``cortex install`` keeps out of git: ``.cortex/.gitignore`` (the store, the hooks' state and logs, which
hold this machine's data and ``cortex-tokens.json``; agent definitions and notes in ``.cortex/`` stay
committable), and, for the files that name this machine's ``cortex`` by absolute path in a project (Codex's
``.codex/`` files), lines in the clone's personal ``.git/info/exclude``: never the team's ``.gitignore``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from cortex.files import atomic_write

#: ``.cortex/.gitignore`` as install writes it (patterns relative to ``.cortex/``).
CORTEX_IGNORED = ("/store/", "/state/", "/logs/")
_CORTEX_HEADER = ("# written by `cortex install`: this machine's store (with its cortex-tokens.json), the hooks'\n"
                  "# state and logs; agent definitions (agents/) and notes stay committable\n")
#: The line that opens the block install adds to ``.git/info/exclude`` (uninstall removes the block).
_EXCLUDE_HEADER = "# cortex install {harness}: this machine's path to cortex"


def writable_inside(path: Path, root: Path) -> bool:
    """Whether install may append to ``path``: absent or a regular file, inside ``root`` once its links are
    followed (a cloned project's ``.gitignore`` linked to ``~/.bashrc`` must not get install's lines)."""
    resolved = path.resolve()
    return resolved.is_relative_to(root.resolve()) and (resolved.is_file() or not resolved.exists())


def ignore_cortex_dir(root: Path) -> list[str]:
    """Write (or complete) ``<root>/.cortex/.gitignore``; a line per change. A user's own lines are kept, and a
    pattern already there is not repeated (idempotent)."""
    path = root / ".cortex" / ".gitignore"
    if not writable_inside(path, root):
        return [f"{path} is not a file of the project (a link out of it, or a directory): add "
                f"{', '.join(CORTEX_IGNORED)} to .cortex/.gitignore by hand"]
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError):
        return [f"{path} could not be read: add {', '.join(CORTEX_IGNORED)} to it by hand"]
    present = {line.strip() for line in text.splitlines()}
    missing = [p for p in CORTEX_IGNORED if p not in present and p.lstrip("/") not in present]
    if not missing:
        return []
    path.parent.mkdir(parents=True, exist_ok=True)
    prefix = _CORTEX_HEADER if not text else ("" if text.endswith("\n") else "\n")
    with open(path, "a", encoding="utf-8") as out:
        out.write(prefix + "".join(f"{p}\n" for p in missing))
    return [f"{path}: ignored {', '.join(missing)} (this machine's store, state and logs)"]


def _exclude_file(root: Path) -> Path | None:
    """The clone's personal exclude file: ``.git/info/exclude``, or, where ``.git`` is a file (a worktree, a
    submodule), the one git reads there (``git rev-parse --git-path info/exclude``); None without a repository."""
    git = root / ".git"
    if git.is_dir():
        return git / "info" / "exclude"
    exe = shutil.which("git")
    if not git.is_file() or exe is None:
        return None
    result = subprocess.run([exe, "-C", str(root), "rev-parse", "--git-path", "info/exclude"], capture_output=True,
                            text=True, timeout=30, check=False)
    found = result.stdout.rstrip("\n")
    return root / found if result.returncode == 0 and found else None  # relative to root when not absolute


def _tracked(root: Path, files: list[str]) -> list[str]:
    """Which of ``files`` git already tracks (an exclude line does nothing for those)."""
    git = shutil.which("git")
    if git is None:
        return []
    result = subprocess.run([git, "-C", str(root), "ls-files", "--", *files], capture_output=True, text=True,
                            timeout=30, check=False)
    return result.stdout.split() if result.returncode == 0 else []


def exclude_personal(root: Path, harness: str, files: list[str]) -> list[str]:
    """Add ``files`` (relative to ``root``) to ``.git/info/exclude`` in one block; a line per change, and a warning
    for a file git already tracks (its absolute path would be committed)."""
    path = _exclude_file(root)
    if path is None:
        return []
    changes = [f"{root / f} is tracked by git and now names this machine's cortex: do not commit that change"
               for f in _tracked(root, files)]
    text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
    header = _EXCLUDE_HEADER.format(harness=harness)
    if header in text.splitlines():
        return changes
    path.parent.mkdir(parents=True, exist_ok=True)
    block = "\n".join([header, *(f"/{f}" for f in files)]) + "\n"
    with open(path, "a", encoding="utf-8") as out:
        out.write(("" if not text or text.endswith("\n") else "\n") + block)
    return [*changes, f"{path}: ignored {', '.join(files)} (personal: this machine's path to cortex)"]


def unexclude_personal(root: Path, harness: str) -> list[str]:
    """Remove the block :func:`exclude_personal` added; a line per change."""
    path = _exclude_file(root)
    if path is None or not path.exists():
        return []
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    header = _EXCLUDE_HEADER.format(harness=harness)
    start = next((k for k, line in enumerate(lines) if line.rstrip("\n") == header), None)
    if start is None:
        return []
    end = start + 1
    while end < len(lines) and lines[end].startswith("/") and not lines[end].startswith("#"):
        end += 1
    # atomically (a kill mid-write leaves the old file, never half of it), with the file's mode
    atomic_write(path, "".join(lines[:start] + lines[end:]), mode=path.stat().st_mode & 0o777)
    return [f"{path}: removed the lines `cortex install {harness}` added"]
