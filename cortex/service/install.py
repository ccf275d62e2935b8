"""``cortex install claude`` / ``cortex uninstall claude``: the hook entries in ``.claude/settings.json`` and
the MCP server entry in ``.mcp.json``, merged into what is there and removed exactly.

Commands name this Python interpreter by its absolute path (``/path/to/python -m cortex ...``), so they run when
Claude Code is started outside the virtualenv, with a bare ``PATH``. The subagent hooks are always installed;
the main session's (``SessionStart``, ``Stop``) only for an agent named with ``--agent``.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path
from typing import Any

from cortex.errors import CortexError
from cortex.files import atomic_write
from cortex.validation import check_agent_name

MCP_NAME = "cortex"
SUBAGENT_EVENTS = ("SubagentStart", "SubagentStop")
SESSION_EVENTS = ("SessionStart", "Stop")
#: A command this module wrote, whatever interpreter and agent it named (and the bare form of older versions).
_OURS = re.compile(r"^(?:\S+ -m cortex|cortex|'[^']*' -m cortex) hook claude (SessionStart|SubagentStart|Stop|SubagentStop)"
                   r"(?: --agent [a-z0-9][a-z0-9_-]*)?$")


def _interpreter() -> str:
    return shlex.quote(sys.executable)


def hook_command(event: str, agent: str | None = None) -> str:
    """The command Claude Code runs for ``event``."""
    command = f"{_interpreter()} -m cortex hook claude {event}"
    return f"{command} --agent {agent}" if agent else command


def mcp_entry() -> dict[str, Any]:
    """The ``.mcp.json`` entry of the MCP server."""
    return {"command": sys.executable, "args": ["-m", "cortex", "mcp"]}


def _is_ours(command: Any) -> bool:
    return isinstance(command, str) and _OURS.match(command) is not None


def _is_our_mcp(entry: Any) -> bool:
    return isinstance(entry, dict) and (entry == {"command": "cortex", "args": ["mcp"]}
                                        or entry.get("args") == ["-m", "cortex", "mcp"])


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


def install(root: Path, agent: str | None = None) -> list[str]:
    """Add (or bring up to date) the hooks and the MCP entry; returns a line per change (empty when everything
    was already there). ``agent`` names the main session's agent: its ``SessionStart``/``Stop`` hooks are added."""
    if agent is not None:
        check_agent_name(agent)
    changes = []
    settings_path, mcp_path = root / ".claude" / "settings.json", root / ".mcp.json"
    settings, mcp = _read(settings_path, "hooks"), _read(mcp_path, "mcpServers")  # both checked before writing
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
    return changes


def uninstall(root: Path) -> list[str]:
    """Remove exactly what :func:`install` adds (from any interpreter, for any agent); a line per change."""
    changes = []
    settings_path, mcp_path = root / ".claude" / "settings.json", root / ".mcp.json"
    settings, mcp = _read(settings_path, "hooks"), _read(mcp_path, "mcpServers")
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
    if changes:
        for path, data in ((settings_path, settings), (mcp_path, mcp)):
            if data:
                _write(path, data)
            else:
                path.unlink(missing_ok=True)  # only what install wrote was in it
    return changes
