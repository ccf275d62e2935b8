"""``cortex install claude`` / ``cortex uninstall claude``: the subagent and tool hooks in ``.claude/settings.json``,
the main session's hooks and this machine's ``CORTEX_BIN`` in ``.claude/settings.local.json``, and the MCP server
in Claude Code's local scope (``~/.claude.json``), merged into what is there and removed exactly (``cortex install
codex|cursor|gemini``: :func:`install_harness`, below; ``cortex install hermes``:
:mod:`cortex.service.install_hermes`).

``.claude/settings.json`` is committed and shared by a team, so it holds no path of this machine: its commands are
``"${CORTEX_BIN:-cortex}" hook claude EVENT``. The absolute path of this installation's ``cortex`` goes to
``.claude/settings.local.json`` (personal) as ``env.CORTEX_BIN``, which Claude Code gives to the hooks of a
session. The main session's hooks (``SessionStart``, ``UserPromptSubmit``, ``Stop``, ``SessionEnd``), only for an
agent named with ``--agent`` (declared, or ``--force``), are this user's and go to ``settings.local.json`` by
absolute path: Claude Code fires ``SessionEnd`` outside a session too (``claude mcp list``), without that env.
Claude Code does not expand ``.mcp.json`` with that env either (only with its own process environment), so the MCP
server is written by absolute path to the project's entry in ``~/.claude.json``, as ``claude mcp add --scope
local`` writes it (an earlier version's ``.mcp.json`` entry is removed). The subagent hooks and ``PostToolUse``
(matcher ``Write|Edit|Bash``, naming the ``--agent`` when there is one) are always installed.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cortex import config
from cortex.errors import AgentNotFoundError, CortexError
from cortex.files import atomic_write
from cortex.validation import check_agent_name

MCP_NAME = "cortex"
SUBAGENT_EVENTS = ("SubagentStart", "SubagentStop")
SESSION_EVENTS = ("SessionStart", "Stop", "SessionEnd")
#: The tool event (Beads comments in Bash commands, notes files written): installed always, with the main
#: session's ``--agent`` when one is named (a subagent's payload names its own).
TOOL_EVENT = "PostToolUse"
TOOL_MATCHER = "Write|Edit|Bash"
#: The recall at each prompt: with ``--agent``, unless ``prompt_recall`` is false (``--no-prompt-recall``).
PROMPT_EVENT = "UserPromptSubmit"
#: The variable naming this machine's ``cortex`` (in ``.claude/settings.local.json``).
BIN_ENV = "CORTEX_BIN"
#: How the committed commands name ``cortex``: ``$CORTEX_BIN``, else ``cortex`` on ``PATH``.
PORTABLE = '"${%s:-cortex}"' % BIN_ENV
#: One word as ``shlex.join`` quotes it: bare characters, '…' runs, and "'" for a quote in a path.
_WORD = r"""(?:'[^']*'|"'"|[^\s'"])"""
#: How any version of this module named cortex in a hook command: bare, portable, by absolute path, ``-m cortex``.
_BIN = (r"(?:cortex|" + re.escape(PORTABLE) + rf"|{_WORD}*(?:/cortex|'[^']*/cortex')|{_WORD}+ -m cortex)")
#: A command this module wrote, whatever agent it named: portable, by absolute path (the main session's, in the
#: personal file), and the bare and ``-m cortex`` forms of older versions.
_OURS = re.compile("^" + _BIN + r" hook claude (SessionStart|SubagentStart|Stop|SubagentStop|SessionEnd|PostToolUse"
                   r"|UserPromptSubmit)(?: --agent [a-z0-9][a-z0-9_-]*)?$")


def hook_command(event: str, agent: str | None = None) -> str:
    """The command Claude Code runs for ``event`` (portable: no path of this machine)."""
    command = f"{PORTABLE} hook claude {event}"
    return f"{command} --agent {agent}" if agent else command


def session_hook_command(event: str, agent: str) -> str:
    """The command of a main-session hook (personal: this machine's ``cortex`` by absolute path)."""
    return f"{shlex.join(resolved_argv())} hook claude {event} --agent {agent}"


def mcp_entry() -> dict[str, Any]:
    """The ``.mcp.json`` entry of the MCP server (portable: no path of this machine)."""
    return {"command": "${%s:-cortex}" % BIN_ENV, "args": ["mcp"]}  # no shell: expanded by Claude Code


def local_bin() -> str | None:
    """The absolute path of this installation's ``cortex`` console script, or None when it has none."""
    script = Path(sysconfig.get_path("scripts")) / "cortex"
    return str(script) if script.is_file() and os.access(script, os.X_OK) else None


def resolved_argv() -> list[str]:
    """How this machine runs this installation's ``cortex`` whatever ``PATH`` holds: its console script's absolute
    path, else this interpreter with ``-m cortex``."""
    script = local_bin()
    return [script] if script is not None else [sys.executable, "-m", "cortex"]


def resolved_mcp_entry() -> dict[str, Any]:
    """The MCP server entry written to a personal file: this machine's ``cortex``, by absolute path (no shell
    runs it, so no ``$VAR`` is needed)."""
    argv = resolved_argv()
    return {"type": "stdio", "command": argv[0], "args": [*argv[1:], "mcp"], "env": {}}


def claude_user_config() -> Path:
    """Claude Code's own file (``~/.claude.json``, ``$CLAUDE_CONFIG_DIR/.claude.json`` when that is set), where
    ``claude mcp add --scope local`` keeps a project's personal MCP servers, under ``projects.<abs path>``."""
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(base).expanduser() / ".claude.json" if base else Path.home() / ".claude.json"


def _is_ours(command: Any) -> bool:
    return isinstance(command, str) and _OURS.match(command) is not None


def _is_our_mcp(entry: Any) -> bool:
    """An MCP server entry some version of this module wrote (portable, by absolute path, or ``-m cortex``)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    extra = {k: v for k, v in entry.items() if k not in ("command", "args", "type")}
    if extra not in ({}, {"env": {}}) or entry.get("type", "stdio") != "stdio":
        return False
    command, args = entry["command"], entry.get("args")
    return (args == ["mcp"] and (command in ("cortex", "${%s:-cortex}" % BIN_ENV) or command.endswith("/cortex"))
            or args == ["-m", "cortex", "mcp"])


def check_agent(root: Path, agent: str) -> None:
    """Refuse an ``--agent`` that no agent definition of the project declares (nor lists as an alias)."""
    from cortex.agents import AgentRegistry

    registry = AgentRegistry()
    registry.load(config.discover_agent_dirs(root))
    if registry.resolve(agent) is None:
        raise CortexError(f"{AgentNotFoundError(agent, registry.dirs)}; nothing was changed "
                          f"(--force installs the hooks for {agent!r} anyway)")


def _read(path: Path, *sections: str, flat: bool = False) -> dict[str, Any]:
    """The JSON object in ``path`` ({} when there is none); each of its ``sections`` (hooks, mcpServers, env) must
    have the shape its tool gives it (``flat``: Cursor's hooks, a list of handlers per event), else nothing is
    changed."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (ValueError, OSError) as exc:
        raise CortexError(f"{path} is not valid JSON ({exc}); fix it first, nothing was changed") from None
    if not isinstance(data, dict):
        raise CortexError(f"{path} does not hold a JSON object; nothing was changed")
    for section in sections:
        problem = _section_problem(section, data.get(section, {}), flat)
        if problem is not None:
            raise CortexError(f"{path}: {problem}; fix it first, nothing was changed")
    return data


def _section_problem(section: str, part: Any, flat: bool) -> str | None:
    """What is wrong with the ``section`` of a settings file (None when it has its tool's shape)."""
    if not isinstance(part, dict):
        return f"'{section}' is not an object"
    if section == "hooks" and flat:
        for event, entries in part.items():
            if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
                return f"'hooks.{event}' is not a list of {{\"command\": ...}} objects"
    elif section == "hooks":
        for event, groups in part.items():
            if not isinstance(groups, list) or not all(
                    isinstance(g, dict) and isinstance(g.get("hooks", []), list)
                    and all(isinstance(h, dict) for h in g.get("hooks", [])) for g in groups):
                return f"'hooks.{event}' is not a list of {{\"hooks\": [...]}} groups"
    return None


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _write(path: Path, data: dict[str, Any], mode: int = 0o644, *, follow: bool = False) -> None:
    """``data`` as JSON the way the agents write it (two-space indent, non-ASCII as is), atomically; ``follow``: a
    symlink (a dotfiles checkout's ``~/.claude.json``) has its target replaced, not itself."""
    if follow and path.is_symlink():
        path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)  # the user's .claude/ keeps its usual permissions
    if path.exists():
        mode = path.stat().st_mode & 0o777  # ~/.claude.json holds Claude Code's account: keep its mode
    # JSON.stringify writes "é" and "🙂" as is, and a lone surrogate (no UTF-8 for it) as "\ud800": the user's
    # other entries keep their bytes
    text = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(data, indent=2, ensure_ascii=False))
    atomic_write(path, text + "\n", mode=mode)


