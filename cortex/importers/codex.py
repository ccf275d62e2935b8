"""Codex's own memories (docs/capture.md, "Importers"): the folder its memory pipeline writes, ``memories/`` of
``$CODEX_HOME`` (``~/.codex/memories``, :func:`memory_dir`, from :mod:`cortex.importers.places`; openai/codex
``codex-rs/core/src/memories`` and its ``templates/memories/consolidation.md``):

* ``MEMORY.md``, the handbook, one block per task group: ``# Task Group: <name>``, its ``scope:`` and
  ``applies_to: cwd=<directory>; reuse_rule=...`` lines, then ``## Task N: <title>`` (with ``### rollout_summary_files``
  and ``### keywords``), ``## User preferences``, ``## Reusable knowledge``, ``## Failures and how to do
  differently``: one memory per section with text (its heading path, ``Task Group: X > Reusable knowledge``), a
  task's rollout summary pointers skipped (evidence, not memory). Older versions head each block with YAML
  (``rollout_summary_files``, ``description``, ``keywords``) instead: read the same way, the description its name;
* ``memory_summary.md``, the part Codex loads in every prompt: ``## User Profile`` and ``## General Tips`` are
  memories, ``## What's in Memory`` (an index of the folder) is skipped;
* ``skills/<name>/SKILL.md``: a procedure Codex wrote (frontmatter ``name``, ``description``), type ``pattern``.

``raw_memories.md`` and ``rollout_summaries/`` are Codex's inputs and evidence, not read. Codex's memories are
the user's, across projects: a task group applies to the directory its ``applies_to`` names, and an import takes
only those of the project it runs for (the others are skipped, naming their directory); a group naming none,
the summary and the skills apply everywhere. A section's key is its file and heading path: a section Codex
rewrote supersedes its memory.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from itertools import pairwise
from pathlib import Path
from typing import Any

from cortex.capture.notes import chunks, loose_frontmatter, split_frontmatter
from cortex.importers.common import Document, Item, Parsed, markdown_like
from cortex.importers.places import codex_memory_dir as memory_dir

LABEL = "a Codex memory file (MEMORY.md, memory_summary.md or a skill's SKILL.md of ~/.codex/memories)"
FILES = "MEMORY.md, memory_summary.md, skills/*/SKILL.md"
HANDBOOK, SUMMARY, SKILL = "MEMORY.md", "memory_summary.md", "SKILL.md"

#: Sections that are not memories: the evidence of a task, the summary's index of the folder.
_SKIPPED = {"rollout_summary_files": "a task's rollout summary pointers (evidence, not a memory)",
            "what's in memory": "the summary's index of the memory folder (not a memory)"}
_GROUP = re.compile(r"^#[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_APPLIES = re.compile(r"^applies_to:.*?\bcwd=([^;\n]+)", re.MULTILINE)
_CWD = re.compile(r"\bcwd=([^,;)\n]+)")


def looks_like(text: str) -> bool:
    """Markdown: text whose first line is not JSON."""
    return markdown_like(text)


def files_in(directory: Path) -> list[Path]:
    """The summary, the handbook, then each skill's ``SKILL.md`` by name."""
    found = [p for p in (directory / SUMMARY, directory / HANDBOOK) if p.is_file()]
    skills = directory / "skills"
    if skills.is_dir():
        found += sorted(p for p in skills.glob(f"*/{SKILL}") if p.is_file())
    return found


def parse(document: Document, text: str) -> Parsed:
    parsed = Parsed()
    base = document.name.rsplit("/", 1)[-1]
    if base == SKILL:
        _skill(parsed, document, text)
    else:
        for start, group in _groups(_legacy(text)):
            _sections(parsed, document, group, start, applies_to=_applies(group))
    return parsed


