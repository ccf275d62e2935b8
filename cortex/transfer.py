"""Export and import of memory graphs as RDF files (docs/export.md).

* An export is the quads of the chosen scopes' graphs exactly as stored: every field, earlier versions,
  supersession, tags, metadata, scopes and authors; never the change log (bookkeeping of this store). TriG and
  N-Quads keep the graphs (several scopes in one file); Turtle holds one scope's graph; JSON-LD keeps the graphs
  with a context of the Cortex prefixes.
* An import checks the whole file before anything is written: every graph is a Cortex scope graph, every
  subject a memory of that graph or an earlier version of one, every memory readable (the fields and types
  Cortex writes), no memory already in the store. The report names the focus node, the property and the
  problem, and nothing is imported (:func:`parse` reads, :func:`check` judges). Every scope of the file is written
  all or nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import IO, Any

import pyoxigraph as ox

from cortex.errors import InvalidInputError
from cortex.model import Memory, Scope, Violation
from cortex.store.rdf import MemoryCodec
from cortex.validation import check_confidence, check_content, check_metadata, check_tags
from cortex.vocab import Vocabulary, date_time, integer

FORMATS: dict[str, ox.RdfFormat] = {"trig": ox.RdfFormat.TRIG, "nquads": ox.RdfFormat.N_QUADS,
                                     "turtle": ox.RdfFormat.TURTLE, "jsonld": ox.RdfFormat.JSON_LD}
MEDIA_TYPES = {"trig": "application/trig", "nquads": "application/n-quads", "turtle": "text/turtle",
               "jsonld": "application/ld+json"}
EXTENSIONS = {".trig": "trig", ".nq": "nquads", ".nquads": "nquads", ".ttl": "turtle", ".turtle": "turtle",
              ".jsonld": "jsonld", ".json": "jsonld"}
#: How many problems an import report lists (the count says how many there were).
MAX_REPORTED = 20
MAX_COUNT = 2**53  # usage counts and versions: what store_many accepts (an increment never overflows)

#: How often (in quads) a reading import reports its progress.
PROGRESS_EVERY = 50_000
#: Problems collected before reading stops (the report lists :data:`MAX_REPORTED` of them).
MAX_PROBLEMS = 10 * MAX_REPORTED
#: Triples of predicates Cortex does not write that an imported memory may carry (each one is read and rewritten
#: with the memory by every update under the store's write lock).
MAX_FOREIGN_TRIPLES = 256
#: Deepest nesting an import may have (JSON objects and arrays, or RDF 1.2 ``<<`` terms), checked before a parser
#: sees the file: pyoxigraph's parsers overflow their stacks on ~20,000.
MAX_NESTING = 64

#: ``progress(stage, done, total)``: what a long export or import has done (total None when unknown).
Progress = Callable[[str, int, int | None], None]


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


def write(quads: Iterable[ox.Quad], out: IO[bytes], format: str, vocab: Vocabulary, *, graphs: int,
          progress: Progress | None = None, total: int | None = None) -> int:
    """Serialise ``quads`` (of ``graphs`` graphs) to ``out``, streaming; returns how many were written.
    ``progress("export", memories, total)`` every :data:`PROGRESS_EVERY` quads (memories: ``rdf:type
    Memory`` subjects written so far)."""
    if format == "turtle" and graphs > 1:
        raise InvalidInputError("format", "turtle holds one graph; export one scope, or use trig, nquads or "
                                          "jsonld for several")
    count = memories = 0
    memory_class = vocab.memory_class

    def counted() -> Iterator[Any]:
        nonlocal count, memories
        for quad in quads:
            count += 1
            if progress is not None and count % PROGRESS_EVERY == 0:
                progress("export", memories, total)
            yield quad.triple if format == "turtle" else quad
            if progress is not None and quad.object == memory_class:
                memories += 1

    if format == "jsonld":  # the expanded document, under a context that declares the Cortex prefixes
        out.write(b'{"@context": ' + json.dumps(prefixes(vocab), sort_keys=True).encode() + b', "@graph": ')
        ox.serialize(counted(), out, FORMATS[format])
        out.write(b"}\n")
    else:
        ox.serialize(counted(), out, FORMATS[format], prefixes=prefixes(vocab))
    if progress is not None:
        progress("export", memories, memories)
    return count


class InvalidDataError(InvalidInputError):
    """An import that does not hold Cortex memories as Cortex writes them: ``violations`` says where."""

    def __init__(self, violations: list[Violation]) -> None:
        self.violations = violations
        shown = "; ".join(str(v) for v in violations[:MAX_REPORTED])
        more = f" (and {len(violations) - MAX_REPORTED} more)" if len(violations) > MAX_REPORTED else ""
        super().__init__("file", f"{len(violations)} problem(s), nothing imported: {shown}{more}")


#: A shapes check over the file's subjects (each with its object terms by predicate IRI), e.g.
#: :meth:`cortex.shapes.NativeShapes.check`.
ShapesCheck = Callable[[Iterable[tuple[str, Mapping[str, Sequence[Any]]]]], list[Violation]]


@dataclass
class Parsed:
    """An import file read and grouped (:func:`parse`), not yet judged (:func:`check`)."""

    #: each scope's quads, as they are to be written
    quads: dict[Scope, list[ox.Quad]]
    #: each scope's subjects with their object terms by predicate IRI
    subjects: dict[Scope, dict[str, dict[str, list[Any]]]]
    #: problems found while reading (the check adds its own, and reports them all)
    problems: list[Violation]
    #: whether the quads to write are exactly the file's (no quad moved to another graph)
    verbatim: bool


def parse(data: bytes | IO[bytes], format: str, vocab: Vocabulary, *, graph: Scope | None = None,
          progress: Progress | None = None) -> Parsed:
    """Read an import: each quad goes to the scope whose graph (or provenance graph) holds it, grouped by
    subject. ``graph``: the scope a Turtle file (triples, no graph) goes to. A file that is not valid
    ``format`` raises :class:`InvalidInputError`; everything else wrong is in ``problems``."""
    if not isinstance(data, bytes):
        data = data.read()
    check_nesting(data, format)  # before any parser sees it: pyoxigraph's overflow their stacks
    try:
        parsed = group(ox.parse(data, FORMATS[format]), vocab, graph=graph, progress=progress)
    except SyntaxError as exc:
        raise InvalidInputError("file", f"is not valid {format}: {exc}") from None
    parsed.verbatim = parsed.verbatim and format in ("trig", "nquads")
    return parsed


_JSON_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)
#: A file of the Turtle family with at most this many ``<<`` cannot nest terms deeply enough to crash the parser
#: (pyoxigraph's TriG parser crashes between 10,000 and 20,000 levels of ``<<( )>>``, in a thread too).
SAFE_TERM_OPENINGS = 2_000
_PARSE_CHECK = """
import sys, pyoxigraph
for _ in pyoxigraph.parse(sys.stdin.buffer.read(), pyoxigraph.RdfFormat.from_extension(sys.argv[1])):
    pass
