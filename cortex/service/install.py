"""``cortex install claude`` / ``cortex uninstall claude``: the hook entries in ``.claude/settings.json``, the
MCP server entry in ``.mcp.json`` and this machine's ``CORTEX_BIN`` in ``.claude/settings.local.json``, merged
into what is there and removed exactly.

``.claude/settings.json`` and ``.mcp.json`` are committed and shared by a team, so they hold no path of this
machine: the commands are ``"${CORTEX_BIN:-cortex}" hook claude EVENT`` and ``"${CORTEX_BIN:-cortex}" mcp``, the
``cortex`` of ``PATH`` (an activated virtualenv, pipx) unless ``$CORTEX_BIN`` names one. The absolute path of
this installation's ``cortex`` goes to ``.claude/settings.local.json`` (personal, not committed) as
``env.CORTEX_BIN``: Claude Code merges that file into the project's settings and gives its ``env`` to the hooks
and MCP servers it starts (``.mcp.json`` expands ``${VAR:-default}``), so the commands run with a bare ``PATH``
too. The subagent hooks are always installed; the main session's (``SessionStart``, ``Stop``, ``SessionEnd``) only
for an agent named with ``--agent``, which must be declared (``--force`` installs an undeclared one).
"""

from __future__ import annotations

import json
import os
import re
import sysconfig
from pathlib import Path
from typing import Any

from cortex import config
from cortex.errors import AgentNotFoundError, CortexError
from cortex.files import atomic_write
from cortex.validation import check_agent_name

MCP_NAME = "cortex"
SUBAGENT_EVENTS = ("SubagentStart", "SubagentStop")
SESSION_EVENTS = ("SessionStart", "Stop", "SessionEnd")
#: The variable naming this machine's ``cortex`` (in ``.claude/settings.local.json``).
BIN_ENV = "CORTEX_BIN"
#: How the committed commands name ``cortex``: ``$CORTEX_BIN``, else ``cortex`` on ``PATH``.
PORTABLE = '"${%s:-cortex}"' % BIN_ENV
#: A command this module wrote, whatever agent it named (and the absolute-interpreter and bare forms of older
#: versions).
_OURS = re.compile(r"^(?:\S+ -m cortex|cortex|'[^']*' -m cortex|" + re.escape(PORTABLE) + ")"
                   r" hook claude (SessionStart|SubagentStart|Stop|SubagentStop|SessionEnd)"
                   r"(?: --agent [a-z0-9][a-z0-9_-]*)?$")


def hook_command(event: str, agent: str | None = None) -> str:
    """The command Claude Code runs for ``event`` (portable: no path of this machine)."""
    command = f"{PORTABLE} hook claude {event}"
    return f"{command} --agent {agent}" if agent else command


def mcp_entry() -> dict[str, Any]:
    """The ``.mcp.json`` entry of the MCP server (portable: no path of this machine)."""
    return {"command": "${%s:-cortex}" % BIN_ENV, "args": ["mcp"]}  # no shell: expanded by Claude Code


def local_bin() -> str | None:
    """The absolute path of this installation's ``cortex`` console script, or None when it has none."""
    script = Path(sysconfig.get_path("scripts")) / "cortex"
    return str(script) if script.is_file() and os.access(script, os.X_OK) else None


def _is_ours(command: Any) -> bool:
    return isinstance(command, str) and _OURS.match(command) is not None


def _is_our_mcp(entry: Any) -> bool:
    return isinstance(entry, dict) and (entry in ({"command": "cortex", "args": ["mcp"]}, mcp_entry())
                                        or entry.get("args") == ["-m", "cortex", "mcp"])


def check_agent(root: Path, agent: str) -> None:
    """Refuse an ``--agent`` that no agent definition of the project declares (nor lists as an alias)."""
    from cortex.agents import AgentRegistry

    registry = AgentRegistry()
    registry.load(config.discover_agent_dirs(root))
    if registry.resolve(agent) is None:
        raise CortexError(f"{AgentNotFoundError(agent, registry.dirs)}; nothing was changed "
                          f"(--force installs the hooks for {agent!r} anyway)")


def _read(path: Path, section: str) -> dict[str, Any]:
    """The JSON object in ``path`` ({} when there is none); its ``section`` (hooks, mcpServers) must have the
    shape Claude Code gives it, else nothing is changed."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (ValueError, OSError) as exc:
        raise CortexError(f"{path} is not valid JSON ({exc}); fix it first, nothing was changed") from None
    if not isinstance(data, dict):
        raise CortexError(f"{path} does not hold a JSON object; nothing was changed")
    part = data.get(section, {})
    problem = None
    if not isinstance(part, dict):
        problem = f"'{section}' is not an object"
    elif section == "hooks":
        for event, groups in part.items():
            if not isinstance(groups, list) or not all(
                    isinstance(g, dict) and isinstance(g.get("hooks", []), list)
                    and all(isinstance(h, dict) for h in g.get("hooks", [])) for g in groups):
                problem = f"'hooks.{event}' is not a list of {{\"hooks\": [...]}} groups"
                break
    if problem is not None:
        raise CortexError(f"{path}: {problem}; fix it first, nothing was changed")
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)  # the user's .claude/ keeps its usual permissions
    atomic_write(path, json.dumps(data, indent=2) + "\n", mode=0o644)


def _remove_ours(hooks: dict[str, Any], event: str) -> bool:
    """Drop this module's commands from ``event``; True when one was there."""
    removed = False
    kept = []
    for group in hooks.get(event, []):
        inner = [h for h in group.get("hooks", []) if not _is_ours(h.get("command"))]
        removed = removed or len(inner) != len(group.get("hooks", []))
        if inner:
            kept.append({**group, "hooks": inner})
    if event in hooks:
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    return removed


