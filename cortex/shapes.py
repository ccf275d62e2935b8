"""SHACL validation of memory graphs (docs/export.md): the shapes of what Cortex writes
(``cortex/shapes.ttl``), for an import before it is written and for a whole store (``cortex validate-store``).
The ontology the shapes follow is ``cortex/ontology.ttl``.

Two checkers of the same shapes:

* :func:`validate`: pyshacl, the reference (``cortex validate-store``; pyshacl and rdflib, the ``shacl`` extra,
  are imported only when it runs). About 90% of an import's time at 5,000 memories, so imports use:
* :class:`NativeShapes`: the constraints the shapes file states (``sh:targetClass`` node shapes with
  ``sh:property`` shapes on a predicate path: ``sh:minCount``, ``sh:maxCount``, ``sh:datatype``,
  ``sh:nodeKind sh:IRI``, ``sh:in``, ``sh:minLength``, ``sh:maxLength``, ``sh:pattern``, ``sh:minInclusive``,
  ``sh:maxInclusive``, ``sh:class``, ``sh:message``), read from the shapes file itself and checked in Python
  over the subjects an import has already grouped. A shapes file with anything else makes
  :meth:`NativeShapes.load` return None and the import falls back to pyshacl. ``tests/store/test_export.py`` checks
  that both report the same focus nodes, paths and messages on good and bad inputs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from functools import cache
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from cortex.errors import MissingExtraError
from cortex.transfer import Violation
from cortex.vocab import DEFAULT_NS, Vocabulary

SHAPES = Path(__file__).resolve().parent / "shapes.ttl"
ONTOLOGY = Path(__file__).resolve().parent / "ontology.ttl"


def shapes_text(vocab: Vocabulary) -> str:
    """The shapes for ``vocab``'s namespace (the file is written for the default one)."""
    text = SHAPES.read_text(encoding="utf-8")
    return text if vocab.ns == DEFAULT_NS else text.replace(f"<{DEFAULT_NS}:agentmem:>", f"<{vocab.ns}:agentmem:>")


def pyshacl_installed() -> bool:
    """True when pyshacl (the ``shacl`` extra) can run :func:`validate` here."""
    import importlib.util

    return importlib.util.find_spec("pyshacl") is not None and importlib.util.find_spec("rdflib") is not None


def validate(quads: Iterable[ox.Quad], vocab: Vocabulary) -> list[Violation]:
    """The SHACL violations of the memories in ``quads`` (all graphs taken together), focus node first. pyshacl
    and rdflib are the ``shacl`` extra: without them, :class:`MissingExtraError`."""
    try:
        import pyshacl
        import rdflib
    except ImportError:
        raise MissingExtraError("shacl", "SHACL validation with pyshacl (cortex validate-store)") from None

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


SH = "http://www.w3.org/ns/shacl#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS_SUBCLASS = "http://www.w3.org/2000/01/rdf-schema#subClassOf"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = RDF + "type"
#: What a property shape may say for the native checker (anything else: fall back to pyshacl).
_PROPERTY_KEYS = {f"{SH}{k}" for k in ("path", "minCount", "maxCount", "datatype", "nodeKind", "in", "minLength",
                                       "maxLength", "pattern", "minInclusive", "maxInclusive", "class", "message")}
_NODE_KEYS = {RDF_TYPE, SH + "targetClass", SH + "property"}
#: Lexical forms of the datatypes whose ill-typed literals fail ``sh:datatype`` (as rdflib judges them).
_LEXICAL = {
    XSD + "integer": re.compile(r"[+-]?[0-9]+"),
    XSD + "double": re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?INF|NaN"),
    XSD + "decimal": re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)"),
    XSD + "dateTime": re.compile(r"-?[0-9]{4,}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?"
                                 r"(Z|[+-][0-9]{2}:[0-9]{2})?"),
}
_NUMERIC = {XSD + "integer", XSD + "double", XSD + "decimal", XSD + "float", XSD + "int", XSD + "long"}


class UnsupportedShapes(Exception):
    """The shapes say something the native checker does not implement."""


def _well_formed(datatype: str, lexical: str) -> bool:
    pattern = _LEXICAL.get(datatype)
    if pattern is None:
        return True
    if not pattern.fullmatch(lexical):
        return False
    if datatype == XSD + "dateTime":
        try:
            datetime.fromisoformat(lexical.replace("Z", "+00:00"))
        except ValueError:
            return False
    return True


def _number(term: Any) -> Decimal | None:
    """The value of a numeric literal (None: not a number, or ill-typed)."""
    if not isinstance(term, ox.Literal) or term.datatype.value not in _NUMERIC:
        return None
    text = term.value
    if not _well_formed(term.datatype.value, text):
        return None
    try:
        value = Decimal(text.replace("INF", "Infinity"))
    except InvalidOperation:
        return None
    return None if value.is_nan() else value  # NaN is no number to compare (Decimal raises when asked)


