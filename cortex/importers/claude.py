"""Claude Code's own memory files (docs/capture.md, "Importers"):

* ``CLAUDE.md`` (and any Markdown file without frontmatter): one memory per section (its heading path; a long
  section per group of paragraphs, as notes are split), type ``convention`` for a ``CLAUDE.md``;
* the auto-memory directory ``~/.claude/projects/<project>/memory/`` (:func:`memory_dir`, from
  :mod:`cortex.importers.places`): each topic file (YAML
  frontmatter ``name``, ``description``, ``type: user|feedback|project|reference``, or, as Claude Code writes them
  since, ``metadata: {type, originSessionId, modified}``; then the text) one memory per section of its text, and
  ``MEMORY.md``, the index Claude Code loads each session: its entries that point to a topic file are that
  file's (skipped here, named), its other lines memories of their own.

Frontmatter that is not valid YAML (Claude Code writes ``name: agency: disagree``, a description starting with a
backtick, half-quoted values) is read line by line rather than refused: the memory is the text. A topic file's
``modified`` orders its versions (an older one never supersedes a newer). The key of a section is its file and
heading path (``CLAUDE.md#Testing``): a section whose text changed supersedes its memory; a ``MEMORY.md`` line's
key is its heading and a digest of the line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Any

from cortex.capture.notes import chunks, kind_of, split_frontmatter
from cortex.importers.common import Document, Item, Parsed, digest, markdown_like, moment
from cortex.importers.places import claude_config_dir as config_dir
from cortex.importers.places import claude_memory_dir as memory_dir
from cortex.importers.places import project_dir_name

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
    """``(frontmatter, body, lines before the body)``; no frontmatter: ``(None, text, 0)``; one never closed is
    reported (``(None, "", -1)``); one that is not valid YAML is read line by line (:func:`loose_frontmatter`)."""
    front, body, offset = split_frontmatter(text)
    if front is None and offset < 0:
        parsed.fail(f"{document.name}:1", "the frontmatter (---) is never closed")
        return None, "", -1
    return front, body, offset


def modified_of(front: Mapping[str, Any]) -> datetime | None:
    """When a topic file was last written (``modified``, or ``metadata.modified``): a datetime or None."""
    meta = front.get("metadata")
    for value in (front.get("modified"), meta.get("modified") if isinstance(meta, Mapping) else None):
        when = moment(value.isoformat() if isinstance(value, (datetime, date)) else value)
        if when is not None:
            return when
    return None


def _topic(parsed: Parsed, document: Document, front: dict[str, Any], body: str, offset: int) -> None:
    """A topic file of the auto-memory directory: each section of its text (its description when it has none)."""
    kind = kind_of(front)
    name = front.get("name") if isinstance(front.get("name"), str) else None
    description = front.get("description") if isinstance(front.get("description"), str) else None
    fields: dict[str, Any] = {k: v for k, v in (("name", name), ("description", description), ("type", kind))
                              if v is not None}
    meta = front.get("metadata")
    if isinstance(meta, Mapping):  # originSessionId, node_type...: kept, as JSON values
        # its scalars only: YAML aliases can nest a list of a billion items in a few lines (billion laughs)
        fields["metadata"] = json.loads(json.dumps({str(k): v for k, v in meta.items() if v is None or isinstance(
            v, str | int | float | bool)}, default=str))
    when = modified_of(front)
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
                                 changed_at=when, order=when.timestamp() if when is not None else None,
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


__all__ = ["FILES", "LABEL", "TYPES", "config_dir", "files_in", "looks_like", "memory_dir", "parse", "project_dir_name"]
