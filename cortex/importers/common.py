"""What every importer shares: the documents an import reads, the items a system's module reads from them, and
the rules that decide what each item becomes (docs/capture.md, "Importers").

A system's module (``beads``, ``mem0``, ``mcp_memory``, ``claude``) has:

* ``LABEL``: what its files are called in messages (``a Beads knowledge file``);
* ``looks_like(text) -> bool``: whether a text is in its format (so a file of another format is named as such);
* ``files_in(directory) -> list[Path]``: the files of a directory it reads, in order;
* ``parse(document, text) -> Parsed``: the items (memories to be), entities and relations of one file, and what
  it could not read (each problem with its file and line).

:class:`Run` then decides per item, against what earlier imports stored (the stable key of each item is in its
memory's metadata): a new key is imported; the same key with the same text (or an older version of it) is skipped;
a newer version supersedes the memory of its key. Everything of a file is validated first; the facade writes a
file's new memories, entities and relations in one atomic write.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from pyoxigraph import Literal, Triple

from cortex import jsonsafe
from cortex.errors import InvalidInputError
from cortex.files import open_input
from cortex.importers import SYSTEMS, module
from cortex.model import ImportItem, ImportReport, Memory, Scope, Source
from cortex.validation import Expiry, memory_from_entry
from cortex.vocab import RDF_TYPE, Vocabulary

#: A file larger than this is refused (named), the rest of an import goes on.
MAX_FILE_BYTES = 256 * 1024 * 1024
#: Progress is reported every this many items.
PROGRESS_EVERY = 1000
#: An entity name longer than this is refused (it is the entity node's IRI).
MAX_NAME_CHARS = 1024

_SLUG_OUT = re.compile(r"[^a-z0-9._-]+")


@dataclass(frozen=True)
class Document:
    """One file of an import: its name (as reports and provenance give it) and its bytes."""

    name: str
    data: bytes


@dataclass
class Item:
    """What a system's file says one memory should be."""

    #: where it was read: ``knowledge.jsonl:3``, ``get_all.json: results[2]``, ``CLAUDE.md:4-9``
    where: str
    #: its identity in the source system (a Beads key, a mem0 id, entity + observation, file + heading)
    key: str
    content: str
    type: str = "insight"
    tags: Sequence[str] = ()
    #: when the system recorded it (None: now)
    created_at: datetime | None = None
    #: which version of a key is newer (a Beads ts, a mem0 updated_at); None: the text decides
    order: float | None = None
    #: when this version was written (a Beads ts, a mem0 updated_at): the valid time of a superseding memory
    changed_at: datetime | None = None
    #: the system's own fields, kept in the memory's metadata under the system's name
    fields: dict[str, Any] = field(default_factory=dict)
    #: the entity it is about (an observation of the MCP memory server)
    about: str | None = None
    expires_at: datetime | None = None
    #: the directory it applies to (a Codex task group's cwd): imported only for a project at or above it
    applies_to: str | None = None


@dataclass(frozen=True)
class Relation:
    """A relation of two entities (``from -[type]-> to``)."""

    where: str
    source: str
    type: str
    target: str

    @property
    def key(self) -> str:
        return f"{self.source} -[{self.type}]-> {self.target}"


@dataclass
class Parsed:
    """What one file holds: items, entities (name -> its types), relations, and what was skipped or failed."""

    items: list[Item] = field(default_factory=list)
    entities: dict[str, list[str]] = field(default_factory=dict)
    relations: list[Relation] = field(default_factory=list)
    skipped: list[ImportItem] = field(default_factory=list)
    failed: list[ImportItem] = field(default_factory=list)

    def entity(self, name: str, kind: str | None = None) -> None:
        types = self.entities.setdefault(name, [])
        if kind and kind not in types:
            types.append(kind)

    def fail(self, where: str, reason: str, key: str | None = None, kind: str = "memory") -> None:
        self.failed.append(ImportItem(where=where, key=key, kind=kind, reason=reason))

    def skip(self, where: str, reason: str, key: str | None = None) -> None:
        self.skipped.append(ImportItem(where=where, key=key, reason=reason))

    @property
    def count(self) -> int:
        return len(self.items) + len(self.relations)