def _legacy(text: str) -> str:
    """A handbook of the older schema (each block headed by YAML between ``---`` lines) in the current one: its
    description as the block's ``# Task Group:`` heading, the first ``cwd=`` of its rollout summaries as its
    ``applies_to``. Line numbers are kept (the header's lines become blank)."""
    lines = text.split("\n")
    out = list(lines)
    i, fence = 0, False
    while i < len(lines):
        if _FENCE.match(lines[i]):
            fence = not fence
        if not fence and lines[i].strip() == "---":
            end = next((j for j in range(i + 1, min(len(lines), i + 200)) if lines[j].strip() == "---"), None)
            if end is None:
                break
            header = "\n".join(lines[i + 1:end])
            if "description:" not in header and "rollout_summary_files:" not in header:
                i = end + 1
                continue
            front = loose_frontmatter(header)
            cwd = _CWD.search(header)
            name = str(front.get("description") or "task group").strip()
            out[i:end + 1] = [f"# Task Group: {name}", f"applies_to: cwd={cwd.group(1).strip()}" if cwd else "",
                              *[""] * (end - i - 1)]
            i = end + 1
            continue
        i += 1
    return "\n".join(out)


def _groups(text: str) -> list[tuple[int, str]]:
    """The text in blocks, each from a level-1 heading (or the start) to the next: (first line - 1, block)."""
    lines = text.split("\n")
    starts, fence = [0], False
    for number, line in enumerate(lines):
        if _FENCE.match(line):
            fence = not fence
        elif not fence and number and _GROUP.match(line):
            starts.append(number)
    starts.append(len(lines))
    return [(a, "\n".join(lines[a:b])) for a, b in pairwise(starts) if "\n".join(lines[a:b]).strip()]


def _applies(group: str) -> str | None:
    """The directory a task group's ``applies_to: cwd=...`` names (prose after it dropped), or None."""
    found = _APPLIES.search(group)
    if found is None:
        return None
    value = re.split(r"\s+(?:and|or)\s+|,", found.group(1).strip())[0].strip().strip("`'\"")
    return value or None


def _type(heading: str, default: str) -> str:
    last = heading.rsplit(" > ", 1)[-1].lower()
    if "preference" in last or "general tips" in last:
        return "convention"
    return default


def _sections(parsed: Parsed, document: Document, text: str, offset: int, *, applies_to: str | None,
              default: str = "insight", fields: Mapping[str, Any] | None = None) -> None:
    """Each section of ``text`` (lines from ``offset``) with text a memory, those of :data:`_SKIPPED` named."""
    for chunk in chunks(text):
        last = chunk.heading.rsplit(" > ", 1)[-1].strip().lower()
        first, end = chunk.first_line + offset, chunk.last_line + offset
        where = f"{document.name}:{first}-{end}"
        key = f"{document.name}#{chunk.key}"
        if last in _SKIPPED:
            parsed.skip(where, _SKIPPED[last], key)
            continue
        kind = _type(chunk.heading, default)
        parsed.items.append(Item(where=where, key=key, content=chunk.text, type=kind,
                                 tags=["codex-memory", *(["skill"] if default == "pattern" else [])],
                                 applies_to=applies_to,
                                 fields={**(fields or {}), "file": document.name, "heading": chunk.heading,
                                         "lines": [first, end], **({"cwd": applies_to} if applies_to else {})}))


def _skill(parsed: Parsed, document: Document, text: str) -> None:
    """A skill's ``SKILL.md``: its sections as ``pattern`` memories, under the skill's name."""
    front, body, offset = split_frontmatter(text)
    if front is None and offset < 0:
        parsed.fail(f"{document.name}:1", "the frontmatter (---) is never closed")
        return
    front = front or {}
    name = front.get("name") if isinstance(front.get("name"), str) else document.name.split("/")[-2:][0]
    description = front.get("description") if isinstance(front.get("description"), str) else None
    fields = {"skill": name, **({"description": description} if description else {})}
    if not chunks(body):
        parsed.skip(document.name, "a skill without text")
        return
    _sections(parsed, document, f"# Skill: {name}\n{body}", offset - 1, applies_to=None, default="pattern",
              fields=fields)


__all__ = ["FILES", "LABEL", "files_in", "looks_like", "memory_dir", "parse"]
