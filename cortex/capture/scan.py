"""A scan of a stored scope for secrets, and the rewrite that redacts them (``cortex secrets scan``,
:meth:`cortex.Cortex.scan_secrets`; docs/capture.md, "Scanning a store").

Everything a scope's graphs hold is read: each memory as it is now (content, metadata, tags, supersession
reason, through :func:`cortex.capture.scrub.scrub_memory`), each earlier version of it, and every other literal
of the scope's memory and provenance graphs (activities, consolidation runs with their undo journals, entity
names). :func:`plan` says what is found where, by rule, and the one write that replaces it: the current
memories as replacements (the repository re-embeds a changed content and records the write's activity), the
other literals as quads retracted and inserted. The secret itself is in no finding and no new quad.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pyoxigraph import Literal, NamedNode, Quad

from cortex.capture.redact import Redactor
from cortex.capture.scrub import scrub_memory, scrub_value
from cortex.model import Memory, Scope, SecretFinding
from cortex.store.rdf import RDF_JSON, MemoryCodec
from cortex.vocab import Vocabulary


@dataclass
class ScopePlan:
    """What a scan found in one scope and the write that redacts it."""

    scope: Scope
    findings: list[SecretFinding] = field(default_factory=list)
    #: (memory as stored, the same memory redacted, never archived)
    replaces: list[tuple[Memory, Memory, bool]] = field(default_factory=list)
    retract: list[Quad] = field(default_factory=list)
    insert: list[Quad] = field(default_factory=list)

    @property
    def total(self) -> Counter[str]:
        counts: Counter[str] = Counter()
        for finding in self.findings:
            counts.update(finding.rules)
        return counts

    @property
    def empty(self) -> bool:
        return not self.findings


def plan(redactor: Redactor, scope: Scope, memories: Iterable[Memory], quads: Iterable[Quad],
         vocab: Vocabulary, codec: MemoryCodec) -> ScopePlan:
    """The secrets of ``scope`` (its ``memories`` as stored and every quad of its graphs) and the write that
    replaces them."""
    out = ScopePlan(scope)
    current = {m.id: m for m in memories}
    touched: dict[str, Memory] = {}
    for memory in current.values():
        counts: Counter[str] = Counter()
        clean = scrub_memory(redactor, memory, counts)
        if counts:
            out.findings.append(SecretFinding(scope=scope.key, where="memory", memory_id=memory.id,
                                              version=memory.version, rules=dict(counts)))
            touched[memory.id] = clean
    version_prefix = codec.version_iri(scope, "X", 1).value[:-len("X:1")]
    by_place: dict[tuple[str, str | None, int | None], Counter[str]] = {}
    for quad in quads:
        subject, value = quad.subject, quad.object
        if not isinstance(value, Literal) or not isinstance(subject, NamedNode):
            continue
        if vocab.memory_id(scope, subject.value) is not None:
            continue  # a memory as it is now: replaced whole (above)
        counts = Counter()
        new = _scrubbed(redactor, value, counts)
        if not counts:
            continue
        place = _place(subject.value, version_prefix, vocab, scope, quad.graph_name)
        by_place.setdefault(place, Counter()).update(counts)
        out.retract.append(quad)
        if quad.predicate != codec.p_tag:  # a tag that held a secret goes: a placeholder is not a tag
            out.insert.append(Quad(subject, quad.predicate, new, quad.graph_name))
    for (where, memory_id, version), counts in sorted(by_place.items(), key=lambda x: (x[0][0], x[0][1] or "",
                                                                                       x[0][2] or 0)):
        out.findings.append(SecretFinding(scope=scope.key, where=where, memory_id=memory_id,  # type: ignore[arg-type]
                                          version=version, rules=dict(counts)))
        if memory_id is not None and memory_id in current and memory_id not in touched:
            touched[memory_id] = current[memory_id]  # its versions change: the write's activity names it
    out.replaces = [(current[i], new, False) for i, new in touched.items()]
    return out


def _place(subject: str, version_prefix: str, vocab: Vocabulary, scope: Scope,
           graph: object) -> tuple[str, str | None, int | None]:
    """Where a quad's subject is: an earlier version of a memory (its id and version), or another record."""
    if subject.startswith(version_prefix):
        memory_id, _, number = subject[len(version_prefix):].rpartition(":")
        if number.isdigit():
            return "version", memory_id, int(number)
    return ("provenance" if graph == vocab.prov_graph(scope) else "graph"), None, None


def _scrubbed(redactor: Redactor, value: Literal, counts: Counter[str]) -> Literal:
    """``value`` with its secrets replaced: a JSON value (metadata, a run's journal) member by member, so it stays
    JSON; other text as text. Its datatype or language stays."""
    text = value.value
    if not redactor.find(text):
        return value
    new: str | None = None
    if text[:1] in "{[":
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, (dict, list)):
            cleaned = scrub_value(redactor, parsed, counts)
            new = json.dumps(cleaned, ensure_ascii=False, separators=(",", ":"), sort_keys=True) \
                if value.datatype == RDF_JSON else json.dumps(cleaned, ensure_ascii=False)
    if new is None or not counts:
        counts.clear()
        new = redactor.scrub(text, counts)
    if value.language:
        return Literal(new, language=value.language)
    return Literal(new, datatype=value.datatype)


def summary(counts: Counter[str]) -> str:
    """``secret scan: 2 github-token, 1 jwt`` (the provenance rule of the rewrite; short printable text)."""
    kinds = ", ".join(f"{n} {rule}" for rule, n in sorted(counts.items()))
    return f"secret scan: {kinds}"[:128]


def scopes_of(findings: Sequence[SecretFinding]) -> list[str]:
    """The scopes ``findings`` are in, in order."""
    return list(dict.fromkeys(f.scope for f in findings))
