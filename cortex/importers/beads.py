"""Beads (docs/capture.md, "Beads"): the knowledge log of the beads-compound plugin, in and out.

``.beads/memory/knowledge.jsonl`` is written by the beads-compound plugin (roberto-mello/beads-compound-plugin
v0.6.4, ``.claude/hooks/memory-capture.sh``), not by ``bd`` itself: one compact JSON object a line, appended,
``{"key": "<type>-<slug of the first 60 characters>", "type": "learned|decision|fact|pattern|investigation",
"content", "source": "user|supervisor", "tags": [...], "ts": <unix seconds>, "bead": "<bead id>"}``. Lines are
never rewritten, so a key can repeat: the line with the newest ``ts`` wins. Old lines rotate to
``knowledge.archive.jsonl``: more than :data:`ROTATE_OVER` lines moves the oldest :data:`ROTATE` there (the
issue's rule, the plugin's rules document; v0.6.4's hook itself rotates 2,500 past 5,000).

Shapes met in real repositories and read as well: a log whose every line is a JSON string holding the object
(``"{\\"key\\":...}"``, written encoded twice), ``ts`` as an ISO 8601 string
(``"2026-02-08T01:25:48.946554+00:00"``) instead of seconds.

Also read: ``bd export --include-memories`` lines (``{"_type": "memory", "key", "value"}``) and ``bd memories
--json`` (one object, key -> text), the memories of ``bd remember`` (beads v1.0.5). An issue line of a ``bd
export`` (``{"_type": "issue", ...}``, or without ``_type`` as older ``bd export`` and ``.beads/issues.jsonl``
write them: ``id``, ``title``, ``status``...) is not a memory, but its comments that the plugin would have
captured (``LEARNED:``, ``DECISION:``, ``FACT:``, ``PATTERN:``, ``INVESTIGATION:``) are: each a memory with the
plugin's key, so the same knowledge read from the log and from the export is one memory.

Written by :func:`write`: the knowledge log of an agent's memories (those imported from Beads exactly as read),
merged with the files already in the directory (same key: the newest ``ts`` wins; nothing there is lost), rotated.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from cortex import jsonsafe
from cortex.importers.common import Document, Item, Parsed, first_objects, json_lines, moment, whole_json

LABEL = "a Beads knowledge file (knowledge.jsonl, or bd export / bd memories --json)"
FILES = "knowledge.archive.jsonl, knowledge.jsonl"
FILE = "knowledge.jsonl"
ARCHIVE = "knowledge.archive.jsonl"
#: A knowledge log longer than this many lines rotates ...
ROTATE_OVER = 1000
#: ... its oldest this many lines to the archive (again until it is not longer).
ROTATE = 500

#: Beads' types as Cortex's (the Beads type is kept in metadata and as a tag).
TYPES = {"learned": "insight", "decision": "decision", "fact": "insight", "pattern": "pattern",
         "investigation": "insight"}
#: Cortex's types as Beads' (for memories that did not come from Beads).
BEADS_TYPES = {"pattern": "pattern", "decision": "decision", "convention": "fact", "insight": "learned"}
#: The order of a line's keys, as the plugin writes them (jq -cn).
KEYS = ("key", "type", "content", "source", "tags", "ts", "bead")

_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def looks_like(text: str) -> bool:
    """A knowledge log (objects with ``key`` and ``content``, or JSON strings holding them), a ``bd export``
    (objects with ``_type``, or issues without it) or a ``bd memories --json`` object of strings."""
    for value in first_objects(text, encoded=True):
        if isinstance(value, dict) and ("_type" in value or _issue(value)
                                        or ("content" in value and ("key" in value or "ts" in value))):
            return True
    whole = whole_json(text)
    return isinstance(whole, dict) and bool(whole) and all(isinstance(v, str) for v in whole.values()) \
        and "results" not in whole


def files_in(directory: Path) -> list[Path]:
    """The archive (older lines) first, then the log."""
    return [p for p in (directory / ARCHIVE, directory / FILE) if p.is_file()]


def parse(document: Document, text: str) -> Parsed:
    parsed = Parsed()
    whole = whole_json(text) if text.lstrip().startswith("{") and "\n{" not in text.strip() else None
    if isinstance(whole, dict) and whole and all(isinstance(v, str) for v in whole.values()) and "key" not in whole:
        for key, value in whole.items():  # bd memories --json
            _memory(parsed, f"{document.name}: {key}", key, value)
        return parsed
    for number, line in json_lines(document, text, parsed, encoded=True):
        where = f"{document.name}:{number}"
        if line.get("_type") == "memory":  # bd export
            _memory(parsed, where, line.get("key"), line.get("value"))
        elif line.get("_type") == "issue" or ("_type" not in line and _issue(line)):
            _issue_comments(parsed, where, line)
        elif "_type" in line:
            parsed.skip(where, f"a bd export {line['_type']!s:.40} line, not a memory")
        else:
            _knowledge(parsed, where, line)
    return parsed


def _issue(line: Mapping[str, Any]) -> bool:
    """An issue of a ``bd export`` written without ``_type`` (id, title and status or type; no knowledge key)."""
    return isinstance(line.get("id"), str) and "title" in line and ("status" in line or "issue_type" in line) \
        and "content" not in line


#: The prefixes of a comment the plugin captures as knowledge, and the Beads type each gives.
PREFIXES = {"LEARNED": "learned", "DECISION": "decision", "FACT": "fact", "PATTERN": "pattern",
            "INVESTIGATION": "investigation"}
_PREFIX = re.compile(r"^\s*(LEARNED|DECISION|FACT|PATTERN|INVESTIGATION):\s*(\S[\s\S]*)$")


def _issue_comments(parsed: Parsed, where: str, line: Mapping[str, Any]) -> None:
    """An issue line: its knowledge comments (``LEARNED: ...``) as the plugin would have logged them."""
    comments: list[Any] = line["comments"] if isinstance(line.get("comments"), list) else []
    found = 0
    for index, comment in enumerate(comments):
        text = comment.get("text") if isinstance(comment, dict) else None
        match = _PREFIX.match(text) if isinstance(text, str) else None
        if match is None:
            continue
        kind, content = PREFIXES[match.group(1)], match.group(2).strip()
        when = moment(comment.get("created_at"))
        found += 1
        parsed.items.append(Item(where=f"{where} comments[{index}]", key=key_of(kind, content), content=content,
                                 type=TYPES[kind], tags=[kind, *([line["id"]] if isinstance(line.get("id"), str)
                                                                 else [])],
                                 created_at=when, changed_at=when, order=when.timestamp() if when else None,
                                 fields={"type": kind, "tags": [kind], "bead": line.get("id"), "source": "bd-comment",
                                         **({"ts": int(when.timestamp())} if when else {})}))
    if not found:
        parsed.skip(where, f"a bd export issue ({line.get('id')!s:.40}) without knowledge comments, not a memory")


def _memory(parsed: Parsed, where: str, key: Any, value: Any) -> None:
    """A memory of ``bd remember`` (its config key ``kv.memory.<key>``)."""
    if not isinstance(key, str) or not key.strip():
        parsed.fail(where, "a bd memory without a key")
    elif not isinstance(value, str) or not value.strip():
        parsed.fail(where, "a bd memory without text (value)", key)
    else:
        parsed.items.append(Item(where=where, key=key, content=value, tags=["bd-memory"],
                                 fields={"type": "learned", "tags": ["learned"], "bd_memory": True}))


def _knowledge(parsed: Parsed, where: str, line: Mapping[str, Any]) -> None:
    """A line of the plugin's knowledge log."""
    key, content = line.get("key"), line.get("content")
    if not isinstance(key, str) or not key.strip():
        parsed.fail(where, "no key: every line of a Beads knowledge log has one (its identity)")
        return
    if not isinstance(content, str) or not content.strip():
        parsed.fail(where, "no content", key)
        return
    ts = line.get("ts")
    when = moment(ts) if ts is not None else None
    if ts is not None and (when is None or not isinstance(ts, (int, float, str))):
        parsed.fail(where, f"ts is neither a number of seconds nor an ISO 8601 time: {ts!r:.40}", key)
        return
    kind = line.get("type") if isinstance(line.get("type"), str) else None
    tags: list[Any] = line["tags"] if isinstance(line.get("tags"), list) else []
    fields = {k: line[k] for k in KEYS if k in line and k not in ("key", "content")}
    extra = {k: v for k, v in line.items() if k not in KEYS}
    if extra:  # a newer plugin's fields: kept
        fields["extra"] = extra
    bead = [line["bead"]] if isinstance(line.get("bead"), str) else []
    parsed.items.append(Item(where=where, key=key, content=content, type=TYPES.get(kind or "", "insight"),
                             tags=[*([kind] if kind else []), *tags, *bead],
                             created_at=when, changed_at=when, order=when.timestamp() if when else None,
                             fields=fields))


