"""The quality gate: what an automatically captured candidate becomes before it is stored (docs/capture.md,
"Quality gate").

A capture channel (marker lines, transcripts, the LLM extractor) proposes candidate memories; the gate judges
each one against what the scope already holds and answers a :class:`Verdict`:

* ``confirm`` with ``exact-duplicate``: the same text as a stored memory once case, whitespace and the
  punctuation around words are ignored; ``match`` names the memory, which is confirmed instead of stored twice.
* ``refuse`` with ``session-chatter``: narration of the moment ("Let me check the file", "I'll now run the
  tests", "Great, all tests pass now", "Looking at the code...", greetings and thanks), every sentence of it.
* ``refuse`` with ``too-little-information``: fewer than ``min_informative`` informative tokens ("ok",
  "fixed it", "see above", "LGTM").
* ``confirm`` with ``near-duplicate``: the same learning in other words. Lexically: the Jaccard similarity of
  the stemmed content words reaches ``near`` (:data:`SWAP_NEAR` when the candidate swaps words of the memory for
  others), or the candidate's words are all in the memory and cover at least ``subset_cover`` of it;
  semantically (when an embedding function is given): cosine >= ``semantic_near`` with some lexical overlap, for
  a candidate that only adds or drops words. Either way only when no **block** applies: a candidate that names a number, a version,
  a path, a flag or an identifier the memory does not (or swaps one of the memory's for new words), one negated
  where the other is not, one saying ``before`` where the other says ``after`` (or ``enable``/``disable``,
  ``local``/``remote``...), is a different learning ("timeout 30s" is not "timeout 300s"; "use
  --frozen-lockfile in CI" is not "never use --frozen-lockfile locally").
* ``store`` otherwise. In a batch (:meth:`Gate.judge_all`) a candidate stored earlier counts as existing for the
  later ones, which are refused as ``duplicate-in-batch``.

Precision comes first: refusing or merging a real learning loses it, letting a weak one through costs a little
noise. Every rule is built to say ``store`` when in doubt.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from cortex.capture.scrub import ONLY_SECRET, only_secret
from cortex.errors import InvalidInputError
from cortex.text import STOP_WORDS, normalize

Action = Literal["store", "confirm", "refuse"]

EXACT = "exact-duplicate"
NEAR = "near-duplicate"
IN_BATCH = "duplicate-in-batch"
LITTLE = "too-little-information"
CHATTER = "session-chatter"
#: Every reason a verdict can give (a ``store`` has none).
REASONS = (EXACT, NEAR, IN_BATCH, LITTLE, CHATTER, ONLY_SECRET)

#: Jaccard similarity of the content words from which a candidate is a near duplicate.
DEFAULT_NEAR = 0.8
#: The Jaccard similarity a candidate needs when it swaps words of the memory for others (precision first:
#: "tests for the billing service need X" is not "tests for the invoicing service need X").
SWAP_NEAR = 0.9
#: Cosine similarity from which a candidate that only adds or drops words is a near duplicate, when vectors are
#: given (all-MiniLM-L6-v2). Vectors never license a swap of words: MiniLM scores "billing" -> "invoicing",
#: "1 KB" -> "1 MB" or "a week" -> "a day" in an otherwise equal sentence at 0.94-0.97, as high as paraphrases.
DEFAULT_SEMANTIC_NEAR = 0.9
#: The least Jaccard similarity a semantic near duplicate needs (vectors alone also match topics).
SEMANTIC_OVERLAP = 0.2
#: A candidate whose words are all in a memory is its duplicate when it covers this share of the memory's.
DEFAULT_SUBSET_COVER = 0.5
#: Fewer informative tokens than this is too little information.
DEFAULT_MIN_INFORMATIVE = 2


@dataclass(frozen=True)
class Verdict:
    """What the gate says of a candidate: ``store`` it, ``confirm`` the existing memory ``match`` instead, or
    ``refuse`` it; ``reason`` is one of :data:`REASONS` (None for ``store``)."""

    action: Action
    reason: str | None = None
    match: str | None = None


# --- words --------------------------------------------------------------------------------------------------

#: Words that say nothing on their own: a candidate made of them (and stop words) is too little information.
VAGUE = frozenset(
    """ok okay k kk lgtm ack acked done fixed fix works worked working good great nice fine cool sure yes yep
    yeah yup nope thanks thank thx ty see above below noted got understood agreed right correct perfect awesome
    excellent wip todo tbd etc stuff thing things something anything everything nothing update updated updates
    change changes changed same here there well hmm oh ah hi hello hey bye it's that's this that check look"""
    .split()
)
#: Contractions (after ``’`` became ``'``), which are stop words too.
_CONTRACTIONS = frozenset(
    """i'm i'll i've i'd you're you'll you've we're we'll we've they're it's it'll that's there's here's
    let's what's who's don't doesn't didn't isn't aren't wasn't weren't can't won't wouldn't shouldn't
    couldn't mustn't haven't hasn't hadn't""".split()
)
#: Stop words for counting information: ``use`` stays informative ("Use uv" is a learning).
_INFO_STOP = (STOP_WORDS - {"use", "using"}) | _CONTRACTIONS | VAGUE
#: Words that negate: a candidate negated where the memory is not (or the reverse) says something else.
NEGATIONS = frozenset(
    """not no never don't dont doesn't doesnt didn't didnt isn't isnt aren't arent wasn't weren't can't cant
    cannot won't wont wouldn't shouldn't shouldnt mustn't haven't hasn't without avoid avoids avoided avoiding
    instead rather nor neither none nothing nobody n't""".split()
)
#: Words placing things in order or quantity: two texts that differ in them say different things.
RELATIONS = frozenset(
    "before after during above below over under more most less least fewer only until since earlier later".split()
)
#: Pairs of opposites: a candidate with one where the memory has the other is a different learning.
OPPOSITES = (
    ("first", "last"), ("higher", "lower"), ("upper", "lower"), ("min", "max"), ("minimum", "maximum"),
    ("enable", "disable"), ("enabled", "disabled"), ("true", "false"), ("on", "off"), ("yes", "no"),
    ("local", "remote"), ("locally", "remotely"), ("local", "ci"), ("locally", "ci"), ("read", "write"),
    ("sync", "async"), ("synchronous", "asynchronous"), ("dev", "prod"), ("development", "production"),
    ("staging", "production"), ("staging", "prod"), ("add", "remove"), ("allow", "deny"), ("allow", "block"),
    ("include", "exclude"), ("start", "stop"), ("open", "close"), ("increase", "decrease"),
    ("public", "private"), ("internal", "external"), ("client", "server"), ("frontend", "backend"),
    ("import", "export"), ("push", "pull"), ("input", "output"), ("success", "failure"), ("pass", "fail"),
    ("old", "new"), ("older", "newer"), ("inside", "outside"), ("ascending", "descending"), ("asc", "desc"),
    ("lock", "unlock"), ("install", "uninstall"), ("upgrade", "downgrade"), ("always", "never"),
    ("required", "optional"), ("encrypt", "decrypt"), ("sequential", "parallel"), ("serial", "parallel"),
    ("debug", "release"), ("left", "right"), ("short", "long"), ("small", "large"), ("fast", "slow"),
    ("up", "down"), ("light", "dark"), ("primary", "replica"), ("accept", "reject"), ("strict", "lax"),
    ("primary", "secondary"), ("leader", "follower"), ("inbound", "outbound"), ("ingress", "egress"),
    ("upstream", "downstream"), ("head", "tail"), ("day", "night"), ("weekday", "weekend"), ("success", "error"),
)
#: Words a paraphrase adds or drops without changing the learning ("Always run X" is "Run X").
FILLER = frozenset(
    """always ensure remember note important importantly just really actually also basically simply generally
    typically usually need needs needed must should required require requires prefer preferred please make made
    sure keep keeps kept get gets got getting become becomes became live lives located reside resides sit sits
    can could would may might will via""".split()
)
#: Numbers in words: specific like digits ("ten minutes" is not "a minute").
NUMBER_WORDS = frozenset(
    """zero one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty fifty
    sixty seventy eighty ninety hundred thousand million billion once twice thrice half double triple single
    dozen""".split()
)
_SIM_STOP = STOP_WORDS | FILLER | NEGATIONS | RELATIONS | _CONTRACTIONS