@dataclass(frozen=True)
class PropertyShape:
    """One ``sh:property`` of a node shape: a predicate path and the constraints on its values."""

    path: str
    message: str | None
    min_count: int | None = None
    max_count: int | None = None
    #: per-value checks: (what a failure is called when the shape has no sh:message, the check)
    value_checks: tuple[tuple[str, Callable[[Any], bool]], ...] = ()
    of_class: str | None = None

    def fail(self, default: str) -> str:
        return self.message if self.message is not None else default


@dataclass(frozen=True)
class NodeShape:
    target_class: str
    properties: tuple[PropertyShape, ...]


def _value_checks(props: Mapping[str, list[Any]], lists: Callable[[Any], list[Any]]
                  ) -> tuple[tuple[str, Callable[[Any], bool]], ...]:
    checks: list[tuple[str, Callable[[Any], bool]]] = []

    def one(key: str) -> Any:
        values = props.get(SH + key, [])
        if len(values) > 1:
            raise UnsupportedShapes(f"several sh:{key} in one property shape")
        return values[0] if values else None

    if (datatype := one("datatype")) is not None:
        dt = datatype.value
        checks.append((f"Value is not Literal with datatype <{dt}>",
                       lambda o: isinstance(o, ox.Literal) and o.datatype.value == dt and _well_formed(dt, o.value)))
    if (kind := one("nodeKind")) is not None:
        if kind.value != SH + "IRI":
            raise UnsupportedShapes(f"sh:nodeKind {kind}")
        checks.append(("Value is not of Node Kind sh:IRI", lambda o: isinstance(o, ox.NamedNode)))
    if (members := one("in")) is not None:
        allowed = frozenset(lists(members))
        checks.append(("Value is not in the allowed values", lambda o: o in allowed))
    if (least := one("minLength")) is not None:
        n = int(least.value)
        checks.append((f"String length less than {n}",
                       lambda o: not isinstance(o, ox.BlankNode) and len(o.value) >= n))
    if (most := one("maxLength")) is not None:
        m = int(most.value)
        checks.append((f"String length greater than {m}",
                       lambda o: not isinstance(o, ox.BlankNode) and len(o.value) <= m))
    if (pattern := one("pattern")) is not None:
        regex = re.compile(pattern.value)
        checks.append((f"Value does not match pattern {pattern.value!r}",
                       lambda o: not isinstance(o, ox.BlankNode) and regex.search(o.value) is not None))
    if (low := one("minInclusive")) is not None:
        lo = _number(low)
        if lo is None:
            raise UnsupportedShapes("a non-numeric sh:minInclusive")
        checks.append((f"Value is not >= {low.value}", lambda o: (v := _number(o)) is not None and v >= lo))
    if (high := one("maxInclusive")) is not None:
        hi = _number(high)
        if hi is None:
            raise UnsupportedShapes("a non-numeric sh:maxInclusive")
        checks.append((f"Value is not <= {high.value}", lambda o: (v := _number(o)) is not None and v <= hi))
    return tuple(checks)