# -- export ------------------------------------------------------------------------------------


def key_of(kind: str, content: str) -> str:
    """The plugin's key: ``<type>-<slug of the first 60 characters>``."""
    return f"{kind}-{_NOT_SLUG.sub('-', content[:60].lower()).strip('-')}"


def line_of(memory: Any) -> dict[str, Any]:
    """The knowledge line of a memory: as it was read for one imported from Beads (its text and time the current
    ones when it changed since), else made the plugin's way."""
    meta: dict[str, Any] = memory.metadata or {}
    origin: dict[str, Any] = meta["import"] if isinstance(meta.get("import"), dict) else {}
    fields: dict[str, Any] | None = meta["beads"] if origin.get("system") == "beads" and \
        isinstance(meta.get("beads"), dict) else None
    changed = int((memory.updated_at or memory.created_at).timestamp())
    if fields is not None and isinstance(origin.get("key"), str):
        line: dict[str, Any] = {"key": origin["key"], "type": fields.get("type", BEADS_TYPES[memory.type.value]),
                                "content": memory.content, "source": fields.get("source", "user"),
                                "tags": fields.get("tags", []), "ts": fields.get("ts", changed),
                                "bead": fields.get("bead", "")}
        if memory.version > 1:  # edited in Cortex since: its time is the edit's
            line["ts"] = changed
        extra = fields.get("extra")
        if isinstance(extra, dict):
            line.update({k: v for k, v in extra.items() if k not in line})
        return line
    kind = BEADS_TYPES[memory.type.value]
    tags = [kind, *(t for t in memory.tags if t != kind)]
    return {"key": key_of(kind, memory.content), "type": kind, "content": memory.content, "source": "user",
            "tags": tags, "ts": changed, "bead": ""}


