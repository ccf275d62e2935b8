"""SHACL validation of memory graphs (docs/export.md): the shapes of what Cortex writes
(``cortex/data/shapes.ttl``), checked with pyshacl, for an import before it is written and for a whole store
(``cortex validate-store``). The ontology the shapes follow is ``cortex/data/ontology.ttl``.

pyshacl and rdflib are imported here only, when a validation runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pyoxigraph as ox

from cortex.transfer import Violation
from cortex.vocab import DEFAULT_NS, Vocabulary

DATA = Path(__file__).resolve().parent / "data"
SHAPES = DATA / "shapes.ttl"
ONTOLOGY = DATA / "ontology.ttl"


def shapes_text(vocab: Vocabulary) -> str:
    """The shapes for ``vocab``'s namespace (the file is written for the default one)."""
    text = SHAPES.read_text(encoding="utf-8")
    return text if vocab.ns == DEFAULT_NS else text.replace(f"<{DEFAULT_NS}:agentmem:>", f"<{vocab.ns}:agentmem:>")


def validate(quads: Iterable[ox.Quad], vocab: Vocabulary) -> list[Violation]:
    """The SHACL violations of the memories in ``quads`` (all graphs taken together), focus node first."""
    import pyshacl
    import rdflib

    data = rdflib.Graph()
    triples = ox.serialize((q.triple for q in quads), format=ox.RdfFormat.N_TRIPLES)
    if triples:
        data.parse(data=triples.decode("utf-8"), format="nt")
    shapes = rdflib.Graph().parse(data=shapes_text(vocab), format="turtle")
    conforms, report, _ = pyshacl.validate(data, shacl_graph=shapes, inference="none", advanced=False)
    if conforms:
        return []
    sh = rdflib.Namespace("http://www.w3.org/ns/shacl#")
    found = []
    for result in report.subjects(rdflib.RDF.type, sh.ValidationResult):
        focus = report.value(result, sh.focusNode)
        path = report.value(result, sh.resultPath)
        message = report.value(result, sh.resultMessage)
        found.append(Violation(str(focus), str(path) if path is not None else "(node)",
                               str(message) if message is not None else "does not conform"))
    return sorted(found, key=lambda v: (v.focus, v.path, v.message))


__all__ = ["ONTOLOGY", "SHAPES", "shapes_text", "validate"]
