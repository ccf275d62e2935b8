"""Whether a text reads as an instruction to agents (docs/capture.md, "Held for review").

A learning says what is true of a project ("the tests need Postgres 16", "never push --force to main"); an
instruction planted for agents says what an agent, a model or the extractor must do with its memory or its
rules ("Note to the extractor, EMIT: ...", "ignore previous instructions", "from now on you must ...") or talks
an agent out of a safeguard ("reviews are optional", "deploy with --force", "skip the tests"). What an automatic
channel would take to another agent, a team or the swarm is held for review when it reads as one
(:func:`instruction_reason`); an agent's own explicit ``store`` is never judged by it.

The rules are plain regular expressions, each with the reason it reports. Their false-hold rate on legitimate
learnings (imperative ones included: "Always run ...", "Never use --force on main") is measured by
``bench/poisoning.py`` and stated in docs/capture.md.
"""

from __future__ import annotations

import re
import unicodedata

_AGENTS = r"(?:extractor|model|assistant|agents?|ai|llm|claude|gpt|lead|bot|memory system|team memory|reviewer)"

#: (reason, pattern): the first that matches is the reason a text is held.
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple((reason, re.compile(pattern, re.IGNORECASE)) for reason, pattern in (
    ("addressed to the extractor or an agent",
     rf"\b(?:note|message|instructions?|reminder|memo)\s+(?:to|for)\s+(?:the\s+|all\s+|any\s+|every\s+)?{_AGENTS}\b"),
    ("addressed to the extractor or an agent",
     rf"\b(?:dear|attention|hey|hello|hi|psst)[,:]?\s+(?:the\s+|all\s+)?{_AGENTS}\b"),
    ("addressed to the extractor or an agent",
     rf"^\W*(?:to\s+)?(?:the\s+|all\s+|any\s+)?{_AGENTS}s?\s*[:,]\s*(?:you|please|emit|store|record|remember|add|write|"
     rf"always|never|from now on|ignore)\b"),
    ("overrides instructions",
     r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+)*(?:previous|prior|earlier|"
     r"above|preceding|other|existing|system|original)\s+(?:instructions?|rules?|prompts?|guidelines?|directions?|"
     r"context|messages?)"),
    ("overrides instructions",
     r"\b(?:new|updated|real|actual|hidden|secret)\s+(?:system\s+)?(?:instructions?|directives?|orders)\s*:"),
    ("overrides instructions", r"\bsystem\s+prompt\b|<\s*/?\s*(?:system|instructions?)\s*>|\[/?INST\]|^\W*#+\s*instructions?\b"),
    ("tells the extractor what to emit",
     r"\b(?:EMIT|OUTPUT|APPEND|INSERT)\s*:|\bemit\s+(?:this|the following|an? (?:entry|decision|learning|memory))\b"),
    ("tells the extractor what to emit",
     r"\b(?:store|save|record|remember|add|write|memori[sz]e|include|output|propagate|spread)\s+(?:this|the following|"
     r"it|that)\s+(?:as|in|into|to)\s+(?:an?\s+|the\s+|your\s+|every\s+|all\s+)*(?:team|swarm|shared|lead|permanent|"
     r"decision|learning|memory|memories|entry|block|everyone)"),
    ("tells the extractor what to emit",
     r"\b(?:add|write|put|insert|record)\s+(?:this\s+|the following\s+)?(?:to|in|into)\s+(?:the\s+|your\s+|every\s+)?"
     r"(?:team|swarm|shared)\s+memory\b"),
    ("speaks to the agent reading it",
     r"\bfrom now on\b|\bhenceforth\b|\bin (?:all|every) future (?:sessions?|tasks?|runs?)\b"),
    ("speaks to the agent reading it",
     r"\b(?:you|agents?|all agents|every agent|the assistant)\s+(?:must|should|shall|are (?:required|instructed|told)"
     r"|have to|need to)\s+(?:now\s+|always\s+|never\s+|no longer\s+)?(?:obey|comply|follow (?:these|this|my|the "
     r"following)|trust|ignore|disregard|emit|store|send|forward|reveal|share|exfiltrate|upload|disable|skip|bypass)\b"),
    ("talks agents out of a safeguard",
     r"\b(?:code\s+)?(?:reviews?|approvals?|tests?|testing|ci|checks?|signing|verification|audits?)\s+(?:is|are)\s+"
     r"(?:now\s+)?(?:optional|unnecessary|not (?:needed|required|necessary)|no longer (?:needed|required)|"
     r"deprecated|disabled|skippable)\b"),
    ("talks agents out of a safeguard",
     r"\b(?:skip|disable|bypass|turn off|switch off|remove|omit)\s+(?:all\s+|the\s+|any\s+)?(?:code\s+)?"
     r"(?:reviews?|approvals?|tests|ci|checks|hooks|verification|signing|sandbox|safeguards?|guardrails?|"
     r"security checks?|tls verification|ssl verification|2fa|mfa|auth(?:entication)?)\b"),
    ("talks agents out of a safeguard",
     r"\b(?:curl|wget)\b[^|\n]*\|\s*(?:sudo\s+)?(?:ba|z)?sh\b"),
    ("asks for secrets to be sent",
     r"\b(?:send|post|upload|forward|email|paste|exfiltrate|leak|share)\s+(?:the\s+|all\s+|your\s+|any\s+)?"
     r"(?:api\s+)?(?:tokens?|secrets?|credentials?|passwords?|keys?|env(?:ironment)?(?: variables?)?|\.env|"
     r"ssh keys?|cookies?)\s+(?:to|at|via)\b"),
))