class NativeShapes:
    """The shapes file's constraints, checked in Python (see the module docstring)."""

    def __init__(self, shapes: Sequence[NodeShape]) -> None:
        self.shapes = tuple(shapes)

    @staticmethod
    @cache
    def load(text: str) -> "NativeShapes | None":
        """The checker of a shapes text, or None when it says something this checker does not implement."""
        try:
            return NativeShapes(_read_shapes(text))
        except UnsupportedShapes:
            return None

    def check(self, subjects: Iterable[tuple[str, Mapping[str, Sequence[Any]]]]) -> list[Violation]:
        """The violations of the data whose subjects are given with their values by predicate IRI (object
        terms): all of them taken as one graph (as pyshacl takes an import). Sorted like :func:`validate`."""
        merged: dict[str, Mapping[str, Sequence[Any]]] = {}
        for subject, props in subjects:
            if subject in merged:  # the same subject in several graphs: one node of the merged graph
                union = {p: list(v) for p, v in merged[subject].items()}
                for p, values in props.items():
                    union.setdefault(p, []).extend(values)
                props = union
            merged[subject] = props
        # rdfs:subClassOf in the data widens a target class (SHACL instances)
        parents: dict[str, set[str]] = {}
        for subject, props in merged.items():
            for parent in props.get(RDFS_SUBCLASS, ()):
                if isinstance(parent, ox.NamedNode):
                    parents.setdefault(parent.value, set()).add(subject)

        def subclasses(cls: str) -> set[str]:
            found, todo = {cls}, [cls]
            while todo:
                for child in parents.get(todo.pop(), ()):
                    if child not in found:
                        found.add(child)
                        todo.append(child)
            return found

        def is_instance(node: Any, classes: set[str]) -> bool:
            if not isinstance(node, ox.NamedNode) or node.value not in merged:
                return False
            return any(isinstance(t, ox.NamedNode) and t.value in classes
                       for t in merged[node.value].get(RDF_TYPE, ()))

        found: list[Violation] = []
        for shape in self.shapes:
            targets = {ox.NamedNode(cls) for cls in subclasses(shape.target_class)}
            by_path: dict[str, list[tuple[int, PropertyShape]]] = {}
            for k, prop in enumerate(shape.properties):
                by_path.setdefault(prop.path, []).append((k, prop))
            required = [p for p in shape.properties if p.min_count]
            memo: dict[tuple[int, Any], list[str]] = {}
            for subject, props in merged.items():
                types = props.get(RDF_TYPE)
                if not types or targets.isdisjoint(types):
                    continue
                for prop in required:
                    values = props.get(prop.path, ())
                    if len(values) < prop.min_count and len(set(values)) < prop.min_count:  # type: ignore[operator]
                        found.append(Violation(subject, prop.path,
                                               prop.fail(f"Less than {prop.min_count} values on {prop.path}")))
                for path, values in props.items():
                    entries = by_path.get(path)
                    if entries is None:
                        continue
                    if len(values) > 1:
                        values = list(dict.fromkeys(values))  # a graph is a set: duplicates are one value
                    for k, prop in entries:
                        if prop.max_count is not None and len(values) > prop.max_count:
                            found.append(Violation(subject, path,
                                                   prop.fail(f"More than {prop.max_count} values on {path}")))
                        for value in values:
                            key = (k, value)
                            failures = memo.get(key)
                            if failures is None:
                                failures = [prop.fail(name) for name, ok in prop.value_checks if not ok(value)]
                                if prop.of_class is not None:  # depends on the data: not memoised
                                    if not is_instance(value, subclasses(prop.of_class)):
                                        failures.append(prop.fail(f"Value does not have class <{prop.of_class}>"))
                                elif not isinstance(value, ox.Literal) or len(value.value) <= 64:
                                    memo[key] = failures  # repeated values (types, timestamps): checked once
                            if failures:
                                found.extend(Violation(subject, path, message) for message in failures)
        return sorted(found, key=lambda v: (v.focus, v.path, v.message))


def _read_shapes(text: str) -> list[NodeShape]:
    triples: dict[Any, dict[str, list[Any]]] = {}
    for t in ox.parse(text.encode("utf-8"), ox.RdfFormat.TURTLE):
        triples.setdefault(t.subject, {}).setdefault(t.predicate.value, []).append(t.object)

    def rdf_list(head: Any) -> list[Any]:
        items = []
        while not (isinstance(head, ox.NamedNode) and head.value == RDF + "nil"):
            node = triples.get(head, {})
            first, rest = node.get(RDF + "first", []), node.get(RDF + "rest", [])
            if len(first) != 1 or len(rest) != 1:
                raise UnsupportedShapes("a malformed RDF list")
            items.append(first[0])
            head = rest[0]
        return items

    shapes = []
    for subject, props in triples.items():
        is_shape = any(getattr(t, "value", None) == SH + "NodeShape" for t in props.get(RDF_TYPE, []))
        if not is_shape and SH + "targetClass" not in props:
            continue
        if set(props) - _NODE_KEYS or len(props.get(SH + "targetClass", [])) != 1:
            raise UnsupportedShapes(f"node shape {subject} says more than one sh:targetClass and sh:property")
        properties = []
        for node in props.get(SH + "property", []):
            prop = triples.get(node, {})
            if set(prop) - _PROPERTY_KEYS:
                raise UnsupportedShapes(f"property shape with {sorted(set(prop) - _PROPERTY_KEYS)}")
            paths, messages = prop.get(SH + "path", []), prop.get(SH + "message", [])
            if len(paths) != 1 or not isinstance(paths[0], ox.NamedNode) or len(messages) > 1:
                raise UnsupportedShapes("a property shape without one predicate path, or with several messages")
            counts = {k: int(prop[SH + k][0].value) if SH + k in prop else None for k in ("minCount", "maxCount")}
            classes = prop.get(SH + "class", [])
            if len(classes) > 1:
                raise UnsupportedShapes("several sh:class")
            properties.append(PropertyShape(
                paths[0].value, messages[0].value if messages else None, counts["minCount"], counts["maxCount"],
                _value_checks(prop, rdf_list), classes[0].value if classes else None))
        shapes.append(NodeShape(props[SH + "targetClass"][0].value, tuple(properties)))
    return shapes


def native(vocab: Vocabulary) -> NativeShapes | None:
    """The native checker of the shapes for ``vocab``, or None (the shapes need pyshacl)."""
    return NativeShapes.load(shapes_text(vocab))


__all__ = ["ONTOLOGY", "SHAPES", "NativeShapes", "native", "shapes_text", "validate"]
