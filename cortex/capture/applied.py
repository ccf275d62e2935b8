"""Whether an agent's output applied a memory it was shown: cited it, repeated it, or acted on it in other words.

The output (the agent's messages, its tool calls' inputs, their results) is cut into clauses, each of a kind:
a tool ``call`` (one line of a call's input; a call that only reads, such as ``Read`` or ``Grep``, is read as a
result), a tool ``result``, or ``text`` (a sentence or clause of a message, split again at "instead of" /
"rather than"). The user's lines, quotations (``> ...``) and an ``<agent-memory>`` block pasted back (or its
``- [type] ...`` lines) are not the agent's work and are left out. A text clause is *negated* when it carries
a negation ("did not", "skipped", "decided against", "instead of ...") that the memory itself does not ("never
deploy on Fridays" is followed by a clause that holds a deploy back without saying "never"), or a dismissal
("does not apply", "nothing to regenerate").

A shown memory counts as used when the output

* cites it: its id appears as a whole token, other than to set it aside ("01a2... does not apply", "was
  unhelpful"), or
* applies it, by a logistic score over what the clauses share with it (:data:`LEXICAL_WEIGHTS`):

  - ``call_share``: the best share of the memory's distinctive terms in one tool call,
  - ``call_unit``: the best share of one of the memory's commands (a backticked span, read as tokens; a span
    of flags joins the command before it) in one tool call,
  - ``call_distinct`` / ``text_distinct``: a tool call / a plain text clause holds one of the memory's
    specific tokens (a flag, a path, a dotted or hyphenated name, a number) that no other shown memory has;
    ``distinct_missing``: it has such tokens and the output has none of them,
  - ``text_share`` / ``text_negated_share``: the best share of its terms in a plain / a negated text clause,
  - ``repeated``: six consecutive words of the memory in a clause that is not negated,
  - ``whole``: the share of its terms anywhere but in the negated clauses,

  unless the output *deviates* from it: runs the command a span of the memory names without the rest of the
  span (``mkdocs build`` for "`mkdocs build --strict`"; a flag whose value is passed by another flag is not
  left out), or types a token the memory forbids ("never run site.yml against all of prod") in a call that
  types none of the tokens it asks for.

Scores inside :data:`BORDER` are judged again with the local embedding model when the store has it
(:data:`SEMANTIC_WEIGHTS`, which add the best cosine between the memory and a tool call, a plain text clause, a
negated one and a result); only those memories' few best clauses are embedded, so the model's cost is paid for
a few memories, not for every one.

The weights are a logistic regression fitted on the ``dev`` split of ``bench/data/usage_set`` (the labelled set
of shown-memory / output pairs) with the recorded sessions of ``bench/data/usage.jsonl``; the threshold is the
lowest whose precision on the dev split reaches 0.9 (``python bench/usage.py --fit`` prints all three);
``bench/usage.py`` measures them on the ``heldout`` and the blind ``test`` splits. What this cannot see: a rule
followed with no word of it in the output (a branch named after a pattern, a commit message format), a memory
applied by not doing something, and an agent that says it followed a memory it did not.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from cortex.embeddings import EmbeddingError, ONNX_MODEL, SHIPPED_MODEL
from cortex.index.analyzer import analyze
from cortex.text import normalize

#: Consecutive words of a memory that, found in a clause that is not negated, mean the agent repeated it.
SHINGLE = 6
#: A memory with fewer distinctive terms than this is too generic to be judged by overlap (only cited).
MIN_TERMS = 2
#: The most of an output read (its end: what the agent did last).
MAX_OUTPUT_CHARS = 400_000
#: The most clauses read (the latest): a flood of tiny sentences must not cost seconds.
MAX_CLAUSES = 3000
#: The longest clause kept (a long line is cut: its beginning says what it does).
MAX_CLAUSE_CHARS = 400
#: A score at or above this marks the memory as used.
THRESHOLD = 0.5
#: Scores strictly inside this band are judged again with the embedding model, where the store has it.
BORDER = (0.35, 0.65)
#: Clauses per borderline memory that are embedded: those sharing the most of its terms.
CLAUSES_PER_MEMORY = 3
#: Characters of a clause that are embedded.
EMBED_CHARS = 200

#: Logistic-regression weights of the lexical features, and the intercept (``bench/usage.py --fit``).
LEXICAL_WEIGHTS: dict[str, float] = {"call_share": 1.754, "call_unit": 1.302, "call_distinct": 0.989,
                                     "text_share": 1.429, "text_negated_share": 0.637, "text_distinct": -0.183,
                                     "distinct_missing": -0.912, "repeated": 1.144, "whole": 4.831}
LEXICAL_INTERCEPT = -3.302
#: The same with the cosines of the embedding model (all-MiniLM-L6-v2), for borderline memories.
SEMANTIC_WEIGHTS: dict[str, float] = {"call_cos": 1.992, "call_share": 1.101, "call_unit": 1.657,
                                      "call_distinct": 0.934, "text_cos": 1.59, "text_share": 1.023,
                                      "text_negated_cos": 0.927, "text_distinct": -0.32, "distinct_missing": -0.841,
                                      "result_cos": 1.205, "repeated": 1.125, "whole": 4.056}
SEMANTIC_INTERCEPT = -4.083

#: The models :data:`SEMANTIC_WEIGHTS` were fitted for (the ``local`` ONNX build and the ``torch`` one); with
#: another embedding provider the detector is lexical.
SEMANTIC_MODELS = (ONNX_MODEL, SHIPPED_MODEL)

Kind = Literal["call", "result", "text"]
Embed = Callable[[Sequence[str]], np.ndarray]

_WORD = re.compile(r"\w+")
_ESCAPES = re.compile(r"\\[ntr]")
# a token someone following the memory types: a flag, a path or file, a dotted/underscored name, a version
# (plain words, capitals included, are not specific: ``ENV`` is in every deploy command)
_SPECIFIC = re.compile(r"--?[a-z][\w-]*|.*\w[/\\._-]\w.*|.*\d.*", re.UNICODE)
_SPAN = re.compile(r"`([^`\n]+)`")
_TOKEN = re.compile(r"[\w.+/=:@-]+")
_PLACEHOLDER = re.compile(r"<[^>]*>")
# "tool_use Bash {...}", "Tool call Bash: {...}", or a call's JSON input on its own line
_CALL = re.compile(r"^(?:tool_use\b[^{\[]*|tool call\b[^:{\[]*:?\s*)?(?=[{\[])", re.IGNORECASE)
# the tools that only read, and the inputs of a call that only reads
_INSPECTS = re.compile(r"\b(?:Read|Grep|Glob|LS|WebFetch|WebSearch|NotebookRead|read_file|list_dir(?:ectory)?|"
                       r"grep_search|file_search|codebase_search|search_files|view)\b", re.IGNORECASE)
_INSPECT_KEYS = frozenset({"file_path", "path", "pattern", "glob", "offset", "limit", "include", "output_mode",
                           "-n", "-i", "-A", "-B", "-C", "head_limit", "type", "multiline", "query",
                           "target_file", "relative_workspace_path", "url", "prompt"})
_RESULT = re.compile(r"^(?:tool_result\b|tool result\b)[^:]*:?", re.IGNORECASE)
_SPEAKER = re.compile(r"^(assistant|user)(?:\s*\([^)]*\))?\s*:\s*", re.IGNORECASE)
# the <agent-memory> block echoed back, and its lines ("- [pattern] ..."): shown, not used
_ECHOED_BLOCK = re.compile(r"<agent-memory>.*?</agent-memory>", re.DOTALL)
_BLOCK_LINE = re.compile(r"^- \[[a-z_]+\] ")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(])|;\s+|\s+[—–]\s+|:\s+(?=[A-Z])")
_INSTEAD = re.compile(r"\b(?:instead of|rather than|in place of)\b", re.IGNORECASE)
_NEGATION = re.compile(
    r"\b(?:not|never|no|none|nothing|skip(?:ped|ping|s)?|ignor(?:e|ed|es|ing)|without|avoid(?:ed|ing|s)?|\w+n't|"
    r"cannot|unnecessary|irrelevant|outdated|obsolete|no longer|contrary|unrelated|neither|nor|instead|"
    r"rather than|left (?:it|them|that) alone|decided against|went against|refrain\w*|forgo\w*|forwent|"
    r"would have|gave up|give up|held off|hold off|opted out)\b", re.IGNORECASE)
_DISMISSAL = re.compile(
    r"\b(?:(?:does|do|did|is|was)(?:n't| not) (?:apply|applies|come into play|matter|relevant|needed|necessary|"
    r"affect)|not (?:relevant|applicable|needed|necessary|a factor)|n't (?:a factor|relevant|needed|necessary)|"
    r"nothing to (?:do|regenerate|change|update)|no need|(?:isn't|is not|wasn't) (?:a factor|involved)|"
    r"n't touch|not touch|left (?:it|them|that) alone|unaffected|no (?:changes?|action) (?:needed|required))\b",
    re.IGNORECASE)
# what a memory says not to do: the part of it after one of these words is forbidden
_FORBIDS = re.compile(r"\b(?:never|not|don't|do not|avoid|instead of|rather than|no|without)\b", re.IGNORECASE)
_MEMORY_PARTS = re.compile(r";\s+|\.\s+|,\s+(?=(?:not|never|but|and never|instead)\b)|\s+(?=(?:instead of|rather "
                           r"than)\b)", re.IGNORECASE)
# what an agent writes when it names a memory to set it aside
_SET_ASIDE = re.compile(r"\b(?:not? (?:apply|applies|relevant|needed|used?|useful|helpful)|doesn't apply|"
                        r"does not apply|irrelevant|outdated|ignor(?:e|ed|ing)|skip(?:ped|ping)?|instead of|"
                        r"contrary to|(?:is|was) wrong|no longer|obsolete|superseded|unhelpful|useless|"
                        r"disregard(?:ed|ing)?|(?:did not|didn't|never) use|(?:were|was) shown)\b")


def words(text: str) -> list[str]:
    """The normalised words of ``text``."""
    return _WORD.findall(normalize(text))


def shingles(text: str, n: int = SHINGLE) -> set[tuple[str, ...]]:
    """The runs of ``n`` consecutive words of ``text``."""
    found = words(text)
    return {tuple(found[i:i + n]) for i in range(len(found) - n + 1)}


def specific_tokens(text: str) -> set[str]:
    """The tokens of ``text`` that following it would make someone type: a flag, a path or file, a dotted,
    underscored or hyphenated name, a number (plain words, capitals included, are not: ``ENV`` is in every
    deploy command)."""
    return {t for t in _tokens(text) if (len(t) >= 3 or t.isdigit()) and _SPECIFIC.fullmatch(t)}


def _tokens(text: str) -> set[str]:
    """The casefolded tokens of ``text``, and the parts of each path (``alembic.ini`` in ``./alembic.ini``)."""
    found = {t.casefold().strip(".:,") for t in _TOKEN.findall(text)}
    return found | {part for t in found if "/" in t for part in t.split("/") if part}


@dataclass(frozen=True, slots=True)
class Clause:
    """One clause of an output, prepared to be matched against memories."""

    text: str
    kind: Kind
    negated: bool  #: carries a negation (whether it counts depends on the memory's own)
    dismissal: bool  #: sets something aside ("does not apply")
    terms: frozenset[str]
    folded: str
    tokens: frozenset[str]
    shingles: frozenset[tuple[str, ...]]

    @classmethod
    def of(cls, text: str, kind: Kind, negated: bool = False) -> Clause:
        """The clause of ``text`` (cut to :data:`MAX_CLAUSE_CHARS`)."""
        text = text.strip()[:MAX_CLAUSE_CHARS]
        return cls(text, kind, negated, kind == "text" and bool(_DISMISSAL.search(text)), frozenset(analyze(text)),
                   text.casefold(), frozenset(_tokens(text)), frozenset(shingles(text)))


def _strings(value: Any, out: list[str]) -> None:
    """The string values of a call's JSON input (an edit's ``old_string`` left out: it is what was replaced)."""
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key != "old_string":
                _strings(item, out)
    elif isinstance(value, list):
        for item in value:
            _strings(item, out)


#: What :func:`_parsed` answers for text that is not JSON.
_NOT_JSON = object()


def _parsed(text: str) -> Any:
    """``text`` as JSON, or :data:`_NOT_JSON`."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _NOT_JSON


