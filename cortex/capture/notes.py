"""Markdown notes as a source of an agent's memory (docs/capture.md, "Markdown notes").

Per agent, notes directories (``.cortex/notes/{agent}/`` and those its file lists in ``cortex: notes:``) hold
``MEMORY.md``, ``USER.md``, daily ``YYYY-MM-DD.md`` and any ``*.md``. Each file is split into chunks, one per
section (heading path), a long section into paragraphs; each chunk is a ``file_index`` memory whose identity is its
directory, file and heading path (DESIGN.md section 11): unchanged text keeps its memory (id, usage, validation);
changed text supersedes it; text that went leaves recall (history kept). This module holds the rules (which files,
which chunks, what changed); :meth:`cortex.app.Cortex.sync_notes` applies them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from cortex import jsonsafe

if TYPE_CHECKING:
    from cortex.model import Memory, NotesReport, Page, Source

#: The notes directory of an agent, relative to the project root.
DEFAULT_DIR = ".cortex/notes/{agent}"
#: A notes file larger than this is skipped (named in the report).
MAX_FILE_BYTES = 2 * 1024 * 1024
#: A section longer than this is split into paragraphs (each its own chunk).
MAX_CHUNK_CHARS = 2000
#: The most files one directory yields (a mistaken notes directory of a whole disk stops there).
MAX_FILES = 20_000

#: What a Codex memory folder holds that is not memory: its phase-1 inputs and rollout evidence.
CODEX_EVIDENCE = frozenset({"raw_memories.md", "rollout_summaries", "raw_memories", "memories_extensions"})

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_COMMENTS = re.compile(r"<!--.*?-->", re.DOTALL)


@dataclass(frozen=True)
class Chunk:
    """One part of a notes file: its key (heading path, unique in the file), text, lines and digest."""

    key: str
    heading: str
    text: str
    first_line: int
    last_line: int

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class NotesFile:
    """A notes file found in a directory: its path, its directory and its name relative to it."""

    path: Path
    directory: Path
    relative: str

    @property
    def label(self) -> str:
        """The file as memories name it: ``<directory>/<relative path>``."""
        return f"{self.directory.name}/{self.relative}"


def directories(root: Path, agent: str, configured: Sequence[str]) -> list[Path]:
    """The agent's notes directories: the default one and those of its definition (relative to ``root``;
    ``claude-memory`` and ``codex-memory`` name the agents' own memory directories,
    :func:`cortex.importers.places.notes_directory`)."""
    from cortex.importers.places import notes_directory

    out = [root / DEFAULT_DIR.format(agent=agent)]
    for entry in configured:
        out.append(notes_directory(entry, root))
    seen: dict[str, Path] = {}
    for path in out:
        seen.setdefault(os.path.realpath(path), path)
    return list(seen.values())


def inside(path: Path, directory: Path) -> str | None:
    """``path`` relative to ``directory`` when its real path is inside the directory's real path (a symbolic
    link out of it is not), else None."""
    try:
        real, base = Path(os.path.realpath(path)), Path(os.path.realpath(directory))
    except (OSError, ValueError):
        return None
    if not real.is_relative_to(base) or real == base:
        return None
    return real.relative_to(base).as_posix()


def files(directory: Path, problems: list[str]) -> Iterator[NotesFile]:
    """Every ``*.md`` file under ``directory`` (hidden entries skipped; links out of it refused, named in
    ``problems``; in Codex's memory folder, its :data:`CODEX_EVIDENCE`), in name order."""
    if not directory.is_dir():
        return
    count = 0
    # Codex's memory folder (it holds memory_summary.md): its phase-1 inputs and evidence are not memories
    codex = (directory / "memory_summary.md").is_file()
    for current, dirs, names in os.walk(directory, onerror=lambda e: problems.append(f"{e.filename}: cannot be "
                                                                                     f"read ({e.strerror})")):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                         and not (codex and current == str(directory) and d in CODEX_EVIDENCE))
        for name in sorted(names):
            if name.startswith(".") or not name.lower().endswith(".md") or (codex and name in CODEX_EVIDENCE):
                continue
            path = Path(current) / name
            relative = inside(path, directory)
            if relative is None:
                problems.append(f"{path}: a link out of the notes directory {directory}: not read")
                continue
            count += 1
            if count > MAX_FILES:
                problems.append(f"{directory}: more than {MAX_FILES} notes files: the rest not read")
                return
            yield NotesFile(path, directory, relative)