def _mcp_argv(entry: dict[str, Any]) -> list[str]:
    return [entry["command"], *entry.get("args", [])]


def _remove_ours(hooks: dict[str, Any], event: str, ours: Callable[[Any], bool] = _is_ours,
                 flat: bool = False) -> bool:
    """Drop this module's commands (those ``ours`` recognises) from ``event``; True when one was there."""
    if flat:  # Cursor: a list of handlers
        entries = hooks.get(event, [])
        kept_entries = [e for e in entries if not ours(e.get("command"))]
        if len(kept_entries) != len(entries):
            if kept_entries:
                hooks[event] = kept_entries
            else:
                del hooks[event]
            return True
        return False
    removed = False
    kept = []
    for group in hooks.get(event, []):
        inner = [h for h in group.get("hooks", []) if not ours(h.get("command"))]
        removed = removed or len(inner) != len(group.get("hooks", []))
        if inner:
            kept.append({**group, "hooks": inner})
    if event in hooks:
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    return removed


def _ours_in(hooks: dict[str, Any], event: str, ours: Callable[[Any], bool],
             flat: bool = False) -> list[tuple[Any, str]]:
    """The (matcher, command) of this module's commands in ``event``."""
    if flat:
        return [(e.get("matcher"), e["command"]) for e in hooks.get(event, []) if ours(e.get("command"))]
    return [(g.get("matcher"), h["command"]) for g in hooks.get(event, []) for h in g.get("hooks", [])
            if ours(h.get("command"))]


