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
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

#: The notes directory of an agent, relative to the project root.
DEFAULT_DIR = ".cortex/notes/{agent}"
#: A notes file larger than this is skipped (named in the report).
MAX_FILE_BYTES = 2 * 1024 * 1024
#: A section longer than this is split into paragraphs (each its own chunk).
MAX_CHUNK_CHARS = 2000
#: The most files one directory yields (a mistaken notes directory of a whole disk stops there).
MAX_FILES = 20_000

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
    """The agent's notes directories: the default one and those of its definition (relative to ``root``)."""
    out = [root / DEFAULT_DIR.format(agent=agent)]
    for entry in configured:
        path = Path(os.path.expanduser(entry))
        out.append(path if path.is_absolute() else root / path)
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
    ``problems``), in name order."""
    if not directory.is_dir():
        return
    count = 0
    for current, dirs, names in os.walk(directory, onerror=lambda e: problems.append(f"{e.filename}: cannot be "
                                                                                     f"read ({e.strerror})")):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.startswith(".") or not name.lower().endswith(".md"):
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


def read_text(path: Path) -> str:
    """The file's text; ValueError naming why it is not a notes file (too large, binary, not UTF-8)."""
    from cortex.files import open_regular

    with open_regular(str(path)) as fh:
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


def entry(notes_file: NotesFile, chunk: Chunk, project: str) -> dict[str, object]:
    """The ``store`` entry of a chunk: a ``file_index`` memory that does not expire while its text is in the
    file, with its provenance (file, line range, digest) in metadata."""
    return {"content": chunk.text, "type": "insight", "project": project, "source": "file_index", "ttl": "never",
            "tags": ["notes"],
            "metadata": {"notes": memory_key(notes_file, chunk), "file": notes_file.label,
                         "heading": chunk.heading, "lines": [chunk.first_line, chunk.last_line],
                         "sha256": chunk.digest}}


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
