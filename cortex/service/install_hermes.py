"""``cortex install hermes`` / ``cortex uninstall hermes``: Cortex as Hermes Agent's memory provider.

Hermes Agent (0.19.0) has no entry-point group for memory providers: it discovers them in its bundled
``plugins/memory/<name>/`` and in ``$HERMES_HOME/plugins/<name>/`` (``HERMES_HOME`` defaults to ``~/.hermes``), a
folder whose ``__init__.py`` mentions ``MemoryProvider`` in its first 8192 characters, and it uses the one
``memory.provider`` of ``$HERMES_HOME/config.yaml`` names. So install writes:

* ``$HERMES_HOME/plugins/cortex/plugin.yaml`` and ``__init__.py``: a shim that APPENDS this Cortex's import path
  (recorded now) to ``sys.path`` (Hermes's own pinned packages come first, so they win), loads
  :class:`cortex.integrations.hermes.CortexMemoryProvider` (upgrading Cortex upgrades the provider), subclasses it
  with Hermes's ``agent.memory_provider.MemoryProvider`` when that imports (Hermes's fallback path instantiates such
  a subclass) and registers it through ``register(ctx)``, with the project root (and ``$CORTEX_STORE``, the agent)
  recorded;
* ``memory.provider: cortex`` in ``$HERMES_HOME/config.yaml`` (the rest of the file kept: read and written as
  YAML, so its comments are not kept);
* when no agent definition of the project declares the agent, a declaration ``.cortex/agents/<agent>.md`` (so the
  CLI, a server and the hooks know the agent too).

Uninstall removes the folder, the key when it still says ``cortex``, and the declaration when it is unchanged.
Both are idempotent; a plugin folder that is a symbolic link, or a folder Cortex did not write, is refused.
"""

from __future__ import annotations

import os
import shutil
import sysconfig
from pathlib import Path
from typing import Any

from cortex import config
from cortex.errors import CortexError
from cortex.files import atomic_write
from cortex.validation import check_agent_name

HOME_ENV = "HERMES_HOME"
PLUGIN = "cortex"
DEFAULT_AGENT = "hermes"
#: The line that marks a shim this module wrote (uninstall removes only such a folder).
MARK = "# written by `cortex install hermes`"

PLUGIN_YAML = """\
name: cortex
version: "{version}"
description: "Cortex: the project's agent memory (RDF store, ranked recall, marker capture) as Hermes's memory."
pip_dependencies: []
requires_env: []
hooks:
  - on_session_end
  - on_memory_write
"""

SHIM = '''\
"""Cortex's memory provider for Hermes Agent: a MemoryProvider that loads
cortex.integrations.hermes.CortexMemoryProvider from the Cortex installation recorded below."""
{mark}; `cortex uninstall hermes` removes it.
import os as _os
import sys as _sys

CORTEX_PATHS = {paths!r}
PROJECT = {project!r}
STORE = {store!r}
AGENT = {agent!r}

for _path in CORTEX_PATHS:
    if _path not in _sys.path:
        _sys.path.append(_path)  # appended: Hermes's own pinned packages keep precedence
if STORE and not _os.environ.get("CORTEX_STORE"):
    _os.environ["CORTEX_STORE"] = STORE

from cortex.integrations.hermes import CortexMemoryProvider as _CortexProvider  # noqa: E402

try:
    from agent.memory_provider import MemoryProvider as _HermesMemoryProvider
except Exception:  # outside Hermes
    _HermesMemoryProvider = None

if _HermesMemoryProvider is not None:
    class CortexMemoryProvider(_CortexProvider, _HermesMemoryProvider):
        """Cortex's provider, a subclass of Hermes's MemoryProvider."""

        def __init__(self):
            _CortexProvider.__init__(self, project=PROJECT, agent=AGENT)
else:
    class CortexMemoryProvider(_CortexProvider):  # type: ignore[no-redef]
        """Cortex's provider."""

        def __init__(self):
            _CortexProvider.__init__(self, project=PROJECT, agent=AGENT)


def register(ctx):
    """Hermes's plugin hook: register Cortex as a memory provider."""
    ctx.register_memory_provider(CortexMemoryProvider())
'''

DECLARATION = """\
---
name: {agent}
description: Hermes Agent, with Cortex as its memory (declared by `cortex install hermes`)
memory: true
---
The Hermes agent of this project.
"""


def hermes_home() -> Path:
    """``$HERMES_HOME``, else ``~/.hermes`` (as Hermes's ``hermes_constants.get_hermes_home``)."""
    env = os.environ.get(HOME_ENV)
    return Path(env).expanduser() if env else Path.home() / ".hermes"


def import_paths() -> list[str]:
    """Where this Cortex and its dependencies import from: the directory holding the ``cortex`` package, then the
    interpreter's site-packages."""
    import cortex

    paths = [str(Path(cortex.__file__).resolve().parent.parent)]
    for key in ("purelib", "platlib"):
        found = sysconfig.get_paths().get(key)
        if found and found not in paths and Path(found).is_dir():
            paths.append(found)
    return paths


