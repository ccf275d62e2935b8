"""The analyser behind BM25: NFKC + casefold, Unicode word tokens, English stop words, Snowball stemming
(PyStemmer), and overlapping character bigrams for CJK text, which has no spaces between words."""

from __future__ import annotations

import functools
import re

import Stemmer

from cortex.text import STOP_WORDS, normalize

_WORD = re.compile(r"\w+")
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_HAS_CJK = re.compile(f"[{_CJK}]")
_stemmer = Stemmer.Stemmer("english")


def _stem(words: list[str]) -> list[str]:
    stemmed: list[str] = _stemmer.stemWords(words)
    return stemmed


@functools.cache
def _cjk_runs() -> re.Pattern[str]:
    """Runs of CJK and of other text (compiled on first use: most text has no CJK, and it costs ~5 ms)."""
    return re.compile(f"[{_CJK}]+|[^{_CJK}]+")


def _cjk_grams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def analyze(text: str) -> list[str]:
    """The index terms of ``text``, in order, with repeats."""
    return analyze_normalized(normalize(text))


def analyze_normalized(text: str) -> list[str]:
    """:func:`analyze` for text already passed through :func:`cortex.text.normalize`."""
    if not _HAS_CJK.search(text):
        return _stem([w for w in _WORD.findall(text) if w not in STOP_WORDS])
    plain: list[str] = []
    out: list[str] = []
    for word in _WORD.findall(text):
        if _HAS_CJK.search(word):
            for run in _cjk_runs().findall(word):
                if _HAS_CJK.match(run):
                    out.extend(_cjk_grams(run))
                elif run not in STOP_WORDS:
                    plain.append(run)
        elif word not in STOP_WORDS:
            plain.append(word)
    return _stem(plain) + out


def analyze_many(texts: list[str]) -> list[list[str]]:
    """:func:`analyze_normalized` of each of ``texts`` (normalised), stemming the words of all of them in one
    call (what a batch write spends most of its analysis on is the per-call overhead)."""
    out: list[list[str] | None] = []
    words: list[str] = []
    ends: list[int] = []
    for text in texts:
        if _HAS_CJK.search(text):
            out.append(analyze_normalized(text))
        else:
            words += [w for w in _WORD.findall(text) if w not in STOP_WORDS]
            out.append(None)
        ends.append(len(words))
    stemmed = _stem(words)
    start = 0
    for i, end in enumerate(ends):
        if out[i] is None:
            out[i] = stemmed[start:end]
        start = end
    return out  # type: ignore[return-value]
