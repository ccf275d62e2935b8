"""The notes domain of the facade: Markdown notes synced as memories, promoted, exported for editing."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from cortex import caller, config, lifecycle
from cortex.app.admin import AdminOps
from cortex.app.memories import MemoryOps
from cortex.app.reading import ReadingOps
from cortex.errors import (
    InvalidInputError,
)
from cortex.model import (
    Memory,
    NotesReport,
    Source,
)

if TYPE_CHECKING:  # imported where used: a hook or a read does not pay for the notes machinery
    from cortex.capture import notes


class NotesOps(MemoryOps, ReadingOps, AdminOps):
    """Markdown notes as a source of memory: sync, promote, export for editing."""

    #: what syncing notes keeps between runs (:meth:`_notes_state`)
    _notes_kept: notes.NotesState | None = None

    def notes_dirs(self, agent: str) -> list[str]:
        """The agent's notes directories (existing or not), absolute."""
        from cortex.capture import notes

        definition = self._agent(agent)
        return [str(d) for d in notes.directories(self.project_root, agent, definition.settings.notes)]

    def sync_notes(self, agent: str | None = None, *, file: str | os.PathLike[str] | None = None) -> list[NotesReport]:
        """Index the agents' Markdown notes (``agent``'s, or every agent with memory), or only ``file`` (which
        must be in a notes directory; its agent is the directory's): each chunk (section) a ``file_index`` memory
        that does not expire while its text is there. An unchanged chunk keeps its memory (id, usage,
        validation); a changed one is superseded by its new text; one that went (or whose file went) leaves
        recall, its history kept. A file shared with ``promote_notes`` is synced into that scope too. Binary,
        oversized and unreadable files are skipped and named; their memories stay."""
        from cortex.capture import notes

        with self._capturing:
            if file is not None:
                target = Path(os.path.abspath(os.fspath(file)))
                owners = [a for a in ([agent] if agent else self._notes_agents())
                          if any(notes.inside(target, Path(d)) for d in self.notes_dirs(a))]
                if not owners:
                    raise InvalidInputError("file", f"{target} is not inside a notes directory of "
                                                    f"{'agent ' + repr(agent) if agent else 'any agent'} "
                                                    "(symbolic links are followed first)")
                return [self._sync_agent_notes(a, target) for a in owners]
            return [self._sync_agent_notes(a, None) for a in ([agent] if agent else self._notes_agents())]

    def _notes_agents(self) -> list[str]:
        # an agent's token syncs its own notes only (cortex.caller): the others' are not read for it
        return [d["name"] for d in self.describe_agents() if not d.get("problems") and d.get("memory_enabled")
                and caller.may(d["name"])]

    def _notes_state(self) -> notes.NotesState:
        """What syncing notes keeps between runs (one per Cortex: in memory when it has no state directory)."""
        from cortex.capture import notes

        if self._notes_kept is None:
            self._notes_kept = notes.NotesState(self._state / "notes.json" if self._state is not None else None)
        return self._notes_kept

    def _sync_agent_notes(self, agent: str, only: Path | None) -> NotesReport:
        from cortex.capture import notes

        definition = self._agent(agent)
        plan = notes.plan_sync(self, agent, notes.directories(self.project_root, agent, definition.settings.notes),
                               only=only, promoted=self._notes_state().promoted(agent),
                               project=definition.settings.project or config.DEFAULT_PROJECT,
                               redact=lambda text: self.redactor.redact(text).text)
        return notes.apply(plan, self, clock=self._clock)

    def export_notes(self, agent: str, directory: str | os.PathLike[str]) -> list[str]:
        """Write ``agent``'s current memories (not those read from notes) as Markdown files in ``directory``, one
        per type, a section per memory, for a person to read and edit; a later sync of the directory (a notes
        directory of the agent) applies the edits to the memories. Overwrites only files an earlier export
        wrote. Returns the files written."""
        from cortex.capture import notes
        from cortex.files import atomic_write

        self._agent(agent)
        target = Path(os.path.abspath(os.fspath(directory)))
        shown: list[tuple[str, str, str]] = []
        cursor = None
        while True:
            page = self.list_memories(agent, scope="agent", cursor=cursor, limit=config.MAX_LIMIT)
            shown.extend((m.id, m.type.value, m.content) for m in page.items if m.source is not Source.FILE_INDEX)
            cursor = page.next_cursor
            if cursor is None:
                break
        rendered = notes.render_export(agent, list(reversed(shown)))  # oldest first, as people write notes
        mark = notes.EXPORT_MARK.format(agent=agent)
        for name in rendered:
            path = target / name
            if path.exists() and not path.read_text(encoding="utf-8", errors="replace").startswith(mark):
                raise InvalidInputError("directory", f"{path} exists and was not written by an export of "
                                                     f"{agent!r}: not overwritten")
        target.mkdir(parents=True, exist_ok=True)
        for name, text in rendered.items():
            atomic_write(target / name, text, mode=0o644)
        return [str(target / name) for name in rendered]

    def _retire(self, agent: str, memories: Sequence[Memory], reason: str) -> list[str]:
        """End the validity of ``memories`` now (no successor): reads leave them out, their history stays."""
        done: list[str] = []
        for memory in memories:
            def attempt(memory_id: str = memory.id) -> Memory:
                scope, current = self._require(agent, memory_id)
                now = self._clock()
                return self._memories.write(scope, [], [(current, lifecycle.retired(current, now, reason), True)],
                                            action="supersede", actor=agent, at=now)[0]
            done.append(self._changing(attempt).id)
        return done

    def promote_notes(self, agent: str, file: str | os.PathLike[str], *, team: str | None = None,
                      swarm: bool = False) -> NotesReport:
        """Share a notes file's chunks with ``team`` (a team the agent is in) or the swarm (a lead): they move to
        that scope (the agent's own copies leave recall, history kept), and every later sync of the file updates
        them there."""
        from cortex.capture import notes

        if (team is None) == (not swarm):
            raise InvalidInputError("team", "give a team or swarm (one of them)")
        target = Path(os.path.abspath(os.fspath(file)))
        label = next((notes.NotesFile(target, Path(d), rel).label for d in self.notes_dirs(agent)
                      if (rel := notes.inside(target, Path(d))) is not None), None)
        if label is None:
            raise InvalidInputError("file", f"{target} is not inside a notes directory of agent {agent!r}")
        scope = "swarm" if swarm else f"team:{team}"
        self._member(agent).writable(scope, self._teams())  # refused now, not at the next sync
        with self._capturing:
            self._notes_state().promote(agent, label, scope)
        reports = self.sync_notes(agent, file=target)
        return reports[0]
