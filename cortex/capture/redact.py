"""Secret redaction before anything captured is stored (docs/capture.md, "Redaction").

Every captured text (marker lines at agent end now; transcripts, LLM output and importers as they come) goes
through :meth:`Redactor.redact` before it becomes a memory: each secret is replaced by a typed placeholder
``[REDACTED:<rule>]`` and counted by rule. An explicit ``store`` keeps its text as given unless redaction is
switched on for it (``CORTEX_REDACT_STORE=1``), and Cortex's own RDF import stays lossless.

The rules are of three kinds, applied in this order (a span is redacted once, by the first rule that finds
it):

1. **Formats of the common providers** (AWS, GitHub, GitLab, OpenAI, Anthropic, Slack, Stripe, Google, npm,
   PyPI, SendGrid, Twilio), JSON Web Tokens and PEM private keys: the key itself is recognisable.
2. **Secrets by their context**: a bearer or basic ``Authorization`` header, a password in a URL
   (``scheme://user:password@host``), a value assigned to a name that says it is secret (``password=``,
   ``api_key:``, ``client_secret =`` ...), unless the value is a placeholder (``<token>``, ``${VAR}``,
   ``xxxx``, ``changeme``...).
3. **High-entropy strings**: a standalone token of 24 or more characters mixing upper case, lower case and
   digits with at least 4.3 bits of entropy per character. Hex strings are never redacted by this rule
   (commit hashes, digests, memory ids: a hex alphabet tops out at 4 bits), nor UUIDs, paths or URLs.

Why not a library: detect-secrets (the well-kept option, evaluated) scans lines of files; on prose its adhoc
scanner reports every word as a high-entropy string and some plugins report only a key's prefix, so it cannot
say which span to replace. The rules here are the providers' documented formats (as gitleaks lists them).

Settings: ``CORTEX_REDACT`` (``on``, the default, or ``off``), ``CORTEX_REDACT_STORE`` (``1``: explicit stores
too), ``CORTEX_REDACT_PATTERNS`` (a file of ``name = regular expression`` lines, added as rules of kind 1).
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cortex.errors import InvalidInputError

REDACT_ENV = "CORTEX_REDACT"
REDACT_STORE_ENV = "CORTEX_REDACT_STORE"
PATTERNS_ENV = "CORTEX_REDACT_PATTERNS"

#: The placeholder a secret becomes.
PLACEHOLDER = "[REDACTED:{}]"


class _Lazy:
    """A regular expression compiled on first use: the ~30 of this module cost ~5 ms to compile, which every
    process that imports the engine (a hook, a CLI command) would pay without capturing anything."""

    __slots__ = ("source", "flags", "_compiled")

    def __init__(self, source: str, flags: int = 0) -> None:
        self.source, self.flags = source, flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.source, self.flags)
        return self._compiled

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(text)

    def match(self, text: str) -> re.Match[str] | None:
        return self.compiled.match(text)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        return self.compiled.fullmatch(text)

    def search(self, text: str) -> re.Match[str] | None:
        return self.compiled.search(text)

    def findall(self, text: str) -> list[Any]:
        return self.compiled.findall(text)


@dataclass(frozen=True)
class Rule:
    """A kind of secret: ``pattern`` finds it; what is replaced is the first of the groups ``groups`` that took
    part in the match (none: the whole match)."""

    name: str
    pattern: re.Pattern[str] | _Lazy
    groups: tuple[str, ...] = ()
    #: A further check of a match (e.g. that the name assigned to is a secret's, not ``token_count``).
    accept: Callable[[re.Match[str]], bool] | None = None
    #: Characters that may not come right before a match (a boundary checked here rather than by a leading
    #: lookbehind, which would keep the regex engine from scanning for the key's literal prefix: 20x slower).
    not_after: str = ""

    def bounded(self, match: re.Match[str]) -> bool:
        """Whether the character before ``match`` is allowed there."""
        start = match.start()
        return not self.not_after or start == 0 or match.string[start - 1] not in self.not_after

    def span(self, match: re.Match[str]) -> tuple[int, int]:
        """The span of ``match`` to replace ((-1, -1) when none of the groups took part)."""
        if not self.groups:
            return match.span()
        for name in self.groups:
            if match.group(name) is not None:
                return match.span(name)
        return -1, -1


_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _rule(name: str, pattern: str, *groups: str, accept: Callable[[re.Match[str]], bool] | None = None,
          not_after: str = "") -> Rule:
    return Rule(name, _Lazy(pattern), groups, accept, not_after)


#: Kind 1: keys whose format names them.
PROVIDER_RULES: tuple[Rule, ...] = (
    _rule("private-key", r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
                         r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)"),
    _rule("aws-access-key", r"A(?:KIA|SIA|BIA|CCA|3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])", not_after=_ALNUM),
    _rule("github-token", r"gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255}", not_after=_ALNUM + "_"),
    _rule("gitlab-token", r"glpat-[A-Za-z0-9_-]{20,}", not_after=_ALNUM + "_-"),
    _rule("anthropic-key", r"sk-ant-[a-z]{2,8}\d{0,3}-[A-Za-z0-9_-]{20,}", not_after=_ALNUM + "_-"),
    _rule("openai-key", r"sk-(?!ant-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}", not_after=_ALNUM + "_-"),
    _rule("slack-token", r"xox[abposr]-[A-Za-z0-9-]{10,}", not_after=_ALNUM),
    _rule("slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]+"),
    _rule("stripe-key", r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}", not_after=_ALNUM),
    _rule("google-api-key", r"AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])", not_after=_ALNUM),
    _rule("npm-token", r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])", not_after=_ALNUM),
    _rule("pypi-token", r"pypi-AgE[A-Za-z0-9_-]{50,}", not_after=_ALNUM),
    _rule("sendgrid-key", r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}", not_after=_ALNUM),
    _rule("twilio-key", r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", not_after=_ALNUM),
    _rule("jwt", r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", not_after=_ALNUM + "_-"),
)

#: Values that only stand for a secret (documentation, templates): never redacted as one.
_PLACEHOLDER_VALUE = _Lazy(
    r"^(?:<[^>]*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{.*\}\}|%\(?[A-Za-z_]+\)?s?|\*+|x+|X+|\.{3,}|"
    r"(?:your|my|the|some|example|sample|dummy|fake|test)[-_]?[a-z_-]*|changeme|password|secret|token|"
    r"none|null|nil|true|false|undefined|redacted|string|str|text|value|number|integer|boolean|\[REDACTED:[a-z0-9-]+\])$", re.IGNORECASE)

#: A value after ``=`` or ``:``: quoted (spaces allowed) or bare.
_VALUE = r"""(?:"(?P<dq>[^"\n]{6,200})"|'(?P<sq>[^'\n]{6,200})'|(?P<bare>[^\s"'`,;)]{6,200}))"""