def lines_of(memories: Iterable[Any]) -> list[dict[str, Any]]:
    """The knowledge lines of memories, oldest first; two memories that would share a key keep both (the later one's
    key gets its id's end), except versions of one Beads key (the newest wins)."""
    out: dict[str, dict[str, Any]] = {}
    for memory in sorted(memories, key=lambda m: (m.created_at, m.id)):
        line = line_of(memory)
        before = out.get(line["key"])
        if before is not None and before["content"] != line["content"] and not _from_beads(memory):
            line["key"] = f"{line['key']}-{memory.id[-6:]}"
        elif before is not None and _ts(before) > _ts(line):
            continue
        out[line["key"]] = line
    return sorted(out.values(), key=lambda line: (_ts(line), line["key"]))


def _from_beads(memory: Any) -> bool:
    origin = (memory.metadata or {}).get("import")
    return isinstance(origin, dict) and origin.get("system") == "beads"


def _ts(line: Mapping[str, Any]) -> float:
    """A line's time in seconds (``ts`` as seconds or an ISO 8601 string; 0 without one)."""
    when = moment(line.get("ts"))
    return when.timestamp() if when is not None else 0.0


def encode(line: Mapping[str, Any]) -> str:
    """One line as the plugin writes it (``jq -c``: compact, UTF-8)."""
    return json.dumps(line, ensure_ascii=False, separators=(",", ":"))


