"""Claude Code's own memory files (docs/capture.md, "Importers"):

* ``CLAUDE.md`` (and any Markdown file without frontmatter): one memory per section (its heading path; a long
  section per group of paragraphs, as notes are split), type ``convention`` for a ``CLAUDE.md``;
* the auto-memory directory ``~/.claude/projects/<project>/memory/``: each topic file (YAML frontmatter ``name``,
  ``description``, ``type: user|feedback|project|reference``, then the text) one memory per section of its text,
  and ``MEMORY.md``, the index Claude Code loads each session: its entries that point to a topic file are that
  file's (skipped here, named), its other lines memories of their own.

The key of a section is its file and heading path (``CLAUDE.md#Testing``): a section whose text changed supersedes
its memory; a ``MEMORY.md`` line's key is its heading and a digest of the line.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from cortex.capture.notes import chunks
from cortex.importers.common import Document, Item, Parsed, digest, markdown_like

LABEL = "a Claude Code memory file (CLAUDE.md, MEMORY.md or a topic file of its memory directory)"
FILES = "*.md"
#: The auto-memory types as Cortex's.
TYPES = {"feedback": "convention", "user": "insight", "project": "insight", "reference": "insight"}
INDEX = "MEMORY.md"

_POINTER = re.compile(r"\[[^\]]*\]\(([^)\s]+\.md)(?:#[^)]*)?\)")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*\S)\s*$")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")


def looks_like(text: str) -> bool:
    """Markdown: text whose first line is not JSON (an object, an array, an encoded string)."""
    return markdown_like(text)


def files_in(directory: Path) -> list[Path]:
    """``MEMORY.md`` first, then the other ``*.md`` files by name."""
    found = sorted(p for p in directory.glob("*.md") if p.is_file())
    return sorted(found, key=lambda p: (p.name != INDEX, p.name))


def parse(document: Document, text: str) -> Parsed:
    parsed = Parsed()
    if document.name.upper() == INDEX.upper():
        _index(parsed, document, text)
        return parsed
    front, body, offset = _frontmatter(parsed, document, text)
    if front is None and offset < 0:
        return parsed
    if front is not None:
        _topic(parsed, document, front, body, offset)
        return parsed
    claude_md = document.name.upper() == "CLAUDE.MD" or document.name.upper().startswith("CLAUDE.")
    for chunk in chunks(text):
        parsed.items.append(Item(where=f"{document.name}:{chunk.first_line}-{chunk.last_line}",
                                 key=f"{document.name}#{chunk.key}", content=chunk.text,
                                 type="convention" if claude_md else "insight",
                                 tags=["claude-md" if claude_md else "markdown"],
                                 fields={"file": document.name, "heading": chunk.heading,
                                         "lines": [chunk.first_line, chunk.last_line]}))
    return parsed


def _frontmatter(parsed: Parsed, document: Document, text: str) -> tuple[dict[str, Any] | None, str, int]:
    """``(frontmatter, body, lines before the body)``; no frontmatter: ``(None, text, 0)``; a broken one is
    reported (``(None, "", -1)``)."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return None, text, 0
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        parsed.fail(f"{document.name}:1", "the frontmatter (---) is never closed")
        return None, "", -1
    import yaml

    try:
        front = yaml.safe_load("\n".join(lines[1:end])) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        parsed.fail(f"{document.name}:{line}", f"the frontmatter is not valid YAML: {getattr(exc, 'problem', exc)}")
        return None, "", -1
    if not isinstance(front, dict):
        parsed.fail(f"{document.name}:2", "the frontmatter is not a mapping (name: ..., description: ..., type: ...)")
        return None, "", -1
    return front, "\n".join(lines[end + 1:]), end + 1


def _topic(parsed: Parsed, document: Document, front: dict[str, Any], body: str, offset: int) -> None:
    """A topic file of the auto-memory directory: each section of its text (its description when it has none)."""
    kind = front.get("type") if isinstance(front.get("type"), str) else None
    name = front.get("name") if isinstance(front.get("name"), str) else None
    description = front.get("description") if isinstance(front.get("description"), str) else None
    fields: dict[str, Any] = {k: v for k, v in (("name", name), ("description", description), ("type", kind))
                              if v is not None}
    pieces = chunks(body)
    if not pieces and (description or name):
        pieces = chunks(description or name or "")
        offset = 1
    if not pieces:
        parsed.skip(document.name, "a topic file without text")
        return
    for chunk in pieces:
        first, last = chunk.first_line + offset, chunk.last_line + offset
        parsed.items.append(Item(where=f"{document.name}:{first}-{last}", key=f"{document.name}#{chunk.key}",
                                 content=chunk.text, type=TYPES.get(kind or "", "insight"),
                                 tags=["auto-memory", *([kind] if kind else [])],
                                 fields={**fields, "file": document.name, "heading": chunk.heading,
                                         "lines": [first, last]}))


def _index(parsed: Parsed, document: Document, text: str) -> None:
    """``MEMORY.md``: entries pointing to a topic file are skipped (that file is the memory); other entries and
    paragraphs are memories, under their heading."""
    heading = ""
    paragraph: list[tuple[int, str]] = []

    def flush() -> None:
        if paragraph:
            body = "\n".join(line for _, line in paragraph).strip()
            _line(parsed, document, heading, body, paragraph[0][0], paragraph[-1][0])
            paragraph.clear()

    for number, line in enumerate(text.split("\n"), 1):
        found = _HEADING.match(line)
        if found:
            flush()
            heading = found.group(2).strip()
            continue
        entry = _ITEM.match(line)
        if entry:
            flush()
            pointer = _POINTER.search(entry.group(1))
            if pointer:
                parsed.skip(f"{document.name}:{number}", f"an index entry for {pointer.group(1)} (its memory is "
                                                         "imported from that file)")
            else:
                _line(parsed, document, heading, entry.group(1), number, number)
        elif line.strip():
            paragraph.append((number, line))
        else:
            flush()
    flush()


def _line(parsed: Parsed, document: Document, heading: str, text: str, first: int, last: int) -> None:
    parsed.items.append(Item(where=f"{document.name}:{first}" if first == last else f"{document.name}:{first}-{last}",
                             key=f"{document.name}#{heading}#{digest(text, 12)}",
                             content=f"{heading}\n{text}" if heading else text, tags=["auto-memory", "index"],
                             fields={"file": document.name, "heading": heading, "lines": [first, last]}))