def _call_clauses(body: str, inspects: bool, most: int = MAX_CLAUSES, value: Any = None) -> list[Clause]:
    """The clauses of a call's input (``value``: ``body`` already parsed, when it was). A call that only reads
    (its tool reads, or its input names nothing but a file, a path or a pattern) is read as a result: reading
    the file a memory names is checking, not applying."""
    value = _parsed(body) if value is None else value
    parts: list[str] = []
    if value is _NOT_JSON:
        parts = [_ESCAPES.sub("\n", body)]
    else:
        _strings(value, parts)
        inspects = inspects or (isinstance(value, dict) and bool(value) and set(value) <= _INSPECT_KEYS)
    kind: Kind = "result" if inspects else "call"
    lines = [line for part in parts for line in part.splitlines() if line.strip()]
    return [Clause.of(line, kind) for line in lines[-most:]]


def _text_clauses(line: str, most: int = MAX_CLAUSES) -> list[Clause]:
    """The clauses of a message's line (its last ``most`` sentences)."""
    out = []
    for sentence in _SENTENCE.split(line)[-most:]:
        if len(sentence.strip()) < 3:
            continue
        instead = _INSTEAD.search(sentence)
        if instead is None:
            out.append(Clause.of(sentence, "text", bool(_NEGATION.search(sentence))))
            continue
        before, after = sentence[:instead.start()], sentence[instead.end():]
        if before.strip():
            out.append(Clause.of(before, "text", bool(_NEGATION.search(before))))
        if after.strip():
            out.append(Clause.of(after, "text", True))  # what was done instead of is what was not done
    return out