def _place(hooks: dict[str, Any], wanted: dict[str, str], path: Path, changes: list[str]) -> None:
    """Make ``hooks`` hold exactly ``wanted``'s command for each of its events (the tool hook with its matcher),
    replacing this module's earlier ones; a line per change (naming ``path``) in ``changes``."""
    for event, command in wanted.items():
        matcher = TOOL_MATCHER if event == TOOL_EVENT else None
        if _ours_in(hooks, event, _is_ours) == [(matcher, command)]:
            continue
        replaced = _remove_ours(hooks, event)
        group: dict[str, Any] = {"matcher": matcher} if matcher else {}
        group["hooks"] = [{"type": "command", "command": command, "timeout": 30}]
        hooks.setdefault(event, []).append(group)
        changes.append(f"{path}: {'updated' if replaced else 'added'} hook {event}: {command}")


def install(root: Path, agent: str | None = None, *, force: bool = False, prompt_recall: bool = True) -> list[str]:
    """Add (or bring up to date) the hooks, the MCP entry and this machine's ``CORTEX_BIN``; returns a line per
    change (empty when everything was already there). ``agent`` names the main session's agent: its
    ``SessionStart``/``Stop`` hooks are added, and ``UserPromptSubmit`` unless ``prompt_recall`` is false (then an
    installed one is removed); it must be declared unless ``force``."""
    if agent is not None:
        check_agent_name(agent)
        if not force:
            check_agent(root, agent)
    changes = []
    settings_path, mcp_path = root / ".claude" / "settings.json", root / ".mcp.json"
    local_path = root / ".claude" / "settings.local.json"
    # all checked before anything is written
    settings, mcp = _read(settings_path, "hooks"), _read(mcp_path, "mcpServers")
    local = _read(local_path, "env", "hooks")
    hooks, local_hooks = settings.setdefault("hooks", {}), local.get("hooks", {})
    wanted = {event: hook_command(event) for event in SUBAGENT_EVENTS}
    # The main session's hooks are personal (the agent is this user's choice) and name this machine's cortex: a
    # command Claude Code runs outside a session (`claude mcp list` fires SessionEnd) gets no settings env
    personal: dict[str, str] = {}
    if agent is not None:
        personal = {event: session_hook_command(event, agent) for event in SESSION_EVENTS}
        if prompt_recall:
            personal[PROMPT_EVENT] = session_hook_command(PROMPT_EVENT, agent)
        for event in (*SESSION_EVENTS, PROMPT_EVENT):  # where earlier versions wrote them
            if _remove_ours(hooks, event):
                changes.append(f"{settings_path}: removed hook {event} (moved to {local_path}: personal)")
    if not prompt_recall:
        for path, found in ((settings_path, hooks), (local_path, local_hooks)):
            if _remove_ours(found, PROMPT_EVENT):
                changes.append(f"{path}: removed hook {PROMPT_EVENT} (--no-prompt-recall)")
    # without --agent, an installed tool hook keeps the agent it names (a teammate's install does not drop it)
    wanted[TOOL_EVENT] = hook_command(TOOL_EVENT, agent) if agent is not None else next(
        (c for _, c in _ours_in(hooks, TOOL_EVENT, _is_ours)), hook_command(TOOL_EVENT))
    _place(hooks, wanted, settings_path, changes)
    _place(local_hooks, personal, local_path, changes)
    if local_hooks:
        local["hooks"] = local_hooks
    else:
        local.pop("hooks", None)
    settings_changed, local_changed = (any(line.startswith(f"{path}:") for line in changes)
                                       for path in (settings_path, local_path))
    user_path = claude_user_config()
    user, project_key = _read(user_path, "projects"), str(root.resolve())
    entries = user.get("projects", {}).get(project_key, {})
    if not isinstance(entries, dict) or not isinstance(entries.get("mcpServers", {}), dict):
        raise CortexError(f"{user_path}: 'projects.{project_key}' is not what Claude Code writes; nothing was changed")
    mine = entries.get("mcpServers", {}).get(MCP_NAME)
    if mine is not None and not _is_our_mcp(mine):
        raise CortexError(f"{user_path} already has another MCP server named {MCP_NAME!r} for {project_key}; "
                          "nothing was changed")
    # the committed .mcp.json of earlier versions: Claude Code expands its ${CORTEX_BIN} from its own environment,
    # not from settings.local.json's, so it ran the cortex of PATH; the personal entry below replaces it
    mcp_changed = _is_our_mcp(mcp.get("mcpServers", {}).get(MCP_NAME))
    if mcp_changed:
        del mcp["mcpServers"][MCP_NAME]
        if not mcp["mcpServers"]:
            del mcp["mcpServers"]
        changes.append(f"{mcp_path}: removed the MCP server {MCP_NAME!r} earlier versions wrote (it ran the cortex "
                       f"of PATH; {user_path} now has it)")
    if mine != resolved_mcp_entry():
        project = user.setdefault("projects", {}).setdefault(project_key, {})
        project.setdefault("mcpServers", {})[MCP_NAME] = resolved_mcp_entry()
        _write(user_path, user, mode=0o600, follow=True)
        changes.append(f"{user_path}: {'updated' if mine else 'added'} MCP server {MCP_NAME!r} for {project_key} "
                       f"(local scope, personal: {shlex.join(_mcp_argv(resolved_mcp_entry()))})")
    if settings_changed:
        _write(settings_path, settings)
    if mcp_changed:
        if mcp:
            _write(mcp_path, mcp)
        else:
            mcp_path.unlink()  # only what install wrote was in it
    executable = local_bin()
    env = local.get("env", {})
    if executable is None:
        changes.append(f"no cortex console script in {sysconfig.get_path('scripts')}: the hooks run the cortex "
                       f"found on PATH (or an exported {BIN_ENV}); the MCP server runs {sys.executable} -m cortex")
    elif env.get(BIN_ENV) != executable:
        local["env"] = {**env, BIN_ENV: executable}
        local_changed = True
        changes.append(f"{local_path}: set env {BIN_ENV}={executable} (this machine's cortex)")
    if local_changed:
        _write(local_path, local)
    if (local_path.exists() and (root / ".git").exists()) and _ignore(root, ".claude/settings.local.json"):
        changes.append(f"{root / '.gitignore'}: added .claude/settings.local.json (personal, never committed)")
    elif local_path.exists() and (root / ".git").exists() and not _ignorable(root):
        changes.append(f"{root / '.gitignore'} links out of the project: add .claude/settings.local.json to your "
                       f"ignore files by hand (it names this machine's cortex)")
    return changes