def _plugin_dir(home: Path) -> Path:
    folder = home / "plugins" / PLUGIN
    if folder.is_symlink():
        raise CortexError(f"{folder} is a symbolic link (to {os.readlink(folder)}); Cortex does not write through "
                          "it: remove the link first, nothing was changed")
    if folder.exists() and not folder.is_dir():
        raise CortexError(f"{folder} is not a directory; nothing was changed")
    return folder


def _ours(folder: Path) -> bool:
    try:
        return MARK in (folder / "__init__.py").read_text(encoding="utf-8", errors="replace")[:8192]
    except OSError:
        return False


def _read_config(path: Path) -> dict[str, Any]:
    import yaml

    if not path.exists():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, OSError, UnicodeDecodeError) as exc:
        raise CortexError(f"{path} is not valid YAML ({exc}); fix it first, nothing was changed") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise CortexError(f"{path} does not hold a YAML mapping; nothing was changed")
    memory = data.get("memory")
    if memory is not None and not isinstance(memory, dict):
        raise CortexError(f"{path}: 'memory' is not a mapping; fix it first, nothing was changed")
    return data


def _write_config(path: Path, data: dict[str, Any]) -> None:
    import yaml

    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    atomic_write(path, yaml.safe_dump(data, sort_keys=False, allow_unicode=True), mode=mode)


def _declared(root: Path, agent: str) -> bool:
    from cortex.agents import AgentRegistry

    registry = AgentRegistry()
    registry.load(config.discover_agent_dirs(root))
    return registry.resolve(agent) is not None


def install(root: Path, agent: str | None = None) -> list[str]:
    """Write the plugin folder, set ``memory.provider: cortex`` and declare the agent when needed; a line per
    change (empty when everything was there)."""
    from cortex import __version__

    if agent is not None:
        check_agent_name(agent)
    home = hermes_home()
    folder = _plugin_dir(home)
    if folder.exists() and any(folder.iterdir()) and not _ours(folder):
        raise CortexError(f"{folder} holds a plugin Cortex did not write; move it away first, nothing was changed")
    config_path = home / "config.yaml"
    settings = _read_config(config_path)  # all checked before anything is written
    store = os.environ.get(config.STORE_ENV)
    files = {"plugin.yaml": PLUGIN_YAML.format(version=__version__),
             "__init__.py": SHIM.format(mark=MARK, paths=import_paths(), project=str(root),
                                        store=str(Path(store).expanduser().resolve()) if store and "://" not in store
                                        else store or None, agent=agent)}
    changes: list[str] = []
    for name, text in files.items():
        path = folder / name
        if path.exists() and path.read_text(encoding="utf-8", errors="replace") == text:
            continue
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text, mode=0o644)
        changes.append(f"{path}: written")
    memory = settings.setdefault("memory", {}) if isinstance(settings.get("memory"), dict) else None
    if memory is None:
        settings["memory"] = memory = {}
    if memory.get("provider") != PLUGIN:
        before = memory.get("provider")
        memory["provider"] = PLUGIN
        _write_config(config_path, settings)
        changes.append(f"{config_path}: memory.provider: {PLUGIN}" + (f" (was {before!r})" if before else ""))
    name = agent or DEFAULT_AGENT
    if not _declared(root, name):
        path = root / ".cortex" / "agents" / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, DECLARATION.format(agent=name), mode=0o644)
        changes.append(f"{path}: declared agent {name!r}")
    return changes


def uninstall(root: Path) -> list[str]:
    """Remove what :func:`install` added: the plugin folder, ``memory.provider`` when it is still ``cortex``, and
    the declarations it wrote that nobody changed; a line per change."""
    home = hermes_home()
    folder = _plugin_dir(home)
    config_path = home / "config.yaml"
    settings = _read_config(config_path)
    changes: list[str] = []
    if folder.exists():
        if not _ours(folder):
            raise CortexError(f"{folder} holds a plugin Cortex did not write; nothing was changed")
        shutil.rmtree(folder)
        changes.append(f"{folder}: removed")
    memory = settings.get("memory")
    if isinstance(memory, dict) and memory.get("provider") == PLUGIN:
        del memory["provider"]
        _write_config(config_path, settings)
        changes.append(f"{config_path}: memory.provider removed")
    agents = root / ".cortex" / "agents"
    for path in sorted(agents.glob("*.md")) if agents.is_dir() else []:
        if not path.is_symlink() and path.read_text(encoding="utf-8", errors="replace") == \
                DECLARATION.format(agent=path.stem):
            path.unlink()
            changes.append(f"{path}: declaration removed")
    return changes


__all__ = ["HOME_ENV", "hermes_home", "import_paths", "install", "uninstall"]
