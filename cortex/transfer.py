"""Export and import of memory graphs as RDF files (docs/export.md).

* An export is the quads of the chosen scopes' graphs exactly as stored: every field, earlier versions,
  supersession, tags, metadata, scopes and authors; never the change log (bookkeeping of this store). TriG and
  N-Quads keep the graphs (several scopes in one file); Turtle holds one scope's graph; JSON-LD keeps the graphs
  with a context of the Cortex prefixes.
* An import checks the whole file before anything is written: every graph is a Cortex scope graph, every
  subject a memory of that graph or an earlier version of one, every memory readable (the fields and types
  Cortex writes), no memory already in the store. The report names the focus node, the property and the
  problem, and nothing is imported. Then every scope of the file is written in one atomic transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Iterator
from dataclasses import dataclass
from pathlib import PurePath
from typing import IO, Any

import pyoxigraph as ox

from cortex.errors import InvalidInputError
from cortex.model import Memory, Scope
from cortex.store.rdf import MemoryCodec
from cortex.validation import check_confidence, check_content, check_metadata, check_tags
from cortex.vocab import Vocabulary

FORMATS: dict[str, ox.RdfFormat] = {"trig": ox.RdfFormat.TRIG, "nquads": ox.RdfFormat.N_QUADS,
                                     "turtle": ox.RdfFormat.TURTLE, "jsonld": ox.RdfFormat.JSON_LD}
MEDIA_TYPES = {"trig": "application/trig", "nquads": "application/n-quads", "turtle": "text/turtle",
               "jsonld": "application/ld+json"}
EXTENSIONS = {".trig": "trig", ".nq": "nquads", ".nquads": "nquads", ".ttl": "turtle", ".turtle": "turtle",
              ".jsonld": "jsonld", ".json": "jsonld"}
#: How many problems an import report lists (the count says how many there were).
MAX_REPORTED = 20
MAX_COUNT = 2**53  # usage counts and versions: what store_many accepts (an increment never overflows)


def prefixes(vocab: Vocabulary) -> dict[str, str]:
    """The prefixes an export declares (readable Turtle/TriG, the JSON-LD context)."""
    return {"am": f"{vocab.ns}:agentmem:", "prov": "http://www.w3.org/ns/prov#",
            "dcterms": "http://purl.org/dc/terms/", "xsd": "http://www.w3.org/2001/XMLSchema#"}


def format_of(format: str | None, name: str | None = None) -> str:
    """The format named, or the one a file name's extension implies."""
    if format is not None:
        key = str(format).strip().lower().replace("-", "")
        if key in FORMATS:
            return key
        raise InvalidInputError("format", f"unknown format {format!r}; use one of {', '.join(FORMATS)}")
    suffix = PurePath(name).suffix.lower() if name else ""
    if suffix in EXTENSIONS:
        return EXTENSIONS[suffix]
    raise InvalidInputError("format", f"cannot tell the format of {name or 'the input'!r} from its extension; "
                                      f"give one of {', '.join(FORMATS)}")


def write(quads: Iterable[ox.Quad], out: IO[bytes], format: str, vocab: Vocabulary, *, graphs: int) -> int:
    """Serialise ``quads`` (of ``graphs`` graphs) to ``out``, streaming; returns how many were written."""
    if format == "turtle" and graphs > 1:
        raise InvalidInputError("format", "turtle holds one graph; export one scope, or use trig, nquads or "
                                          "jsonld for several")
    count = 0

    def counted() -> Iterator[Any]:
        nonlocal count
        for quad in quads:
            count += 1
            yield quad.triple if format == "turtle" else quad

    ox.serialize(counted(), out, FORMATS[format], prefixes=prefixes(vocab))
    return count


@dataclass(frozen=True)
class Violation:
    """One problem of an import: the focus node, the property (path) and what is wrong."""

    focus: str
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.focus} {self.path}: {self.message}"


class InvalidDataError(InvalidInputError):
    """An import that does not hold Cortex memories as Cortex writes them: ``violations`` says where."""

    def __init__(self, violations: list[Violation]) -> None:
        self.violations = violations
        shown = "; ".join(str(v) for v in violations[:MAX_REPORTED])
        more = f" (and {len(violations) - MAX_REPORTED} more)" if len(violations) > MAX_REPORTED else ""
        super().__init__("file", f"{len(violations)} problem(s), nothing imported: {shown}{more}")