def read_text(path: Path, directory: Path | None = None) -> str:
    """The file's text; ValueError naming why it is not a notes file (too large, binary, not UTF-8); OSError when
    it is not a file Cortex reads (:func:`cortex.files.open_input`: a link out of the notes ``directory``, a file
    of Cortex's own)."""
    from cortex.files import open_input

    with open_input(str(path), within=directory) as fh:
        data = fh.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MB: not indexed")
    if b"\x00" in data:
        raise ValueError("binary (it holds NUL bytes): not indexed")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text (byte {exc.start}): not indexed") from None


def chunks(text: str) -> list[Chunk]:
    """The chunks of a Markdown text: one per section with text (its heading path, ``A > B``; text before the
    first heading is the section ``""``), a section longer than :data:`MAX_CHUNK_CHARS` one per group of
    paragraphs. Headings inside fenced code do not start sections. A repeated heading path gets `` (2)``..."""
    sections: list[tuple[list[str], list[tuple[int, str]]]] = [([], [])]
    stack: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            sections[-1][1].append((number, line))
            continue
        if opened:
            fence = opened.group(1)
            sections[-1][1].append((number, line))
            continue
        found = _HEADING.match(line)
        if found:
            level = len(found.group(1))
            stack = [(lv, h) for lv, h in stack if lv < level] + [(level, found.group(2).strip())]
            sections.append(([h for _, h in stack], []))
            continue
        sections[-1][1].append((number, line))
    out: list[Chunk] = []
    used: dict[str, int] = {}
    for path, lines in sections:
        while lines and not lines[0][1].strip():
            lines = lines[1:]
        while lines and not lines[-1][1].strip():
            lines = lines[:-1]
        if not lines:
            continue
        heading = " > ".join(path)
        for part, group in enumerate(_parts(lines), 1):
            key = heading if part == 1 else f"{heading} ¶{part}"
            used[key] = used.get(key, 0) + 1
            if used[key] > 1:
                key = f"{key} ({used[key]})"
            body = "\n".join(line for _, line in group).strip()
            if not _COMMENTS.sub("", body).strip():
                continue  # only HTML comments (an export's mark): nothing to remember
            out.append(Chunk(key, heading, f"{heading}\n{body}" if heading else body, group[0][0], group[-1][0]))
    return out


# -- frontmatter (Claude Code's topic files) -----------------------------------------------------------


def split_frontmatter(text: str) -> tuple[dict[str, Any] | None, str, int]:
    """A Markdown text's YAML frontmatter, its body and the number of lines before the body: ``(None, text, 0)``
    without frontmatter, ``(None, "", -1)`` when it is never closed. Frontmatter that is not a valid YAML mapping
    is read line by line (:func:`loose_frontmatter`)."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return None, text, 0
    end = next((i for i in range(1, min(len(lines), 200)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return None, "", -1
    import yaml

    raw = "\n".join(lines[1:end])
    try:
        front = yaml.safe_load(raw)
    except yaml.YAMLError:
        front = None
    if not isinstance(front, dict):
        front = loose_frontmatter(raw)
    return front, "\n".join(lines[end + 1:]), end + 1


_LOOSE = re.compile(r"^([ \t]*)([A-Za-z_][\w-]*)[ \t]*:[ \t]*(.*?)[ \t]*$")


def loose_frontmatter(raw: str) -> dict[str, Any]:
    """Frontmatter that YAML refuses, read as Claude Code means it: ``key: value`` lines (the value everything
    after the first colon, quotes that enclose it dropped), indented lines a mapping of the key above them."""
    out: dict[str, Any] = {}
    parent: dict[str, Any] | None = None
    for line in raw.split("\n"):
        found = _LOOSE.match(line)
        if found is None:
            continue
        indent, key, value = found.groups()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        if indent and parent is not None:
            parent[key] = value
        elif not indent:
            if value:
                out[key] = value
                parent = None
            else:
                parent = out.setdefault(key, {}) if isinstance(out.get(key, {}), dict) else None
    return out


def kind_of(front: Mapping[str, Any]) -> str | None:
    """A topic file's memory type: ``type``, or ``metadata.type`` as Claude Code writes it now."""
    meta = front.get("metadata")
    for value in (front.get("type"), meta.get("type") if isinstance(meta, Mapping) else None):
        if isinstance(value, str) and value.strip():
            return value.strip().lower()
    return None