def clauses(output: str) -> list[Clause]:
    """The clauses of an agent's output: each line is a tool call (its JSON input, one clause per line of its
    string values), a tool result (with the lines that follow it up to the next message), or a message's text
    (one clause per sentence, split again at "instead of"). At most :data:`MAX_CLAUSES`, the latest."""
    # what each line is, read forwards (a result runs on to the next message); clauses built backwards from
    # the end until there are enough: a flood of tiny sentences costs no more than the clauses kept
    lines: list[tuple[str, str, bool, Any]] = []  # (kind, text, the call only reads, its input parsed or None)
    kind = "text"
    for raw in _ECHOED_BLOCK.sub("\n", output[-MAX_OUTPUT_CHARS:]).splitlines():
        line = raw.strip()
        if not line or _BLOCK_LINE.match(line):
            continue
        call = _CALL.match(line)
        # a line that is a call's input on its own is one only if it parses (kept: parsed once)
        bare = _parsed(line) if call is not None and call.end() == 0 else None
        if call is not None and bare is not _NOT_JSON:
            lines.append(("call", line[call.end():], _INSPECTS.search(line[:call.end()]) is not None, bare))
            kind = "result"  # lines after a call, up to the next message, are its result
            continue
        result = _RESULT.match(line)
        if result is not None:
            kind, line = "result", line[result.end():].strip()
        else:
            speaker = _SPEAKER.match(line)
            if speaker is not None:
                # the user's words are not the agent's work
                kind, line = ("other" if speaker.group(1).casefold() == "user" else "text"), line[speaker.end():]
        # nor is a quotation: what someone said, not what the agent did
        if line and kind != "other" and not line.startswith(">"):
            lines.append((kind, line, False, None))
    out: list[Clause] = []
    for kind, line, inspects, value in reversed(lines):
        if len(out) >= MAX_CLAUSES:
            break
        if kind == "call":
            out.extend(reversed(_call_clauses(line, inspects, MAX_CLAUSES - len(out), value)))
        elif kind == "result":
            out.append(Clause.of(line, "result"))
        else:
            out.extend(reversed(_text_clauses(line, MAX_CLAUSES - len(out))))
    return out[:MAX_CLAUSES][::-1]