#: Kind 2: secrets by their context. Each pattern starts with a literal where it can (fast to scan for).
CONTEXT_RULES: tuple[Rule, ...] = (
    _rule("bearer-token", r"(?:Bearer|bearer|BEARER)\s+(?P<v>[A-Za-z0-9._~+/-]{16,}=*)", "v", not_after=_ALNUM),
    _rule("basic-auth", r"(?:Authorization|authorization|AUTHORIZATION)\s*[:=]\s*[\"']?(?:Basic|basic|BASIC)\s+"
                        r"(?P<v>[A-Za-z0-9+/]{8,}=*)", "v"),
    _rule("url-password", r"://[^\s:/@]{1,100}:(?P<v>[^\s@/]{1,200})@", "v"),
    # found by its operator; the name before it is read and judged in _assigned_secret
    _rule("assigned-secret", r"(?::=|=>|[:=])[ \t]*" + _VALUE, "dq", "sq", "bare",
          accept=lambda m: _assigned_secret(m)),
)

#: What a name must contain to hold a secret.
_SECRET_NAME = _Lazy(r"passw(?:or)?d|passwd|pwd|pass(?:$|[_.-])|secret|token|api[_-]?key|apikey|"
                          r"access[_-]?key|private[_-]?key|auth[_-]?key|credentials?")

