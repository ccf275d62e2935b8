"""What a query may do, and the one text the engine runs (docs/sparql.md).

The check and the engine never read different texts: :func:`prepare` reads the query into tokens
(:mod:`cortex.sparql.lexer`), judges the tokens, and builds from exactly those tokens the text the engine
receives (:attr:`Prepared.text`), written so that every parser reads it as the same tokens. So the engine runs
what was judged, whatever escapes, comments or quotes the query played with.

The judgement is an allow-list over tokens, which does not depend on how any parser builds its tree:

* every bare word must be a keyword or a built-in function of SPARQL 1.1 *queries*; the keywords of updates
  (``INSERT``, ``DELETE``, ``LOAD``, ``CLEAR``, ...), ``SERVICE`` and vendor extensions (Virtuoso's
  ``DEFINE``...) are refused. A keyword can only reach the engine as a bare word: strings, IRIs and variables
  are one line each in the rendered text, and prefixed names are expanded into IRIs, so no ``service:`` prefix
  can be read as ``SERVICE :``;
* one query, nothing after it (no ``;`` outside brackets);
* the dataset: for an agent, whatever ``FROM`` and ``FROM NAMED`` the query named is dropped and the agent's
  graphs are written in their place, so the text itself confines the query (a server that honours neither the
  protocol's dataset nor the query's is refused at the first agent query: :mod:`cortex.store.remote`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyoxigraph as ox

from cortex.errors import InvalidInputError
from cortex.sparql.lexer import Token, local_name, quote, render, string_value, tokenize

FORMS = frozenset({"SELECT", "CONSTRUCT", "DESCRIBE", "ASK"})
#: The keywords of SPARQL 1.1 queries.
KEYWORDS = frozenset({
    "BASE", "PREFIX", "SELECT", "CONSTRUCT", "DESCRIBE", "ASK", "DISTINCT", "REDUCED", "AS", "FROM", "NAMED",
    "WHERE", "ORDER", "BY", "ASC", "DESC", "GROUP", "HAVING", "LIMIT", "OFFSET", "VALUES", "UNDEF", "OPTIONAL",
    "GRAPH", "UNION", "MINUS", "FILTER", "BIND", "TRUE", "FALSE", "NOT", "IN", "EXISTS", "SEPARATOR", "a",
})
#: The built-in functions and aggregates of SPARQL 1.1.
FUNCTIONS = frozenset({
    "STR", "LANG", "LANGMATCHES", "DATATYPE", "BOUND", "IRI", "URI", "BNODE", "RAND", "ABS", "CEIL", "FLOOR",
    "ROUND", "CONCAT", "STRLEN", "UCASE", "LCASE", "ENCODE_FOR_URI", "CONTAINS", "STRSTARTS", "STRENDS",
    "STRBEFORE", "STRAFTER", "YEAR", "MONTH", "DAY", "HOURS", "MINUTES", "SECONDS", "TIMEZONE", "TZ", "NOW",
    "UUID", "STRUUID", "MD5", "SHA1", "SHA256", "SHA384", "SHA512", "COALESCE", "IF", "STRLANG", "STRDT",
    "SAMETERM", "ISIRI", "ISURI", "ISBLANK", "ISLITERAL", "ISNUMERIC", "REGEX", "SUBSTR", "REPLACE", "COUNT",
    "SUM", "MIN", "MAX", "AVG", "SAMPLE", "GROUP_CONCAT",
})
#: Keywords only updates use.
UPDATE_KEYWORDS = frozenset({"INSERT", "DELETE", "LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE", "COPY", "WITH",
                             "USING", "DATA", "INTO", "TO", "DEFAULT", "ALL", "SILENT"})
_READ_ONLY = ("updates are refused: the SPARQL surface is read-only (use the Cortex API, CLI or HTTP routes to "
              "change memories)")
#: A string value that holds a codepoint escape's text would read as that character to a parser that expands
#: escapes before it parses (as the recommendation says to); such a string has no unambiguous spelling.
_ESCAPE_TEXT = re.compile(r"\\[uU][0-9A-Fa-f]{4}")
_IRI_TEXT = re.compile(r'[^<>"{}|^`\\\x00-\x20]*')
#: Where a DESCRIBE's resources end when it has no WHERE keyword.
_DESCRIBE_END = frozenset({"WHERE", "ORDER", "GROUP", "HAVING", "LIMIT", "OFFSET", "VALUES"})


@dataclass(frozen=True)
class Prepared:
    """A judged query: ``text`` is exactly what the engine runs; ``form`` is SELECT, CONSTRUCT, DESCRIBE or ASK;
    ``names_dataset`` whether the query named ``FROM`` or ``FROM NAMED`` itself; ``origins`` the line and
    column in the query of each line of ``text`` (for the engine's error messages)."""

    text: str
    form: str
    names_dataset: bool
    origins: tuple[tuple[int, int], ...]

    def where(self, line: int, column: int) -> str:
        """An engine's position in :attr:`text` (line from 1) as a position in the query the user wrote."""
        if 1 <= line <= len(self.origins):
            at_line, at_column = self.origins[line - 1]
            return f"line {at_line}, column {at_column}"
        return "the end of the query"


def prepare(query: Any, *, dataset: Sequence[str] | None = None, bindings: Mapping[str, Any] | None = None,
            inline: bool = False, named: Sequence[str] | None = None) -> Prepared:
    """Judge ``query`` and build the text the engine runs (see the module's docstring). ``dataset``: the graph
    IRIs the query may read, written as its ``FROM`` and ``FROM NAMED`` (None: keep the query's own dataset);
    with ``named`` too, ``dataset`` is only its ``FROM`` (the default graph) and ``named`` its ``FROM NAMED``.
    ``bindings``: variable bindings (name -> pyoxigraph term), each of a variable the query uses; with ``inline``
    they are written as a trailing ``VALUES`` clause (for engines without native substitutions). Raises :class:`InvalidInputError` (field ``query``) naming the
    problem and where it is."""
    tokens = tokenize(query)
    prefixes: dict[str, str] = {}
    lines: list[str] = []
    origins: list[tuple[int, int]] = []

    def emit(text: str, token: Token) -> None:
        lines.append(text)
        origins.append((token.line, token.column))

    i = _prologue(tokens, prefixes, emit)
    if i == len(tokens):
        raise InvalidInputError("query", "has no query form (SELECT, CONSTRUCT, DESCRIBE or ASK)")
    form = _form(tokens[i])
    insert_at = _dataset_position(tokens, i, form)
    names_dataset = False
    n = len(tokens)
    depth = 0
    pending = dataset is not None  # the agent's dataset clause, not written yet
    while i < n:
        token = tokens[i]
        if pending and i >= insert_at:
            _dataset(dataset or (), emit, token, named)
            pending = False
        kind, text = token.kind, token.text
        if kind == "word":
            word = token.word
            if word == "FROM":
                names_dataset = True
                end = _dataset_clause_end(tokens, i)
                if dataset is None:  # the whole store's reader keeps the query's own dataset
                    for t in tokens[i:end]:
                        emit(_canonical(t, tokens, prefixes), t)
                i = end
                continue
            _allowed(token)
            if word in FUNCTIONS and i + 1 < n and tokens[i + 1].text == "(":
                # a function and its parenthesis as one token: Oxigraph refuses CONCAT, COALESCE and BNODE
                # with a line break between them
                emit(word + "(", token)
                depth += 1
                i += 2
                continue
            emit(word.lower() if word in ("TRUE", "FALSE") else word, token)
        elif kind == "string":
            value = string_value(token)
            if _ESCAPE_TEXT.search(value):
                raise InvalidInputError("query", f"the string at line {token.line}, column {token.column} holds "
                                                 f"a backslash, u and hex digits, which parsers read in two ways")
            literal = quote(value)
            if i + 1 < n and tokens[i + 1].kind == "langtag":
                i += 1
                literal += tokens[i].text
            elif i + 2 < n and tokens[i + 1].text == "^^" and tokens[i + 2].kind in ("iri", "pname"):
                i += 2
                literal += "^^" + _canonical(tokens[i], tokens, prefixes)
            emit(literal, token)
        elif kind == "langtag":
            raise InvalidInputError("query", f"a language tag at line {token.line}, column {token.column} follows "
                                             f"no string")
        elif kind == "punct" and text == ";" and depth == 0:
            raise InvalidInputError("query", f"holds more than one operation (';' at line {token.line}, column "
                                             f"{token.column}); send one query")
        else:
            if kind == "punct":
                depth += text in "([{"
                depth -= text in ")]}"
            emit(_canonical(token, tokens, prefixes), token)
        i += 1
    if pending:
        _dataset(dataset or (), emit, tokens[-1], named)
    if bindings:
        used = {t.text[1:] for t in tokens if t.kind == "var"}
        for name in bindings:
            if name not in used:
                raise InvalidInputError("query", f"does not contain the variable ?{name} it binds")
        if inline:
            _values(bindings, emit, tokens[-1])
    return Prepared(render(lines), form, names_dataset, tuple(origins))


def _dataset(graphs: Sequence[str], emit: Any, at: Token, named_graphs: Sequence[str] | None = None) -> None:
    """``FROM <g>`` then ``FROM NAMED <g>`` for each graph: the query's default graph is their union, and they are
    its named graphs (``named_graphs``: those are, instead)."""
    for named in (False, True):
        for graph in (named_graphs if named and named_graphs is not None else graphs):
            emit("FROM", at)
            if named:
                emit("NAMED", at)
            emit(_iri(graph, at), at)


def _prologue(tokens: Sequence[Token], prefixes: dict[str, str], emit: Any) -> int:
    """Read ``BASE`` and ``PREFIX`` declarations (prefixes are kept for expansion, BASE is written as it is);
    returns the index of the first token after them."""
    i = 0
    while i < len(tokens) and tokens[i].kind == "word" and tokens[i].word in ("BASE", "PREFIX"):
        token = tokens[i]
        if token.word == "BASE":
            if i + 1 >= len(tokens) or tokens[i + 1].kind != "iri":
                raise InvalidInputError("query", f"BASE at line {token.line}, column {token.column} must be "
                                                 f"followed by an IRI")
            emit("BASE", token)
            emit(tokens[i + 1].text, tokens[i + 1])
            i += 2
        else:
            if i + 2 >= len(tokens) or tokens[i + 1].kind != "pname" or not tokens[i + 1].text.endswith(":") \
                    or tokens[i + 1].text.count(":") != 1 or tokens[i + 2].kind != "iri":
                raise InvalidInputError("query", f"PREFIX at line {token.line}, column {token.column} must be "
                                                 f"followed by a prefix (name:) and an IRI")
            prefixes[tokens[i + 1].text[:-1]] = tokens[i + 2].text[1:-1]
            i += 3
    return i


def _form(token: Token) -> str:
    word = token.word if token.kind == "word" else ""
    if word in FORMS:
        return word
    if word in UPDATE_KEYWORDS:
        raise InvalidInputError("query", _READ_ONLY)
    raise InvalidInputError("query", f"expected SELECT, CONSTRUCT, DESCRIBE or ASK at line {token.line}, column "
                                     f"{token.column}, not {token.text!r}")


def _dataset_position(tokens: Sequence[Token], start: int, form: str) -> int:
    """The index of the token before which a dataset clause goes (len(tokens): at the end)."""
    i, n = start + 1, len(tokens)
    if form == "ASK":
        return i
    if form == "CONSTRUCT" and i < n and tokens[i].text == "{":
        return _matching(tokens, i) + 1
    depth = 0
    while i < n:
        token = tokens[i]
        if token.kind == "punct" and token.text in "([{" and not (depth == 0 and token.text == "{"):
            depth += 1
        elif token.kind == "punct" and token.text in ")]}":
            depth -= 1
        elif depth == 0 and (token.text == "{" or (token.kind == "word" and (
                token.word == "WHERE" or token.word == "FROM" or (form == "DESCRIBE" and token.word in _DESCRIBE_END)))):
            return i
        i += 1
    return n


def _matching(tokens: Sequence[Token], i: int) -> int:
    """The index of the bracket closing the one at ``i`` (the lexer checked that brackets balance)."""
    depth = 0
    for j in range(i, len(tokens)):
        if tokens[j].kind == "punct" and tokens[j].text in "([{":
            depth += 1
        elif tokens[j].kind == "punct" and tokens[j].text in ")]}":
            depth -= 1
            if depth == 0:
                return j
    return len(tokens) - 1


def _dataset_clause_end(tokens: Sequence[Token], i: int) -> int:
    """The index after ``FROM [NAMED] iri`` starting at ``i``."""
    j = i + 1
    if j < len(tokens) and tokens[j].kind == "word" and tokens[j].word == "NAMED":
        j += 1
    if j >= len(tokens) or tokens[j].kind not in ("iri", "pname"):
        token = tokens[i]
        raise InvalidInputError("query", f"FROM at line {token.line}, column {token.column} must name a graph IRI")
    return j + 1


def _allowed(token: Token) -> None:
    """Refuse a bare word that is not a keyword or a built-in function of SPARQL 1.1 queries."""
    word = token.word
    if word in KEYWORDS or word in FUNCTIONS:
        return
    if word == "SERVICE":
        raise InvalidInputError("query", "SERVICE is refused: a query runs on this store only")
    if word in UPDATE_KEYWORDS:
        raise InvalidInputError("query", _READ_ONLY)
    raise InvalidInputError("query", f"{token.text!r} at line {token.line}, column {token.column} is not a keyword "
                                     f"or a built-in function of SPARQL 1.1 queries")


def _canonical(token: Token, tokens: Sequence[Token], prefixes: Mapping[str, str]) -> str:
    """A token as the engine receives it: prefixed names as full IRIs, variables with ``?``, keywords upper case."""
    if token.kind == "pname":
        prefix, local = local_name(token.text)
        if prefix not in prefixes:
            raise InvalidInputError("query", f"the prefix {prefix + ':'!r} at line {token.line}, column "
                                             f"{token.column} is not declared (add PREFIX {prefix}: <...>)")
        return _iri(prefixes[prefix] + local, token)
    if token.kind == "var":
        return "?" + token.text[1:]
    if token.kind == "word":
        return token.word
    return token.text


def _iri(value: str, token: Token) -> str:
    if not _IRI_TEXT.fullmatch(value):
        raise InvalidInputError("query", f"the IRI {value!r} (line {token.line}, column {token.column}) holds "
                                         f"characters an IRI cannot")
    return f"<{value}>"


def _values(values: Mapping[str, Any], emit: Any, at: Token) -> None:
    """Bindings as a trailing ``VALUES`` clause of canonical terms."""
    names = list(values)
    for word in ("VALUES", "(", *(f"?{name}" for name in names), ")", "{", "("):
        emit(word, at)
    for name in names:
        emit(term_text(values[name], name), at)
    emit(")", at)
    emit("}", at)


def term_text(term: Any, name: str = "term") -> str:
    """A bound value as canonical SPARQL text (an IRI or a literal; blank nodes and triple terms cannot be
    bound in a ``VALUES`` clause)."""
    if isinstance(term, ox.NamedNode):
        if not _IRI_TEXT.fullmatch(term.value):
            raise InvalidInputError("substitutions", f"?{name} is an IRI with characters SPARQL cannot write")
        return f"<{term.value}>"
    if isinstance(term, ox.Literal):
        if _ESCAPE_TEXT.search(term.value):
            raise InvalidInputError("substitutions", f"?{name} holds a backslash, u and hex digits, which parsers "
                                                     f"read in two ways")
        if term.language:
            return quote(term.value) + "@" + term.language
        datatype = term.datatype.value
        return quote(term.value) + ("" if datatype == "http://www.w3.org/2001/XMLSchema#string"
                                    else f"^^<{datatype}>")
    raise InvalidInputError("substitutions", f"?{name}: a {type(term).__name__} cannot be bound on this store "
                                             f"(use an IRI or a literal)")


_ERROR_AT = re.compile(r"error at (\d+):(\d+)")


def engine_error(prepared: Prepared, message: str) -> str:
    """An engine's syntax error about :attr:`Prepared.text`, with the position in the user's query."""
    return _ERROR_AT.sub(lambda m: f"error at {prepared.where(int(m.group(1)), int(m.group(2)))}", message)


__all__ = ["FORMS", "FUNCTIONS", "KEYWORDS", "UPDATE_KEYWORDS", "Prepared", "engine_error", "prepare", "term_text"]