def _any_of(tokens: Iterable[str]) -> re.Pattern[str] | None:
    """A pattern finding any of ``tokens`` as a whole token (``en.json`` in ``apps/messages/en.json``, not
    ``osm.pbf`` in ``monaco-latest.osm.pbf``)."""
    tokens = sorted(tokens, key=len, reverse=True)
    if not tokens:
        return None
    return re.compile(r"(?<![\w-])(?:" + "|".join(map(re.escape, tokens)) + r")(?![\w-])")


def _found(pattern: re.Pattern[str] | None, text: str) -> bool:
    return pattern is not None and pattern.search(text) is not None


@dataclass(slots=True)
class _Memory:
    """A shown memory, prepared: its terms, words, commands and the tokens it asks for or forbids."""

    memory_id: str
    content: str
    terms: frozenset[str]
    negative: bool  #: says not to do something: a negated clause can follow it
    shingles: frozenset[tuple[str, ...]]
    distinct: re.Pattern[str] | None  #: specific tokens no other shown memory has
    spans: list[tuple[str, ...]]  #: commands it asks for (backticked), as tokens
    asked: re.Pattern[str] | None  #: specific tokens of the parts that ask for something
    forbidden: re.Pattern[str] | None  #: specific tokens only in the parts that forbid something

    @classmethod
    def of(cls, memory_id: str, content: str, distinct: set[str]) -> _Memory:
        """The memory prepared; ``distinct``: its specific tokens no other shown memory has."""
        parts = [(p, bool(_FORBIDS.search(p))) for p in _MEMORY_PARTS.split(content) if p.strip()]
        asked = set().union(*(specific_tokens(p) for p, forbids in parts if not forbids))
        forbidden = set().union(*(specific_tokens(p) for p, forbids in parts if forbids)) - asked
        spans: list[tuple[str, ...]] = []
        for part, forbids in parts:
            if forbids:
                continue
            joined: list[str] = []
            for span in _SPAN.finditer(part):
                toks = [t for t in (x.casefold().strip(".:,") for x in
                                    _TOKEN.findall(_PLACEHOLDER.sub(" ", span.group(1))))
                        if len(t) >= 2 and "..." not in t]
                if joined and toks and all(t.startswith("-") for t in toks):
                    joined.extend(toks)  # "`pod install` with `--repo-update`": one command
                    continue
                if joined:
                    spans.append(tuple(dict.fromkeys(joined)))
                joined = toks
            if joined:
                spans.append(tuple(dict.fromkeys(joined)))
        spans = [s for s in spans if len(s) >= 2 or _SPECIFIC.fullmatch(s[0])]
        return cls(memory_id, content, frozenset(analyze(content)), bool(_NEGATION.search(content)),
                   frozenset(shingles(content)), _any_of(distinct), spans,
                   _any_of(asked), _any_of(forbidden))


