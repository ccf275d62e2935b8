"""Usage learned from use: which of the memories shown to an agent its later output actually drew on.

Being shown touches a memory (``usageCount``), whatever the agent does with it. The "used" signal
(``usedCount``) counts only what the agent's later output or tool calls drew on (docs/capture.md, "Usage
learned from use"). A shown memory counts as used when the output

* cites it: its id appears in the output (an agent told to name what it relied on), or
* repeats it: a run of :data:`SHINGLE` consecutive words of the memory appears in the output, or
* applies it: most of its distinctive terms (:data:`TERM_SHARE` of them, at least :data:`MIN_TERMS`) are in
  the output, and one of its specific tokens (a flag, a path, a number, a command: what following the memory
  actually types) is too, or nearly all of its terms are (:data:`ALL_TERMS_SHARE`).

Precision comes first: a memory wrongly counted as used is ranked up for every later task. The rules were
measured on recorded sessions (``bench/capture.py``, ``usage`` rows).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from cortex import jsonsafe
from cortex.index.analyzer import analyze
from cortex.text import normalize

#: Consecutive words of a memory that, found verbatim in the output, mean the agent repeated it.
SHINGLE = 6
#: Share of a memory's distinctive terms the output must contain, with one of its specific tokens.
TERM_SHARE = 0.6
#: Share of the terms that is enough without a specific token.
ALL_TERMS_SHARE = 0.9
#: A memory with fewer distinctive terms than this is too generic to be judged by overlap (only cited or repeated).
MIN_TERMS = 3
#: The most of an output read (its end: what the agent did last).
MAX_OUTPUT_CHARS = 2_000_000

_WORD = re.compile(r"\w+")
# a token someone following the memory types: a flag, a path or file, a dotted/underscored name, a version
# (plain words, capitals included, are not specific: ``ENV`` is in every deploy command)
_SPECIFIC = re.compile(r"(?<![\w-])(?:--?[a-z][\w-]+|[\w.-]*[/\\][\w./\\-]+|\w+\.\w[\w.]*|\w+_\w[\w]*|\d[\w.:]*\d|"
                       r"[a-zA-Z]+-[\w-]+|[A-Z][A-Z0-9]*\d[A-Z0-9]*)", re.UNICODE)


_ESCAPES = re.compile(r"\\[ntr]")
# what an agent writes when it names a memory to set it aside
_DISMISSED = re.compile(r"\b(?:not? (?:apply|applies|relevant|needed|used?)|doesn't apply|does not apply|"
                        r"irrelevant|outdated|ignor(?:e|ed|ing)|skip(?:ped|ping)?|instead of|contrary to|"
                        r"(?:is|was) wrong|no longer|obsolete|superseded)\b")


def _words(text: str) -> list[str]:
    return _WORD.findall(normalize(text))


def _shingles(words: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def specific_tokens(text: str) -> set[str]:
    """The tokens of ``text`` that following it would make someone type (flags, paths, versions, names)."""
    return {t.casefold() for t in _SPECIFIC.findall(text) if len(t) >= 3}


class Output:
    """An agent's output, prepared once to be matched against many memories."""

    def __init__(self, text: str) -> None:
        # tool inputs come as JSON text: an escaped newline must not glue its "n" to the next word
        text = _ESCAPES.sub(" ", text[-MAX_OUTPUT_CHARS:])
        self.text = text
        self.folded = text.casefold()
        words = _words(text)
        self.shingles = _shingles(words, SHINGLE)
        self.terms = set(analyze(text))

    def _cites(self, memory_id: str) -> bool:
        """Whether the output names the id other than to set the memory aside ("01a2... does not apply")."""
        start = self.folded.find(memory_id)
        while start >= 0:
            sentence = self.folded[max(0, start - 120):start + len(memory_id) + 120]
            left = sentence[:sentence.find(memory_id)].rsplit(".", 1)[-1]
            right = sentence[sentence.find(memory_id) + len(memory_id):].split(".", 1)[0]
            if not _DISMISSED.search(left + " " + right):
                return True
            start = self.folded.find(memory_id, start + 1)
        return False

    def draws_on(self, memory_id: str, content: str) -> str | None:
        """Why the output drew on the memory (``cited``, ``repeated``, ``applied``), or None when it did not."""
        if memory_id and self._cites(memory_id.casefold()):
            return "cited"
        words = _words(content)
        if len(words) >= SHINGLE and _shingles(words, SHINGLE) & self.shingles:
            return "repeated"
        terms = set(analyze(content))
        if len(terms) < MIN_TERMS:
            return None
        share = len(terms & self.terms) / len(terms)
        if share >= ALL_TERMS_SHARE:
            return "applied"
        if share >= TERM_SHARE and any(t in self.folded for t in specific_tokens(content)):
            return "applied"
        return None