def _ignorable(root: Path) -> bool:
    """Whether install may add lines to the project's ``.gitignore`` (not a link out of the project)."""
    from cortex.service.install_git import writable_inside

    return writable_inside(root / ".gitignore", root)


def _ignore(root: Path, entry: str) -> bool:
    """Add ``entry`` to the project's ``.gitignore`` unless a line already names it (as Claude Code does when it
    creates the file); True when it was added."""
    path = root / ".gitignore"
    if not _ignorable(root):
        return False
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
    settings, mcp = _read(settings_path, "hooks"), _read(mcp_path, "mcpServers")
    local = _read(local_path, "env", "hooks")
    for path, data in ((settings_path, settings), (local_path, local)):
        hooks = data.get("hooks", {})
        for event in (*SESSION_EVENTS, *SUBAGENT_EVENTS, TOOL_EVENT, PROMPT_EVENT):
            if _remove_ours(hooks, event):
                changes.append(f"{path}: removed hook {event}")
        if "hooks" in data and not hooks:
            del data["hooks"]
    servers = mcp.get("mcpServers", {})
    if _is_our_mcp(servers.get(MCP_NAME)):  # an earlier version's
        del servers[MCP_NAME]
        changes.append(f"{mcp_path}: removed MCP server {MCP_NAME!r}")
        if not servers:
            del mcp["mcpServers"]
    user_path = claude_user_config()
    user, project_key = _read(user_path, "projects"), str(root.resolve())
    entries = user.get("projects", {}).get(project_key)
    if isinstance(entries, dict) and isinstance(entries.get("mcpServers"), dict) and _is_our_mcp(
            entries["mcpServers"].get(MCP_NAME)):
        del entries["mcpServers"][MCP_NAME]  # an empty mcpServers is what Claude Code itself leaves
        if entries == {"mcpServers": {}}:  # the entry install created (Claude Code's own have more keys)
            del user["projects"][project_key]
        _write(user_path, user, follow=True)
        changes.append(f"{user_path}: removed MCP server {MCP_NAME!r} for {project_key}")
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