@dataclass(slots=True)
class Judgement:
    """What the output did with one shown memory: ``why`` it counts as used (``cited``, ``repeated``,
    ``applied``) or None, the ``score`` (0-1), whether the embedding model judged it (``semantic``), whether
    it ``deviated`` (ran the memory's command without the rest of it, or typed what it forbids), and the
    features the score was computed from."""

    memory_id: str
    why: str | None
    score: float
    semantic: bool = False
    deviated: bool = False
    features: dict[str, float] = field(default_factory=dict)


def _score(features: Mapping[str, float], weights: Mapping[str, float], intercept: float) -> float:
    z = intercept + sum(w * features.get(name, 0.0) for name, w in weights.items())
    return 1.0 / (1.0 + math.exp(-z))


def _lexical(memory: _Memory, parts: Sequence[Clause]) -> tuple[dict[str, float], bool]:
    """The lexical features of one memory against the clauses, and whether the output deviated from it."""
    size = max(1, len(memory.terms))
    f = dict.fromkeys(("call_share", "call_unit", "call_distinct", "text_share", "text_negated_share",
                       "text_distinct", "repeated"), 0.0)
    full = partly = forbidden = False
    for clause in parts:
        share = len(memory.terms & clause.terms) / size
        against = (clause.negated and not memory.negative) or clause.dismissal
        if memory.shingles & clause.shingles and not against:
            f["repeated"] = 1.0
        if clause.kind == "call":
            f["call_share"] = max(f["call_share"], share)
            if _found(memory.distinct, clause.folded):
                f["call_distinct"] = 1.0
            for span in memory.spans:
                have = sum(1 for t in span if t in clause.tokens)
                f["call_unit"] = max(f["call_unit"], have / len(span))
                if len(span) >= 2:
                    full = full or have == len(span)
                    partly = partly or (span[0] in clause.tokens and 2 * have >= len(span) and
                                        _left_out(span, clause.tokens))
            if _found(memory.forbidden, clause.folded) and not _found(memory.asked, clause.folded):
                forbidden = True
        elif clause.kind == "text":
            key = "text_negated_share" if against else "text_share"
            f[key] = max(f[key], share)
            if not against and _found(memory.distinct, clause.folded):
                f["text_distinct"] = 1.0
    # the memory's terms anywhere but in the clauses that set it aside or say it was not done
    f["whole"] = len(memory.terms & frozenset().union(*(c.terms for c in parts if not (
        (c.negated and not memory.negative) or c.dismissal)))) / size
    # a memory naming a command or a path of its own, none of which the output typed
    f["distinct_missing"] = float(memory.distinct is not None and not f["call_distinct"] and not f["text_distinct"])
    return f, ((partly and not full) or forbidden) and not f["repeated"]