"""


def check_nesting(data: bytes, format: str) -> None:
    """Refuse a file nested deeper than a parser takes, before any parser of this process reads it. JSON-LD: its
    objects and arrays are counted outside strings (JSON's lexical rules leave no doubt where a string ends), at
    most :data:`MAX_NESTING` levels. The Turtle family, whose lexical rules (prefixed-name escapes, long strings)
    a scan could read otherwise than the parser: a file with more than :data:`SAFE_TERM_OPENINGS` ``<<`` is parsed
    first in a process of its own, and refused if that process dies."""
    if format == "jsonld":
        if data.count(b"[") + data.count(b"{") <= MAX_NESTING:
            return
        depth = 0
        for match in _JSON_TOKENS.finditer(data):
            token = match.group()
            if token in (b"[", b"{"):
                depth += 1
                if depth > MAX_NESTING:
                    line = data.count(b"\n", 0, match.start()) + 1
                    raise InvalidInputError("file", f"is nested more than {MAX_NESTING} levels deep (line {line}); "
                                                    f"Cortex exports nest a few levels")
            elif token in (b"]", b"}"):
                depth -= 1
        return
    if data.count(b"<<") <= SAFE_TERM_OPENINGS:
        return
    import subprocess
    import sys

    extension = {"trig": "trig", "nquads": "nq", "turtle": "ttl"}[format]
    try:
        done = subprocess.run([sys.executable, "-c", _PARSE_CHECK, extension], input=data, capture_output=True,
                              timeout=600)
    except subprocess.TimeoutExpired:
        raise InvalidInputError("file", "could not be parsed within 10 minutes") from None
    if done.returncode < 0:  # the parser crashed (a signal), not a syntax error
        raise InvalidInputError("file", f"is nested more deeply than the RDF parser can read (it holds "
                                        f"{data.count(b'<<')} '<<'); Cortex exports hold no RDF 1.2 terms")


def fold_uses(parsed: Parsed, vocab: Vocabulary) -> None:
    """Fold each imported memory's use triples (``agentmem:used``, written one per use by a shared store) into its
    ``usageCount`` and ``lastUsedAt``: the memory reads the same, and its record stays bounded (a popular memory
    on a shared store has thousands)."""
    codec = MemoryCodec(vocab)
    used = codec.p_used.value
    count, last = vocab.predicate("usageCount"), vocab.predicate("lastUsedAt")
    for scope, subjects in parsed.subjects.items():
        folded: dict[str, tuple[ox.Literal, ox.Literal]] = {}
        for subject, props in subjects.items():
            if used not in props:
                continue
            memory_id = vocab.memory_id(scope, subject)
            memory = codec.decode(scope, memory_id, ((p, _lexical(o)) for p, values in props.items() for o in values)) \
                if memory_id is not None else None
            if memory is None:
                continue  # the check reports it
            folded[subject] = (integer(memory.usage_count), date_time(memory.last_used_at))
            props.pop(used)
            props[count.value], props[last.value] = [folded[subject][0]], [folded[subject][1]]
        if folded:
            parsed.verbatim = False
            graph = vocab.graph(scope)
            kept = [q for q in parsed.quads[scope] if not (isinstance(q.subject, ox.NamedNode) and q.subject.value
                                                           in folded and q.predicate.value in (used, count.value,
                                                                                               last.value))]
            kept += [ox.Quad(ox.NamedNode(subject), predicate, value, graph) for subject, values in folded.items()
                     for predicate, value in zip((count, last), values)]
            parsed.quads[scope] = kept


def group(source: Iterable[ox.Quad], vocab: Vocabulary, *, graph: Scope | None = None,
          progress: Progress | None = None) -> Parsed:
    """Quads (of a file, or of a store's scopes) grouped by scope and subject, as :func:`check` judges them."""
    log_graph = f"{vocab.ns}:graph:log"
    activity_prefix = f"{vocab.ns}:activity:"
    target = vocab.graph(graph) if graph is not None else None
    problems: list[Violation] = []
    verbatim = True
    # one pass over the parsed quads: each quad's terms are read once, grouped by graph and subject; what a
    # graph's quads go to is worked out once per graph (the hot loop does one dict lookup per quad for it)
    quads_of: dict[Scope, list[ox.Quad]] = {}
    subjects_of: dict[Scope, dict[str, dict[str, list[Any]]]] = {}
    #: graph IRI (None: the default graph) -> (scope, its quads, its subjects, its activities' prefix, the
    #: provenance graph, whether this graph is a provenance graph); scope None: not a Cortex scope graph
    graphs: dict[str | None, tuple[Scope | None, list[ox.Quad], dict[str, dict[str, list[Any]]], str, Any, bool]] = {}
    named, default = ox.NamedNode, ox.DefaultGraph
    count = 0
    for quad in source:
        count += 1
        if progress is not None and count % PROGRESS_EVERY == 0:
            progress("read", count, None)
        g = quad.graph_name
        key = g.value if type(g) is named else None
        if key is None and target is not None and type(g) is default:
            quad = ox.Quad(quad.subject, quad.predicate, quad.object, target)
            key, verbatim = target.value, False
        where_to = graphs.get(key)
        if where_to is None:
            scope = (vocab.scope_of_graph(key) or vocab.scope_of_prov_graph(key)) if key is not None else None
            if scope is None:
                where_to = (None, [], {}, "", None, False)
            else:
                if scope not in quads_of:
                    quads_of[scope], subjects_of[scope] = [], {}
                prov_graph = vocab.prov_graph(scope)
                where_to = (scope, quads_of[scope], subjects_of[scope], f"{activity_prefix}{scope.key}:",
                            prov_graph, key == prov_graph.value)
            graphs[key] = where_to
        scope, quads, subjects, scope_activities, prov, in_prov = where_to
        if scope is None:
            where = "the default graph" if type(g) is default else str(g)
            hint = " (Turtle has no graphs: name the scope it goes to)" if type(g) is default else ""
            reason = "the change log of another store is not imported" if key == log_graph \
                else f"{where} is not a Cortex scope graph{hint}"
            problems.append(Violation(str(quad.subject), "graph", reason))
            if len(problems) > MAX_PROBLEMS:
                break
            continue
        subject = quad.subject
        if type(subject) is not named:
            problems.append(Violation(str(subject), str(quad.predicate), "Cortex subjects are IRIs"))
            if len(problems) > MAX_PROBLEMS:
                break
            continue
        if type(quad.object) is ox.Triple:
            problems.append(Violation(subject.value, f"<{quad.predicate.value}>", "an RDF 1.2 triple term is not "
                                      "memory data (Cortex writes none, and JSON-LD cannot carry one)"))
            if len(problems) > MAX_PROBLEMS:
                break
            continue
        name = subject.value
        if name.startswith(scope_activities):
            if not in_prov:  # an activity goes to its scope's provenance graph
                quad, verbatim = ox.Quad(subject, quad.predicate, quad.object, prov), False
        elif in_prov:
            problems.append(Violation(name, "graph", "a provenance graph holds activities only"))
            continue
        quads.append(quad)
        props = subjects.get(name)
        if props is None:
            props = subjects[name] = {}
        predicate = quad.predicate.value
        values = props.get(predicate)
        if values is None:
            props[predicate] = [quad.object]
        else:
            values.append(quad.object)
    if progress is not None:
        progress("read", count, count)
    return Parsed(quads_of, subjects_of, problems, verbatim)


def check(parsed: Parsed, vocab: Vocabulary, *, existing: Callable[[Scope], Container[str]] | None = None,
          shapes: ShapesCheck | None = None, progress: Progress | None = None,
          elsewhere: Callable[[str], Scope | None] | None = None) -> dict[Scope, list[Memory]]:
    """Judge a parsed import: the memories of each scope. ``existing(scope)``: the memory ids the store holds
    there (importing one again is a conflict); ``elsewhere(id)``: the scope of the store that holds that id, if
    any (ids are unique in a store: every surface finds a memory by its id alone). ``shapes``: a SHACL check of
    every subject. Raises :class:`InvalidDataError` listing the problems (the parse's too); writes nothing."""
    codec = MemoryCodec(vocab)
    problems = list(parsed.problems)
    out: dict[Scope, list[Memory]] = {}
    scope_of: dict[str, Scope] = {}
    done, total = 0, sum(len(subjects) for subjects in parsed.subjects.values())
    for scope, subjects in parsed.subjects.items():
        version_prefix = f"{vocab.ns}:version:{scope.key}:"
        activity_prefix = f"{vocab.ns}:activity:{scope.key}:"
        entity_prefix = vocab.entity_prefix(scope)
        memories: list[Memory] = []
        stored = existing(scope) if existing is not None else None
        memory_prefix = vocab.memory_prefix(scope)
        for subject, props in subjects.items():
            done += 1
            if progress is not None and done % (PROGRESS_EVERY // 10) == 0:
                progress("check", done, total)
            if subject.startswith(version_prefix):  # an earlier version: kept as it is, read by history
                owner = subject[len(version_prefix):].rsplit(":", 1)[0]
                if memory_prefix + owner not in subjects:
                    problems.append(Violation(subject, "@id", f"a version of memory {owner!r}, which the file "
                                                              f"does not hold in {scope.key}"))
                continue
            if subject.startswith(activity_prefix):  # the activity of a write (PROV-O): checked by the shapes
                continue
            if subject.startswith(entity_prefix):  # an entity an import brought, with its relations: the shapes'
                continue
            memory_id = vocab.memory_id(scope, subject)
            if memory_id is None:
                problems.append(Violation(subject, "@id", f"not a memory, a version of one, an activity or an "
                                                          f"entity of {scope.key}"))
                continue
            memory = _decode(codec, scope, memory_id, subject, props, problems)
            if memory is None:
                continue
            if stored is not None and memory_id in stored:
                problems.append(Violation(subject, "@id", "this memory is in the store already (import into an "
                                                          "empty store, or forget it first)"))
                continue
            other = scope_of.setdefault(memory_id, scope)
            if other == scope and elsewhere is not None:
                other = elsewhere(memory_id) or scope
            if other != scope:
                problems.append(Violation(subject, "@id", f"memory {memory_id!r} is in {other.key} too: an id names "
                                                          f"one memory in a store"))
                continue
            memories.append(memory)
        problems += _cycles(memories, vocab, scope)
        out[scope] = memories
    if progress is not None:
        progress("check", total, total)
    if shapes is not None and len(problems) <= MAX_PROBLEMS:
        problems += shapes(item for subjects in parsed.subjects.values() for item in subjects.items())
    if problems:
        raise InvalidDataError(problems)
    return out


def _cycles(memories: Sequence[Memory], vocab: Vocabulary, scope: Scope) -> list[Violation]:
    """A problem for each memory of a supersession cycle (A replaced by B ... replaced by A)."""
    successor = {m.id: m.superseded_by for m in memories if m.superseded_by is not None}
    found = []
    for start in successor:
        seen, current = {start}, successor.get(start)
        while current is not None and current not in seen:
            seen.add(current)
            current = successor.get(current)
        if current == start:
            found.append(Violation(str(vocab.memory(scope, start)), "<http://purl.org/dc/terms/isReplacedBy>",
                                   "supersession runs in a cycle back to this memory"))
    return found


def _decode(codec: MemoryCodec, scope: Scope, memory_id: str, subject: str, props: Mapping[str, list[Any]],
            problems: list[Violation]) -> Memory | None:
    """The memory the subject's values (object terms by predicate IRI) describe, or None with the problem
    recorded."""
    content = props.get(codec.vocab.predicate("content").value, ())
    if len(content) != 1:
        problems.append(Violation(subject, str(codec.vocab.predicate("content")),
                                  f"a memory has exactly one content, not {len(content)}"))
        return None
    # tags, uses on a shared store, and the memories a consolidated one was derived from: one triple each
    many = (codec.p_tag.value, codec.p_used.value, codec.p_derived.value, codec.p_about.value)
    for predicate, values in props.items():
        if len(values) > 1 and predicate not in many:
            problems.append(Violation(subject, f"<{predicate}>", "has more than one value"))
            return None
    foreign = sum(len(values) for predicate, values in props.items() if predicate not in codec.known)
    if foreign > MAX_FOREIGN_TRIPLES:
        problems.append(Violation(subject, "(triples)", f"has {foreign} triples of predicates Cortex does not "
                                                        f"write; at most {MAX_FOREIGN_TRIPLES} go with a memory"))
        return None
    errors: list[str] = []
    memory = codec.decode(scope, memory_id, ((p, _lexical(o)) for p, values in props.items() for o in values),
                          errors=errors)
    if memory is None:
        why = errors[0] if errors else "a value is not of the type Cortex writes (a number, a date, a known type or " \
                                       "source)"
        problems.append(Violation(subject, "(fields)", why))
        return None
    vocab = codec.vocab
    checks: list[tuple[str, Callable[[], object]]] = [
        (vocab.predicate("content").value, lambda: check_content(memory.content)),
        (vocab.predicate("confidence").value, lambda: check_confidence(memory.confidence)),
        (vocab.predicate("usageCount").value, lambda: _bounded(memory.usage_count, 0, "usage count")),
        (vocab.predicate("usedCount").value, lambda: _bounded(memory.used_count, 0, "used count")),
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


__all__ = ["EXTENSIONS", "FORMATS", "MEDIA_TYPES", "InvalidDataError", "Parsed", "Progress", "ShapesCheck",
           "Violation", "check", "format_of", "parse", "prefixes", "write"]