def rotate(lines: Sequence[Mapping[str, Any]],
           archived: Sequence[Mapping[str, Any]] = ()) -> tuple[list[Any], list[Any]]:
    """``(log, archive)``: while the log has more than :data:`ROTATE_OVER` lines, its oldest :data:`ROTATE` go to
    the end of the archive."""
    log, archive = list(lines), list(archived)
    while len(log) > ROTATE_OVER:
        archive += log[:ROTATE]
        log = log[ROTATE:]
    return log, archive


def _read_lines(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The lines of a knowledge file: objects with a key, and the others as they are (kept, never dropped)."""
    if not path.is_file():
        return [], []
    from cortex.files import open_input

    with open_input(path, within=path.parent) as fh:  # a link out of the directory is not merged in
        text = fh.read().decode("utf-8", errors="surrogateescape")
    good, other = [], []
    for raw in text.split("\n"):
        if not raw.strip():
            continue
        try:
            value = jsonsafe.loads(raw)
            if isinstance(value, str) and value.lstrip().startswith("{"):  # a line encoded twice
                value = jsonsafe.loads(value)
        except ValueError:
            other.append(raw)
            continue
        if isinstance(value, dict) and isinstance(value.get("key"), str):
            good.append(value)
        else:
            other.append(raw)
    return good, other


def write(directory: str | os.PathLike[str], lines: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Write ``lines`` (:func:`lines_of`) as ``knowledge.jsonl`` in ``directory``, merged with the knowledge files
    there: same key, the newest ``ts`` wins (on a tie, ``lines``); an archived line stays archived; lines that are
    not readable stay where they were. Then rotated (:func:`rotate`). Each file is replaced atomically. Returns the
    counts: ``knowledge`` and ``archive`` lines, ``exported`` (of ``lines``), ``kept`` (lines of the files there
    that were newer or not in ``lines``)."""
    from cortex.files import atomic_write

    target = Path(os.path.expanduser(os.fspath(directory)))
    if target.exists() and not target.is_dir():
        from cortex.errors import InvalidInputError

        raise InvalidInputError("directory", f"{target} is not a directory")
    archived, archive_other = _read_lines(target / ARCHIVE)
    current, current_other = _read_lines(target / FILE)
    merged: dict[str, tuple[dict[str, Any], str, bool]] = {}  # key -> (line, the file it goes to, from Cortex)
    for where, group in (("archive", archived), ("file", current)):
        for line in group:
            before = merged.get(line["key"])
            if before is None or _ts(line) >= _ts(before[0]):
                merged[line["key"]] = (line, where, False)
    exported = 0
    for given in lines:
        line = dict(given)
        key = str(line["key"])
        before = merged.get(key)
        if before is None or _ts(line) >= _ts(before[0]):
            # a line as old as an archived one stays in the archive (it is that line, as Cortex has it now)
            where = "archive" if before is not None and before[1] == "archive" and _ts(line) == _ts(before[0]) \
                else "file"
            merged[key] = (line, where, True)
            exported += 1
    kept = sum(1 for _, _, ours in merged.values() if not ours)
    stays = [line for line, where, _ in merged.values() if where == "archive"]
    log = sorted((line for line, where, _ in merged.values() if where != "archive"), key=lambda x: (_ts(x), x["key"]))
    log, archive = rotate(log, sorted(stays, key=lambda x: (_ts(x), x["key"])))
    files = []
    if archive or archive_other or (target / ARCHIVE).exists():
        _replace(target / ARCHIVE, [*archive_other, *map(encode, archive)], atomic_write)
        files.append(str(target / ARCHIVE))
    _replace(target / FILE, [*map(encode, log), *current_other], atomic_write)
    files.append(str(target / FILE))
    return {"directory": str(target), "knowledge": len(log) + len(current_other),
            "archive": len(archive) + len(archive_other), "exported": exported, "kept": kept, "files": files}


def _replace(path: Path, lines: Sequence[str], atomic_write: Any) -> None:
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    atomic_write(path, "".join(f"{line}\n" for line in lines).encode("utf-8", "surrogateescape"), mode=mode)