def _parts(lines: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    """The lines of a section in groups of whole paragraphs under :data:`MAX_CHUNK_CHARS` (one paragraph longer
    than that is a group of its own, cut at the content limit by validation)."""
    if sum(len(line) + 1 for _, line in lines) <= MAX_CHUNK_CHARS:
        return [lines]
    paragraphs: list[list[tuple[int, str]]] = [[]]
    for item in lines:
        if not item[1].strip():
            if paragraphs[-1]:
                paragraphs.append([])
            continue
        paragraphs[-1].append(item)
    groups: list[list[tuple[int, str]]] = []
    size = 0
    for paragraph in filter(None, paragraphs):
        length = sum(len(line) + 1 for _, line in paragraph)
        if groups and size + length <= MAX_CHUNK_CHARS:
            groups[-1].extend(paragraph)
            size += length
        else:
            groups.append(list(paragraph))
            size = length
    return groups


def memory_key(notes_file: NotesFile, chunk: Chunk) -> str:
    """The identity of a chunk's memory: directory, file and heading path."""
    return f"{notes_file.label}#{chunk.key}"


#: The memory type a file's frontmatter gives (``type``, or ``metadata.type``: Claude Code's auto-memory types,
#: and Cortex's own); any other: ``insight``.
FRONT_TYPES = {"feedback": "convention", "user": "insight", "project": "insight", "reference": "insight",
               "pattern": "pattern", "convention": "convention", "insight": "insight", "decision": "decision"}


def entry(notes_file: NotesFile, chunk: Chunk, project: str,
          front: Mapping[str, Any] | None = None) -> dict[str, object]:
    """The ``store`` entry of a chunk: a ``file_index`` memory that does not expire while its text is in the
    file, with its provenance (file, line range, digest) in metadata; a file with frontmatter (a topic file of
    Claude Code's auto memory) gives its type, and its ``name`` and ``description``."""
    kind = kind_of(front) if front else None
    described = {k: front[k] for k in ("name", "description") if front and isinstance(front.get(k), str)}
    auto = kind in ("feedback", "user", "project", "reference")  # Claude Code's auto-memory types
    return {"content": chunk.text, "type": FRONT_TYPES.get(kind or "", "insight"), "project": project,
            "source": "file_index", "ttl": "never", "tags": ["notes", *(["auto-memory", kind] if auto else [])],
            "metadata": {"notes": memory_key(notes_file, chunk), "file": notes_file.label,
                         "heading": chunk.heading, "lines": [chunk.first_line, chunk.last_line],
                         "sha256": chunk.digest, **described}}


def file_of(key: str) -> str:
    """The file label of a memory key."""
    return key.split("#", 1)[0]


# -- writing memories back as notes -----------------------------------------------------------------------

#: The line that binds a section of an exported file to the memory it shows.
MEMORY_MARK = re.compile(r"^<!-- cortex:memory ([0-9a-z]{16,64}) -->[ \t]*$", re.MULTILINE)
#: The first line of an exported file: written by Cortex (an export overwrites only its own files).
EXPORT_MARK = "<!-- cortex:notes-export agent={agent} -->"
#: The file of each memory type in an export.
EXPORT_FILES = {"pattern": "patterns.md", "convention": "conventions.md", "insight": "insights.md",
                "decision": "decisions.md"}


def render_export(agent: str, memories: Sequence[tuple[str, str, str]]) -> dict[str, str]:
    """Markdown files showing ``memories`` ((id, type, content), in order) for a person to read and edit: one
    file per type, a section per memory titled by its first line, bound to it by a ``cortex:memory`` comment.
    Editing a section's text and syncing the directory updates that memory."""
    by_file: dict[str, list[str]] = {}
    for memory_id, kind, content in memories:
        first = " ".join(content.strip().splitlines()[0].split())[:80] if content.strip() else memory_id
        title = first.lstrip("#").strip() or memory_id
        by_file.setdefault(EXPORT_FILES[kind], []).append(
            f"## {title}\n\n<!-- cortex:memory {memory_id} -->\n\n{content.strip()}\n")
    return {name: f"{EXPORT_MARK.format(agent=agent)}\n# {name[:-3].capitalize()} of {agent}\n\n"
            + "\n".join(sections) for name, sections in sorted(by_file.items())}


def edited(chunk: Chunk) -> tuple[str, str] | None:
    """The (memory id, its text as the section now says) of a section of an exported file, or None."""
    found = MEMORY_MARK.search(chunk.text)
    if found is None:
        return None
    return found.group(1), chunk.text[found.end():].strip()


# -- a sync: its plan, then its application ----------------------------------------------------------------


class NotesState:
    """What syncing notes keeps between runs: the notes files each agent promoted to a team or the swarm
    (``notes.json`` in the state directory; in memory, for the life of this object, without one)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._memory: dict[str, Any] = {}

    def read(self) -> dict[str, Any]:
        """The whole state (empty when the file is missing or unreadable)."""
        from cortex.files import read_regular

        if self.path is None:
            return self._memory
        try:
            data = jsonsafe.loads(read_regular(self.path, 16 * 1024 * 1024))
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def promoted(self, agent: str) -> dict[str, list[str]]:
        """The files ``agent`` promoted (by label), each with the scopes it was shared with."""
        found: dict[str, list[str]] = self.read().get("promoted", {}).get(agent, {})
        return found

    def promote(self, agent: str, label: str, scope: str) -> None:
        """Record that ``agent``'s file ``label`` is shared with ``scope`` (once)."""
        from cortex.files import atomic_write

        data = self.read()
        scopes = data.setdefault("promoted", {}).setdefault(agent, {}).setdefault(label, [])
        if scope not in scopes:
            scopes.append(scope)
        if self.path is not None:
            atomic_write(self.path, json.dumps(data))


class NotesPort(Protocol):
    """The operations of the facade a notes sync reads and writes through."""

    def list_memories(self, agent: str, *, scope: str | None = None, source: Source | str | None = None,
                      cursor: str | None = None, limit: int = 50) -> Page: ...

    def get(self, agent: str, memory_id: str) -> Memory | None: ...

    def update(self, agent: str, memory_id: str, *, content: str | None = None) -> Memory: ...

    def supersede(self, agent: str, old_id: str, content: str | None = None, *, reason: str | None = None,
                  **fields: Any) -> Memory: ...

    def store_many(self, agent: str, entries: Iterable[Mapping[str, Any]]) -> list[Memory]: ...

    def _retire(self, agent: str, memories: Sequence[Memory], reason: str) -> list[str]:
        """End the validity of ``memories`` now (no successor): reads leave them out, their history stays."""
        ...


@dataclass(frozen=True)
class Edit:
    """A section of an exported file: the memory it shows (``memory_id``) and its ``text`` as the section says."""

    memory_id: str
    text: str


@dataclass(frozen=True)
class Change:
    """A chunk whose text changed: the memory ``old`` it supersedes, by the store ``entry`` of its new text."""

    chunk: Chunk
    old: Memory
    entry: dict[str, Any]


@dataclass(frozen=True)
class FileSync:
    """What a sync does with one file in one scope (``agent``, or the team or swarm it was promoted to): in the
    file's order, the edits of exported sections and the changed chunks (``steps``); then the new chunks to add
    (``adds``), the memories whose chunk went to retire (``retire``); ``unchanged``: the chunks left as they are."""

    scope: str
    label: str
    steps: tuple[Edit | Change, ...] = ()
    adds: tuple[dict[str, Any], ...] = ()
    retire: tuple[Memory, ...] = ()
    unchanged: int = 0

    @property
    def changed(self) -> bool:
        """Whether the file's chunks changed (an edit of an exported section counts when it is applied)."""
        return bool(self.adds or self.retire or any(isinstance(step, Change) for step in self.steps))


@dataclass(frozen=True)
class SyncPlan:
    """A notes sync of ``agent``: the notes files read (``files``), those not read with why (``skipped``), and
    what to do with each file in each scope, in order."""

    agent: str
    files: int = 0
    skipped: tuple[str, ...] = ()
    syncs: tuple[FileSync, ...] = ()


def file_index(port: NotesPort, agent: str, scope: str) -> list[Memory]:
    """Every current ``file_index`` memory of ``agent`` in ``scope`` (its own, or a shared one it wrote)."""
    from cortex import config
    from cortex.model import Source

    out: list[Memory] = []
    cursor = None
    while True:
        page = port.list_memories(agent, scope=scope, source=Source.FILE_INDEX, cursor=cursor,
                                  limit=config.MAX_LIMIT)
        out.extend(m for m in page.items if m.author == agent or scope == "agent")
        cursor = page.next_cursor
        if cursor is None:
            return out


def _read_files(dirs: Sequence[Path], only: Path | None,
                skipped: list[str]) -> tuple[dict[str, tuple[NotesFile, str | None]], set[str]]:
    """The notes files of ``dirs`` (or only the file ``only``), by label, each with its text (``""``: deleted;
    None: unreadable, named in ``skipped``), and the directories read whole (their missing files went)."""
    found: dict[str, tuple[NotesFile, str | None]] = {}
    scanned: set[str] = set()
    for directory in dirs:
        if only is not None:
            relative = inside(only, directory)
            if relative is None:
                continue
            candidates = [NotesFile(only, directory, relative)]
        else:
            if directory.exists() and not os.access(directory, os.R_OK | os.X_OK):
                skipped.append(f"{directory}: cannot be read (permission denied); its memories kept")
                continue
            problems: list[str] = []
            candidates = list(files(directory, problems))
            skipped.extend(problems)
            if not problems and directory.is_dir():
                scanned.add(directory.name)
        for notes_file in candidates:
            try:
                found[notes_file.label] = (notes_file, read_text(notes_file.path, notes_file.directory))
            except FileNotFoundError:
                found[notes_file.label] = (notes_file, "")  # deleted: its chunks go
            except (OSError, ValueError) as exc:
                skipped.append(f"{notes_file.path}: {exc}; its memories kept")
                found[notes_file.label] = (notes_file, None)
    return found, scanned


def plan_sync(port: NotesPort, agent: str, dirs: Sequence[Path], *, only: Path | None = None,
              promoted: Mapping[str, Sequence[str]] | None = None, project: str,
              redact: Callable[[str], str] | None = None) -> SyncPlan:
    """What a sync of ``agent``'s notes directories ``dirs`` (or of the file ``only`` in them) does, decided on the
    files as they are and the ``file_index`` memories of each scope (read through ``port``): the agent's own scope
    holds its files but those it ``promoted`` (label -> scopes), each promoted file the scopes it was shared
    with. A file that went, from a directory read whole, retires its memories; an unreadable one keeps them.
    ``redact``: the write path's redaction of a text, which a chunk's key (its heading path) passes as it is
    stored (a heading that holds a secret is stored redacted, and found again by its redacted key)."""
    promoted = promoted or {}
    skipped: list[str] = []
    found, scanned = _read_files(dirs, only, skipped)
    syncs: list[FileSync] = []
    for scope in ["agent", *sorted({s for scopes in promoted.values() for s in scopes})]:
        # a promoted file lives in the scope it was shared with, no longer in the agent's own
        labels = {label for label in found if label not in promoted} if scope == "agent" else \
            {label for label, scopes in promoted.items() if scope in scopes and label in found}
        existing: dict[str, dict[str, Memory]] = {}
        for memory in file_index(port, agent, scope):
            key = str((memory.metadata or {}).get("notes", ""))
            if key:
                existing.setdefault(file_of(key), {})[key] = memory
        gone = [label for label in existing if label not in labels and (
            (only is None and label not in found and label.split("/", 1)[0] in scanned)
            or (scope == "agent" and label in promoted and label in found))]
        for label in sorted(labels | set(gone)):
            notes_file, text = found[label] if label in labels else (None, "")  # (not here: its chunks go)
            if text is not None:
                syncs.append(plan_file(scope, label, notes_file, text, existing.get(label, {}), project, redact))
    return SyncPlan(agent, sum(1 for _, text in found.values() if text is not None), tuple(skipped), tuple(syncs))


def plan_file(scope: str, label: str, notes_file: NotesFile | None, text: str, existing: Mapping[str, Memory],
              project: str, redact: Callable[[str], str] | None = None) -> FileSync:
    """What a sync does with the file ``label`` (``notes_file`` None: it went) whose chunks' memories in
    ``scope`` are ``existing`` (by key): an unchanged chunk keeps its memory, a changed one supersedes it, a new
    one is added, a section of an exported file edits the memory it shows; the memories left retire."""
    left = dict(existing)
    if notes_file is None:
        return FileSync(scope, label, retire=tuple(left.values()))
    steps: list[Edit | Change] = []
    adds: list[dict[str, Any]] = []
    unchanged = 0
    front, body, offset = split_frontmatter(text)
    if front is None:
        body, offset = text, 0  # no frontmatter, or one never closed: the text as it is
    for chunk in chunks(body):
        if offset:
            chunk = replace(chunk, first_line=chunk.first_line + offset, last_line=chunk.last_line + offset)
        bound = edited(chunk)
        if bound is not None:  # a section of an exported file: an edit of the memory it shows
            steps.append(Edit(*bound))
            continue
        key = memory_key(notes_file, chunk)
        key = redact(key) if redact is not None else key
        new = entry(notes_file, chunk, project, front)
        old = left.pop(key, None)
        if old is not None and (old.metadata or {}).get("sha256") == chunk.digest:
            unchanged += 1
        elif old is None:
            adds.append({**new, **({"scope": scope} if scope != "agent" else {})})
        else:
            steps.append(Change(chunk, old, new))
    return FileSync(scope, label, tuple(steps), tuple(adds), tuple(left.values()), unchanged)


def apply(plan: SyncPlan, port: NotesPort, *, clock: Callable[[], datetime]) -> NotesReport:
    """Perform ``plan`` through ``port`` (each write recorded as the ``notes`` channel of its file, and part for a
    changed chunk); returns the report of the sync. A write that is refused is named in ``skipped``, the rest done.
    ``clock`` dates the validation of the chunks to add."""
    from cortex.model import NotesReport

    report = NotesReport(agent=plan.agent, files=plan.files, skipped=list(plan.skipped))
    for sync in plan.syncs:
        _apply_file(sync, plan.agent, port, clock, report)
    return report


def _apply_file(sync: FileSync, agent: str, port: NotesPort, clock: Callable[[], datetime],
                report: NotesReport) -> None:
    from cortex.errors import CortexError, InvalidInputError
    from cortex.provenance import activity as provenance_activity
    from cortex.validation import memory_from_entry

    label = sync.label
    report.unchanged += sync.unchanged
    for step in sync.steps:
        if isinstance(step, Edit):
            _apply_edit(step, agent, label, port, report)
            continue
        chunk, new = step.chunk, step.entry
        with provenance_activity(channel="notes", file=label[-128:], part=f"lines {chunk.first_line}-"
                                                                           f"{chunk.last_line}"):
            try:
                fields: dict[str, Any] = {k: v for k, v in new.items() if k not in ("content", "project")}
                report.updated.append(port.supersede(agent, step.old.id, str(new["content"]),
                                                     reason=f"{label} changed", **fields).id)
            except CortexError as exc:
                report.skipped.append(f"{label} ({chunk.key}): {exc}")
    if sync.adds:
        good = []
        for item in sync.adds:
            try:
                memory_from_entry(agent, {k: v for k, v in item.items() if k != "scope"}, clock())
                good.append(item)
            except InvalidInputError as exc:
                report.skipped.append(f"{label}: a chunk was not stored: {exc}")
        with provenance_activity(channel="notes", file=label[-128:]):
            report.added.extend(m.id for m in port.store_many(agent, good))
    if sync.retire:  # chunks no longer in the file: they leave recall, their history stays
        report.removed.extend(port._retire(agent, list(sync.retire), f"no longer in {label}"))
    if sync.changed and label not in report.changed_files:
        report.changed_files.append(label)


def _apply_edit(edit: Edit, agent: str, label: str, port: NotesPort, report: NotesReport) -> None:
    """Update the memory an exported section shows when its text was edited."""
    from cortex.errors import CortexError
    from cortex.provenance import activity as provenance_activity
    from cortex.validation import is_memory_id

    memory_id, text = edit.memory_id, edit.text
    memory = port.get(agent, memory_id) if is_memory_id(memory_id) else None
    if memory is None or memory.superseded:
        report.skipped.append(f"{label}: section of memory {memory_id}: no such current memory; not applied")
        return
    if not text or text == memory.content.strip():
        report.unchanged += 1
        return
    try:
        with provenance_activity(channel="notes", file=label[-128:]):
            report.updated.append(port.update(agent, memory_id, content=text).id)
        if label not in report.changed_files:
            report.changed_files.append(label)
    except CortexError as exc:
        report.skipped.append(f"{label}: section of memory {memory_id}: {exc}")