#: Names that mention a secret without holding one: ``token_count``, ``password_min_length``, ``secret_name``.
_NOT_A_SECRET_NAME = _Lazy(
    r"(?i)(?:^|[_.-])(?:counts?|len|length|size|limit|max|min|ttl|type|kind|name|names|id|ids|file|path|dir|url|"
    r"uri|env|var|field|hint|policy|expiry|expires|timeout|header|prefix|format|usage|used|budget)$|"
    r"^(?:max|min|num|n)[_.-]")


#: Bare values that are not secrets: numbers and amounts, words, CONSTANT names, paths, dotted names, code.
_NOT_A_SECRET_VALUE = _Lazy(
    r"[£$€¥]?[\d.,:-]+%?|[A-Za-z][a-z]+|[A-Z][A-Z0-9_]{2,}|[/~.][^\s]*|[A-Za-z][a-z]+(?:[/._-][A-Za-z][a-z]+)+/?|"
    r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+|[\w.-]+\.[A-Za-z]{2,5}|.*[(\[{$<>\\].*")


_PATH_VALUE = _Lazy(r"[/~][^\s]*|[A-Za-z]:\\.*|[\w.-]+\.(?:json|ya?ml|pem|key|txt|env|cfg|ini|toml|p12|pfx|crt|"
                         r"csv|py|js|ts)")


def _assigned_secret(match: re.Match[str]) -> bool:
    """Whether a value assigned to a name (``name = value``, ``"name": "value"``) is a secret: the name says it
    holds one and is not a secret's metadata (``token_count``), and a bare value is not a number, a word, a
    constant's name, a path or code."""
    text = match.string
    end = match.start()
    while end > 0 and text[end - 1] in " \t\"'":
        end -= 1
    start = end
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
        start -= 1
    name = text[start:end].lower()
    if not name or not _SECRET_NAME.search(name) or _NOT_A_SECRET_NAME.search(name):
        return False
    if start > 0 and text[start - 1] == "$":
        return False  # $token = ...: a variable in code
    bare = match.group("bare")
    if bare is None:  # quoted: passphrases have spaces and one kind of letter; but not a path or a file name
        return not _PATH_VALUE.fullmatch(match.group("dq") or match.group("sq") or "")
    return not _NOT_A_SECRET_VALUE.fullmatch(bare)


_TOKEN = _Lazy(r"(?<![A-Za-z0-9+/=_.:@-])[A-Za-z0-9+/=_-]{24,}(?![A-Za-z0-9+/=_-])")
_HEX = _Lazy(r"^[0-9a-fA-F]+$")
_UUID = _Lazy(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_DIGEST_PREFIX = _Lazy(r"(?i)(?:sha(?:1|224|256|384|512)|md5|blake2[bs]?)[-_:]")
_WORDS = _Lazy(r"[a-z]{3,}|[A-Z][a-z]{2,}")  # runs of letters that read as words (identifiers, prose)


def entropy(text: str) -> float:
    """Shannon entropy of ``text`` in bits per character."""
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _high_entropy(token: str) -> bool:
    if _HEX.match(token) or _UUID.match(token.strip("-")):
        return False
    if sum(len(w) for w in _WORDS.findall(token)) >= 0.5 * len(token):
        return False  # an identifier such as getUserByEmailAddress2 or a slug, not a key
    if not (re.search(r"[a-z]", token) and re.search(r"[A-Z]", token) and re.search(r"[0-9]", token)):
        return False
    if len(token) > 128:
        return False  # a data blob (an image, a file as base64): keys are shorter, PEM keys have their own rule
    if _DIGEST_PREFIX.match(token):
        return False  # a content digest (sha512-..., an npm lockfile's integrity): public, not a secret
    return entropy(token) >= 4.3


@dataclass
class Redacted:
    """A text with its secrets replaced, and how many of each rule."""

    text: str
    counts: Counter[str] = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True)
class Redactor:
    """Replaces secrets by placeholders (see the module's docstring). ``enabled`` False passes text through;
    ``store`` says whether explicit stores are redacted too; ``extra`` rules are checked with the providers'."""

    enabled: bool = True
    store: bool = False
    extra: tuple[Rule, ...] = ()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "Redactor":
        """The redactor the environment configures (``CORTEX_REDACT``, ``CORTEX_REDACT_STORE``,
        ``CORTEX_REDACT_PATTERNS``); a bad setting raises :class:`InvalidInputError` naming it."""
        env = os.environ if environ is None else environ
        mode = env.get(REDACT_ENV, "on").strip().lower()
        if mode not in ("on", "off", "1", "0", "true", "false"):
            raise InvalidInputError(REDACT_ENV, f"must be on or off, not {mode!r}")
        store = env.get(REDACT_STORE_ENV, "0").strip().lower()
        if store not in ("on", "off", "1", "0", "true", "false"):
            raise InvalidInputError(REDACT_STORE_ENV, f"must be on or off, not {store!r}")
        patterns = env.get(PATTERNS_ENV)
        extra = tuple(load_patterns(Path(patterns))) if patterns else ()
        return cls(enabled=mode in ("on", "1", "true"), store=store in ("on", "1", "true"), extra=extra)

    @property
    def rules(self) -> tuple[Rule, ...]:
        return PROVIDER_RULES + self.extra + CONTEXT_RULES

    def redact(self, text: str) -> Redacted:
        """``text`` with every secret replaced by ``[REDACTED:<rule>]``, and the counts by rule."""
        spans = self.find(text)
        if not spans:
            return Redacted(text)
        out, last, counts = [], 0, Counter[str]()
        for start, end, name in spans:
            out += [text[last:start], PLACEHOLDER.format(name)]
            last = end
            counts[name] += 1
        out.append(text[last:])
        return Redacted("".join(out), counts)

    def scrub(self, text: str, counts: Counter[str]) -> str:
        """``text`` redacted, its counts added to ``counts`` (for a caller that redacts several texts and reports
        them once)."""
        done = self.redact(text)
        counts.update(done.counts)
        return done.text

    def find(self, text: str) -> list[tuple[int, int, str]]:
        """The secrets in ``text``: (start, end, rule) spans, in order, never overlapping (none when disabled)."""
        if not self.enabled or not text:
            return []
        spans: list[tuple[int, int, str]] = []

        def free(start: int, end: int) -> bool:
            return all(end <= s or start >= e for s, e, _ in spans)

        for rule in self.rules:
            for match in rule.pattern.finditer(text):
                if not rule.bounded(match):
                    continue
                start, end = rule.span(match)
                if start < 0 or start == end:
                    continue
                if rule in CONTEXT_RULES and _PLACEHOLDER_VALUE.match(text[start:end]):
                    continue
                if rule.accept is not None and not rule.accept(match):
                    continue
                if free(start, end):
                    spans.append((start, end, rule.name))
        for match in _TOKEN.finditer(text):
            start, end = match.span()
            if free(start, end) and _high_entropy(match.group()):
                spans.append((start, end, "high-entropy"))
        return sorted(spans)


_NAME = _Lazy(r"^[a-z0-9][a-z0-9-]{0,40}$")


def load_patterns(path: Path) -> list[Rule]:
    """Rules from a file of ``name = regular expression`` lines (``#`` comments and blank lines skipped); a
    bad line raises :class:`InvalidInputError` naming the file, the line and the problem."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InvalidInputError(PATTERNS_ENV, f"cannot read {path}: {exc.strerror}") from None
    rules = []
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, sep, pattern = line.partition("=")
        name, pattern = name.strip(), pattern.strip()
        if not sep or not _NAME.match(name) or not pattern:
            raise InvalidInputError(PATTERNS_ENV, f"{path}:{number}: expected 'name = regular expression' with a "
                                                  "lowercase name (a-z, 0-9, '-')")
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            raise InvalidInputError(PATTERNS_ENV, f"{path}:{number}: {exc}") from None
        if compiled.match(""):
            raise InvalidInputError(PATTERNS_ENV, f"{path}:{number}: the expression matches the empty string")
        rules.append(Rule(name, compiled))
    return rules
