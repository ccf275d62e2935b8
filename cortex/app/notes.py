"""The notes domain of the facade: Markdown notes synced as memories, promoted, exported for editing."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cortex import config, lifecycle
from cortex.app.admin import AdminOps
from cortex.app.memories import MemoryOps
from cortex.app.reading import ReadingOps
from cortex.errors import (
    CortexError,
    InvalidInputError,
)
from cortex.model import (
    Memory,
    NotesReport,
    Source,
)
from cortex.provenance import activity as provenance_activity
from cortex.validation import (
    is_memory_id,
    memory_from_entry,
)


class NotesOps(MemoryOps, ReadingOps, AdminOps):
    """Markdown notes as a source of memory: sync, promote, export for editing."""

    @property
    def project_root(self) -> Path:
        """The project whose notes directories are read (``.cortex/notes/{agent}/``, and an agent's
        ``cortex: notes:`` relative to it): the project of a store in ``<project>/.cortex/store``, else the
        nearest project of the current directory, unless set."""
        if self._root is None:
            local = self._memories.store.local_path
            if local is not None and local.name == "store" and local.parent.name == ".cortex":
                self._root = local.parent.parent.resolve()
            else:
                self._root = config.find_project_root()
        return self._root

    @project_root.setter
    def project_root(self, root: str | os.PathLike[str]) -> None:
        self._root = Path(root).resolve()

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
        return [d["name"] for d in self.describe_agents() if not d.get("problems") and d.get("memory_enabled")]

    def _notes_state(self) -> dict[str, Any]:
        import json

        from cortex.files import read_regular

        if self._state is None:
            memory: dict[str, Any] = self.__dict__.setdefault("_notes_memory", {})
            return memory
        try:
            data = json.loads(read_regular(self._state / "notes.json", 16 * 1024 * 1024))
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def _save_notes_state(self, data: dict[str, Any]) -> None:
        import json

        from cortex.files import atomic_write

        if self._state is not None:
            atomic_write(self._state / "notes.json", json.dumps(data))

    def _sync_agent_notes(self, agent: str, only: Path | None) -> NotesReport:
        from cortex.capture import notes

        definition = self._agent(agent)
        project = definition.settings.project or config.DEFAULT_PROJECT
        report = NotesReport(agent=agent)
        promoted = self._notes_state().get("promoted", {}).get(agent, {})
        found: dict[str, tuple[Any, str | None]] = {}  # label -> (file, text or None when unreadable)
        scanned: set[str] = set()  # directories read whole: their missing files went
        for directory in notes.directories(self.project_root, agent, definition.settings.notes):
            if only is not None:
                relative = notes.inside(only, directory)
                if relative is None:
                    continue
                candidates = [notes.NotesFile(only, directory, relative)]
            else:
                if directory.exists() and not os.access(directory, os.R_OK | os.X_OK):
                    report.skipped.append(f"{directory}: cannot be read (permission denied); its memories kept")
                    continue
                problems: list[str] = []
                candidates = list(notes.files(directory, problems))
                report.skipped.extend(problems)
                if not problems and directory.is_dir():
                    scanned.add(directory.name)
            for notes_file in candidates:
                try:
                    found[notes_file.label] = (notes_file, notes.read_text(notes_file.path))
                except FileNotFoundError:
                    found[notes_file.label] = (notes_file, "")  # deleted: its chunks go
                except (OSError, ValueError) as exc:
                    report.skipped.append(f"{notes_file.path}: {exc}; its memories kept")
                    found[notes_file.label] = (notes_file, None)
        report.files = sum(1 for _, text in found.values() if text is not None)
        for scope in ["agent", *sorted({s for scopes in promoted.values() for s in scopes})]:
            # a promoted file lives in the scope it was shared with, no longer in the agent's own
            labels = {label for label in found if label not in promoted} if scope == "agent" else \
                {label for label, scopes in promoted.items() if scope in scopes and label in found}
            existing: dict[str, dict[str, Memory]] = {}
            for memory in self._file_index(agent, scope):
                key = str((memory.metadata or {}).get("notes", ""))
                if key:
                    existing.setdefault(notes.file_of(key), {})[key] = memory
            gone = [label for label in existing if label not in labels and (
                (only is None and label not in found and label.split("/", 1)[0] in scanned)
                or (scope == "agent" and label in promoted and label in found))]
            for label in sorted(labels | set(gone)):
                notes_file, text = found[label] if label in labels else (None, "")  # type: ignore[assignment]
                # (not here: its chunks go)
                if text is None:
                    continue
                self._sync_notes_file(agent, scope, label, notes_file, text, existing.get(label, {}), project,
                                      report)
        return report

    def _file_index(self, agent: str, scope: str) -> list[Memory]:
        """Every current ``file_index`` memory of the agent in ``scope`` (its own, or a shared one it wrote)."""
        out: list[Memory] = []
        cursor = None
        while True:
            page = self.list_memories(agent, scope=scope, source=Source.FILE_INDEX, cursor=cursor,
                                      limit=config.MAX_LIMIT)
            out.extend(m for m in page.items if m.author == agent or scope == "agent")
            cursor = page.next_cursor
            if cursor is None:
                return out

    def _sync_notes_file(self, agent: str, scope: str, label: str, notes_file: Any, text: str,
                         existing: dict[str, Memory], project: str, report: NotesReport) -> None:
        from cortex.capture import notes

        pieces = notes.chunks(text) if notes_file is not None else []
        adds: list[dict[str, Any]] = []
        changed = False
        for chunk in pieces:
            bound = notes.edited(chunk)
            if bound is not None:  # a section of an exported file: an edit of the memory it shows
                self._apply_note_edit(agent, label, bound, report)
                continue
            key = notes.memory_key(notes_file, chunk)
            entry = notes.entry(notes_file, chunk, project)
            old = existing.pop(key, None)
            if old is not None and (old.metadata or {}).get("sha256") == chunk.digest:
                report.unchanged += 1
                continue
            changed = True
            with provenance_activity(channel="notes", file=label[-128:], part=f"lines {chunk.first_line}-"
                                                                               f"{chunk.last_line}"):
                if old is None:
                    adds.append({**entry, **({"scope": scope} if scope != "agent" else {})})
                    continue
                try:
                    fields: dict[str, Any] = {k: v for k, v in entry.items() if k not in ("content", "project")}
                    new = self.supersede(agent, old.id, str(entry["content"]), reason=f"{label} changed",
                                         **fields)
                    report.updated.append(new.id)
                except CortexError as exc:
                    report.skipped.append(f"{label} ({chunk.key}): {exc}")
        if adds:
            good = []
            for item in adds:
                try:
                    memory_from_entry(agent, {k: v for k, v in item.items() if k != "scope"}, self._clock())
                    good.append(item)
                except InvalidInputError as exc:
                    report.skipped.append(f"{label}: a chunk was not stored: {exc}")
            with provenance_activity(channel="notes", file=label[-128:]):
                report.added.extend(m.id for m in self.store_many(agent, good))
        if existing:  # chunks no longer in the file: they leave recall, their history stays
            changed = True
            report.removed.extend(self._retire(agent, list(existing.values()), f"no longer in {label}"))
        if changed and label not in report.changed_files:
            report.changed_files.append(label)

    def _apply_note_edit(self, agent: str, label: str, bound: tuple[str, str], report: NotesReport) -> None:
        """Update the memory an exported section shows when its text was edited."""
        memory_id, text = bound
        memory = self.get(agent, memory_id) if is_memory_id(memory_id) else None
        if memory is None or memory.superseded:
            report.skipped.append(f"{label}: section of memory {memory_id}: no such current memory; not applied")
            return
        if not text or text == memory.content.strip():
            report.unchanged += 1
            return
        try:
            with provenance_activity(channel="notes", file=label[-128:]):
                report.updated.append(self.update(agent, memory_id, content=text).id)
            if label not in report.changed_files:
                report.changed_files.append(label)
        except CortexError as exc:
            report.skipped.append(f"{label}: section of memory {memory_id}: {exc}")

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
            state = self._notes_state()
            scopes = state.setdefault("promoted", {}).setdefault(agent, {}).setdefault(label, [])
            if scope not in scopes:
                scopes.append(scope)
            self._save_notes_state(state)
        reports = self.sync_notes(agent, file=target)
        return reports[0]