# -- Codex CLI, Cursor, Gemini CLI ------------------------------------------------------------------------------
# ``cortex install codex|cursor|gemini``: each tool's hook entries and MCP server entry, in the files it documents
# (tests/fixtures/harnesses/README.md), merged into what is there and removed exactly. Cursor's commands are
# portable as Claude Code's are: outside an activated virtualenv they find this machine's cortex through an
# exported $CORTEX_BIN (or PATH). Codex and Gemini CLI have no personal per-project file and nothing sets
# $CORTEX_BIN for them (Gemini CLI expands its settings before it loads .gemini/.env, and that file would shadow the
# user's ~/.gemini/.env), so their hooks and MCP server name this machine's cortex by absolute path, in the
# project's files, which install keeps out of git through the clone's personal .git/info/exclude (when git does not
# track them).


#: When a hook is installed: ``subagent`` always (its payload names the agent), ``session`` only with --agent
#: (the main session's), ``tool`` always, with the --agent when one is named, ``prompt`` as ``session`` unless the
#: recall at each prompt is turned off (``--no-prompt-recall``).
SUBAGENT, SESSION, TOOL, PROMPT = "subagent", "session", "tool", "prompt"


class _Hook:
    def __init__(self, event: str, when: str, matcher: str | None = None, timeout: int = 30) -> None:
        self.event, self.when, self.matcher, self.timeout = event, when, matcher, timeout


class _Target:
    """Where a tool keeps its hooks and MCP servers, and the entries Cortex adds there."""

    def __init__(self, harness: str, hooks_file: str, hooks: tuple[_Hook, ...], mcp_file: str, mcp: dict[str, Any],
                 *, flat: bool = False, millis: bool = False, resolved: bool = False,
                 notes: tuple[str, ...] = ()) -> None:
        self.harness, self.hooks_file, self.hooks, self.mcp_file, self.mcp = harness, hooks_file, hooks, mcp_file, mcp
        self.flat, self.millis, self.resolved, self.notes = flat, millis, resolved, notes
        events = "|".join(re.escape(h.event) for h in hooks)
        self.pattern = re.compile("^" + _BIN + f" hook {harness} ({events})"
                                  r"(?: --agent [a-z0-9][a-z0-9_-]*)?$")

    def ours(self, command: Any) -> bool:
        return isinstance(command, str) and self.pattern.match(command) is not None

    def command(self, event: str, agent: str | None) -> str:
        binary = shlex.join(resolved_argv()) if self.resolved else PORTABLE
        command = f"{binary} hook {self.harness} {event}"
        return f"{command} --agent {agent}" if agent else command

    def mcp_entry(self) -> dict[str, Any]:
        """The MCP server entry install writes: this machine's cortex when the target is ``resolved``."""
        return codex_mcp() if self.resolved else self.mcp

    def handler(self, hook: _Hook, command: str) -> dict[str, Any]:
        if self.flat:  # Cursor: {"command", "timeout"[, "matcher"]}, seconds
            return {"command": command, "timeout": hook.timeout, **({"matcher": hook.matcher} if hook.matcher else {})}
        handler: dict[str, Any] = {"type": "command", "command": command}
        if self.millis:  # Gemini CLI: a name (its trust list and hooksConfig.disabled use it), milliseconds
            handler = {"name": f"cortex-{hook.event}", **handler, "timeout": hook.timeout * 1000}
        else:
            handler["timeout"] = hook.timeout
        return handler


def codex_mcp() -> dict[str, Any]:
    """``[mcp_servers.cortex]`` as install writes it: this machine's cortex (Codex runs it without a shell)."""
    argv = resolved_argv()
    return {"command": argv[0], "args": [*argv[1:], "mcp"]}


def codex_mcp_toml() -> str:
    """:func:`codex_mcp` as the TOML table install appends to ``.codex/config.toml``."""
    entry = codex_mcp()
    def quote(value: str) -> str:
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string

    return (f"[mcp_servers.{MCP_NAME}]\ncommand = {quote(entry['command'])}\n"
            f"args = [{', '.join(quote(a) for a in entry['args'])}]\n")