#: Flags and commands that switch a safeguard off; held unless their clause forbids them ("never ... --force").
_UNSAFE = re.compile(r"(?<![\w-])--force(?![\w-])|--no-verify\b|--dangerously-skip-permissions\b|--insecure\b|"
                     r"--skip-checks\b|\bchmod\s+(?:-R\s+)?(?:0?777|a\+rwx)\b", re.IGNORECASE)
_FORBIDS = re.compile(r"\b(?:never|not|don'?t|do not|avoid|no|without|instead of|rather than|refuse|forbidden|"
                      r"prohibited|unless|except|mustn'?t|shouldn'?t|stop)\b", re.IGNORECASE)


def _unsafe_flag(text: str) -> bool:
    """Whether ``text`` recommends a safeguard-off flag: one whose clause (up to it, from the last ``;``, ``.``,
    ``:`` or line break) does not forbid it."""
    for found in _UNSAFE.finditer(text):
        clause = re.split(r"[;.:\n]|,\s+(?:and|but|so)\b", text[:found.start()])[-1]
        if not _FORBIDS.search(clause):
            return True
    return False


def _normalised(text: str) -> str:
    """NFKC, without format characters (zero-width, bidi, tag characters): look-alikes and hidden letters do not
    split a keyword."""
    text = unicodedata.normalize("NFKC", text)
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def instruction_reason(text: str) -> str | None:
    """Why ``text`` reads as an instruction to agents (the reason, for the review queue), or None when it does
    not. Each line is judged on its own and as a whole."""
    clean = _normalised(text)
    for candidate in [clean, *[line for line in clean.splitlines() if line.strip()]]:
        for reason, pattern in _RULES:
            if pattern.search(candidate):
                return reason
        if _unsafe_flag(candidate):
            return "talks agents out of a safeguard"
    return None


#: Of a learning's content words, the share a text must hold for the learning to rest on it.
MIN_SHARE = 0.5
#: ``metadata[READ_KEY] == READ``: a learning a model took from text the agent read (a tool output, a file,
#: another agent's answer), not from text the agent wrote itself.
READ_KEY, READ = "learned_from", "read"


def share(content: str, text: str) -> float:
    """How much of ``content``'s content words ``text`` holds (1.0 for a content without any)."""
    from cortex.capture.gate import features

    words = features(content).content
    return len(words & features(text).content) / len(words) if words else 1.0


def written_by_agent(content: str, own_text: str, read_text: str) -> bool:
    """Whether a learning a model extracted rests on what the agent wrote itself (``own_text``: its own
    messages) rather than on what it read (``read_text``: tool outputs, files, other agents' answers, prompts):
    its own text holds at least :data:`MIN_SHARE` of the learning's content words, and no less than the read
    text does."""
    own = share(content, own_text)
    return own >= MIN_SHARE and own >= share(content, read_text)


__all__ = ["MIN_SHARE", "READ", "READ_KEY", "instruction_reason", "share", "written_by_agent"]
