"""Secret redaction before anything captured is stored (docs/capture.md, "Redaction").

Every captured text (marker lines at agent end now; transcripts, LLM output and importers as they come) goes
through :meth:`Redactor.redact` before it becomes a memory: each secret is replaced by a typed placeholder
``[REDACTED:<rule>]`` and counted by rule. An explicit ``store`` keeps its text as given unless redaction is
switched on for it (``CORTEX_REDACT_STORE=1``), and Cortex's own RDF import stays lossless.

The rules are of three kinds, applied in this order (a span is redacted once, by the first rule that finds
it; :meth:`Redactor.find` reports the exact spans):

1. **Formats of the providers** (~70 rules after gitleaks' rule set: AWS, GitHub, GitLab, OpenAI, Anthropic,
   Slack, Stripe ``sk_``/``rk_``/``whsec_``, Google, Telegram, Discord, Shopify, Databricks, Mailgun,
   DigitalOcean, New Relic, Vault, age, Azure, Heroku, Hugging Face, Linear, Notion, Postman, Grafana, Doppler,
   Pulumi, Atlassian...), JSON Web Tokens and PEM private keys: the key itself is recognisable. Each runs only
   when one of its literals is in the text.
2. **Secrets by their context**: a bearer or basic ``Authorization`` header, a password in a URL
   (``scheme://user:password@host``, ``redis://:password@host``), a command line's password (``mysql -pX``,
   ``sshpass -p X``, ``curl -u user:X``, ``--password X``), a password or key named in prose ("the db password
   is X"), and a value assigned to a name that says it is secret (``password=``, ``api_key:``,
   ``client_secret =`` ...), read from the name nearest each operator whatever came before on the line; never a
   placeholder (``<token>``, ``${VAR}``, ``xxxx``, ``changeme``...).
3. **High-entropy strings**: a token of 24 to 128 characters mixing upper case, lower case and digits with at
   least 4.3 bits of entropy per character, standalone or assigned. Hex strings are never redacted by this rule
   (commit hashes, digests, memory ids: a hex alphabet tops out at 4 bits), nor UUIDs, absolute file paths
   (``LD_LIBRARY_PATH=/home/u/nvidia/cuDNN9/CUDA12x/lib64``; one with a key-like directory stays redacted), base64
   of printable text,
   or what is public by design (Stripe publishable keys and object ids, a JWT's header alone, SSH and PGP public
   keys, certificates, ``data:`` URIs, integrity digests).

Why not a library: on the corpus of bench/data/redaction (docs/capture.md, "Measured") detect-secrets 1.5.0
catches 0.93 of the secrets but flags 97% of the look-alikes (its entropy plugins report every word of prose;
some plugins report only a key's prefix, so it cannot say which span to replace), and credsweeper 1.19.5 catches
0.88 with 16% false positives and installs ~400 MB; these rules catch all with none.

Settings: ``CORTEX_REDACT`` (``on``, the default, or ``off``), ``CORTEX_REDACT_STORE`` (``1``: explicit stores
too), ``CORTEX_REDACT_PATTERNS`` (a file of ``name = regular expression`` lines, added as rules of kind 1).
"""

from __future__ import annotations

import base64
import bisect
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
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
    #: Whether the span loses surrounding quotes and trailing sentence punctuation (a value read from prose or a
    #: command line: ``-p'pw'``, "the password is pw.").
    trim: bool = False
    #: A part of the key before what ``pattern`` finds, checked in code (``lead`` must match at the end of the
    #: ``lead_max`` characters before the match; the span then starts where it does): the pattern can then
    #: start with the key's literal middle (``Q~``, ``:AA``), which the regex engine scans for quickly.
    lead: _Lazy | None = None
    lead_max: int = 0
    #: Literals of which the text must hold one for the rule to run (``str``'s search is ~50x faster than a
    #: regular expression's scan: most texts hold no key at all).
    needles: tuple[str, ...] = ()

    def may_match(self, text: str) -> bool:
        """Whether ``text`` holds one of the rule's literals (True for a rule without any)."""
        return not self.needles or any(needle in text for needle in self.needles)

    def extend(self, match: re.Match[str]) -> int:
        """Where the key found by ``match`` starts (-1: the part before it is missing)."""
        if self.lead is None:
            return match.start()
        start = match.start()
        found = self.lead.search(match.string[max(0, start - self.lead_max):start])
        return -1 if found is None else start - (min(start, self.lead_max) - found.start())

    def bounded(self, match: re.Match[str]) -> bool:
        """Whether the character before ``match`` is allowed there."""
        start = self.extend(match)
        if start < 0:
            return False
        return not self.not_after or start == 0 or match.string[start - 1] not in self.not_after

    def span(self, match: re.Match[str]) -> tuple[int, int]:
        """The span of ``match`` to replace ((-1, -1) when none of the groups took part)."""
        if not self.groups:
            return match.span()
        for name in self.groups:
            if match.group(name) is not None:
                return _strip(match, name) if self.trim else match.span(name)
        return -1, -1