TARGETS = {
    "codex": _Target(
        "codex", ".codex/hooks.json",
        (_Hook("SubagentStart", SUBAGENT), _Hook("SubagentStop", SUBAGENT), _Hook("SessionStart", SESSION),
         _Hook("Stop", SESSION), _Hook("SessionEnd", SESSION, timeout=3),  # Codex caps SessionEnd hooks at 3 s
         _Hook("PostToolUse", TOOL, matcher="Bash|apply_patch"), _Hook("UserPromptSubmit", PROMPT)),
        ".codex/config.toml", {}, resolved=True,
        notes=("Codex runs a new or changed hook only once you trust it: open /hooks in Codex and trust Cortex's "
               "(and a project's .codex/ is read only in a trusted project)",
               "the hooks and the MCP server run this machine's cortex by absolute path (run `cortex install codex` "
               "again after moving it)")),
    "cursor": _Target(
        "cursor", ".cursor/hooks.json",
        (_Hook("subagentStop", SUBAGENT), _Hook("sessionStart", SESSION), _Hook("afterAgentResponse", SESSION),
         _Hook("sessionEnd", SESSION), _Hook("afterShellExecution", SESSION), _Hook("afterFileEdit", SESSION)),
        ".cursor/mcp.json",
        # no ${VAR:-default} in Cursor's mcp.json; ${workspaceFolder} is the folder that holds .cursor/
        {"type": "stdio", "command": "cortex", "args": ["mcp"],
         "env": {config.STORE_ENV: "${workspaceFolder}/.cortex/store"}},
        flat=True,
        notes=("Cursor runs .cursor/hooks.json in a trusted workspace; a subagent cannot be given its memory at its "
               "start (Cursor's subagentStart takes no context)",
               "the hooks run $CORTEX_BIN, else the cortex on PATH; the MCP server runs the cortex on PATH")),
    "gemini": _Target(
        "gemini", ".gemini/settings.json",
        (_Hook("SessionStart", SESSION), _Hook("AfterAgent", SESSION), _Hook("SessionEnd", SESSION),
         _Hook("AfterTool", SESSION, matcher="^(run_shell_command|write_file|replace)$"),
         _Hook("BeforeAgent", PROMPT)),
        ".gemini/settings.json", {}, millis=True, resolved=True,
        notes=("Gemini CLI reads a project's .gemini/settings.json in a trusted folder only, and warns once about "
               "new hooks; it has no subagent events, so only the main session's agent (--agent) has hooks",
               "the hooks and the MCP server run this machine's cortex by absolute path (run `cortex install "
               "gemini` again after moving it)")),
}


def _hooks_wanted(target: _Target, hooks: dict[str, Any], agent: str | None,
                  prompt_recall: bool = True) -> dict[str, tuple[_Hook, str]]:
    """The hooks ``install`` wants for ``target``: event -> (hook, command)."""
    wanted: dict[str, tuple[_Hook, str]] = {}
    for hook in target.hooks:
        if hook.when == PROMPT and not prompt_recall:
            continue
        if hook.when == SUBAGENT:
            wanted[hook.event] = (hook, target.command(hook.event, None))
        elif agent is not None:
            wanted[hook.event] = (hook, target.command(hook.event, agent))
        elif hook.when == TOOL:  # an installed tool hook keeps the agent it names
            kept = _ours_in(hooks, hook.event, target.ours, target.flat)
            wanted[hook.event] = (hook, kept[0][1] if kept else target.command(hook.event, None))
    return wanted


def install_harness(root: Path, harness: str, agent: str | None = None, *, force: bool = False,
                    prompt_recall: bool = True) -> list[str]:
    """``cortex install claude|codex|cursor|gemini|hermes``: add (or bring up to date) the tool's hooks and
    Cortex's MCP server entry, and keep what is this machine's out of git (``.cortex/.gitignore``; Codex's files in
    ``.git/info/exclude``); a line per change (empty when everything was there), then what the user must know.
    With ``agent``, the recall at each prompt is wired too (Claude Code's and Codex's ``UserPromptSubmit``, Gemini
    CLI's ``BeforeAgent``) unless ``prompt_recall`` is false, which removes an installed one."""
    from cortex.service import install_git

    changes = _install_harness(root, harness, agent, force=force, prompt_recall=prompt_recall)
    kept_out = install_git.ignore_cortex_dir(root)
    if harness in TARGETS and TARGETS[harness].resolved:
        target = TARGETS[harness]
        kept_out += install_git.exclude_personal(root, harness, list(dict.fromkeys((target.hooks_file,
                                                                                     target.mcp_file))))
    return kept_out + changes