def read(data: bytes | IO[bytes], format: str, vocab: Vocabulary, *, graph: Scope | None = None,
         existing: Callable[[Scope], Container[str]] | None = None
         ) -> dict[Scope, tuple[list[ox.Quad], list[Memory]]]:
    """Parse and check an import: the quads of each scope and the memories they describe. ``graph``: the
    scope a Turtle file (triples, no graph) goes to. ``existing(scope)``: the memory ids the store holds
    there (importing one again is a conflict). Raises :class:`InvalidDataError` listing the problems."""
    codec = MemoryCodec(vocab)
    log_graph = f"{vocab.ns}:graph:log"
    target = vocab.graph(graph) if graph is not None else None
    try:
        parsed = [ox.Quad(q.subject, q.predicate, q.object, target)
                  if target is not None and isinstance(q.graph_name, ox.DefaultGraph) else q
                  for q in ox.parse(data, FORMATS[format])]
    except SyntaxError as exc:
        raise InvalidInputError("file", f"is not valid {format}: {exc}") from None
    problems: list[Violation] = []
    by_scope: dict[Scope, dict[str, list[ox.Quad]]] = {}
    for quad in parsed:
        g = quad.graph_name
        scope = vocab.scope_of_graph(g.value) if isinstance(g, ox.NamedNode) else None
        if scope is None:
            where = "the default graph" if isinstance(g, ox.DefaultGraph) else str(g)
            hint = " (Turtle has no graphs: name the scope it goes to)" if isinstance(g, ox.DefaultGraph) else ""
            reason = "the change log of another store is not imported" if getattr(g, "value", "") == log_graph \
                else f"{where} is not a Cortex scope graph{hint}"
            problems.append(Violation(str(quad.subject), "graph", reason))
            continue
        if not isinstance(quad.subject, ox.NamedNode):
            problems.append(Violation(str(quad.subject), str(quad.predicate), "Cortex subjects are IRIs"))
            continue
        by_scope.setdefault(scope, {}).setdefault(quad.subject.value, []).append(quad)
        if len(problems) > 10 * MAX_REPORTED:
            break
    out: dict[Scope, tuple[list[ox.Quad], list[Memory]]] = {}
    for scope, subjects in by_scope.items():
        version_prefix = f"{vocab.ns}:version:{scope.key}:"
        memories: list[Memory] = []
        quads: list[ox.Quad] = []
        stored = existing(scope) if existing is not None else None
        memory_prefix = vocab.memory_prefix(scope)
        for subject, triples in subjects.items():
            quads += triples
            if subject.startswith(version_prefix):  # an earlier version: kept as it is, read by history
                owner = subject[len(version_prefix):].rsplit(":", 1)[0]
                if memory_prefix + owner not in subjects:
                    problems.append(Violation(subject, "@id", f"a version of memory {owner!r}, which the file "
                                                              f"does not hold in {scope.key}"))
                continue
            memory_id = vocab.memory_id(scope, subject)
            if memory_id is None:
                problems.append(Violation(subject, "@id", f"not a memory (or a version of one) of {scope.key}"))
                continue
            memory = _decode(codec, scope, memory_id, subject, triples, problems)
            if memory is None:
                continue
            if stored is not None and memory_id in stored:
                problems.append(Violation(subject, "@id", "this memory is in the store already (import into an "
                                                          "empty store, or forget it first)"))
                continue
            memories.append(memory)
        out[scope] = (quads, memories)
    if problems:
        raise InvalidDataError(problems)
    return out


def _decode(codec: MemoryCodec, scope: Scope, memory_id: str, subject: str, triples: list[ox.Quad],
            problems: list[Violation]) -> Memory | None:
    """The memory the triples describe, or None with the problem recorded."""
    content = [q for q in triples if q.predicate == codec.vocab.predicate("content")]
    if len(content) != 1:
        problems.append(Violation(subject, str(codec.vocab.predicate("content")),
                                  f"a memory has exactly one content, not {len(content)}"))
        return None
    single = {}
    for q in triples:
        if q.predicate.value in single and q.predicate != codec.p_tag:
            problems.append(Violation(subject, str(q.predicate), "has more than one value"))
            return None
        single[q.predicate.value] = q
    memory = codec.decode(scope, memory_id, ((q.predicate.value, _lexical(q.object)) for q in triples))
    if memory is None:
        problems.append(Violation(subject, "(fields)", "a value is not of the type Cortex writes (a number, a "
                                                       "date, a known type or source)"))
        return None
    vocab = codec.vocab
    checks: list[tuple[str, Callable[[], object]]] = [
        (vocab.predicate("content").value, lambda: check_content(memory.content)),
        (vocab.predicate("confidence").value, lambda: check_confidence(memory.confidence)),
        (vocab.predicate("usageCount").value, lambda: _bounded(memory.usage_count, 0, "usage count")),
        (vocab.predicate("version").value, lambda: _bounded(memory.version, 1, "version")),
        (vocab.predicate("tag").value, lambda: check_tags(memory.tags)),
        (vocab.predicate("metadata").value, lambda: check_metadata(memory.metadata)),
    ]
    for path, check in checks:
        try:
            check()
        except InvalidInputError as exc:
            problems.append(Violation(subject, path, exc.reason))
            return None
    return memory


def _bounded(value: int, least: int, what: str) -> None:
    if not least <= value <= MAX_COUNT:
        raise InvalidInputError(what, f"must be from {least} to 2**53, not {value}")


def _lexical(term: Any) -> str:
    return str(term) if isinstance(term, ox.Triple) else str(term.value)


__all__ = ["EXTENSIONS", "FORMATS", "MEDIA_TYPES", "InvalidDataError", "Violation", "format_of", "prefixes", "read", "write"]