_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _rule(name: str, pattern: str, *groups: str, accept: Callable[[re.Match[str]], bool] | None = None,
          not_after: str = "", trim: bool = False, lead: str = "", lead_max: int = 0,
          needles: tuple[str, ...] = ()) -> Rule:
    return Rule(name, _Lazy(pattern), groups, accept, not_after, trim, _Lazy(lead + "$") if lead else None, lead_max,
                needles)


#: Kind 1: keys whose format names them (the providers' documented formats, as gitleaks' rule set lists them).
PROVIDER_RULES: tuple[Rule, ...] = (
    _rule("private-key", r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
                         r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)"),
    _rule("aws-access-key", r"A(?:KIA|SIA|BIA|CCA|3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])", not_after=_ALNUM),
    _rule("github-token", r"gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255}", not_after=_ALNUM + "_"),
    _rule("gitlab-token", r"gl(?:pat|rt|dt|ptt|ft|imt|oas|cbt|soat|agent)-[A-Za-z0-9_-]{20,}|GR1348941[A-Za-z0-9_-]{20,}",
          not_after=_ALNUM + "_-"),
    _rule("anthropic-key", r"sk-ant-[a-z]{2,8}\d{0,3}-[A-Za-z0-9_-]{20,}", not_after=_ALNUM + "_-"),
    _rule("openai-key", r"sk-(?!ant-)(?:proj-|svcacct-|admin-|None-|or-v1-)?[A-Za-z0-9_-]{20,}",
          not_after=_ALNUM + "_-", accept=lambda m: _keylike(m.group())),
    _rule("slack-token", r"xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Z0-9]+-\d+-[a-f0-9]+", not_after=_ALNUM),
    _rule("slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+"),
    _rule("stripe-key", r"[sr]k_(?:live|test|prod)_[A-Za-z0-9]{16,}", not_after=_ALNUM),
    _rule("stripe-webhook-secret", r"whsec_[A-Za-z0-9+/=]{24,}", not_after=_ALNUM),
    _rule("google-api-key", r"AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])", not_after=_ALNUM),
    _rule("npm-token", r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])", not_after=_ALNUM),
    _rule("pypi-token", r"pypi-AgE[A-Za-z0-9_-]{50,}", not_after=_ALNUM),
    _rule("sendgrid-key", r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}", not_after=_ALNUM),
    _rule("twilio-key", r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", not_after=_ALNUM),
    _rule("jwt", r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", not_after=_ALNUM + "_-"),
    _rule("telegram-bot-token", r":AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])", not_after=_ALNUM, lead=r"(?<!\d)\d{8,10}",
          lead_max=11),
    _rule("discord-webhook", r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d{17,20}/[A-Za-z0-9_-]{60,}"),
    _rule("discord-bot-token", r"[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![A-Za-z0-9_-])",
          not_after=_ALNUM + "_-.", accept=lambda m: _keylike(m.group())),
    _rule("shopify-token", r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}", not_after=_ALNUM),
    _rule("databricks-token", r"dapi[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9])", not_after=_ALNUM),
    _rule("mailgun-key", r"key-[a-f0-9]{32}(?![A-Za-z0-9])", not_after=_ALNUM),
    _rule("digitalocean-token", r"do[opr]_v1_[a-f0-9]{64}", not_after=_ALNUM),
    _rule("newrelic-key", r"NR(?:AK|II|JS|AA|RA)-[A-Z0-9]{19,27}(?![A-Za-z0-9])", not_after=_ALNUM),
    _rule("vault-token", r"hv[sbr]\.[A-Za-z0-9_-]{24,}", not_after=_ALNUM),
    _rule("age-secret-key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    _rule("azure-client-secret", r"Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])", not_after=_ALNUM + "_~.-",
          lead=r"[A-Za-z0-9_~.]{3}\d", lead_max=4),
    _rule("heroku-key", r"HRKU-AA[A-Za-z0-9_-]{58}", not_after=_ALNUM),
    *(_rule("huggingface-token", prefix + r"[A-Za-z]{34}(?![A-Za-z0-9])", not_after=_ALNUM)
      for prefix in ("hf_", "api_org_")),
    _rule("linear-key", r"lin_(?:api|oauth)_[A-Za-z0-9]{40}", not_after=_ALNUM),
    _rule("notion-token", r"ntn_\d{11}[A-Za-z0-9]{32,35}", not_after=_ALNUM),
    _rule("notion-token", r"secret_[A-Za-z0-9]{43}(?![A-Za-z0-9])", not_after=_ALNUM),
    _rule("postman-key", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}", not_after=_ALNUM),
    *(_rule("grafana-token", pattern, not_after=_ALNUM) for pattern in (
        r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}", r"glc_[A-Za-z0-9+/]{32,400}={0,2}", r"eyJrIjoi[A-Za-z0-9]{70,400}={0,2}")),
    _rule("doppler-token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9]{1,32}\.)?[A-Za-z0-9]{40,44}", not_after=_ALNUM),
    _rule("pulumi-token", r"pul-[a-f0-9]{40}", not_after=_ALNUM),
    _rule("atlassian-token", r"ATATT3[A-Za-z0-9_=-]{150,250}|ATCTT3[A-Za-z0-9_=-]{150,250}", not_after=_ALNUM),
    _rule("sentry-token", r"sntry[su]_[A-Za-z0-9_=+/-]{60,}", not_after=_ALNUM),
    _rule("supabase-token", r"sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{30,}", not_after=_ALNUM),
    _rule("planetscale-token", r"pscale_(?:pw|tkn|oauth)_[A-Za-z0-9_.-]{32,64}", not_after=_ALNUM),
    _rule("flyio-token", r"fo1_[A-Za-z0-9_-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3}", not_after=_ALNUM),
    _rule("dynatrace-token", r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}"),
    _rule("square-token", r"sq0(?:atp-[A-Za-z0-9_-]{22,60}|csp-[A-Za-z0-9_-]{40,64})", not_after=_ALNUM),
    _rule("square-token", r"EAAA[A-Za-z0-9_-]{22,60}", not_after=_ALNUM),
    _rule("mailchimp-key", r"-us\d{1,2}(?![0-9])", not_after=_ALNUM, lead=r"[a-f0-9]{32}", lead_max=32),
    _rule("alibaba-key", r"LTAI[A-Za-z0-9]{20}(?![A-Za-z0-9])", not_after=_ALNUM),
    _rule("cloudflare-key", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}", not_after=_ALNUM),
    _rule("terraform-token", r"\.atlasv1\.[A-Za-z0-9_=-]{60,70}", not_after=_ALNUM, lead=r"[a-z0-9]{14}",
          lead_max=14),
    _rule("contentful-token", r"CFPAT-[A-Za-z0-9_-]{43}", not_after=_ALNUM),
    _rule("airtable-token", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}", not_after=_ALNUM),
    _rule("rubygems-key", r"rubygems_[a-f0-9]{48}", not_after=_ALNUM),
    _rule("brevo-key", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", not_after=_ALNUM),
    _rule("shippo-token", r"shippo_(?:live|test)_[a-f0-9]{40}", not_after=_ALNUM),
    _rule("mapbox-token", r"sk\.eyJ1Ijoi[A-Za-z0-9_.-]{40,}", not_after=_ALNUM),
    _rule("replicate-token", r"r8_[A-Za-z0-9]{37}(?![A-Za-z0-9])", not_after=_ALNUM),
    _rule("groq-key", r"gsk_[A-Za-z0-9]{52}", not_after=_ALNUM),
    _rule("xai-key", r"xai-[A-Za-z0-9]{80}", not_after=_ALNUM),
    _rule("perplexity-key", r"pplx-[A-Za-z0-9]{48}", not_after=_ALNUM),
    _rule("langsmith-key", r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}", not_after=_ALNUM),
    _rule("prefect-key", r"pnu_[A-Za-z0-9]{36}", not_after=_ALNUM),
    _rule("twitter-bearer", r"AAAAAAAAAAAAAAAAAAAAA[A-Za-z0-9%]{30,}"),
    _rule("facebook-token", r"EAA[MC][A-Za-z0-9]{100,}", not_after=_ALNUM),
)

#: Each provider rule's literals: a rule runs only on a text that holds one of them.
_NEEDLES: dict[str, tuple[str, ...]] = {
    "private-key": ("PRIVATE KEY",), "aws-access-key": ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
    "github-token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "gitlab-token": ("glpat-", "glrt-", "gldt-", "glptt-", "glft-", "glimt-", "gloas-", "glcbt-", "glsoat-",
                     "glagent-", "GR1348941"),
    "anthropic-key": ("sk-ant-",), "openai-key": ("sk-",), "slack-token": ("xox", "xapp-"),
    "slack-webhook": ("hooks.slack.com",), "stripe-key": ("k_live_", "k_test_", "k_prod_"),
    "stripe-webhook-secret": ("whsec_",), "google-api-key": ("AIza",), "npm-token": ("npm_",),
    "pypi-token": ("pypi-AgE",), "sendgrid-key": ("SG.",), "twilio-key": ("SK",), "jwt": ("eyJ",),
    "telegram-bot-token": (":AA",), "discord-webhook": ("discord",), "shopify-token": ("shpat_", "shpss_", "shpca_",
                                                                                        "shppa_"),
    "databricks-token": ("dapi",), "mailgun-key": ("key-",), "digitalocean-token": ("_v1_",), "newrelic-key": ("NR",),
    "vault-token": ("hvs.", "hvb.", "hvr."), "age-secret-key": ("AGE-SECRET-KEY-1",), "azure-client-secret": ("Q~",),
    "heroku-key": ("HRKU-",), "huggingface-token": ("hf_", "api_org_"), "linear-key": ("lin_",),
    "notion-token": ("ntn_", "secret_"), "postman-key": ("PMAK-",), "grafana-token": ("glsa_", "glc_", "eyJrIjoi"),
    "doppler-token": ("dp.",), "pulumi-token": ("pul-",), "atlassian-token": ("ATATT3", "ATCTT3"),
    "sentry-token": ("sntry",), "supabase-token": ("sbp_", "sb_secret_"), "planetscale-token": ("pscale_",),
    "flyio-token": ("fo1_", "fm1", "fm2"), "dynatrace-token": ("dt0c01.",), "square-token": ("sq0", "EAAA"),
    "mailchimp-key": ("-us",), "alibaba-key": ("LTAI",), "cloudflare-key": ("v1.0-",),
    "terraform-token": (".atlasv1.",), "contentful-token": ("CFPAT-",), "airtable-token": ("pat",),
    "rubygems-key": ("rubygems_",), "brevo-key": ("xkeysib-",), "shippo-token": ("shippo_",),
    "mapbox-token": ("sk.eyJ",), "replicate-token": ("r8_",), "groq-key": ("gsk_",), "xai-key": ("xai-",),
    "perplexity-key": ("pplx-",), "langsmith-key": ("lsv2_",), "prefect-key": ("pnu_",),
    "twitter-bearer": ("AAAAAAAAAAAAAAAAAAAAA",), "facebook-token": ("EAA",),
}
PROVIDER_RULES = tuple(replace(rule, needles=_NEEDLES.get(rule.name, ())) for rule in PROVIDER_RULES)

#: Values that only stand for a secret (documentation, templates): never redacted as one.
_PLACEHOLDER_VALUE = _Lazy(
    r"^(?:<[^>]*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\(.*\)|\{\{.*\}\}|%\(?[A-Za-z_]+\)?s?|\*+|x+|X+|\.{3,}|"
    r"(?:your|my|the|some|example|sample|dummy|fake|test)[-_]?[a-z_-]*|changeme|password|secret|token|"
    r"none|null|nil|true|false|undefined|redacted|string|str|text|value|number|integer|boolean|"
    r"\[REDACTED:[a-z0-9-]+\]|.*(?:\.{3}|x{3,}|X{3,}|\*{3,}|_HERE|_here|<[^>]*>|\$\{[^}]*\}))$", re.IGNORECASE)

_CLI_VALUE = r"""(?P<v>'[^'\n]+'|"[^"\n]+"|[^\s'"]+)"""

#: Kind 2: secrets by their context. Each pattern starts with a literal where it can (fast to scan for).
CONTEXT_RULES: tuple[Rule, ...] = (
    _rule("bearer-token", r"(?:Bearer|bearer|BEARER)\s+(?P<v>[A-Za-z0-9._~+/-]{16,}=*)", "v", not_after=_ALNUM,
          needles=("Bearer", "bearer", "BEARER")),
    _rule("basic-auth", r"(?:Authorization|authorization|AUTHORIZATION)\s*[:=]\s*[\"']?(?:Basic|basic|BASIC)\s+"
                        r"(?P<v>[A-Za-z0-9+/]{8,}=*)", "v", needles=("Basic", "basic", "BASIC")),
    _rule("url-password", r"://[^\s:/@]{0,100}:(?P<v>[^\s@/]{1,200})@", "v", needles=("://",)),
    # a command line's password: mysql -pX, sshpass -p X, curl -u user:X, docker login -p X, redis-cli -a X
    *(_rule("password", pattern, "v", accept=lambda m: _cli_value(m), trim=True,
            needles=("mysql", "mariadb", "sshpass", "curl", "wget", "login", "redis-cli", "--", "aws")) for pattern in (
        r"(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]{0,200}?\s-p" + _CLI_VALUE,
        r"sshpass\s+-p\s*" + _CLI_VALUE,
        r"curl\b[^\n]{0,200}?\s(?:-u|--user)[ =]?['\"]?[^\s:'\"@]{0,100}:(?P<v>[^\s'\"]+)",
        r"wget\b[^\n]{0,200}?\s--(?:http-)?password[ =]" + _CLI_VALUE,
        r"login\b[^\n]{0,200}?\s-p\s+" + _CLI_VALUE,
        r"redis-cli\b[^\n]{0,200}?\s-a\s+" + _CLI_VALUE,
        (r"--(?:[a-z]+-)*(?:password|passwd|pass|token|secret|api-key|apikey|access-key|secret-key|client-secret)\s+"
         r"(?P<v>'[^'\n]+'|\"[^\"\n]+\"|[^\s'\"-][^\s'\"]*)"),
        r"aws\s+configure\s+set\s+\S*(?:secret|token)\S*\s+(?P<v>\S+)")),
)

#: A password or key named in a sentence ("the db password is X", "use the access token X for ..."): tried
#: only around the words that name a secret (:func:`_keyword_hits`).
PROSE_RULE: Rule = _rule("named-secret", r"(?i:\b(?P<w>pass(?:word|phrase|wd)|pwd|secret(?:[ _-]key)?|(?:api|access|auth|secret|"
                      r"private|signing|encryption)[ _-]key|token)s?\b(?:(?:\s+(?:for|of|on|to)\s+(?:the\s+)?"
                      r"[\w.-]+(?:\s+[\w.-]+)?)?\s+(?:(?:(?:is|was|has\s+been)\s+)?(?:set|changed|reset|updated)\s+to|"
                      r"is|was|are|has\s+been|is\s+now|now|became)(?:\s+now)?\s+|\s+)[`\"']?(?P<v>[^\s`\"']{6,200}))", "v",
          accept=lambda m: _prose_value(m), trim=True)

_NAME_CHARS = frozenset(_ALNUM + "_.-")

#: What a name must contain to hold a secret.
_SECRET_NAME = _Lazy(r"passw(?:or)?d|passwd|passphrase|pwd|pass(?:$|[_.-])|secret|token|api[_-]?key|apikey|"
                     r"access[_-]?key|private[_-]?key|auth[_-]?key|credentials?|account[_-]?key|"
                     r"sharedaccesskey|(?:encryption|signing|master|license|hmac|session|app|client|crypt|"
                     r"jwt)[_-]?key$")

#: Names that mention a secret without holding one: ``token_count``, ``password_min_length``, ``secret_name``.
_NOT_A_SECRET_NAME = _Lazy(
    r"(?i)(?:^|[_.-])(?:counts?|len|length|size|limit|max|min|ttl|type|kind|name|names|id|ids|file|path|dir|url|"
    r"uri|env|var|field|hint|policy|expiry|expires|timeout|header|prefix|format|usage|used|budget|endpoint|"
    r"method|ref|hashers?|mode|source|sources)$|^(?:max|min|num|n)[_.-]|(?:^|[_.-])public(?:[_.-]|$)")

#: Bare values that are not secrets: numbers and amounts, words, CONSTANT names, paths, dotted names, code.
_NOT_A_SECRET_VALUE = _Lazy(
    r"[£$€¥]?[\d.,:-]+%?|[A-Za-z][a-z]+|[A-Z][A-Z0-9_]{2,}|[/~.][^\s]*|[A-Za-z][a-z]+(?:[/._-][A-Za-z][a-z]+)+/?|"
    r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+|[\w.-]+\.[A-Za-z]{2,5}|"
    r"[$%@&{<(\[\\].*|![A-Za-z_]+|[a-z]+(?::[A-Za-z0-9_.-]+)+|:?[A-Za-z_][\w.\\]*\(.*\)?|[A-Za-z_][\w.]*\[.*\]?|https?://[^@]*|"
    r"[A-Za-z_][\w\\]*(?:\.[A-Za-z_][\w\\]*)+")

_PATH_VALUE = _Lazy(r"[/~][^\s]*|[A-Za-z]:\\.*|[\w.-]+\.(?:json|ya?ml|pem|key|txt|env|cfg|ini|toml|p12|pfx|crt|"
                    r"csv|py|js|ts)")


def _name_before(text: str, end: int) -> tuple[int, str]:
    """The name that ends at ``end`` (quotes and blanks before the operator skipped): its start and itself."""
    while end > 0 and text[end - 1] in " \t\"'":
        end -= 1
    start = end
    while start > 0 and end - start < 100 and text[start - 1] in _NAME_CHARS:
        start -= 1
    return start, text[start:end]


def _value_after(text: str, pos: int, query: bool) -> tuple[int, int] | None:
    """The span of the value that starts at ``pos`` (blanks skipped): quoted (6-200 characters, spaces allowed)
    or bare (6-200 characters up to a blank, quote, comma, semicolon or bracket; ``&`` too in a URL's query)."""
    n = len(text)
    while pos < n and text[pos] in " \t":
        pos += 1
    if pos < n and text[pos] in "\"'":
        close = text.find(text[pos], pos + 1, pos + 202)
        if close < 0 or "\n" in text[pos + 1:close] or close - pos - 1 < 6:
            return None
        return pos + 1, close
    stop = " \t\r\n\"'`,;)]}>" + ("&" if query else "")
    end = pos
    while end < n and end - pos < 200 and text[end] not in stop:
        end += 1
    return (pos, end) if end - pos >= 6 else None


_PROSE_PATTERN: _Lazy = PROSE_RULE.pattern  # type: ignore[assignment]  # made by _rule: always lazy

#: The words every secret's name contains (lower case): where the assigned and prose rules look.
_KEYWORDS = ("pass", "pwd", "secret", "token", "key", "credential")


def _keyword_hits(text: str) -> list[int]:
    """Where the words of :data:`_KEYWORDS` start in ``text`` (any case), in order: found with ``str.find``, which
    is ~20x faster than a regular expression's alternation over a transcript."""
    lowered = text.lower() if not text.islower() else text
    hits: list[int] = []
    for word in _KEYWORDS:
        at = lowered.find(word)
        while at >= 0:
            hits.append(at)
            at = lowered.find(word, at + len(word))
    return sorted(hits)


def _assigned(text: str, hits: list[int]) -> Iterator[tuple[int, int]]:
    """Kind 2's ``assigned-secret``: each value given to a name that says it holds a secret. The operator tried
    is the one right after the name (``name = value``, ``"name": "value"``, ``name := value``), whatever came
    before on the line (``Step 2: SECRET_KEY=...``, ``Error: password=...``, ``jdbc:mysql://...&password=...``,
    ``config: api_key: '...'``)."""
    n, seen, scanned = len(text), set(), -1
    for hit in hits:
        if hit < scanned:
            continue  # inside a name already read (passwordToken): the same operator
        end = hit
        while end < n and end - hit < 100 and text[end] in _NAME_CHARS:
            end += 1
        scanned = end
        op = end
        while op < n and text[op] in " \t\"'":
            op += 1
        op_end = op + 2 if text.startswith((":=", "=>"), op) else op + 1 if op < n and text[op] in ":=" else -1
        if op_end < 0 or op in seen:
            continue
        seen.add(op)
        start, name = _name_before(text, op)
        if not secret_name(name):
            continue
        if start > 0 and text[start - 1] == "$":
            continue  # $token = ...: a variable in code
        span = _value_after(text, op_end, query=start > 0 and text[start - 1] in "?&")
        if span is not None and secret_value(text[span[0]:span[1]]):
            yield span


def secret_name(name: str) -> bool:
    """Whether ``name`` (a variable, key or option: ``DB_PASSWORD``, ``apiKey``, ``--token``) says it holds a
    secret, and not a secret's metadata (``token_count``, ``secret_name``, ``public_key``)."""
    lowered = name.lower().lstrip("-")
    return bool(lowered) and bool(_SECRET_NAME.search(lowered)) and not _NOT_A_SECRET_NAME.search(lowered)


def secret_value(value: str) -> bool:
    """Whether ``value``, given to a secret's name, is the secret: not a placeholder, a path, a number, one
    word, a constant's name, a dotted name or code (a value with spaces is a passphrase)."""
    if len(value) < 6 or _PLACEHOLDER_VALUE.match(value) or _PATH_VALUE.fullmatch(value):
        return False
    return " " in value or not _NOT_A_SECRET_VALUE.fullmatch(value)


def _prose(text: str, hits: list[int]) -> Iterator[tuple[int, int]]:
    """The spans :data:`PROSE_RULE` finds at each keyword's word, or the word before it ("api" of "api key")."""
    pattern = _PROSE_PATTERN.compiled
    done = -1
    for hit in hits:
        if hit < done:
            continue
        word = hit
        while word > 0 and hit - word < 16 and text[word - 1].isalpha():
            word -= 1
        before = word - 1
        while before > 0 and word - before < 16 and text[before - 1].isalpha():
            before -= 1
        for start in (word, before) if before >= 0 and word - before <= 12 else (word,):
            match = pattern.match(text, start)
            if match is None:
                continue
            span = PROSE_RULE.span(match)
            if span[0] < span[1] and not _PLACEHOLDER_VALUE.match(text[span[0]:span[1]]) and _prose_value(match):
                done = span[1]
                yield span
                break


def _strip(match: re.Match[str], group: str) -> tuple[int, int]:
    """The span of ``group`` without surrounding quotes and trailing sentence punctuation."""
    start, end = match.span(group)
    text = match.string
    if end - start >= 2 and text[start] in "'\"" and text[end - 1] == text[start]:
        return start + 1, end - 1
    while end > start and text[end - 1] in ".,;:)]}'\"`*_":
        end -= 1
    while start < end and text[start] in "*_":
        start += 1
    return start, end


def _cli_value(match: re.Match[str]) -> bool:
    start, end = _strip(match, "v")
    value = match.string[start:end]
    return len(value) >= 4 and not _PLACEHOLDER_VALUE.match(value) and value[0] not in "$%<{-" and \
        not _PATH_VALUE.fullmatch(value)


_LETTER_WORD = _Lazy(r"[A-Za-z][a-z]*(?:['-][a-z]+)?")


def _prose_value(match: re.Match[str]) -> bool:
    """Whether the word after "password is" (or "token" ...) is a secret: not a word of the sentence, a path,
    a placeholder or a number of seconds; a name right before the value (no verb) needs a key-like value."""
    start, end = _strip(match, "v")
    value = match.string[start:end]
    if len(value) < 6 or _PLACEHOLDER_VALUE.match(value) or _LETTER_WORD.fullmatch(value):
        return False
    if value[0] in "$%<{/~[(" or _PATH_VALUE.fullmatch(value) or "://" in value or "@" in value[1:-1]:
        return False
    word = match.group("w").lower()
    verb = match.group(0)[len(match.group("w")):match.start("v") - match.start()].strip(" \t`\"'")
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    if not verb or not word.startswith("pass") and word not in ("pwd",):
        # "the token 3f9a...": a key-like value (long, letters and digits, nothing but a key's characters)
        return len(value) >= 16 and has_digit and has_alpha and re.fullmatch(r"[A-Za-z0-9_+/=.~-]+", value) is \
            not None and entropy(value) >= 3.0
    if value.isdigit():
        return len(value) >= 6
    symbols = any(not c.isalnum() for c in value)
    mixed = any(c.isupper() for c in value) and any(c.islower() for c in value)
    return has_digit or symbols or mixed


_TOKEN = _Lazy(r"(?<![A-Za-z0-9+/_.:@-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/=_-])")
_HEX = _Lazy(r"^[0-9a-fA-F]+$")
_UUID = _Lazy(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_DIGEST_PREFIX = _Lazy(r"(?i)(?:sha(?:1|224|256|384|512)|md5|blake2[bs]?|h1)[-_:]")
#: Public by design: Stripe publishable keys and object ids (``cus_``, ``ch_``...), a JWT's header alone.
_PUBLIC_TOKEN = _Lazy(r"pk_(?:live|test)_|(?:ch|cus|pi|pm|py|re|in|ii|sub|si|prod|price|evt|acct|card|ba|po|tr|"
                      r"txn|seti|src|tok|cs|pl|plink|inv|ipi|sched|ss|coupon|promo)_[A-Za-z0-9]{8,}$|eyJ[^.]*$")
#: Stretches in which no token is a secret (public by design): public key and certificate blocks, SSH public
#: keys, data: URIs, Subresource Integrity and lockfile digests.
_PUBLIC_SPANS = (
    _Lazy(r"-----BEGIN (?:PGP PUBLIC KEY BLOCK|PUBLIC KEY|RSA PUBLIC KEY|CERTIFICATE|CERTIFICATE REQUEST|X509 CRL)"
          r"-----[\s\S]*?(?:-----END [A-Z0-9 ]{1,40}-----|\Z)"),
    _Lazy(r"(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d{3}|sk-ssh-ed25519@openssh\.com) AAAA[A-Za-z0-9+/]+=*"),
    _Lazy(r"data:[a-z]+/[a-z0-9.+-]+;base64,[A-Za-z0-9+/]+=*"),
    _Lazy(r"(?:sha(?:256|384|512)-|h1:)[A-Za-z0-9+/]{40,}=*"),
)
_WORDS = _Lazy(r"[a-z]{3,}|[A-Z][a-z]{2,}")  # runs of letters that read as words (identifiers, prose)
_B64 = _Lazy(r"[A-Za-z0-9+/]+={0,2}")


def _keylike(token: str) -> bool:
    """Whether a match of a loose provider format (``sk-...``, Discord's three dotted parts) is a key rather than
    a name (``sk-learn-contrib-lightning``, ``NetworkConnectionManager.config.maxConnections...``): a digit, and
    less than half of it in runs of letters that read as words."""
    return any(c.isdigit() for c in token) and sum(len(w) for w in _WORDS.findall(token)) < 0.5 * len(token)


def entropy(text: str) -> float:
    """Shannon entropy of ``text`` in bits per character."""
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _encodes_text(token: str) -> bool:
    """Whether ``token`` is base64 of printable text (``SGVsbG8...``): an encoded message, not a random key."""
    if len(token) % 4 or not _B64.fullmatch(token):
        return False
    try:
        raw = base64.b64decode(token, validate=True)
    except ValueError:
        return False
    return bool(raw) and all(32 <= b < 127 or b in (9, 10, 13) for b in raw)


_PATH_ROOT = _Lazy(r"/[A-Za-z][a-z0-9_-]{2,}/")
_BASE64_PART = re.compile(r"[A-Za-z0-9+=]{7,}")


def _file_path(token: str, home: bool = False) -> bool:
    """Whether ``token`` is an absolute file path (``/home/u/nvidia/cuDNN9/CUDA12x/lib64``, as in
    ``LD_LIBRARY_PATH=...``): a root directory named by a word (any name after ``~``: ``home``), at least three
    parts, none of them key-like (16 characters or more mixing cases and digits at 3.5 bits a character). A key
    that starts with ``/`` rarely looks so; a key inside a path (a directory named by a token) keeps the path
    redacted."""
    if not (home or _PATH_ROOT.match(token)):
        return False
    parts = token[1:].rstrip("/").split("/")
    if len(parts) < 3 or not all(parts):
        return False
    if any(len(p) >= 16 and re.search(r"[a-z]", p) and re.search(r"[A-Z]", p) and re.search(r"[0-9]", p)
           and entropy(p) >= 3.5 for p in parts):
        return False
    # a base64 key cut by its own slashes into short directories (/srv/keys/aB3dE5fG7h/J9kL1mN3pQ5r/S7tU9vW1xY3zA5):
    # each run of such directories (7 characters or more, with capitals; a library's are shorter), taken whole,
    # is judged as a token
    run: list[str] = []
    for part in [*parts, ""]:
        if _BASE64_PART.fullmatch(part) and re.search(r"[A-Z]", part):
            run.append(part)
            continue
        if len(run) > 1 and _high_entropy("/".join(run)):
            return False
        run = []
    return True


def _high_entropy(token: str, home: bool = False) -> bool:
    if _HEX.match(token) or _UUID.match(token.strip("-")):
        return False
    if token.startswith("/") and _file_path(token, home):
        return False
    if _PUBLIC_TOKEN.match(token):
        return False
    if sum(len(w) for w in _WORDS.findall(token)) >= 0.5 * len(token):
        return False  # an identifier such as getUserByEmailAddress2 or a slug, not a key
    if not (re.search(r"[a-z]", token) and re.search(r"[A-Z]", token) and re.search(r"[0-9]", token)):
        return False
    if len(token) > 128:
        return False  # a data blob (an image, a file as base64): keys are shorter, PEM keys have their own rule
    if _DIGEST_PREFIX.match(token):
        return False  # a content digest (sha512-..., an npm lockfile's integrity): public, not a secret
    if _encodes_text(token):
        return False
    return entropy(token) >= 4.3


class _TooDeep(Exception):
    """A value nested deeper than :meth:`Redactor.redact_value`'s limit (turned into an InvalidInputError)."""


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

    def redact_value(self, value: Any, counts: Counter[str], *, depth: int = 64) -> Any:
        """A JSON-like ``value`` (dicts, lists, strings, scalars) with every string redacted, keys too, its counts
        added to ``counts``. A string under a key that names a secret (``{"password": "..."}``) is judged as an
        assigned value, since the key that says what it is is not in the string. Nested deeper than ``depth``
        raises :class:`InvalidInputError` (nothing is half redacted)."""
        if not self.enabled:
            return value
        try:
            return self._walk(value, counts, depth, None)
        except _TooDeep:
            raise InvalidInputError("value", f"nested more than {depth} levels deep: too deep to redact") from None

    def _walk(self, value: Any, counts: Counter[str], depth: int, key: str | None) -> Any:
        if isinstance(value, str):
            if key is not None and secret_name(key) and secret_value(value) and not self.find(value):
                counts["assigned-secret"] += 1
                return PLACEHOLDER.format("assigned-secret")
            return self.scrub(value, counts)
        if depth <= 0 and isinstance(value, (dict, list, tuple)):
            raise _TooDeep
        if isinstance(value, dict):
            out: dict[Any, Any] = {}
            for k, v in value.items():
                new_key = self.scrub(k, counts) if isinstance(k, str) else k
                while new_key in out:  # two keys redacted to one placeholder: keep both
                    new_key = f"{new_key}'"
                out[new_key] = self._walk(v, counts, depth - 1, k if isinstance(k, str) else None)
            return out
        if isinstance(value, (list, tuple)):
            return type(value)(self._walk(v, counts, depth - 1, key) for v in value)
        return value

    def find(self, text: str) -> list[tuple[int, int, str]]:
        """The secrets in ``text``: (start, end, rule) spans, in order, never overlapping (none when disabled).
        Each span is exactly what to replace."""
        if not self.enabled or not text:
            return []
        spans = _Spans()
        for rule in PROVIDER_RULES:
            if not rule.may_match(text):
                continue
            for match in rule.pattern.finditer(text):
                if rule.bounded(match) and (rule.accept is None or rule.accept(match)):
                    spans.add(rule.extend(match), match.end(), rule.name)
        for rule in self.extra:
            for match in rule.pattern.finditer(text):
                start, end = rule.span(match)
                if start < end:
                    spans.add(start, end, rule.name)
        for rule in CONTEXT_RULES:
            if not rule.may_match(text):
                continue
            for match in rule.pattern.finditer(text):
                if not rule.bounded(match):
                    continue
                start, end = rule.span(match)
                if start < 0 or start == end or _PLACEHOLDER_VALUE.match(text[start:end]):
                    continue
                if rule.accept is None or rule.accept(match):
                    spans.add(start, end, rule.name)
        hits = _keyword_hits(text)
        for start, end in _prose(text, hits):
            spans.add(start, end, PROSE_RULE.name)
        for start, end in _assigned(text, hits):
            spans.add(start, end, "assigned-secret")
        found = list(spans)
        public: list[tuple[int, int]] | None = None
        for match in _TOKEN.finditer(text):
            start, end = match.span()
            if not _high_entropy(match.group(), home=start > 0 and text[start - 1] == "~"):
                continue
            if public is None:  # public keys, data: URIs, integrity digests: nothing in them is redacted
                public = [m.span() for pattern in _PUBLIC_SPANS for m in pattern.finditer(text)]
            if not any(s <= start and end <= e for s, e in public) and spans.add(start, end, "high-entropy"):
                found.append((start, end, "high-entropy"))
        return sorted(found)


class _Spans:
    """Non-overlapping spans, in order (a span overlapping one already taken is refused)."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.items: list[tuple[int, int, str]] = []

    def add(self, start: int, end: int, name: str) -> bool:
        """Take ``[start, end)`` for ``name`` unless it overlaps a span taken; whether it was taken."""
        at = bisect.bisect_right(self.starts, start)
        if at > 0 and self.items[at - 1][1] > start:
            return False
        if at < len(self.items) and self.items[at][0] < end:
            return False
        self.starts.insert(at, start)
        self.items.insert(at, (start, end, name))
        return True

    def __iter__(self) -> Iterator[tuple[int, int, str]]:
        return iter(self.items)


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
