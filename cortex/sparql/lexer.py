"""SPARQL 1.1 text as tokens, and tokens as text that every parser reads the same way.

The SPARQL grammar (section 19.8 of the recommendation) defines its terminals by regular expressions, and says
that codepoint escapes (``\\uXXXX``, ``\\UXXXXXXXX``) are replaced *before* the text is parsed, anywhere in it.
Parsers differ on that last point (rdflib expands every escape first; Oxigraph and most servers only inside
strings and IRIs), and so a text can say one thing to a checker and another to the engine: ``"\\u0022 #"`` is a
string of three characters to one and a string, then a comment that hides the rest of the line, to the other.

:func:`tokenize` reads a text as the recommendation says (escapes first, then the longest terminal at each
position; comments and whitespace dropped) and bounds what it reads: bytes, tokens and bracket depth, each
checked in one linear pass before anything else looks at the text. :func:`render` writes tokens back as text
that leaves a parser no choice: one token per line, no comment, no codepoint escape, every string in one form
(double quotes, the escapes ``\\"``, ``\\\\``, ``\\n``, ``\\r``, ``\\t`` only) and every prefixed name expanded
to its full IRI (so no ``PREFIX`` declaration is needed). A token of that text can only be read as itself:
strings cannot swallow a line break, IRIs hold no space, and nothing else spans a line.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Iterable

from cortex.errors import InvalidInputError

#: Largest query accepted, in UTF-8 bytes.
MAX_QUERY_BYTES = 64 * 1024
#: Most tokens a query may have (a 64 KiB ``IN`` list of short strings has about 20,000).
MAX_TOKENS = 20_000
#: Deepest nesting of ``(``, ``[`` and ``{`` (pyoxigraph's own parser overflows its stack near 3,000).
MAX_DEPTH = 64

# The terminals of section 19.8, as Python regular expressions.
_PN_CHARS_BASE = ("A-Za-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C-\u200D"
                  "\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD\U00010000-\U000EFFFF")
_PN_CHARS_U = _PN_CHARS_BASE + "_"
_PN_CHARS = _PN_CHARS_U + "\\-0-9\u00B7\u0300-\u036F\u203F-\u2040"
_PLX = r"%[0-9A-Fa-f]{2}|\\[_~.\-!$&'()*+,;=/?#@%]"
_PN_PREFIX = f"[{_PN_CHARS_BASE}](?:[{_PN_CHARS}.]*[{_PN_CHARS}])?"
_PN_LOCAL = f"(?:[{_PN_CHARS_U}:0-9]|{_PLX})(?:(?:[{_PN_CHARS}.:]|{_PLX})*(?:[{_PN_CHARS}:]|{_PLX}))?"
_VARNAME = f"[{_PN_CHARS_U}0-9][{_PN_CHARS_U}0-9\u00B7\u0300-\u036F\u203F-\u2040]*"
_EXPONENT = r"[eE][+-]?[0-9]+"
_ECHAR = r"""\\[tbnrf\\"']"""

#: One alternative per kind of token, tried in this order at each position (longer forms before their prefixes).
_TERMINALS: list[tuple[str, str]] = [
    ("ws", r"[ \t\r\n]+"),
    ("comment", r"#[^\r\n]*"),
    ("iri", r'<[^<>"{}|^`\\\x00-\x20]*>'),
    ("string", f"'''(?:(?:'|'')?(?:[^'\\\\]|{_ECHAR}))*'''"),
    ("string", f'"""(?:(?:"|"")?(?:[^"\\\\]|{_ECHAR}))*"""'),
    ("string", f"'(?:[^'\\\\\\n\\r]|{_ECHAR})*'"),
    ("string", f'"(?:[^"\\\\\\n\\r]|{_ECHAR})*"'),
    ("pname", f"(?:{_PN_PREFIX})?:(?:{_PN_LOCAL})?"),
    ("bnode", f"_:[{_PN_CHARS_U}0-9](?:[{_PN_CHARS}.]*[{_PN_CHARS}])?"),
    ("var", f"[?$]{_VARNAME}"),
    ("langtag", r"@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*"),
    ("number", f"[+-]?(?:[0-9]+\\.[0-9]*{_EXPONENT}|\\.[0-9]+{_EXPONENT}|[0-9]+{_EXPONENT}|[0-9]*\\.[0-9]+|[0-9]+)"),
    ("word", r"[A-Za-z_][A-Za-z0-9_]*"),
    ("punct", r"\^\^|&&|\|\||!=|<=|>=|[{}()\[\];,.!=<>+\-*/^|?]"),
]


@functools.cache
def _scanner() -> re.Pattern[str]:
    # compiled on first use (~30 ms): a process that never judges a query (a hook) does not pay for it
    return re.compile("|".join(f"(?P<t{i}>{pattern})" for i, (_, pattern) in enumerate(_TERMINALS)))


_KINDS = [kind for kind, _ in _TERMINALS]
_CODEPOINT = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")
_ECHARS = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", "\\": "\\", '"': '"', "'": "'"}
_OPENERS, _CLOSERS = "([{", ")]}"


@dataclass(frozen=True)
class Token:
    """One terminal: its kind (``iri``, ``string``, ``pname``, ``bnode``, ``var``, ``langtag``, ``number``,
    ``word``, ``punct``), its text as written (escapes expanded), and where it starts in the query (line and
    column, from 1) for error messages."""

    kind: str
    text: str
    line: int
    column: int

    @property
    def word(self) -> str:
        """A keyword's canonical spelling (upper case; ``a`` stays as it is)."""
        return self.text if self.text == "a" else self.text.upper()


def expand_escapes(query: str) -> str:
    """Replace every codepoint escape, as the recommendation says to before parsing; an escape that names no
    Unicode scalar value (above U+10FFFF, or a surrogate) is refused."""
    def expand(match: re.Match[str]) -> str:
        value = int(match.group(1) or match.group(2), 16)
        if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
            raise InvalidInputError("query", f"the escape {match.group(0)} names no Unicode character")
        return chr(value)

    return _CODEPOINT.sub(expand, query)


def tokenize(query: str) -> list[Token]:
    """The tokens of a query, with its size, token count and nesting bounded (:data:`MAX_QUERY_BYTES`,
    :data:`MAX_TOKENS`, :data:`MAX_DEPTH`); brackets must balance. Raises :class:`InvalidInputError` (field
    ``query``) naming the first problem and where it is."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputError("query", "must be a non-empty SPARQL query")
    try:
        size = len(query.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidInputError("query", "contains unpaired surrogate characters (not valid Unicode text)") from None
    if size > MAX_QUERY_BYTES:
        raise InvalidInputError("query", f"is {size} bytes; the limit is {MAX_QUERY_BYTES} bytes")
    text = expand_escapes(query)
    tokens: list[Token] = []
    stack: list[str] = []
    position, line, line_start = 0, 1, 0
    scan = _scanner().match
    while position < len(text):
        match = scan(text, position)
        column = position - line_start + 1
        if match is None:
            raise InvalidInputError("query", f"unexpected character {text[position]!r} at line {line}, column "
                                             f"{column}")
        kind = _KINDS[match.lastindex - 1] if match.lastindex else "punct"
        value = match.group()
        if kind not in ("ws", "comment"):
            if len(tokens) == MAX_TOKENS:
                raise InvalidInputError("query", f"has more than {MAX_TOKENS} tokens")
            tokens.append(Token(kind, value, line, column))
            if kind == "punct" and value in _OPENERS:
                stack.append(value)
                if len(stack) > MAX_DEPTH:
                    raise InvalidInputError("query", f"is nested more than {MAX_DEPTH} levels deep (line {line}, "
                                                     f"column {column})")
            elif kind == "punct" and value in _CLOSERS:
                if not stack or _OPENERS[_CLOSERS.index(value)] != stack[-1]:
                    raise InvalidInputError("query", f"unbalanced {value!r} at line {line}, column {column}")
                stack.pop()
        breaks = value.count("\n")
        if breaks:
            line += breaks
            line_start = match.start() + value.rindex("\n") + 1
        position = match.end()
    if stack:
        raise InvalidInputError("query", f"{stack[-1]!r} is never closed")
    return tokens


def string_value(token: Token) -> str:
    """The value of a string token (quotes removed, escapes decoded)."""
    body = token.text[3:-3] if token.text[:3] in ('"""', "'''") else token.text[1:-1]
    return re.sub(r"\\(.)", lambda m: _ECHARS[m.group(1)], body, flags=re.S)


def quote(value: str) -> str:
    """A string in the one form :func:`render` writes: double quotes; only ``"``, ``\\``, line breaks and tabs
    escaped."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace(
        "\r", "\\r").replace("\t", "\\t") + '"'


def local_name(pname: str) -> tuple[str, str]:
    """A prefixed name's prefix and its local part, escapes (``\\.``) removed (``%HH`` stays: it is part of the
    IRI)."""
    prefix, _, local = pname.partition(":")
    return prefix, re.sub(r"\\(.)", r"\1", local)


def render(lines: Iterable[str]) -> str:
    """Canonical tokens as the text an engine receives: one per line."""
    return "\n".join(lines) + "\n"


__all__ = ["MAX_DEPTH", "MAX_QUERY_BYTES", "MAX_TOKENS", "Token", "expand_escapes", "local_name", "quote", "render",
           "string_value", "tokenize"]
