"""Which result format a SPARQL client asked for: HTTP ``Accept`` (q-values, wildcards) and the format hints
other endpoints read (``format=``/``output=``/``results=``, which SPARQLWrapper sends), as the SPARQL 1.1
protocol's content negotiation (docs/sparql.md, "The protocol")."""

from __future__ import annotations

from collections.abc import Iterable

#: The media types each format is served for, by kind of result, in the server's order of preference (the
#: first one a client accepts equally wins; the first of each format's list is what the answer is labelled).
SERVED: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "solutions": (
        ("json", ("application/sparql-results+json", "application/json")),
        ("xml", ("application/sparql-results+xml", "application/xml", "text/xml")),
        ("csv", ("text/csv",)),
        ("tsv", ("text/tab-separated-values",)),
    ),
    "graph": (
        # N3 is a superset of Turtle: a Turtle document is an N3 document
        ("turtle", ("text/turtle", "application/x-turtle", "text/n3", "text/rdf+n3")),
        ("ntriples", ("application/n-triples",)),
        ("rdfxml", ("application/rdf+xml", "application/xml", "text/xml")),
        ("jsonld", ("application/ld+json", "application/json")),
        ("nquads", ("application/n-quads",)),
        ("trig", ("application/trig",)),
    ),
}

#: The values of ``format=``/``output=``/``results=`` understood, by kind of result (SPARQLWrapper sends
#: ``xml`` for a CONSTRUCT by default: RDF/XML there).
_HINTS: dict[str, dict[str, str]] = {
    "solutions": {"json": "json", "xml": "xml", "csv": "csv", "tsv": "tsv", "srj": "json", "srx": "xml"},
    "graph": {"turtle": "turtle", "ttl": "turtle", "n3": "turtle", "nt": "ntriples", "ntriples": "ntriples",
              "n-triples": "ntriples", "xml": "rdfxml", "rdf": "rdfxml", "rdf+xml": "rdfxml", "rdfxml": "rdfxml",
              "json": "jsonld", "json-ld": "jsonld", "jsonld": "jsonld", "nquads": "nquads", "n-quads": "nquads",
              "nq": "nquads", "trig": "trig"},
}

#: Longest Accept header read (a longer one is cut: its ranges past that are not read).
_MAX_ACCEPT = 4096


def _ranges(accept: str) -> list[tuple[str, float, int]]:
    """The media ranges of an ``Accept`` header: (range, q, position); a range that is not ``type/subtype``
    or whose q is not a number in [0, 1] is skipped, as a malformed part."""
    ranges = []
    for position, part in enumerate(accept[:_MAX_ACCEPT].split(",")):
        media, *params = [p.strip() for p in part.split(";")]
        media = media.lower()
        if media.count("/") != 1 or not all(media.split("/")) or any(c.isspace() for c in media):
            continue
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value.strip())
                except ValueError:
                    q = -1.0
        if 0.0 <= q <= 1.0:
            ranges.append((media, q, position))
    return ranges


def _match(media: str, ranges: list[tuple[str, float, int]], canonical: bool) -> tuple[float, int] | None:
    """(q, position) of the most specific range that matches ``media`` (exact, ``type/*``, ``*/*``); an alias
    (not a format's ``canonical`` type) matches exactly only: ``text/*`` is CSV, not XML as ``text/xml``."""
    kind = media.split("/")[0]
    for wanted in (media, f"{kind}/*", "*/*") if canonical else (media,):
        found = [(q, pos) for r, q, pos in ranges if r == wanted]
        if found:
            return max(found, key=lambda f: (f[0], -f[1]))
    return None


def best(accept: str, kinds: Iterable[str] = ("solutions", "graph")) -> str | None:
    """The format of a result of ``kinds`` that ``accept`` prefers: highest q, then the client's order, then the
    server's. None when it accepts none of them (q=0 refuses a type)."""
    ranges = _ranges(accept)
    chosen: tuple[float, int, int, str] | None = None
    order = 0
    for kind in kinds:
        for name, types in SERVED.get(kind, ()):
            for i, media in enumerate(types):
                order += 1
                found = _match(media, ranges, i == 0)
                if found is None or found[0] <= 0:
                    continue
                key = (found[0], -found[1], -order, name)
                if chosen is None or key[:3] > chosen[:3]:
                    chosen = key
    return chosen[3] if chosen is not None else None


def served(kind: str) -> list[str]:
    """The media types a result of ``kind`` is served as (for a 406's answer)."""
    return [media for _, types in SERVED[kind] for media in types]


def hint(value: str, kind: str) -> str | None:
    """The format a ``format=``/``output=``/``results=`` value names for a result of ``kind`` (a short name or a
    media type); None if it names none of that kind."""
    key = value.strip().lower()
    if key in _HINTS[kind]:
        return _HINTS[kind][key]
    for name, types in SERVED[kind]:
        if key == name:
            return name
    if "/" in key:  # media types, one or a list (SPARQLWrapper's JSON-LD hint is an Accept-like list)
        return best(key, (kind,))
    return None


def known_hint(value: str) -> bool:
    """Whether ``value`` names a format of any kind."""
    return any(hint(value, kind) is not None for kind in SERVED)


__all__ = ["SERVED", "best", "hint", "known_hint", "served"]
