"""``cortex install claude`` / ``cortex uninstall claude``: the hook entries in ``.claude/settings.json`` and
the MCP server entry in ``.mcp.json``, merged into what is there and removed exactly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cortex.errors import CortexError
from cortex.files import atomic_write
from cortex.service.hooks import EVENTS

MCP_NAME = "cortex"


def _command(event: str, executable: str) -> str:
    return f"{executable} hook claude {event}"


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except ValueError as exc:
        raise CortexError(f"{path} is not valid JSON ({exc}); fix it first, nothing was changed") from None
    if not isinstance(data, dict):
        raise CortexError(f"{path} does not hold a JSON object; nothing was changed")
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)  # the user's .claude/ keeps its usual permissions
    atomic_write(path, json.dumps(data, indent=2) + "\n", mode=0o644)


def install(root: Path, executable: str = "cortex") -> list[str]:
    """Add what is missing; returns a line per change (empty when everything was already there)."""
    changes = []
    settings_path, mcp_path = root / ".claude" / "settings.json", root / ".mcp.json"
    settings, mcp = _read(settings_path), _read(mcp_path)  # both parsed before either is written
    hooks = settings.setdefault("hooks", {})
    for event in EVENTS:
        command = _command(event, executable)
        groups = hooks.setdefault(event, [])
        present = any(h.get("command") == command for g in groups for h in g.get("hooks", []))
        if not present:
            groups.append({"hooks": [{"type": "command", "command": command, "timeout": 30}]})
            changes.append(f"{settings_path}: hook {event}")
    servers = mcp.setdefault("mcpServers", {})
    wanted = {"command": executable, "args": ["mcp"]}
    if servers.get(MCP_NAME) != wanted:
        if MCP_NAME in servers:
            raise CortexError(f"{mcp_path} already has another MCP server named {MCP_NAME!r}; nothing was changed")
        servers[MCP_NAME] = wanted
        changes.append(f"{mcp_path}: MCP server {MCP_NAME!r}")
    if changes:
        _write(settings_path, settings)
        _write(mcp_path, mcp)
    return changes


def uninstall(root: Path, executable: str = "cortex") -> list[str]:
    """Remove exactly what :func:`install` adds; returns a line per change."""
    changes = []
    settings_path, mcp_path = root / ".claude" / "settings.json", root / ".mcp.json"
    settings, mcp = _read(settings_path), _read(mcp_path)
    hooks = settings.get("hooks", {})
    for event in EVENTS:
        command = _command(event, executable)
        groups = hooks.get(event, [])
        kept = []
        for group in groups:
            inner = [h for h in group.get("hooks", []) if h.get("command") != command]
            if len(inner) != len(group.get("hooks", [])):
                changes.append(f"{settings_path}: hook {event}")
            if inner:
                kept.append({**group, "hooks": inner})
        if event in hooks:
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    if "hooks" in settings and not hooks:
        del settings["hooks"]
    servers = mcp.get("mcpServers", {})
    if servers.get(MCP_NAME) == {"command": executable, "args": ["mcp"]}:
        del servers[MCP_NAME]
        changes.append(f"{mcp_path}: MCP server {MCP_NAME!r}")
        if not servers:
            del mcp["mcpServers"]
    if changes:
        for path, data in ((settings_path, settings), (mcp_path, mcp)):
            if data:
                _write(path, data)
            else:
                path.unlink(missing_ok=True)  # only what install wrote was in it
    return changes