def documents(system: str, source: str | os.PathLike[str] | bytes | IO[bytes],
              name: str | None = None) -> list[Document]:
    """The files an import of ``system`` reads from ``source``: a file, a directory (the files the system keeps
    there, in order: Beads' archive then its log, Claude Code's memory directory), or the bytes of one file
    (``name``: its file name)."""
    importer = module(system)
    if isinstance(source, (bytes, bytearray)):
        return [Document(relative_name(name or "upload"), bytes(source))]
    if hasattr(source, "read") and not isinstance(source, (str, os.PathLike)):
        data = source.read()
        given = name or getattr(source, "name", None)
        return [Document(clean_name(os.path.basename(given) if isinstance(given, str) else "upload"),
                         data if isinstance(data, bytes) else str(data).encode("utf-8"))]
    if not isinstance(source, (str, os.PathLike)):
        raise InvalidInputError("path", f"must be a path or a file's bytes, not {type(source).__name__}")
    path = Path(os.path.expanduser(os.fspath(source)))
    if path.is_dir():
        found = importer.files_in(path)
        if not found:
            raise InvalidInputError("path", f"{path} holds no file {system} keeps there ({importer.FILES})")
        # named by their path in the directory (skills/x/SKILL.md); a link out of the directory is not read
        return [_read(p, "/".join(clean_name(part) for part in p.relative_to(path).parts), within=path)
                for p in found]
    if not path.exists():
        raise InvalidInputError("path", f"{path}: no such file or directory")
    return [_read(path, name or path.name)]


