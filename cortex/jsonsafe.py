"""One bounded JSON reader for everything Cortex reads from outside (issue 29, finding 11): transcripts, hooks'
payloads, a model's answers, importers' files, request bodies. JSON nested deeper than :data:`MAX_DEPTH` or
longer than a caller's bound is refused with :class:`JSONLimitError`, a :class:`ValueError` like any other
malformed JSON, so every reader that turns a bad line into a problem entry does the same with a poison pill,
and no later walk of the value (validation, rendering, ``json.dumps``) can exceed Python's recursion limit.

The depth is measured before parsing, at C speed: strings are blanked out, then innermost ``[]``/``{}`` pairs
are removed a level a pass, at most :data:`MAX_DEPTH` passes.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: The deepest nesting of arrays and objects read (Cortex's own data nests a few levels; transcripts ~10).
MAX_DEPTH = 100
#: The most characters one document may have unless the caller says otherwise.
MAX_CHARS = 64 * 1024 * 1024

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_INNERMOST = re.compile(r"\[\]|\{\}")


class JSONLimitError(ValueError):
    """JSON deeper or longer than Cortex reads: the message names the bound."""


def depth_exceeds(text: str | bytes, most: int = MAX_DEPTH) -> bool:
    """Whether ``text`` nests arrays and objects more than ``most`` levels deep (brackets inside strings do not
    count; unbalanced brackets are left to the parser to refuse)."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    if text.count("[") + text.count("{") <= most:
        return False
    skeleton = _NOT_BRACKET.sub("", _STRING.sub("", text))
    for _ in range(most):
        thinner = _INNERMOST.sub("", skeleton)
        if thinner == skeleton:  # nothing left to remove: balanced and shallow, or malformed
            return False
        skeleton = thinner
    return bool(_INNERMOST.search(skeleton))


def loads(text: str | bytes, *, max_chars: int = MAX_CHARS, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(text)``, refusing (:class:`JSONLimitError`) a document over ``max_chars`` characters or
    nested over ``max_depth`` levels; malformed JSON raises :class:`ValueError` as ``json.loads`` does."""
    if len(text) > max_chars:
        raise JSONLimitError(f"the JSON is {len(text)} characters long, more than the {max_chars} read")
    if depth_exceeds(text, max_depth):
        raise JSONLimitError(f"the JSON nests deeper than {max_depth} levels: not read")
    try:
        return json.loads(text)
    except RecursionError:  # a parser limit below ours (a small recursion limit): the same refusal
        raise JSONLimitError(f"the JSON nests too deep to read (at most {max_depth} levels)") from None


def check_depth(text: str | bytes, max_depth: int = MAX_DEPTH) -> None:
    """Raise :class:`JSONLimitError` when ``text`` nests deeper than ``max_depth`` (for a caller whose parser is
    not :func:`loads`, e.g. ``JSONDecoder.raw_decode``)."""
    if depth_exceeds(text, max_depth):
        raise JSONLimitError(f"the JSON nests deeper than {max_depth} levels: not read")