def _left_out(span: Sequence[str], tokens: frozenset[str]) -> bool:
    """Whether a call typing the span's command left part of it out: a token other than a flag whose value the
    call passes another way (``-a 0.0.0.0:8001`` as ``--dev-addr 0.0.0.0:8001``)."""
    for k, token in enumerate(span):
        if token in tokens:
            continue
        value = span[k + 1] if k + 1 < len(span) else None
        if token.startswith("-") and value is not None and not value.startswith("-") and value in tokens:
            continue
        return True
    return False


def _cites(folded_output: str, memory_id: str) -> bool:
    """Whether the output names the id (as a whole token) other than to set the memory aside ("01a2... does not
    apply")."""
    for found in re.finditer(r"(?<![\w-])" + re.escape(memory_id) + r"(?![\w-])", folded_output):
        start = found.start()
        around = folded_output[max(0, start - 120):start + len(memory_id) + 120]
        at = around.find(memory_id)
        left = around[:at].rsplit(".", 1)[-1]
        right = around[at + len(memory_id):].split(".", 1)[0]
        if not _SET_ASIDE.search(left + " " + right):
            return True
    return False


def _semantic(border: Sequence[tuple[_Memory, dict[str, float]]], parts: Sequence[Clause], embed: Embed,
              vectors: Mapping[str, np.ndarray]) -> list[dict[str, float]]:
    """The semantic scores of the borderline memories: each one's best clauses embedded once, with its vector
    from the index (or embedded when the index has none)."""
    chosen: dict[int, None] = {}
    for memory, _ in border:
        ranked = sorted((k for k, c in enumerate(parts) if memory.terms & c.terms),
                        key=lambda k: (-len(memory.terms & parts[k].terms), k))
        chosen.update(dict.fromkeys(ranked[:CLAUSES_PER_MEMORY]))
    picked = sorted(chosen)
    missing = [m.content for m, _ in border if m.memory_id not in vectors]
    rows = embed([parts[k].text[:EMBED_CHARS] for k in picked] + missing) if picked or missing else np.zeros((0, 1))
    clause_rows, extra = rows[:len(picked)], iter(rows[len(picked):])
    scores = []
    for memory, lexical in border:
        vector = vectors[memory.memory_id] if memory.memory_id in vectors else next(extra)
        f = dict(lexical, call_cos=0.0, text_cos=0.0, text_negated_cos=0.0, result_cos=0.0)
        for row, k in zip(clause_rows, picked):
            clause = parts[k]
            if not memory.terms & clause.terms:
                continue
            against = (clause.negated and not memory.negative) or clause.dismissal
            key = {"call": "call_cos", "result": "result_cos"}.get(clause.kind) or \
                ("text_negated_cos" if against else "text_cos")
            f[key] = max(f[key], float(np.dot(row, vector)))
        scores.append(f)
    return scores


