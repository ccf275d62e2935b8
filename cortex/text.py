"""Text normalisation shared by matching, indexing and capture.

Matching is defined on ``normalize(text)``: NFKC, then case folding, then NFKC again (case folding can
produce sequences that are not NFKC-normal, e.g. for some Greek and ligature characters).
"""

from __future__ import annotations

import unicodedata

#: Words too common to say anything about relevance when a task sentence is matched word by word.
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most my
    myself no nor not now of off on once only or other our ours ourselves out over own same she should so
    some such than that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why will with would you your
    yours yourself yourselves please make sure let lets use using""".split()
)


def normalize(text: str) -> str:
    """Return ``text`` in the form every comparison uses (NFKC + casefold)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def query_tokens(query: str | None) -> list[str]:
    """Split a recall query into its distinct normalised whitespace tokens, first occurrence first."""
    if not query:
        return []
    return list(dict.fromkeys(normalize(query).split()))


def content_words(normalized: str) -> list[str]:
    """The whitespace-separated words of normalised content: what the lexical index stores.

    A query token never contains whitespace, so every occurrence of it in the content lies inside one
    of these words; matching a token against the vocabulary is therefore exact.
    """
    return normalized.split()
