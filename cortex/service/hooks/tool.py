"""A tool ran (``PostToolUse``): the learnings of the Beads comments its command added, and the notes files it
wrote."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from cortex import config, provenance
from cortex.service.harnesses.base import Call, log as _log
from cortex.service.hooks.delivery import deliver
from cortex.service.hooks.session import HookSession


def tool(session: HookSession, where: str, call: Call, agent_type: Any) -> None:
    """A tool ran: the marker lines of the Beads comments its command added become the agent's memories (the bead
    in their provenance), and a Markdown file it wrote is synced when it is a notes file."""
    root = session.root
    if call.command:
        from cortex.markers import marker_lines
        from cortex.service.harnesses.tools import bead_comments

        comments = [(bead, marker_lines(comment)) for bead, comment in bead_comments(call.command)]
        for bead, found in comments:
            if not found:
                continue
            if not agent_type or not isinstance(agent_type, str):
                _log(root, f"{where}: the learnings of a comment on bead {bead} not captured: no agent "
                           "(cortex install ... --agent NAME names the main session's)")
                continue
            with provenance.activity(channel="beads", part=f"bead {bead}"):
                deliver(session, where, agent_type, found)
    for path in call.files:
        notes_changed(session, where, call, path)


def notes_changed(session: HookSession, where: str, call: Call, path: str) -> None:
    """Sync a Markdown file a tool wrote when it is in a notes directory: ``.cortex/notes/`` of the project or
    one an agent's definition lists (``cortex: notes:``); other Markdown files are left alone, without opening
    the store."""
    root = session.root
    if not path.lower().endswith(".md"):
        return
    base = call.cwd if isinstance(call.cwd, str) and call.cwd else str(root)
    full = Path(path) if os.path.isabs(path) else Path(base) / path
    if not in_notes(root, full):
        return
    try:
        session.ask(lambda cx: cx.sync_notes(file=str(full)))
    except Exception as exc:
        _log(root, f"{where}: notes file {path!r} not synced: {type(exc).__name__}: {exc}")


def in_notes(root: Path, path: Path) -> bool:
    """Whether ``path`` is in the project's notes tree or a notes directory an agent lists (links resolved)."""
    from cortex.capture.notes import inside

    if inside(path, root / ".cortex" / "notes") is not None:
        return True
    from cortex.agents import AgentRegistry

    registry = AgentRegistry()
    registry.load(config.discover_agent_dirs(root))
    from cortex.importers.places import notes_directory

    for definition in registry.list():
        for entry in definition.settings.notes:  # claude-memory: Claude Code's auto memory, as it writes it
            if inside(path, notes_directory(entry, root)) is not None:
                return True
    return False