def judge(shown: Iterable[tuple[str, str]], output: str, *, embed: Embed | None = None,
          vectors: Mapping[str, np.ndarray] | None = None,
          border: tuple[float, float] = BORDER) -> list[Judgement]:
    """Judge, for each shown ``(memory id, content)``, whether ``output`` applied it (module docstring).
    ``embed`` (the local all-MiniLM-L6-v2, unit rows) re-judges the scores strictly inside ``border``;
    ``vectors`` are the shown memories' vectors by id where the index has them (saving their embedding)."""
    shown = list(shown)
    parts = clauses(output)
    folded = output[-MAX_OUTPUT_CHARS:].casefold()
    specifics = [specific_tokens(content) for _, content in shown]
    holders = Counter(t for tokens in specifics for t in tokens)  # how many shown memories have each token
    out: list[Judgement] = []
    borderline: list[tuple[int, _Memory, dict[str, float]]] = []
    for k, (memory_id, content) in enumerate(shown):
        if memory_id and _cites(folded, memory_id.casefold()):
            out.append(Judgement(memory_id, "cited", 1.0))
            continue
        memory = _Memory.of(memory_id, content, {t for t in specifics[k] if holders[t] == 1})
        if len(memory.terms) < MIN_TERMS:
            out.append(Judgement(memory_id, None, 0.0))
            continue
        features, deviated = _lexical(memory, parts)
        score = _score(features, LEXICAL_WEIGHTS, LEXICAL_INTERCEPT)
        out.append(Judgement(memory_id, None, score, deviated=deviated, features=features))
        if embed is not None and not deviated and border[0] < score < border[1]:
            borderline.append((k, memory, features))
    if borderline and embed is not None:
        try:
            semantic = _semantic([(m, f) for _, m, f in borderline], parts, embed, vectors or {})
        except EmbeddingError:
            semantic = []  # the model failed: the lexical judgement stands
        for (k, _, _), features in zip(borderline, semantic):
            out[k].features, out[k].semantic = features, True
            out[k].score = _score(features, SEMANTIC_WEIGHTS, SEMANTIC_INTERCEPT)
    for judgement in out:
        if judgement.why is None and not judgement.deviated and judgement.score >= THRESHOLD:
            judgement.why = "repeated" if judgement.features.get("repeated") else "applied"
    return out


def drawn_on(shown: Iterable[tuple[str, str]], output: str, *, embed: Embed | None = None,
             vectors: Mapping[str, np.ndarray] | None = None) -> list[tuple[str, str]]:
    """The (memory id, why) of each shown ``(id, content)`` that ``output`` drew on, in the order shown."""
    return [(j.memory_id, j.why) for j in judge(shown, output, embed=embed, vectors=vectors) if j.why is not None]