def drawn_on(shown: Iterable[tuple[str, str]], output: str) -> list[tuple[str, str]]:
    """The (memory id, why) of each shown ``(id, content)`` that ``output`` drew on, in the order shown."""
    prepared = Output(output)
    found = []
    for memory_id, content in shown:
        why = prepared.draws_on(memory_id, content)
        if why is not None:
            found.append((memory_id, why))
    return found


class ShownLog:
    """Which memories each agent was last shown, per session (``(scope key, memory id)`` pairs), so that the
    agent's later output can be matched against them. Kept in memory, and in ``<state>/shown.json`` when the
    store has a state directory: a hook without a server, or a CLI command, opens the store anew each time.
    Bounded: the latest :data:`MAX_SESSIONS` starts."""

    MAX_SESSIONS = 256

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._data: dict[str, list[list[str]]] = {}
        self._loaded = False

    @staticmethod
    def _key(agent: str, session: str | None) -> str:
        return f"{agent} {session or ''}"

    def _load(self) -> None:
        if self._loaded or self.path is None:
            return
        self._loaded = True

        from cortex.files import read_regular

        try:
            data = jsonsafe.loads(read_regular(self.path, 8 * 1024 * 1024))
        except (OSError, ValueError):
            return
        if isinstance(data, dict):
            for key, items in data.items():
                if isinstance(key, str) and isinstance(items, list):
                    self._data.setdefault(key, [list(map(str, i)) for i in items
                                                if isinstance(i, list) and len(i) == 2])

    def record(self, agent: str, session: str | None, shown: Sequence[tuple[str, str]]) -> None:
        """Remember that ``agent`` was shown ``shown`` in ``session`` (replacing an earlier start's)."""
        key = self._key(agent, session)
        self._data.pop(key, None)
        self._data[key] = [[scope, memory_id] for scope, memory_id in shown]
        self._save()

    def add(self, agent: str, session: str | None, shown: Sequence[tuple[str, str]]) -> None:
        """Remember that ``agent`` was also shown ``shown`` in ``session`` (a prompt's memories, beside what its
        start showed)."""
        self._load()
        key = self._key(agent, session)
        have = self._data.pop(key, [])
        known = {(s, i) for s, i in have}
        have.extend([scope, memory_id] for scope, memory_id in shown if (scope, memory_id) not in known)
        self._data[key] = have
        self._save()

    def _save(self) -> None:
        while len(self._data) > self.MAX_SESSIONS:
            self._data.pop(next(iter(self._data)))
        if self.path is not None:
            import json

            from cortex.files import atomic_write

            self._load()
            try:
                atomic_write(self.path, json.dumps(self._data))
            except OSError:
                pass  # the signal is best effort: a start never fails for it

    def shown(self, agent: str, session: str | None) -> list[tuple[str, str]]:
        """What ``agent`` was shown at its latest start in ``session`` (empty when unknown)."""
        key = self._key(agent, session)
        if key not in self._data:
            self._load()
        return [(scope, memory_id) for scope, memory_id in self._data.get(key, [])]