_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u2026": "...",
                         "\u2014": " - ", "\u2013": " - "})
#: Punctuation around a token that does not change what it says ("`uv`," is "uv").
_EDGE = ".,;:!?\"'`*()[]{}<>"
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
#: A token with a digit, or a symbol inside it, or a leading dash: a number, version, path, flag, identifier.
_SPECIFIC = re.compile(r"\d|^-{1,2}\w|\w[/\\_.=@:~#$+]+\w|^[/~$#@]\w|\w/$")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2,}[a-z]")


def _tokens(text: str) -> list[tuple[str, bool]]:
    """The whitespace tokens of ``text`` (normalised, without the punctuation around them), each with whether it is
    specific (a number, version, path, flag or identifier)."""
    out: list[tuple[str, bool]] = []
    for raw in text.translate(_QUOTES).split():
        core = raw.strip(_EDGE)
        if not core or not any(c.isalnum() for c in core):
            continue
        token = core.lower() if core.isascii() else normalize(core)  # the same for ASCII, 3x faster
        specific = bool(_SPECIFIC.search(core) or _CAMEL.search(core)) or token in NUMBER_WORDS
        out.append((token, specific))
    return out


def _words(token: str) -> list[str]:
    return _WORD.findall(token)


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light English stemmer for comparing words (``caching``, ``caches`` and ``cache`` are ``cach``;
    ``deletion`` and ``deleted`` are ``delet``): plural, past, gerund and ``-ion`` endings, then a final ``e`` or
    ``y`` and a doubled last consonant."""
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, replacement in (("ies", "y"), ("ied", "y"), ("ions", ""), ("ion", ""), ("ing", ""), ("ed", ""),
                                ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) + len(replacement) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                continue
            word = word[: len(word) - len(suffix)] + replacement
            break
    if len(word) > 3 and word[-1] in "ey":
        word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz" and word[-1].isalpha():
        word = word[:-1]
    return word


_OPPOSITE_STEMS = tuple((stem(a), stem(b)) for a, b in OPPOSITES)
_FILLER_STEMS = frozenset(stem(w) for w in FILLER)


def exact_key(text: str) -> str:
    """The form two texts share when they are exact duplicates: normalised case and whitespace, without the
    punctuation around words (``Use uv, not pip.`` and ``use uv not pip`` share it; ``3.0s`` and ``30s`` do
    not)."""
    return " ".join(token for token, _ in _tokens(text))


def informative(text: str) -> int:
    """How many informative tokens ``text`` has: numbers, paths, flags and identifiers, and words of at least two
    characters that are neither stop words nor vague (``ok``, ``done``, ``fixed``, ``see``, ``above``...)."""
    count = 0
    for token, specific in _tokens(text):
        if specific:
            count += 1
        else:
            count += sum(1 for w in _words(token) if len(w) >= 2 and w not in _INFO_STOP)
    return count


@dataclass(frozen=True)
class _Text:
    """What the rules compare of a text."""

    key: str
    content: frozenset[str]  # stems of content words, and specific tokens as they are
    specific: frozenset[str]
    stems: frozenset[str]  # stems of every word (opposites)
    negated: bool
    relations: frozenset[str]
    #: the content terms in the order they come (first occurrences)
    sequence: tuple[str, ...] = ()
    #: (negation or sequence word, the content term after it): what is negated, what comes first
    anchors: frozenset[tuple[str, str]] = frozenset()


def _analyse(text: str) -> _Text:
    content: set[str] = set()
    specific: set[str] = set()
    stems: set[str] = set()
    words: set[str] = set()
    sequence: list[str] = []
    anchors: set[tuple[str, str]] = set()
    waiting: list[str] = []  # negation and sequence words whose next content term is not read yet
    tokens = _tokens(text)
    for token, is_specific in tokens:
        parts = _words(token)
        stems.update(stem(w) for w in parts)
        if is_specific:  # a flag such as --no-verify negates nothing
            specific.add(token)
            terms = [token]
        else:
            words.update(parts)
            terms = []
            for word in parts:
                if word in NEGATIONS or word.endswith("n't"):
                    waiting.append("not")
                elif word in _SEQUENCE:
                    waiting.append(word)
                elif word not in _SIM_STOP and len(word) >= 2:
                    term = stem(word.removesuffix("'s"))
                    if term not in _FILLER_STEMS:
                        terms.append(term)
        for term in terms:
            content.add(term)
            if term not in sequence:
                sequence.append(term)
            anchors.update((w, term) for w in waiting)
            waiting = []
    negated = bool(words & NEGATIONS) or any(w.endswith("n't") for w in words)
    return _Text(" ".join(token for token, _ in tokens), frozenset(content), frozenset(specific), frozenset(stems),
                 negated, frozenset(words & RELATIONS), tuple(sequence), frozenset(anchors))


#: Words that order what follows them ("X, then Y" is not "Y, then X").
_SEQUENCE = frozenset("then before after first next finally prior followed".split())


def _swapped(a: _Text, b: _Text) -> bool:
    """Whether two opposites (or two specific tokens) both texts have trade places: what follows one of them differs
    ("enabled in dev and disabled in prod" / "enabled in prod and disabled in dev"; "reads go to the primary,
    writes to the replica" / the reverse; "SameSite=Strict on A and SameSite=Lax on B" / the reverse). A
    reworded sentence keeps each such word with what it qualifies."""
    shared = set(a.sequence) & set(b.sequence)
    watched = {t for x, y in _OPPOSITE_STEMS if x in shared and y in shared for t in (x, y)}
    keys: dict[str, set[str]] = {}
    for token in a.specific & b.specific:  # settings of one key (SameSite=Strict, SameSite=Lax) trading places
        if "=" in token:
            keys.setdefault(token.split("=", 1)[0], set()).add(token)
    watched |= {t for group in keys.values() if len(group) >= 2 for t in group}
    # an identifier whose place (between the same two neighbours) another term took traded places with it
    # ("physics in FixedUpdate, input in Update"); one moved with its phrase leaves no other term in its place
    identifiers = (a.specific & b.specific & shared) - watched
    if not watched and not identifiers:
        return False

    def neighbours(text: _Text) -> dict[str, tuple[str | None, str | None]]:
        seq = [t for t in text.sequence if t in shared]
        return {t: (seq[i - 1] if i else None, seq[i + 1] if i + 1 < len(seq) else None) for i, t in enumerate(seq)}

    around_a, around_b = neighbours(a), neighbours(b)
    if any(around_a[t][1] != around_b[t][1] for t in watched):
        return True
    places_b = {around: t for t, around in around_b.items()}
    # another term sits where the identifier sat, between the same neighbours
    return any(around_a[t] != around_b[t] and places_b.get(around_a[t], t) != t for t in identifiers)


def _blocked(candidate: _Text, memory: _Text) -> bool:
    """Whether the two say different things however alike their words: the candidate names something specific the
    memory does not (or swaps one of the memory's for other words), one is negated and the other not, they differ
    in words of order or quantity, or one has a word whose opposite the other has."""
    if candidate.specific - memory.specific:
        return True
    if memory.specific - candidate.specific and candidate.content - memory.content:
        return True
    if candidate.negated != memory.negated or candidate.relations != memory.relations:
        return True
    # what is negated, and what comes first after "then", "before"...: the same in both
    if candidate.anchors != memory.anchors:
        shared = candidate.content & memory.content
        held = {x for x in candidate.anchors if x[1] in shared}
        other = {x for x in memory.anchors if x[1] in shared}
        if {x for x in held if x[0] == "not"} != {x for x in other if x[0] == "not"}:
            return True  # another thing negated
        words = {w for w, _ in held if w != "not"} & {w for w, _ in other if w != "not"}
        if any({x for x in held if x[0] == w} != {x for x in other if x[0] == w} for w in words):
            return True  # "X, then Y" / "Y, then X": both order, differently
    if _swapped(candidate, memory):
        return True
    mine, theirs = candidate.stems - memory.stems, memory.stems - candidate.stems
    return any((a in mine and b in theirs) or (b in mine and a in theirs) for a, b in _OPPOSITE_STEMS)


def _swaps(candidate: _Text, memory: _Text) -> bool:
    """Whether the candidate replaces words of the memory by others (each has content words the other lacks), as
    opposed to only adding or only dropping some."""
    return bool(candidate.content - memory.content) and bool(memory.content - candidate.content)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b| (0 for two empty sets)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


# --- chatter ------------------------------------------------------------------------------------------------

_GREETING = (r"hi|hello|hey|good (?:morning|afternoon|evening|night)|thanks(?: a lot| so much)?|thank you(?: so much)?"
             r"|thx|ty|cheers|you're welcome|welcome|no problem|np|bye|goodbye|see you|have a (?:good|great|nice) \w+")
_COMPLETION = (r"done|all done|all set|finished|great|perfect|excellent|awesome|nice|sweet|voila|there we go|"
               r"here we go|that's it|that did it|that worked|it works|success|good news|hooray|yay|wonderful|"
               r"fantastic|brilliant|amazing|looks good|good")
_PLAIN = r"ok|okay|sure(?: thing)?|alright|all right|right|got it|understood|yes|yep|yeah|certainly|of course|" \
         r"absolutely|hmm+|oh|ah|well|so|now|first|next|then|finally|also|lgtm|ack|noted|gotcha"
_OPENER = re.compile(rf"^(?:({_GREETING}|{_COMPLETION})|{_PLAIN})(?:[\s,!.:;\-]+|$)")

#: Narration of what the agent is about to do (only a note to remember turns it into a learning).
_INTENT = re.compile(
    r"^(?:i(?:'ll| will| am going to|'m going to| shall| need to| want to| would like to|'d like to| can| could"
    r"| should| must| have to| '?m about to| am about to)|we(?:'ll| will| are going to|'re going to| need to| can"
    r"| should)|let me|let us|let's(?! (?:always|never|not|use|keep|stick|prefer|avoid|standardi[sz]e|agree|make"
    r" sure|default|go with|adopt|require|pin|treat))|going to|about to|time to|next step|next up|moving on)\b")
_NOTE = re.compile(r"\b(?:note|remember|record|keep in mind|point out|mention|write down|add a note)\b")
#: Narration of what the agent is doing or did (a claim in it turns it into a learning).
_ACTED = (r"(?:fixed|updated|added|removed|changed|created|renamed|refactored|implemented|committed|pushed"
          r"|deleted|moved|wrote|written|edited|modified|bumped|reverted|installed|applied|merged|resolved|tested"
          r"|verified|checked|opened|reviewed|finished|completed|started|ran|tried|looked|made|cleaned up|cleaned)")
#: After "I have" only: as the first word these are imperatives ("Run make test", "Read the docs").
_HAVE_ACTED = rf"(?:{_ACTED}|run|read|done|gone through|gone over|seen to)"
_ACTING = (r"(?:going|checking|looking|running|rerunning|adding|updating|fixing|trying|working|reading|writing"
           r"|creating|editing|investigating|searching|testing|waiting|starting|opening|reviewing|refactoring"
           r"|implementing|moving|debugging|verifying|examining|exploring|applying|installing|removing|deleting"
           r"|doing|taking|digging|scanning|inspecting|analy[sz]ing|continuing|proceeding|finishing|preparing)")
_DOING = re.compile(
    rf"^(?:(?:i(?:'m| am)|we(?:'re| are)) (?:now |currently |still |just |also )?{_ACTING}\b"
    rf"|(?:i(?:'ve| have)|we(?:'ve| have)) (?:now |just |successfully |also |then |finally )?{_HAVE_ACTED}\b"
    rf"|(?:i|we) (?:now |just |successfully |also |then |finally )?{_ACTED}\b"
    rf"|(?:just |now |also |then |finally )?{_ACTED}\b"
    r"|(?:looking|checking|reading|searching|inspecting|examining|investigating|scanning|reviewing|opening"
    r"|waiting|analy[sz]ing|exploring|digging|taking a (?:look|closer look)|trying to|working on|continuing"
    r"|proceeding|moving on|starting|running the|re-?running|rerunning|double-checking|verifying|fixing"
    r"|updating|adding|implementing|writing|creating|editing)\b"
    r"|the following\b)")
#: Talk to the user about the conversation itself (a claim does not turn it into a learning; what follows a colon
#: may be one).
_TALK = re.compile(
    r"^(?:here(?:'s| is| are)\b|below is|as (?:you can see|requested|shown|discussed|mentioned)\b"
    r"|(?:this|that|it) (?:should|will|might|ought to) (?:now )?(?:fix|work|do|resolve|help|solve|address)"
    r"|hopefully\b|let me know\b|feel free\b|happy to help\b|i hope\b|in summary\b|to summari[sz]e\b|summary\b"
    r"|i see\b|i understand\b|how can i help\b|what (?:else )?can i (?:do|help)\b|is there anything else\b"
    r"|anything else\b|i think (?:that's|this is|we're|it's) (?:it|done|good|fine|all)\b|great question\b"
    r"|good (?:question|point|catch)\b)")
#: A claim that outlives the session: it turns narration into a learning.
_CLAIM = re.compile(
    r"\b(?:always|never|must|should(?:n't)?|needs?(?: to)?|requires?|required|by default|defaults? to|because"
    r"|so that|otherwise|instead of|rather than|whenever|unless|in order to|turns out|note that|gotcha|caveat"
    r"|don't|do not|doesn't|does not|isn't|is not|aren't|are not|cannot|can't|won't|only works|works only"
    r"|breaks?|fails? (?:when|if|unless|on|with|for)|(?:is|are) (?:set|configured|located|stored|defined|read"
    r"|loaded|cached|deprecated|ignored|case-sensitive)|lives (?:in|under)|comes from|expects?|causes?"
    r"|prevents?|avoids?|means|the (?:trick|fix|cause|reason|problem|issue|root cause|culprit) (?:is|was)"
    r"|root cause|by \w+ing|caused by|due to|so we|which means|the lesson|lesson learned|learned that"
    r"|found that|realized that|discovered that)\b")
#: Status of the moment, the whole sentence ("The build is running", "All 42 tests pass now").
_STATUS = re.compile(
    r"^(?:(?:the|all|both|\d+)\s+){0,3}(?:build|builds|tests?|test suite|suite|ci|pipeline|job|jobs|checks?"
    r"|deploy(?:ment)?|server|linter|lint|linting|migrations?|command|script|install(?:ation)?|compilation"
    r"|type ?check(?:ing|s)?|mypy|pytest|ruff|everything|it|this|that|things|all|the change|the fix|the pr"
    r"|pr|branch|app|page|container|output)(?: \w+)?\s+(?:(?:is|are|has|have|was|were|seems? to be|looks?)\s+)?"
    r"(?:now |still |all |finally |again |already )?(?:running|passing|passes|passed|pass|green|red|done|finished"
    r"|complete|completed|succeeded|succeeds|started|in progress|failing|fails|failed|fixed|working|works|worked"
    r"|clean|ok|okay|good|fine|up|ready|compiles|compiled|compiling|building|built|merged|deployed|pushed|open"
    r"|been \w+(?:ed|en|t))(?: now| again| fine| locally| successfully| as expected| without errors| on ci"
    r"| for review| to go| correctly| perfectly| too)*$")
_SUMMARY = re.compile(r"^\d+ (?:passed|failed|skipped|errors?|warnings?|tests?|files?)\b")
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+|(?<=\.\.\.)|;\s+")


def _strip_openers(sentence: str) -> tuple[str, bool]:
    """The sentence without its leading interjections, and whether one of them was a greeting, a thanks or a
    cheer (chatter even when nothing follows)."""
    cheer = False
    while True:
        match = _OPENER.match(sentence)
        if not match or match.end() == 0:
            return sentence, cheer
        cheer = cheer or match.group(1) is not None
        sentence = sentence[match.end():].lstrip()


def _greets(text: str) -> bool:
    """Whether ``text`` opens with a greeting, a thanks or a cheer ("Done!", "Great!")."""
    return _strip_openers(normalize(text.translate(_QUOTES)).strip())[1]


def _sentence_is_chatter(sentence: str, min_informative: int) -> bool | None:
    """True for narration or status of the moment, False for anything else; None for nothing but interjections
    that are not chatter by themselves (``ok``)."""
    text = normalize(sentence.translate(_QUOTES)).strip().strip("\"'`*").strip()
    rest, cheer = _strip_openers(text)
    rest = rest.strip(" .!?:;,-")
    if not rest:
        return True if cheer else None
    if cheer and informative(rest) < min_informative:  # "Thank you for your patience!"
        return True
    if _STATUS.match(rest) or _SUMMARY.match(rest) or _TALK.match(rest):
        return True
    if _INTENT.match(rest):
        return not _NOTE.search(rest)
    if _DOING.match(rest):
        return not _CLAIM.search(rest)
    return False


def is_chatter(text: str, min_informative: int = DEFAULT_MIN_INFORMATIVE) -> bool:
    """Whether ``text`` is session chatter: every sentence of it is narration or status of the moment, a greeting
    or thanks, or too little information on its own, and at least one is chatter. A sentence with a claim that
    outlives the session ("... because", "never", "requires", "turns out") is not narration, and a head that is
    (``Here is what I found:``) does not hide what follows its colon."""
    sentences = [s for s in _SENTENCES.split(text.strip()) if s and s.strip(" .!?;")]
    if not sentences:
        return False
    said = False
    for sentence in sentences:
        head, colon, tail = sentence.partition(": ")
        verdict = _sentence_is_chatter(head if colon else sentence, min_informative)
        if colon and verdict and informative(tail) >= min_informative and not is_chatter(tail, min_informative):
            return False
        if verdict is True:
            said = True
        elif verdict is False and informative(sentence) >= min_informative:
            return False
    return said


# --- the gate -----------------------------------------------------------------------------------------------


#: The id a candidate stored earlier in a batch has while the batch is judged (no memory id has a NUL).
_BATCH = "\0batch:"


class Gate:
    """Judges captured candidates against the memories ``existing`` (``(memory id, content)`` pairs).

    ``vectors`` (optional) embeds texts as L2-normalised rows; ``existing_vectors`` are the memories' rows in
    the same order (embedded on first use when not given). ``near`` is the Jaccard similarity of content words
    from which a candidate is a near duplicate, ``semantic_near`` the cosine similarity (with some lexical
    overlap, for a candidate that does not swap words), ``subset_cover`` the share of a memory's words a candidate made only of them must cover,
    ``min_informative`` the least number of informative tokens a candidate needs. :attr:`counts` counts the
    verdicts given, by reason (``store`` for a store).
    """

    def __init__(self, existing: Sequence[tuple[str, str]] = (), *,
                 vectors: Callable[[list[str]], np.ndarray] | None = None,
                 existing_vectors: np.ndarray | None = None, near: float = DEFAULT_NEAR,
                 semantic_near: float = DEFAULT_SEMANTIC_NEAR, subset_cover: float = DEFAULT_SUBSET_COVER,
                 min_informative: int = DEFAULT_MIN_INFORMATIVE) -> None:
        for name, value in (("near", near), ("semantic_near", semantic_near), ("subset_cover", subset_cover)):
            if not isinstance(value, (int, float)) or not 0.0 < value <= 1.0:
                raise InvalidInputError(name, f"must be a number in (0, 1], not {value!r}")
        if not isinstance(min_informative, int) or min_informative < 0:
            raise InvalidInputError("min_informative", f"must be an integer >= 0, not {min_informative!r}")
        self.near, self.semantic_near, self.subset_cover = float(near), float(semantic_near), float(subset_cover)
        self.min_informative = min_informative
        self._embed = vectors
        self._ids: list[str] = []
        self._texts: list[str] = []
        self._features: list[_Text] = []
        self._exact: dict[str, int] = {}
        self._postings: defaultdict[str, list[int]] = defaultdict(list)
        for memory_id, content in existing:
            if not isinstance(memory_id, str) or not isinstance(content, str):
                raise InvalidInputError("existing", "must be (memory id, content) pairs of strings")
            self._add(memory_id, content)
        self._vectors: np.ndarray | None = None
        if existing_vectors is not None:
            rows = np.asarray(existing_vectors, dtype=np.float32)
            if rows.ndim != 2 or rows.shape[0] != len(self._ids):
                raise InvalidInputError("existing_vectors", f"must have one row per existing memory "
                                                            f"({len(self._ids)}), not shape {rows.shape}")
            self._vectors = rows
        #: How many verdicts were given, by reason (``store`` for a store).
        self.counts: Counter[str] = Counter()

    def _add(self, memory_id: str, content: str) -> int:
        index = len(self._ids)
        last = getattr(self, "_last", None)
        features = last[1] if last is not None and last[0] == content else _analyse(content)
        self._ids.append(memory_id)
        self._texts.append(content)
        self._features.append(features)
        self._exact.setdefault(features.key, index)
        for term in features.content:
            self._postings[term].append(index)
        return index

    def _existing_vectors(self) -> np.ndarray | None:
        if self._embed is None:
            return None
        if self._vectors is None:
            self._vectors = (np.asarray(self._embed(list(self._texts)), dtype=np.float32) if self._texts
                             else np.zeros((0, 0), dtype=np.float32))
        return self._vectors

    def judge(self, text: str) -> Verdict:
        """The verdict on one candidate (the gate's memories are not changed: a stored candidate is not counted
        as existing for the next call; use :meth:`judge_all` for a batch)."""
        return self.judge_all([text])[0]

    def judge_all(self, texts: Iterable[str]) -> list[Verdict]:
        """The verdicts on a batch of candidates, in order. A candidate judged ``store`` counts as existing for
        the later ones: a duplicate of it (exact or near) is refused as ``duplicate-in-batch``."""
        texts = list(texts)
        for text in texts:
            if not isinstance(text, str):
                raise InvalidInputError("candidate", f"must be text, not {type(text).__name__}")
        state = (len(self._ids), dict(self._exact), {k: len(v) for k, v in self._postings.items()})
        rows = self._candidate_vectors(texts)
        stored: list[np.ndarray] = []  # the rows of the batch's stored candidates, after the memories'
        verdicts: list[Verdict] = []
        try:
            for position, text in enumerate(texts):
                row = rows[position] if rows is not None else None
                verdict = self._judge(text, row, stored)
                if verdict.match is not None and verdict.match.startswith(_BATCH):
                    verdict = Verdict("refuse", IN_BATCH)
                verdicts.append(verdict)
                self.counts[verdict.reason or verdict.action] += 1
                if verdict.action == "store" and position < len(texts) - 1:
                    self._add(f"{_BATCH}{position}", text)
                    if row is not None:
                        stored.append(row)
        finally:
            self._forget(*state)
        return verdicts

    def _candidate_vectors(self, texts: list[str]) -> np.ndarray | None:
        """The candidates' rows (None without an embedding function), checked against the memories'."""
        if self._embed is None or not texts:
            return None
        rows = np.asarray(self._embed(texts), dtype=np.float32)
        memories = self._existing_vectors()
        if rows.ndim != 2 or rows.shape[0] != len(texts) or (memories is not None and memories.shape[0]
                                                              and memories.shape[1] != rows.shape[1]):
            raise InvalidInputError("vectors", f"answered shape {rows.shape} for {len(texts)} texts"
                                               + (f" of {memories.shape[1]} dimensions" if memories is not None
                                                  and memories.shape[0] else ""))
        return rows

    def _forget(self, size: int, exact: dict[str, int], postings: dict[str, int]) -> None:
        """Drop the batch's candidates again."""
        del self._ids[size:], self._texts[size:], self._features[size:]
        self._exact = exact
        for term in list(self._postings):
            keep = postings.get(term, 0)
            if keep:
                del self._postings[term][keep:]
            else:
                del self._postings[term]

    def add(self, memory_id: str, content: str, row: np.ndarray | None = None) -> None:
        """Count ``content`` as an existing memory from now on (``row``: its vector, when the gate has an embedding
        function; embedded when not given)."""
        if self._embed is None:
            self._add(memory_id, content)
            return
        rows = self._existing_vectors()  # (the memories' before this one)
        self._add(memory_id, content)
        if row is None:
            row = np.asarray(self._embed([content]), dtype=np.float32)[0]
        n = 0 if rows is None else rows.shape[0]
        buffer = getattr(self, "_buffer", None)
        if buffer is None or buffer.shape[0] <= n or buffer.shape[1] != len(row) or (
                n and not np.shares_memory(buffer, rows)):
            # grown by doubling: adding n memories one by one copies O(n) rows, not O(n^2)
            buffer = np.empty((max(16, 2 * (n + 1)), len(row)), dtype=np.float32)
            if n:
                buffer[:n] = rows
        buffer[n] = row
        self._buffer = buffer
        self._vectors = buffer[:n + 1]

    def duplicate_of(self, text: str, row: np.ndarray | None = None) -> Verdict | None:
        """The ``confirm`` verdict (exact or near duplicate, naming the memory) when ``text`` repeats one of the
        gate's memories, else None; chatter and information are not judged (what consolidation asks of two
        stored memories). ``row``: the text's vector, when the gate has an embedding function."""
        features = _analyse(text)
        self._last = (text, features)  # (add() of the same text reuses it)
        if not features.key:
            return None
        if self._embed is not None and row is None:
            row = self._candidate_vectors([text])[0]  # type: ignore[index]
        return self._duplicate(features, row, [])

    def _judge(self, text: str, row: np.ndarray | None, stored: list[np.ndarray]) -> Verdict:
        features = _analyse(text)
        if not features.key:
            return Verdict("refuse", LITTLE)
        exact = self._exact.get(features.key)
        if exact is not None:
            return Verdict("confirm", EXACT, self._ids[exact])
        if only_secret(text):
            return Verdict("refuse", ONLY_SECRET)
        count = informative(text)
        if is_chatter(text, self.min_informative):  # with nothing informative at all, only a greeting is chatter
            return Verdict("refuse", CHATTER if count or _greets(text) else LITTLE)
        if count < self.min_informative:
            return Verdict("refuse", LITTLE)
        return self._duplicate(features, row, stored) or Verdict("store")

    def _duplicate(self, features: _Text, row: np.ndarray | None, stored: list[np.ndarray]) -> Verdict | None:
        exact = self._exact.get(features.key)
        if exact is not None:
            return Verdict("confirm", EXACT, self._ids[exact])
        best, best_score = -1, 0.0
        # prefix filter: a memory with Jaccard >= near lacks at most len - ceil(near * len) of the candidate's
        # terms, so it holds one of that many + 1 of them; the rarest are looked up
        terms = sorted(features.content, key=lambda t: len(self._postings.get(t, ())))
        rare = terms[: len(terms) - math.ceil(self.near * len(terms) - 1e-9) + 1]
        for index in sorted(set().union(*(self._postings.get(t, ()) for t in rare))):
            memory = self._features[index]
            common = len(features.content & memory.content)
            score = common / len(features.content | memory.content)
            subset = (common == len(features.content) and common >= 2
                      and common / len(memory.content) >= self.subset_cover)
            swap = _swaps(features, memory)
            enough = score >= (max(self.near, SWAP_NEAR) if swap else self.near)
            if (enough or subset) and score > best_score and not _blocked(features, memory):
                best, best_score = index, score
        if best < 0 and row is not None:
            memories = self._existing_vectors()
            parts = [memories @ row] if memories is not None and memories.shape[0] else []
            similarity = np.concatenate(parts + [np.asarray(stored) @ row] if stored else parts or [np.zeros(0)])
            close = np.flatnonzero(similarity >= self.semantic_near)  # (sorting only these: 10k memories)
            for index in close[np.argsort(-similarity[close], kind="stable")]:
                memory = self._features[int(index)]
                if (_jaccard(features.content, memory.content) >= SEMANTIC_OVERLAP
                        and not _swaps(features, memory) and not _blocked(features, memory)):
                    best = int(index)
                    break
        if best >= 0:
            return Verdict("confirm", NEAR, self._ids[best])
        return None


def meaning(provider: Any) -> Callable[[list[str]], np.ndarray] | None:
    """The embedding function of ``provider`` (an :class:`~cortex.embeddings.EmbeddingProvider`) for the semantic
    rule, or None: no provider, or the trigram stand-in (``cortex/hash``), which measures shared spelling, not
    meaning."""
    if provider is None or provider.model.startswith("cortex/hash"):
        return None
    return lambda texts: provider.embed(texts)


# What consolidation compares of two stored memories (cortex.consolidation): the same rules, public.
features = _analyse
differs = _blocked
jaccard = _jaccard
swaps = _swaps