def install(root: Path, agent: str | None = None, *, force: bool = False) -> list[str]:
    """Add (or bring up to date) the hooks, the MCP entry and this machine's ``CORTEX_BIN``; returns a line per
    change (empty when everything was already there). ``agent`` names the main session's agent: its
    ``SessionStart``/``Stop`` hooks are added; it must be declared unless ``force``."""
    if agent is not None:
        check_agent_name(agent)
        if not force:
            check_agent(root, agent)
    changes = []
    settings_path, mcp_path = root / ".claude" / "settings.json", root / ".mcp.json"
    local_path = root / ".claude" / "settings.local.json"
    # all checked before anything is written
    settings, mcp, local = _read(settings_path, "hooks"), _read(mcp_path, "mcpServers"), _read(local_path, "env")
    hooks = settings.setdefault("hooks", {})
    wanted = {event: hook_command(event) for event in SUBAGENT_EVENTS}
    if agent is not None:
        wanted |= {event: hook_command(event, agent) for event in SESSION_EVENTS}
    for event, command in wanted.items():
        groups = hooks.get(event, [])
        if [h.get("command") for g in groups for h in g.get("hooks", []) if _is_ours(h.get("command"))] == [command]:
            continue
        replaced = _remove_ours(hooks, event)
        hooks.setdefault(event, []).append({"hooks": [{"type": "command", "command": command, "timeout": 30}]})
        changes.append(f"{settings_path}: {'updated' if replaced else 'added'} hook {event}: {command}")
    servers = mcp.setdefault("mcpServers", {})
    if servers.get(MCP_NAME) != mcp_entry():
        if MCP_NAME in servers and not _is_our_mcp(servers[MCP_NAME]):
            raise CortexError(f"{mcp_path} already has another MCP server named {MCP_NAME!r}; nothing was changed")
        servers[MCP_NAME] = mcp_entry()
        changes.append(f"{mcp_path}: added MCP server {MCP_NAME!r}")
    if changes:
        _write(settings_path, settings)
        _write(mcp_path, mcp)
    executable = local_bin()
    env = local.get("env", {})
    if executable is None:
        changes.append(f"no cortex console script in {sysconfig.get_path('scripts')}: the hooks and the MCP "
                       f"server run the cortex found on PATH")
    elif env.get(BIN_ENV) != executable:
        local["env"] = {**env, BIN_ENV: executable}
        _write(local_path, local)
        changes.append(f"{local_path}: set env {BIN_ENV}={executable} (this machine's cortex)")
    if (local_path.exists() and (root / ".git").exists()) and _ignore(root, ".claude/settings.local.json"):
        changes.append(f"{root / '.gitignore'}: added .claude/settings.local.json (personal, never committed)")
    return changes


def _ignore(root: Path, entry: str) -> bool:
    """Add ``entry`` to the project's ``.gitignore`` unless a line already names it (as Claude Code does when it
    creates the file); True when it was added."""
    path = root / ".gitignore"
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError):
        return False
    if any(line.strip().lstrip("/") in (entry, entry.rsplit("/", 1)[-1]) for line in text.splitlines()):
        return False
    with open(path, "a", encoding="utf-8") as out:
        out.write(("" if not text or text.endswith("\n") else "\n") + entry + "\n")
    return True


def uninstall(root: Path) -> list[str]:
    """Remove exactly what :func:`install` adds (from any interpreter, for any agent); a line per change."""
    changes = []
    settings_path, mcp_path = root / ".claude" / "settings.json", root / ".mcp.json"
    local_path = root / ".claude" / "settings.local.json"
    settings, mcp, local = _read(settings_path, "hooks"), _read(mcp_path, "mcpServers"), _read(local_path, "env")
    hooks = settings.get("hooks", {})
    for event in (*SESSION_EVENTS, *SUBAGENT_EVENTS):
        if _remove_ours(hooks, event):
            changes.append(f"{settings_path}: removed hook {event}")
    if "hooks" in settings and not hooks:
        del settings["hooks"]
    servers = mcp.get("mcpServers", {})
    if _is_our_mcp(servers.get(MCP_NAME)):
        del servers[MCP_NAME]
        changes.append(f"{mcp_path}: removed MCP server {MCP_NAME!r}")
        if not servers:
            del mcp["mcpServers"]
    env = local.get("env", {})
    if BIN_ENV in env:
        del env[BIN_ENV]
        if not env:
            del local["env"]
        changes.append(f"{local_path}: removed env {BIN_ENV}")
    if changes:
        for path, data in ((settings_path, settings), (mcp_path, mcp), (local_path, local)):
            if not data and not path.exists():
                continue
            if data:
                _write(path, data)
            else:
                path.unlink(missing_ok=True)  # only what install wrote was in it
    return changes