def _read(path: Path, name: str, within: Path | None = None) -> Document:
    """The file as a document, read through :func:`cortex.files.open_input` (confined to the caller's
    directories, and to ``within``: the directory an import walks)."""
    try:
        with open_input(path, within=within) as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise InvalidInputError("path", f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise InvalidInputError("path", f"{path} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB")
    return Document(name if within is not None else clean_name(name), data)


def relative_name(name: str) -> str:
    """A file's name as a client sends it for a file of a directory (``skills/x/SKILL.md``): a relative path's
    parts (``..`` and ``.`` dropped), each :func:`clean_name`; an absolute path is its last part."""
    text = str(name).replace("\\", "/")
    if text.startswith("/") or re.match(r"[A-Za-z]:/", text):
        return clean_name(text)
    parts = [clean_name(p) for p in text.split("/") if p not in ("", ".", "..")]
    return "/".join(parts)[-200:].lstrip("/") or "upload"


def clean_name(name: str) -> str:
    """A file name as reports and provenance give it: its last part, printable ASCII, at most 128 characters."""
    base = os.path.basename(str(name).replace("\\", "/")) or "upload"
    return "".join(c if " " <= c <= "~" else "?" for c in base)[-128:].strip() or "upload"


def text_of(document: Document) -> str:
    """The document's text (UTF-8, a byte order mark dropped); :class:`InvalidInputError` naming the file when it is
    binary or not UTF-8."""
    if b"\x00" in document.data[:1 << 20]:
        raise InvalidInputError("file", f"{document.name} is binary (it holds NUL bytes), not a text file")
    try:
        return document.data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = document.data[:exc.start].count(b"\n") + 1
        raise InvalidInputError("file", f"{document.name}:{line}: not UTF-8 text (byte {exc.start})") from None


def json_lines(document: Document, text: str, parsed: Parsed, *,
               encoded: bool = False) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each JSON object of a JSONL text with its line number; a line that is not one (bad JSON, a line cut short
    at the end of the file, another value) goes to ``parsed.failed`` naming the file and line. ``encoded``: a
    line that is a JSON string holding an object's JSON (written twice encoded: ``"{\\"key\\": ...}"``) is that
    object."""
    lines = text.split("\n")
    last = max((n for n, line in enumerate(lines, 1) if line.strip()), default=0)
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{document.name}:{number}"
        try:
            value = jsonsafe.loads(line)
        except ValueError as exc:
            at_end = getattr(exc, "pos", 0) >= len(line.rstrip()) - 1
            cut = number == last and not text.endswith("\n") and (
                str(getattr(exc, "msg", "")).startswith("Unterminated") or at_end)
            parsed.fail(where, f"not read: {exc}" if isinstance(exc, jsonsafe.JSONLimitError) else
                        "truncated: the file ends inside this line's JSON (cut short while it was written?)"
                        if cut else f"not JSON: {getattr(exc, 'msg', exc)} (column {getattr(exc, 'colno', '?')})")
            continue
        if encoded and isinstance(value, str):
            value = _decoded(value)
        if not isinstance(value, dict):
            parsed.fail(where, f"a JSON {type(value).__name__}, not an object")
            continue
        yield number, value


def _decoded(value: str) -> Any:
    """The JSON object a JSON string holds (``value`` itself when it holds none)."""
    if not value.lstrip().startswith("{"):
        return value
    try:
        inner = jsonsafe.loads(value)
    except ValueError:
        return value
    return inner if isinstance(inner, dict) else value


def first_objects(text: str, lines: int = 20, *, encoded: bool = False) -> list[Any]:
    """The JSON values of the first non-empty lines of a text that parse (for telling formats apart); ``encoded``:
    a JSON string holding an object is that object (:func:`json_lines`)."""
    found = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        lines -= 1
        try:
            value = jsonsafe.loads(line)
        except ValueError:
            value = None
        else:
            found.append(_decoded(value) if encoded and isinstance(value, str) else value)
        if lines <= 0:
            break
    return found


def markdown_like(text: str) -> bool:
    """Whether a text reads as Markdown rather than JSON: its first non-empty line is neither an object or array
    nor a JSON string (a JSONL file of encoded objects)."""
    first = next((line.strip() for line in text.split("\n") if line.strip()), "")
    if first.startswith("{") or first == "[":
        return False
    if first.startswith(("[", '"')):  # a JSON line, or Markdown: a link or a badge (`[![CI](...)](...)`), a quote
        try:
            jsonsafe.loads(first)
        except ValueError:
            return first.startswith('"') or whole_json(text) is None
        return False
    return True


def whole_json(text: str) -> Any:
    """The text as one JSON value, or None when it is not one; JSON too deep or long to read raises
    :class:`InvalidInputError` saying so."""
    try:
        return jsonsafe.loads(text)
    except jsonsafe.JSONLimitError as exc:
        raise InvalidInputError("file", str(exc)) from None
    except ValueError:
        return None


def check_format(system: str, name: str, text: str) -> None:
    """Raise :class:`InvalidInputError` naming the file when its text is not in ``system``'s format, and the
    format it looks like (another system's, or Cortex's RDF) when it looks like one."""
    importer = module(system)
    if not text.strip() or (importer.looks_like(text) and not rdf_like(text)):
        return
    if rdf_like(text):
        raise InvalidInputError("file", f"{name} is not {importer.LABEL}: it looks like RDF (a Cortex export: "
                                        "`cortex import FILE`)")
    for other in SYSTEMS:
        if other != system and module(other).looks_like(text):
            raise InvalidInputError("file", f"{name} is not {importer.LABEL}: it looks like {module(other).LABEL} "
                                            f"(`cortex import {other} FILE`)")
    first = next((line.strip() for line in text.split("\n") if line.strip()), "")
    raise InvalidInputError("file", f"{name} is not {importer.LABEL}: its first line is {first[:80]!r}")


_RDF_START = re.compile(r"(@prefix|@base|PREFIX|BASE)\s|<[^>\s]+>\s|_:\S+\s|\{\s*\"@(context|graph|id)\"")


def rdf_like(text: str) -> bool:
    """Whether a text starts like RDF: Turtle/TriG directives, an N-Triples/N-Quads line, a JSON-LD document."""
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return bool(_RDF_START.match(stripped)) or (stripped == "{" and '"@context"' in text[:2000])
    return False


def slug(text: str) -> str:
    """``text`` as a tag: lowercase, other characters as ``-``, at most 64 characters ("" when nothing is left)."""
    return _SLUG_OUT.sub("-", text.strip().lower()).strip("-._")[:64].rstrip("-._")


def tags_of(tags: Sequence[Any], system: str) -> list[str]:
    """The system's name, then an item's own tags as slugs (strings only; duplicates and empty ones dropped), at
    most 32."""
    out = [system]
    for tag in tags:
        found = slug(tag) if isinstance(tag, str) else ""
        if found and found not in out:
            out.append(found)
    return out[:32]


def digest(text: str, size: int = 16) -> str:
    """A short stable digest of a text (part of a key that must not carry the text itself)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:size]