def _install_harness(root: Path, harness: str, agent: str | None = None, *, force: bool = False,
                     prompt_recall: bool = True) -> list[str]:
    if harness == "claude":
        return install(root, agent, force=force, prompt_recall=prompt_recall)
    if harness == "hermes":
        from cortex.service import install_hermes

        return install_hermes.install(root, agent)
    target = TARGETS[harness]
    if agent is not None:
        check_agent_name(agent)
        if not force:
            check_agent(root, agent)
    hooks_path, mcp_path = root / target.hooks_file, root / target.mcp_file
    # all checked before anything is written
    settings = _read(hooks_path, "hooks", flat=target.flat)
    same_file = hooks_path == mcp_path
    mcp = settings if same_file else _read(mcp_path, "mcpServers") if harness != "codex" else {}
    if not isinstance(mcp.get("mcpServers", {}), dict):
        raise CortexError(f"{mcp_path}: 'mcpServers' is not an object; fix it first, nothing was changed")
    toml = _codex_mcp_added(mcp_path) if harness == "codex" else None
    changes: list[str] = []
    had_hooks = "hooks" in settings
    hooks = settings.setdefault("hooks", {})
    for hook in target.hooks:
        if hook.when == PROMPT and not prompt_recall and _remove_ours(hooks, hook.event, target.ours, target.flat):
            changes.append(f"{hooks_path}: removed hook {hook.event} (--no-prompt-recall)")
    for event, (hook, command) in _hooks_wanted(target, hooks, agent, prompt_recall).items():
        if _ours_in(hooks, event, target.ours, target.flat) == [(hook.matcher, command)]:
            continue
        replaced = _remove_ours(hooks, event, target.ours, target.flat)
        entry = target.handler(hook, command)
        if not target.flat:
            entry = {**({"matcher": hook.matcher} if hook.matcher else {}), "hooks": [entry]}
        hooks.setdefault(event, []).append(entry)
        changes.append(f"{hooks_path}: {'updated' if replaced else 'added'} hook {event}: {command}")
    if not hooks and not had_hooks:
        del settings["hooks"]
    if harness != "codex":
        servers = mcp.setdefault("mcpServers", {})
        if servers.get(MCP_NAME) != target.mcp_entry():
            if MCP_NAME in servers and not _is_our_mcp(servers[MCP_NAME]) and servers[MCP_NAME] not in (
                    t.mcp for t in TARGETS.values()):
                raise CortexError(f"{mcp_path} already has another MCP server named {MCP_NAME!r}; nothing was changed")
            replaced = MCP_NAME in servers
            servers[MCP_NAME] = target.mcp_entry()
            changes.append(f"{mcp_path}: {'updated' if replaced else 'added'} MCP server {MCP_NAME!r}")
    elif toml is not None:
        changes.append(f"{mcp_path}: added [mcp_servers.{MCP_NAME}]")
    if not changes:
        return []
    if target.flat:
        settings.setdefault("version", 1)  # Cursor's hooks.json schema version
    if any(str(hooks_path) in c for c in changes):
        _write(hooks_path, settings)
    if harness != "codex" and not same_file and any(str(mcp_path) in c for c in changes):
        _write(mcp_path, mcp)
    if toml is not None:
        mcp_path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(mcp_path, toml, mode=0o644)
    return changes + list(target.notes)


def uninstall_harness(root: Path, harness: str) -> list[str]:
    """Remove exactly what :func:`install_harness` adds (for any agent); a line per change. ``.cortex/.gitignore``
    stays: the store it keeps out of git stays too."""
    from cortex.service import install_git

    changes = _uninstall_harness(root, harness)
    return changes + (install_git.unexclude_personal(root, harness) if harness in TARGETS else [])


def _uninstall_harness(root: Path, harness: str) -> list[str]:
    if harness == "claude":
        return uninstall(root)
    if harness == "hermes":
        from cortex.service import install_hermes

        return install_hermes.uninstall(root)
    target = TARGETS[harness]
    hooks_path, mcp_path = root / target.hooks_file, root / target.mcp_file
    settings = _read(hooks_path, "hooks", flat=target.flat)
    same_file = hooks_path == mcp_path
    mcp = settings if same_file else _read(mcp_path, "mcpServers") if harness != "codex" else {}
    toml = _codex_mcp_removed(mcp_path) if harness == "codex" else None
    changes: list[str] = []
    hooks = settings.get("hooks", {})
    for event in dict.fromkeys(h.event for h in target.hooks):
        if _remove_ours(hooks, event, target.ours, target.flat):
            changes.append(f"{hooks_path}: removed hook {event}")
    if "hooks" in settings and not hooks:
        del settings["hooks"]
    servers = mcp.get("mcpServers", {})
    if harness != "codex" and (servers.get(MCP_NAME) == target.mcp_entry() or _is_our_mcp(servers.get(MCP_NAME))):
        del servers[MCP_NAME]
        changes.append(f"{mcp_path}: removed MCP server {MCP_NAME!r}")
        if not servers:
            del mcp["mcpServers"]
    if toml is not None:
        changes.append(f"{mcp_path}: removed [mcp_servers.{MCP_NAME}]")
    if not changes:
        return []
    if target.flat and settings == {"version": 1}:
        settings = {}  # only what install wrote was in it
    files = [(hooks_path, settings)] + ([(mcp_path, mcp)] if harness != "codex" and not same_file else [])
    for path, data in files:
        if not any(c.startswith(f"{path}: ") for c in changes):
            continue
        if data:
            _write(path, data)
        elif path.exists():
            path.unlink()
    if toml is not None:
        if toml.strip():
            atomic_write(mcp_path, toml, mode=0o644)
        else:
            mcp_path.unlink(missing_ok=True)  # only what install wrote was in it
    return changes


