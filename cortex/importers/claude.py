"""Claude Code's own memory files (docs/capture.md, "Importers"):

* ``CLAUDE.md`` (and any Markdown file without frontmatter): one memory per section (its heading path; a long
  section per group of paragraphs, as notes are split), type ``convention`` for a ``CLAUDE.md``;
* the auto-memory directory ``~/.claude/projects/<project>/memory/`` (:func:`memory_dir`): each topic file (YAML
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
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cortex.capture.notes import chunks
from cortex.importers.common import Document, Item, Parsed, digest, markdown_like, moment

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


def modified_of(front: Mapping[str, Any]) -> Any:
    """When a topic file was last written (``modified``, or ``metadata.modified``): a datetime or None."""
    meta = front.get("metadata")
    for value in (front.get("modified"), meta.get("modified") if isinstance(meta, Mapping) else None):
        when = moment(value.isoformat() if hasattr(value, "isoformat") else value)
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
        fields["metadata"] = json.loads(json.dumps(dict(meta), default=str))
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


def project_dir_name(root: str | os.PathLike[str]) -> str:
    """The directory Claude Code keeps a project's state in under ``~/.claude/projects/``: its path with every
    character that is not a letter or digit turned into ``-`` (``/home/u/shop`` is ``-home-u-shop``)."""
    return re.sub(r"[^A-Za-z0-9]", "-", os.fspath(root))


def config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Claude Code's configuration directory: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    env = os.environ if environ is None else environ
    given = env.get("CLAUDE_CONFIG_DIR")
    return Path(given).expanduser() if given else Path(os.path.expanduser("~")) / ".claude"


def memory_dir(root: str | os.PathLike[str], environ: Mapping[str, str] | None = None) -> Path:
    """The auto-memory directory of the project at ``root``: the user's ``autoMemoryDirectory`` setting
    (``settings.json`` of :func:`config_dir`) when there is one, else ``<config>/projects/<project>/memory``
    (:func:`project_dir_name`; a name Claude Code cut for length is found by its start). It may not exist."""
    base = config_dir(environ)
    try:
        settings = json.loads((base / "settings.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        settings = None
    custom = settings.get("autoMemoryDirectory") if isinstance(settings, dict) else None
    if isinstance(custom, str) and custom.strip():
        return Path(os.path.expanduser(custom.strip()))
    name = project_dir_name(Path(os.path.abspath(os.fspath(root))))
    target = base / "projects" / name / "memory"
    if len(name) > 200 and not target.parent.is_dir():  # Claude Code cuts a long name and appends a hash
        found = sorted(p for p in (base / "projects").glob(f"{name[:200]}*") if p.is_dir())
        if found:
            return found[0] / "memory"
    return target