def moment(value: Any) -> datetime | None:
    """An ISO 8601 time (an offset, or UTC when none) or Unix seconds as an aware datetime; None when it is not
    one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            return datetime.fromtimestamp(value, timezone.utc)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value.strip():
        try:
            found = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        return found if found.tzinfo is not None else found.replace(tzinfo=timezone.utc)
    return None


def text_field(value: Any) -> str | None:
    """A non-empty string, stripped, or None."""
    return value.strip() if isinstance(value, str) and value.strip() else None


@dataclass
class _Known:
    """A key an earlier import stored (or this run planned): its memory, its text and version."""

    memory_id: str | None
    content: str
    order: float | None


@dataclass
class Supersession:
    """A newer version of a key: the facade supersedes ``old`` with ``content`` and ``fields`` (the lifecycle's
    rules), then :meth:`Run.superseded` records the new memory."""

    reported: ImportItem
    old: str
    content: str
    fields: dict[str, Any]
    reason: str
    key: str


@dataclass
class Batch:
    """What one file writes: its new memories and triples (one atomic write), then its supersessions."""

    document: Document
    memories: list[Memory] = field(default_factory=list)
    triples: list[Triple] = field(default_factory=list)
    supersessions: list[Supersession] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.memories and not self.triples and not self.supersessions


class Run:
    """One import: reads documents with the system's module, decides per item against what is stored, builds
    each file's :class:`Batch` and the report. Writes nothing (the facade does)."""

    def __init__(self, system: str, agent: str, *, scope: Scope, vocab: Vocabulary,
                 scrub: Callable[[str, Counter[str]], str], now: datetime, expiry: Expiry, project: str, dry_run: bool,
                 progress: Callable[[str, int, int | None], None] | None = None,
                 find: Callable[[str], list[tuple[int, int, str]]] | None = None,
                 root: str | os.PathLike[str] | None = None) -> None:
        self.system, self.agent, self.scope, self.vocab = system, agent, scope, vocab
        self.importer = module(system)
        self._scrub, self._now, self._expiry, self._project = scrub, now, expiry, project
        self._find = find
        self._root = _posix(os.path.abspath(os.fspath(root))) if root is not None else None
        self.report = ImportReport(system=system, agent=agent, dry_run=dry_run)
        self._progress = progress
        self._known: dict[str, _Known] = {}
        self._redacted: Counter[str] = Counter()
        self._nodes: set[str] = set()  # entity nodes the graph holds
        self._links: set[tuple[str, str, str]] = set()  # relation triples the graph holds
        self._done = 0
        self._total = 0
        self._p_name, self._p_type = vocab.predicate("name"), vocab.predicate("entityType")
        self._p_about, self._entity_class = vocab.predicate("about"), vocab.predicate("Entity")

    # -- what is stored ------------------------------------------------------------------------

    def remember(self, memories: Sequence[Memory]) -> None:
        """The agent's current imported memories: those of this system are known by their key (the newest of a
        key wins)."""
        for memory in sorted(memories, key=lambda m: m.created_at):
            origin = (memory.metadata or {}).get("import")
            if not isinstance(origin, dict) or origin.get("system") != self.system or memory.superseded:
                continue
            key = origin.get("key")
            order = origin.get("order")
            if isinstance(key, str):
                self._known[key] = _Known(memory.id, memory.content,
                                          float(order) if isinstance(order, (int, float)) else None)
                if _GLUED_DIGEST.search(key):  # a key made before the digest was set apart: the same item
                    self._known[f"{key[:-17]} {key[-17:]}"] = self._known[key]

    def graph_query(self) -> str:
        """A SPARQL query of the entity triples of the agent's graph (``?s ?p ?o``), for :meth:`remember_graph`."""
        prefix = json.dumps(self.vocab.entity_prefix(self.scope))
        return (f"SELECT ?s ?p ?o WHERE {{ GRAPH {self.vocab.graph(self.scope)} {{ ?s {RDF_TYPE} {self._entity_class} "
                f". ?s ?p ?o }} FILTER(STRSTARTS(STR(?s), {prefix})) }}")

    def remember_graph(self, rows: Sequence[tuple[str, str, str]]) -> None:
        """The entity nodes and relation triples the agent's graph holds (rows of :meth:`graph_query`)."""
        for s, p, o in rows:
            self._nodes.add(s)
            if self.vocab.relation_type(p) is not None:
                self._links.add((s, p, o))

    # -- reading -------------------------------------------------------------------------------

    def read(self, files: Sequence[Document]) -> list[tuple[Document, Parsed]]:
        """Each file's items. A file that is not in the system's format (or not text) is reported as failed, the
        others read; a single such file raises :class:`InvalidInputError` naming it and what it looks like."""
        out = []
        self.report.files = [f.name for f in files]
        for document in files:
            try:
                text = text_of(document)
                check_format(self.system, document.name, text)
                parsed = self.importer.parse(document, text)
            except InvalidInputError as exc:
                if len(files) == 1:
                    raise
                self.report.failed.append(ImportItem(where=document.name, reason=exc.reason))
                continue
            out.append((document, parsed))
        self._total = sum(p.count for _, p in out)
        return out

    # -- deciding ------------------------------------------------------------------------------

    def plan(self, document: Document, parsed: Parsed) -> Batch:
        """What ``document``'s items become: the report's entries, and the batch to write (nothing in a dry run
        but the report)."""
        report, batch = self.report, Batch(document)
        parsed = self._clean(parsed)
        report.skipped.extend(parsed.skipped)
        report.failed.extend(parsed.failed)
        latest: dict[str, Item] = {}
        for item in self._here(parsed.items):  # the same key twice in a file: the newest (the later line on a tie)
            before = latest.get(item.key)
            if before is not None and before.order is not None and item.order is not None and item.order < before.order:
                report.skipped.append(ImportItem(where=item.where, key=item.key, reason=f"{before.where} has the "
                                                 "same key and is newer (same key: latest wins)"))
                self._tick()
                continue
            if before is not None:
                report.skipped.append(ImportItem(where=before.where, key=before.key, reason=f"{item.where} has the "
                                                 "same key and is newer (same key: latest wins)"))
                self._tick()
            latest[item.key] = item
        about: list[tuple[Memory, str]] = []
        for item in latest.values():
            self._decide(document, item, batch, about)
            self._tick()
        self._graph(parsed, batch, about)
        report.redacted = dict(self._redacted)
        return batch

    def _here(self, items: Sequence[Item]) -> Iterator[Item]:
        """The items that apply to the project the import runs for: those naming no directory, or one inside the
        project's root (the others skipped, naming theirs)."""
        for item in items:
            if item.applies_to is None or self._root is None or _inside(_posix(item.applies_to), self._root):
                yield item
                continue
            self.report.skipped.append(ImportItem(where=item.where, key=item.key, reason=f"applies to "
                                                  f"{item.applies_to[:200]}, not to this project ({self._root})"))
            self._tick()

    def _clean(self, parsed: Parsed) -> Parsed:
        """``parsed`` with the secrets of every text replaced at the entry boundary, before anything is derived
        from it: each item's content, key, place, entity, tags and the system's fields (keys and values,
        recursively), the entities' names and types and the relations. A key derived from the text (a Beads
        slug of its first 60 characters) loses what it kept of a secret of the text too."""
        counts, scrub = self._redacted, self._scrub

        def deep(value: Any, depth: int = 0) -> Any:
            if isinstance(value, str):
                return scrub(value, counts)
            if depth > 64:
                return value
            if isinstance(value, dict):
                return {deep(k, depth + 1) if isinstance(k, str) else k: deep(v, depth + 1) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(deep(v, depth + 1) for v in value)
            return value

        items = []
        for item in parsed.items:
            secrets = [item.content[a:b] for a, b, _ in self._find(item.content)] if self._find is not None else []
            items.append(replace(item, content=scrub(item.content, counts), where=scrub(item.where, counts),
                                 key=_unleaked(_scrub_key(item.key, scrub, counts), secrets),
                                 about=scrub(item.about, counts) if item.about is not None else None,
                                 tags=[t for t in item.tags if not isinstance(t, str) or scrub(t, counts) == t],
                                 fields=deep(item.fields)))
        entities: dict[str, list[str]] = {}
        for name, types in parsed.entities.items():
            kept = entities.setdefault(scrub(name, counts), [])
            kept.extend(t for t in (scrub(t, counts) for t in types) if t not in kept)
        relations = [Relation(scrub(r.where, counts), scrub(r.source, counts), scrub(r.type, counts),
                              scrub(r.target, counts)) for r in parsed.relations]
        return Parsed(items, entities, relations, parsed.skipped, parsed.failed)

    def _decide(self, document: Document, item: Item, batch: Batch, about: list[tuple[Memory, str]]) -> None:
        report = self.report
        content = item.content  # redacted by _clean
        known = self._known.get(item.key)
        if known is not None:
            if item.order is not None and known.order is not None and item.order < known.order:
                why = f"older than memory {known.memory_id} of the same key" if known.memory_id else \
                    "older than an item of the same key read before"
                report.skipped.append(ImportItem(where=item.where, key=item.key, memory_id=known.memory_id, reason=why))
                return
            if content == known.content or (item.order is not None and item.order == known.order):
                report.skipped.append(ImportItem(where=item.where, key=item.key, memory_id=known.memory_id,
                                                 reason="already imported"))
                return
        entry = self._entry(document, item, content)
        try:
            memory = memory_from_entry(self.agent, entry, self._now, self._expiry, author=self.agent)
        except InvalidInputError as exc:
            report.failed.append(ImportItem(where=item.where, key=item.key, reason=str(exc)))
            return
        dry = report.dry_run
        if known is None:
            batch.memories.append(memory)
            if item.about is not None:
                about.append((memory, item.about))
            reported = ImportItem(where=item.where, key=item.key, memory_id=None if dry else memory.id)
            report.imported.append(reported)
            self._known[item.key] = _Known(None if dry else memory.id, content, item.order)
            return
        fields: dict[str, Any] = {k: entry[k] for k in ("type", "tags", "metadata", "source") if k in entry}
        valid_from = item.changed_at or item.created_at
        if valid_from is not None and valid_from <= self._now:
            fields["valid_from"] = valid_from
        reported = ImportItem(where=item.where, key=item.key, supersedes=known.memory_id)
        report.imported.append(reported)
        if known.memory_id is not None:
            batch.supersessions.append(Supersession(reported, known.memory_id, content, fields,
                                                    f"{self.system} {item.where}: a newer version of {item.key}"[:2000],
                                                    item.key))
        self._known[item.key] = _Known(None, content, item.order)

    def _entry(self, document: Document, item: Item, content: str) -> dict[str, Any]:
        """The ``store`` entry of an item: source ``import``, the system and its own tags, and its origin (system,
        file, where, key) in metadata with the system's own fields."""
        origin: dict[str, Any] = {"system": self.system, "file": document.name, "where": item.where, "key": item.key}
        if item.order is not None:
            origin["order"] = item.order
        metadata: dict[str, Any] = {"import": origin}
        if item.fields:
            metadata[self.system] = item.fields
        entry: dict[str, Any] = {"content": content, "type": item.type, "project": self._project,
                                 "source": Source.IMPORT, "tags": tags_of(item.tags, self.system),
                                 "metadata": metadata, "last_used_at": self._now}
        if item.created_at is not None:
            entry["created_at"] = item.created_at
        if item.expires_at is not None:
            entry["expires_at"] = item.expires_at
        return entry

    def _graph(self, parsed: Parsed, batch: Batch, about: list[tuple[Memory, str]]) -> None:
        """The entity nodes, relations and ``about`` links of a file (entities and relations already there are
        written again: RDF keeps one copy)."""
        vocab, scope, report = self.vocab, self.scope, self.report
        for name, types in parsed.entities.items():
            node = vocab.entity(scope, name)
            batch.triples += [Triple(node, RDF_TYPE, self._entity_class), Triple(node, self._p_name, Literal(name)),
                              *(Triple(node, self._p_type, Literal(t)) for t in types)]
            if node.value not in self._nodes:
                self._nodes.add(node.value)
                report.entities += 1
        seen: dict[tuple[str, str, str], str] = {}
        for relation in parsed.relations:
            s, p = vocab.entity(scope, relation.source), vocab.relation(relation.type)
            o = vocab.entity(scope, relation.target)
            triple = (s.value, p.value, o.value)
            if triple in seen:
                report.skipped.append(ImportItem(where=relation.where, key=relation.key, kind="relation",
                                                 reason=f"repeats {seen[triple]}"))
            elif triple in self._links:
                report.skipped.append(ImportItem(where=relation.where, key=relation.key, kind="relation",
                                                 reason="already imported"))
            else:
                batch.triples.append(Triple(s, p, o))
                report.imported.append(ImportItem(where=relation.where, key=relation.key, kind="relation"))
                self._links.add(triple)
            seen.setdefault(triple, relation.where)
            self._tick()
        for memory, name in about:
            batch.triples.append(Triple(vocab.memory(scope, memory.id), self._p_about, vocab.entity(scope, name)))

    def superseded(self, supersession: Supersession, new: Memory) -> None:
        """Record the memory that superseded ``supersession.old``."""
        supersession.reported.memory_id = new.id
        known = self._known.get(supersession.key)
        if known is not None:
            known.memory_id = new.id

    def failed_write(self, supersession: Supersession, reason: str) -> None:
        """A supersession the lifecycle refused (the memory changed meanwhile, say): reported as failed."""
        self.report.imported.remove(supersession.reported)
        self.report.failed.append(supersession.reported.model_copy(update={"reason": reason, "supersedes": None}))

    def _tick(self) -> None:
        self._done += 1
        if self._progress is not None and (self._done % PROGRESS_EVERY == 0 or self._done == self._total):
            self._progress("import", self._done, self._total)

    def finished(self) -> None:
        """Tell the progress bar the run is done."""
        if self._progress is not None:
            self._progress("import", self._total, self._total)


def _posix(path: str) -> str:
    """A directory as a comparable string: ``~`` expanded, ``\\`` as ``/``, ``.`` and ``..`` resolved (a group of
    ``/work/shop/../other`` is not the shop's), no trailing ``/``."""
    return posixpath.normpath(os.path.expanduser(path.strip()).replace("\\", "/")).rstrip("/") or "/"


def _inside(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or under it (a Windows path compared without case)."""
    if re.match(r"[A-Za-z]:/", path):
        path, root = path.lower(), root.lower()
    return path == root or path.startswith(root.rstrip("/") + "/")


def _scrub_key(key: str, scrub: Callable[[str, Counter[str]], str], counts: Counter[str]) -> str:
    """``key`` redacted, a :func:`digest` it ends with (``<text>#<digest>``) apart: glued to the text's last value
    the digest would make a placeholder (``API_KEY=changeme``) look like a secret."""
    found = _DIGEST_TAIL.search(key)
    if found is None:
        return scrub(key, counts)
    return scrub(key[:found.start()], counts) + found.group(0)


def _unleaked(key: str, secrets: Sequence[str]) -> str:
    """``key`` without what it kept of any of ``secrets`` (a key derived from the text: the start of a secret,
    as it is or as a slug, at least 8 characters of it), each such fragment replaced by ``redacted``."""
    for secret in secrets:
        for form in (secret, _SLUG_BREAK.sub("-", secret.lower())):
            lowered = key.lower()
            for length in range(len(form), 7, -1):
                at = lowered.find(form[:length].lower())
                if at >= 0:
                    key = key[:at] + "redacted" + key[at + length:]
                    break
    return key


#: What a slug turns into ``-`` (letters and digits are kept).
_GLUED_DIGEST = re.compile(r"[^ ]#[0-9a-f]{16}$")
_DIGEST_TAIL = re.compile(r"#[0-9a-f]{16}$")
_SLUG_BREAK = re.compile(r"[^a-z0-9]+")


def entity_name(value: Any) -> str | None:
    """An entity's name when it is a usable one (a non-empty string of at most :data:`MAX_NAME_CHARS`)."""
    return value if isinstance(value, str) and value.strip() and len(value) <= MAX_NAME_CHARS else None


__all__ = ["Batch", "Document", "Item", "MAX_FILE_BYTES", "Parsed", "Relation", "Run", "Supersession", "check_format",
           "clean_name", "digest", "documents", "entity_name", "first_objects", "json_lines", "markdown_like", "moment",
           "slug", "tags_of", "text_of", "text_field", "whole_json"]