# -- .codex/config.toml: read with tomllib, written as text (the standard library has no TOML writer) ----------

def _toml(path: Path) -> tuple[str, dict[str, Any]]:
    """The text of a TOML file and what it holds ("", {} when there is none)."""
    import tomllib

    if not path.exists():
        return "", {}
    try:
        text = path.read_text(encoding="utf-8")
        return text, tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise CortexError(f"{path} is not valid TOML ({exc}); fix it first, nothing was changed") from None


def _without_ours(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without the MCP server install adds (and without an ``mcp_servers`` table left empty)."""
    servers = {k: v for k, v in data.get("mcp_servers", {}).items() if k != MCP_NAME}
    return {k: v for k, v in data.items() if k != "mcp_servers"} | ({"mcp_servers": servers} if servers else {})


def _codex_mcp_added(path: Path) -> str | None:
    """The text of ``path`` with ``[mcp_servers.cortex]`` appended (an earlier version's replaced); None when it
    is there already."""
    import tomllib

    text, data = _toml(path)
    servers = data.get("mcp_servers", {})
    if not isinstance(servers, dict):
        raise CortexError(f"{path}: 'mcp_servers' is not a table; fix it first, nothing was changed")
    if servers.get(MCP_NAME) == codex_mcp():
        return None
    if MCP_NAME in servers:
        if not _is_our_mcp(servers[MCP_NAME]):
            raise CortexError(f"{path} already has another MCP server named {MCP_NAME!r}; nothing was changed")
        text = _codex_mcp_removed(path, text, data) or text
        data = _without_ours(data)
    table = codex_mcp_toml()
    new = (text + "\n" if text and not text.endswith("\n") else text) + ("\n" if text.strip() else "") + table
    try:
        added = tomllib.loads(new)
    except tomllib.TOMLDecodeError:
        added = {}
    if added.get("mcp_servers", {}).get(MCP_NAME) != codex_mcp() or _without_ours(added) != _without_ours(data):
        raise CortexError(f"{path}: [mcp_servers.{MCP_NAME}] cannot be appended to this file (is mcp_servers an "
                          f"inline table?); add it by hand ({table!r}); nothing was changed")
    return new


def _codex_mcp_removed(path: Path, text: str | None = None, data: dict[str, Any] | None = None) -> str | None:
    """The text of ``path`` (or ``text``, parsed as ``data``) without the ``[mcp_servers.cortex]`` an install
    appended; None when it is not there (a table that is not what install writes is someone else's, and left)."""
    import tomllib

    if text is None or data is None:
        text, data = _toml(path)
    found = data.get("mcp_servers", {})
    if not isinstance(found, dict) or not _is_our_mcp(found.get(MCP_NAME)):
        return None
    lines = text.splitlines(keepends=True)
    header = next((k for k, line in enumerate(lines) if line.strip() == f"[mcp_servers.{MCP_NAME}]"), None)
    new = None
    if header is not None:
        end = next((k for k in range(header + 1, len(lines)) if lines[k].lstrip().startswith("[")), len(lines))
        while end > header + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
            end -= 1  # blank lines and comments before the next table are its
        start = header - 1 if header > 0 and not lines[header - 1].strip() else header  # the blank line before it
        new = "".join(lines[:start] + lines[end:])
        try:
            if _without_ours(tomllib.loads(new)) != _without_ours(data) or MCP_NAME in tomllib.loads(new).get(
                    "mcp_servers", {}):
                new = None
        except tomllib.TOMLDecodeError:
            new = None
    if new is None:
        raise CortexError(f"{path}: [mcp_servers.{MCP_NAME}] could not be removed on its own; remove it by hand "
                          "(nothing was changed)")
    return new
